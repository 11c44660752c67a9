/* Unit tests for the CUDA fatbinary reader (src/cudart/fatbin.c).
 *
 * The fixtures in tests/fixtures/fatbin/ are real nvcc 13 output (rebuild
 * them with make_fixtures.sh). Each is loaded into a buffer of exactly its
 * size so that AddressSanitizer catches any read past the end. The corruption
 * tests rewrite every byte of every header (and a sample of the compressed
 * payloads) and require an error or a consistent result, never a crash.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart/fatbin.h"

#ifndef FATBIN_FIXTURE_DIR
#define FATBIN_FIXTURE_DIR "tests/fixtures/fatbin"
#endif

#define MAX_ENTRIES 16

/* ---- helpers ---------------------------------------------------------- */

typedef struct fixture {
    unsigned char *bytes;
    size_t size;
} fixture;

/* Reads a fixture into a malloc'd buffer of exactly its size. Looks in
 * $KEMU_FATBIN_FIXTURES, then $srcdir/tests/fixtures/fatbin (automake's test
 * harness exports srcdir), then FATBIN_FIXTURE_DIR. */
static fixture load_fixture(const char *name)
{
    char path[1024];
    const char *override = getenv("KEMU_FATBIN_FIXTURES");
    const char *srcdir = getenv("srcdir");
    if (override != NULL)
        snprintf(path, sizeof path, "%s/%s", override, name);
    else if (srcdir != NULL)
        snprintf(path, sizeof path, "%s/tests/fixtures/fatbin/%s", srcdir, name);
    else
        snprintf(path, sizeof path, "%s/%s", FATBIN_FIXTURE_DIR, name);

    FILE *file = fopen(path, "rb");
    ck_assert_msg(file != NULL, "cannot open fixture %s", path);
    ck_assert_int_eq(fseek(file, 0, SEEK_END), 0);
    long length = ftell(file);
    ck_assert_int_gt(length, 0);
    ck_assert_int_eq(fseek(file, 0, SEEK_SET), 0);
    fixture result = {malloc((size_t)length), (size_t)length};
    ck_assert_ptr_nonnull(result.bytes);
    ck_assert_uint_eq(fread(result.bytes, 1, (size_t)length, file), (size_t)length);
    fclose(file);
    return result;
}

static unsigned char *copy_bytes(const unsigned char *bytes, size_t size)
{
    unsigned char *copy = malloc(size > 0 ? size : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, bytes, size);
    return copy;
}

static uint32_t get_u32(const unsigned char *bytes, size_t offset)
{
    return (uint32_t)bytes[offset] | ((uint32_t)bytes[offset + 1] << 8) |
           ((uint32_t)bytes[offset + 2] << 16) | ((uint32_t)bytes[offset + 3] << 24);
}

static uint64_t get_u64(const unsigned char *bytes, size_t offset)
{
    return (uint64_t)get_u32(bytes, offset) | ((uint64_t)get_u32(bytes, offset + 4) << 32);
}

static void put_u16(unsigned char *bytes, size_t offset, uint16_t value)
{
    bytes[offset] = (unsigned char)value;
    bytes[offset + 1] = (unsigned char)(value >> 8);
}

static void put_u32(unsigned char *bytes, size_t offset, uint32_t value)
{
    for (int i = 0; i < 4; i++)
        bytes[offset + (size_t)i] = (unsigned char)(value >> (8 * i));
}

static void put_u64(unsigned char *bytes, size_t offset, uint64_t value)
{
    for (int i = 0; i < 8; i++)
        bytes[offset + (size_t)i] = (unsigned char)(value >> (8 * i));
}

/* Parses a whole fixture and asserts success. */
static int parse_ok(const fixture *fx, cudart_fatbin_entry *entries)
{
    char err[256] = "";
    int count = -1;
    int status = cudart_fatbin_parse(fx->bytes, fx->size, entries, MAX_ENTRIES, &count, err,
                                     sizeof err);
    ck_assert_msg(status == 0, "parse failed: %s", err);
    return count;
}

/* Extracts PTX and asserts success; returns the malloc'd text. */
static char *extract_ok(const cudart_fatbin_entry *entries, int count, unsigned max_sm,
                        unsigned *sm)
{
    char err[512] = "";
    char *ptx = NULL;
    int status = cudart_fatbin_extract_ptx(entries, count, max_sm, &ptx, sm, err, sizeof err);
    ck_assert_msg(status == 0, "extract failed: %s", err);
    ck_assert_ptr_nonnull(ptx);
    return ptx;
}

/* The PTX that kernel.cu compiles to, for `target` ("sm_80"). */
static void assert_fixture_ptx(const char *ptx, const char *target)
{
    char target_line[32];
    snprintf(target_line, sizeof target_line, ".target %s\n", target);
    ck_assert_ptr_nonnull(strstr(ptx, ".version 9.0\n"));
    ck_assert_ptr_nonnull(strstr(ptx, target_line));
    ck_assert_ptr_nonnull(strstr(ptx, ".entry kemu_fixture_add("));
    ck_assert_ptr_nonnull(strstr(ptx, "add.f32"));
    ck_assert_ptr_nonnull(strstr(ptx, "ret;"));
}

/* Expects parse to fail on `bytes` and the message to contain `needle`. */
static void assert_parse_fails(const unsigned char *bytes, size_t size, const char *needle)
{
    cudart_fatbin_entry entries[MAX_ENTRIES];
    char err[256] = "";
    int count = -1;
    unsigned char *copy = copy_bytes(bytes, size);
    int status = cudart_fatbin_parse(copy, size, entries, MAX_ENTRIES, &count, err, sizeof err);
    ck_assert_msg(status == -1, "parse accepted a corrupt container (wanted '%s')", needle);
    ck_assert_msg(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);
    free(copy);
}

/* ---- parsing the stored forms ----------------------------------------- */

START_TEST(test_parse_raw_ptx)
{
    fixture fx = load_fixture("ptx_raw.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(parse_ok(&fx, entries), 1);
    ck_assert_int_eq(entries[0].kind, CUDART_FATBIN_KIND_PTX);
    ck_assert_uint_eq(entries[0].sm, 80);
    ck_assert_uint_eq(entries[0].flags, 0x11);
    ck_assert_int_eq(entries[0].compression, CUDART_FATBIN_COMPRESSION_NONE);
    ck_assert_uint_eq(entries[0].version_major, 9);
    ck_assert_uint_eq(entries[0].version_minor, 0);
    ck_assert_uint_eq(entries[0].size, 976);
    ck_assert_uint_eq(entries[0].uncompressed_size, 976);
    ck_assert_ptr_eq(entries[0].data, fx.bytes + 16 + 80);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_zstd_ptx)
{
    fixture fx = load_fixture("ptx_zstd.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(parse_ok(&fx, entries), 1);
    ck_assert_int_eq(entries[0].kind, CUDART_FATBIN_KIND_PTX);
    ck_assert_uint_eq(entries[0].sm, 80);
    ck_assert_uint_eq(entries[0].flags, 0x8011);
    ck_assert_int_eq(entries[0].compression, CUDART_FATBIN_COMPRESSION_ZSTD);
    ck_assert_uint_eq(entries[0].size, 396);
    ck_assert_uint_eq(entries[0].uncompressed_size, 975);
    /* zstd frame magic 0xFD2FB528 starts the payload */
    ck_assert_uint_eq(get_u32(entries[0].data, 0), 0xfd2fb528u);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_lz4_ptx)
{
    fixture fx = load_fixture("ptx_lz4.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(parse_ok(&fx, entries), 1);
    ck_assert_uint_eq(entries[0].flags, 0x2011);
    ck_assert_int_eq(entries[0].compression, CUDART_FATBIN_COMPRESSION_LZ4);
    ck_assert_uint_eq(entries[0].size, 521);
    ck_assert_uint_eq(entries[0].uncompressed_size, 975);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_trusts_header_without_size)
{
    fixture fx = load_fixture("multi_arch.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = 0;
    ck_assert_int_eq(cudart_fatbin_parse(fx.bytes, 0, entries, MAX_ENTRIES, &count, NULL, 0), 0);
    ck_assert_int_eq(count, 3);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_multi_arch)
{
    fixture fx = load_fixture("multi_arch.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(parse_ok(&fx, entries), 3);
    ck_assert_int_eq(entries[0].kind, CUDART_FATBIN_KIND_PTX);
    ck_assert_uint_eq(entries[0].sm, 75);
    ck_assert_int_eq(entries[1].kind, CUDART_FATBIN_KIND_PTX);
    ck_assert_uint_eq(entries[1].sm, 90);
    ck_assert_int_eq(entries[2].kind, CUDART_FATBIN_KIND_ELF);
    ck_assert_uint_eq(entries[2].sm, 80);
    ck_assert_int_eq(entries[2].compression, CUDART_FATBIN_COMPRESSION_NONE);
    /* the cubin payload is an ELF image */
    ck_assert_int_eq(memcmp(entries[2].data, "\177ELF", 4), 0);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_reports_too_many_entries)
{
    fixture fx = load_fixture("multi_arch.fatbin");
    cudart_fatbin_entry entries[2];
    char err[256] = "";
    int count = 0;
    ck_assert_int_eq(cudart_fatbin_parse(fx.bytes, fx.size, entries, 2, &count, err, sizeof err),
                     -1);
    ck_assert_int_eq(count, 3);
    ck_assert_ptr_nonnull(strstr(err, "3 entries"));
    /* max 0 counts without storing */
    ck_assert_int_eq(cudart_fatbin_parse(fx.bytes, fx.size, NULL, 0, &count, NULL, 0), -1);
    ck_assert_int_eq(count, 3);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_lineinfo_long_header)
{
    /* -lineinfo stores a file name and ptxas options in a 112-byte header */
    fixture fx = load_fixture("ptx_lineinfo.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(parse_ok(&fx, entries), 1);
    ck_assert_uint_eq(get_u32(fx.bytes, 16 + 4), 112);
    ck_assert_ptr_eq(entries[0].data, fx.bytes + 16 + 112);
    char *ptx = extract_ok(entries, 1, 80, NULL);
    assert_fixture_ptx(ptx, "sm_80");
    ck_assert_ptr_nonnull(strstr(ptx, ".loc"));
    free(ptx);
    free(fx.bytes);
}
END_TEST

START_TEST(test_parse_null_arguments)
{
    fixture fx = load_fixture("ptx_zstd.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = 0;
    char err[128] = "";
    ck_assert_int_eq(cudart_fatbin_parse(NULL, 0, entries, MAX_ENTRIES, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "NULL"));
    ck_assert_int_eq(cudart_fatbin_parse(fx.bytes, fx.size, entries, MAX_ENTRIES, NULL, NULL, 0),
                     -1);
    ck_assert_int_eq(cudart_fatbin_parse(fx.bytes, fx.size, NULL, 4, &count, NULL, 0), -1);
    free(fx.bytes);
}
END_TEST

/* ---- PTX extraction and selection ------------------------------------- */

START_TEST(test_extract_same_ptx_from_every_form)
{
    const char *names[] = {"ptx_raw.fatbin", "ptx_zstd.fatbin", "ptx_lz4.fatbin",
                           "rdc_prelinked.fatbin"};
    char *first = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fixture fx = load_fixture(names[i]);
        cudart_fatbin_entry entries[MAX_ENTRIES];
        int count = parse_ok(&fx, entries);
        unsigned sm = 0;
        char *ptx = extract_ok(entries, count, 80, &sm);
        ck_assert_uint_eq(sm, 80);
        assert_fixture_ptx(ptx, "sm_80");
        if (first == NULL)
            first = ptx;
        else {
            ck_assert_str_eq(ptx, first);
            free(ptx);
        }
        free(fx.bytes);
    }
    free(first);
}
END_TEST

START_TEST(test_decompress_sizes)
{
    fixture raw = load_fixture("ptx_raw.fatbin");
    fixture zstd = load_fixture("ptx_zstd.fatbin");
    cudart_fatbin_entry raw_entry[MAX_ENTRIES], zstd_entry[MAX_ENTRIES];
    parse_ok(&raw, raw_entry);
    parse_ok(&zstd, zstd_entry);
    char *raw_text = NULL, *zstd_text = NULL;
    size_t raw_size = 0, zstd_size = 0;
    ck_assert_int_eq(cudart_fatbin_entry_decompress(raw_entry, &raw_text, &raw_size, NULL, 0), 0);
    ck_assert_int_eq(cudart_fatbin_entry_decompress(zstd_entry, &zstd_text, &zstd_size, NULL, 0),
                     0);
    /* raw payload is the NUL-terminated text padded to 8 bytes */
    ck_assert_uint_eq(raw_size, 976);
    ck_assert_uint_eq(zstd_size, 975);
    ck_assert_int_eq(memcmp(raw_text, zstd_text, 975), 0);
    ck_assert_int_eq(zstd_text[974], '\0');
    ck_assert_int_eq(zstd_text[975], '\0');
    free(raw_text);
    free(zstd_text);
    free(raw.bytes);
    free(zstd.bytes);
}
END_TEST

START_TEST(test_select_by_max_sm)
{
    fixture fx = load_fixture("multi_arch.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = parse_ok(&fx, entries);
    const struct {
        unsigned max_sm, chosen;
        const char *target;
    } cases[] = {{75, 75, "sm_75"}, {80, 75, "sm_75"}, {89, 75, "sm_75"},
                 {90, 90, "sm_90"}, {120, 90, "sm_90"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned sm = 0;
        char *ptx = extract_ok(entries, count, cases[i].max_sm, &sm);
        ck_assert_uint_eq(sm, cases[i].chosen);
        assert_fixture_ptx(ptx, cases[i].target);
        free(ptx);
    }
    free(fx.bytes);
}
END_TEST

START_TEST(test_ptx_only_for_higher_sm)
{
    fixture fx = load_fixture("multi_arch.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = parse_ok(&fx, entries);
    char err[512] = "";
    char *ptx = (char *)1;
    ck_assert_int_eq(cudart_fatbin_extract_ptx(entries, count, 70, &ptx, NULL, err, sizeof err),
                     -1);
    ck_assert_ptr_null(ptx);
    ck_assert_ptr_nonnull(strstr(err, "compute_75, compute_90"));
    ck_assert_ptr_nonnull(strstr(err, "sm_70"));
    free(fx.bytes);
}
END_TEST

START_TEST(test_cubin_only_advises_gencode)
{
    fixture fx = load_fixture("cubin_only.fatbin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = parse_ok(&fx, entries);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(entries[0].kind, CUDART_FATBIN_KIND_ELF);
    ck_assert_uint_eq(entries[0].sm, 80);
    char err[512] = "";
    char *ptx = NULL;
    ck_assert_int_eq(cudart_fatbin_extract_ptx(entries, count, 80, &ptx, NULL, err, sizeof err),
                     -1);
    ck_assert_ptr_null(ptx);
    ck_assert_ptr_nonnull(strstr(err, "no PTX"));
    ck_assert_ptr_nonnull(strstr(err, "cubin for sm_80"));
    ck_assert_ptr_nonnull(strstr(err, "-gencode arch=compute_XX,code=compute_XX"));
    free(fx.bytes);
}
END_TEST

START_TEST(test_select_prefers_portable_ptx)
{
    /* Hand-made raw entries: at the same SM the portable PTX beats sm_90a. */
    static const char specific[] = ".target sm_90a\n";
    static const char portable[] = ".target sm_90\n";
    static const char older[] = ".target sm_86\n";
    cudart_fatbin_entry entries[3] = {
        {.kind = CUDART_FATBIN_KIND_PTX, .sm = 90, .flags = 0x11 | CUDART_FATBIN_FLAG_ARCH_SPECIFIC,
         .size = sizeof specific, .uncompressed_size = sizeof specific, .data = specific},
        {.kind = CUDART_FATBIN_KIND_PTX, .sm = 90, .flags = 0x11,
         .size = sizeof portable, .uncompressed_size = sizeof portable, .data = portable},
        {.kind = CUDART_FATBIN_KIND_PTX, .sm = 86, .flags = 0x11,
         .size = sizeof older, .uncompressed_size = sizeof older, .data = older},
    };
    char *ptx = extract_ok(entries, 3, 90, NULL);
    ck_assert_str_eq(ptx, portable);
    free(ptx);
    ptx = extract_ok(entries, 1, 100, NULL); /* alone, sm_90a is still taken */
    ck_assert_str_eq(ptx, specific);
    free(ptx);
    ptx = extract_ok(entries, 3, 89, NULL);
    ck_assert_str_eq(ptx, older);
    free(ptx);
}
END_TEST

START_TEST(test_lto_only_and_empty_messages)
{
    static const char ir[] = "not really NVVM IR";
    cudart_fatbin_entry lto = {.kind = CUDART_FATBIN_KIND_LTO_IR, .sm = 80, .flags = 0x10011,
                               .size = sizeof ir, .uncompressed_size = sizeof ir, .data = ir};
    char err[512] = "";
    char *ptx = NULL;
    ck_assert_int_eq(cudart_fatbin_extract_ptx(&lto, 1, 80, &ptx, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "LTO IR for lto_80"));
    ck_assert_ptr_nonnull(strstr(err, "code=compute_XX"));
    ck_assert_int_eq(cudart_fatbin_extract_ptx(NULL, 0, 80, &ptx, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no PTX"));
    ck_assert_int_eq(cudart_fatbin_extract_ptx(NULL, 0, 80, NULL, NULL, NULL, 0), -1);
}
END_TEST

/* ---- wrappers ---------------------------------------------------------- */

/* The layout of fatbinary_section.h's __fatBinC_Wrapper_t. */
typedef struct test_wrapper {
    int magic;
    int version;
    const void *data;
    const void *filename_or_fatbins;
} test_wrapper;

START_TEST(test_wrapper_version1_in_section)
{
    /* A CUDA 13 executable's .nv_fatbin: an empty link container, then the
     * program's own container, which its version-1 wrapper points at. */
    fixture section = load_fixture("app_nv_fatbin.bin");
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = -1;
    ck_assert_int_eq(
        cudart_fatbin_parse(section.bytes, section.size, entries, MAX_ENTRIES, &count, NULL, 0),
        0);
    ck_assert_int_eq(count, 0);

    test_wrapper wrapper = {(int)CUDART_FATBIN_WRAPPER_MAGIC, 1, section.bytes + 16, NULL};
    const void *containers[4];
    char err[256] = "";
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     0);
    ck_assert_int_eq(count, 1);
    ck_assert_ptr_eq(containers[0], section.bytes + 16);
    ck_assert_int_eq(cudart_fatbin_parse(containers[0], 0, entries, MAX_ENTRIES, &count, err,
                                         sizeof err),
                     0);
    ck_assert_int_eq(count, 1);
    char *ptx = extract_ok(entries, count, 80, NULL);
    assert_fixture_ptx(ptx, "sm_80");
    free(ptx);
    free(section.bytes);
}
END_TEST

START_TEST(test_wrapper_version2_rdc)
{
    fixture linked = load_fixture("rdc_linked.fatbin");
    fixture prelinked = load_fixture("rdc_prelinked.fatbin");
    const void *list[] = {prelinked.bytes, NULL};
    test_wrapper wrapper = {(int)CUDART_FATBIN_WRAPPER_MAGIC, 2, linked.bytes, list};
    const void *containers[4];
    int count = -1;
    char err[256] = "";
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     0);
    ck_assert_int_eq(count, 2);
    ck_assert_ptr_eq(containers[0], linked.bytes);
    ck_assert_ptr_eq(containers[1], prelinked.bytes);

    cudart_fatbin_entry entries[MAX_ENTRIES];
    ck_assert_int_eq(cudart_fatbin_parse(containers[0], linked.size, entries, MAX_ENTRIES, &count,
                                         err, sizeof err),
                     0);
    ck_assert_int_eq(count, 0); /* nvlink cannot link PTX: the linked container is empty */
    ck_assert_int_eq(cudart_fatbin_parse(containers[1], prelinked.size, entries, MAX_ENTRIES,
                                         &count, err, sizeof err),
                     0);
    ck_assert_int_eq(count, 1);
    ck_assert_uint_eq(get_u32(prelinked.bytes, 16 + 4), 96); /* header carries --compile-only */
    char *ptx = extract_ok(entries, count, 80, NULL);
    assert_fixture_ptx(ptx, "sm_80");
    free(ptx);

    /* too small an array: error, and the count says how many */
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 1, &count, err, sizeof err),
                     -1);
    ck_assert_int_eq(count, 2);
    /* version 2 with no linked data still yields the prelinked ones */
    wrapper.data = NULL;
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     0);
    ck_assert_int_eq(count, 1);
    ck_assert_ptr_eq(containers[0], prelinked.bytes);
    free(linked.bytes);
    free(prelinked.bytes);
}
END_TEST

START_TEST(test_wrapper_errors)
{
    fixture fx = load_fixture("ptx_zstd.fatbin");
    const void *containers[4];
    int count = 0;
    char err[256] = "";
    test_wrapper wrapper = {0x12345678, 1, fx.bytes, NULL};
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "magic"));

    wrapper.magic = (int)CUDART_FATBIN_WRAPPER_MAGIC;
    wrapper.version = 3;
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "version 3"));

    wrapper.version = 1;
    wrapper.data = NULL;
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "no data"));

    unsigned char not_a_container[16] = {1, 2, 3, 4};
    wrapper.data = not_a_container;
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&wrapper, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "fatbin magic"));

    const void *bad_list[] = {fx.bytes, not_a_container, NULL};
    test_wrapper linked = {(int)CUDART_FATBIN_WRAPPER_MAGIC, 2, fx.bytes, bad_list};
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&linked, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "prelinked fatbin 1"));

    test_wrapper empty = {(int)CUDART_FATBIN_WRAPPER_MAGIC, 2, NULL, NULL};
    ck_assert_int_eq(cudart_fatbin_from_wrapper(&empty, containers, 4, &count, err, sizeof err),
                     -1);
    ck_assert_int_eq(cudart_fatbin_from_wrapper(NULL, containers, 4, &count, err, sizeof err), -1);
    free(fx.bytes);
}
END_TEST

/* ---- malformed input ---------------------------------------------------- */

START_TEST(test_corrupt_container_header)
{
    fixture fx = load_fixture("ptx_zstd.fatbin");
    unsigned char *bytes = copy_bytes(fx.bytes, fx.size);

    bytes[0] ^= 0x01;
    assert_parse_fails(bytes, fx.size, "magic");
    memcpy(bytes, fx.bytes, fx.size);
    put_u16(bytes, 4, 2);
    assert_parse_fails(bytes, fx.size, "version 2");
    memcpy(bytes, fx.bytes, fx.size);
    put_u16(bytes, 6, 8);
    assert_parse_fails(bytes, fx.size, "header size 8");
    memcpy(bytes, fx.bytes, fx.size);
    put_u16(bytes, 6, 0xffff);
    assert_parse_fails(bytes, fx.size, "declares");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, 8, get_u64(fx.bytes, 8) + 8);
    assert_parse_fails(bytes, fx.size, "declares");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, 8, UINT64_MAX);
    assert_parse_fails(bytes, fx.size, "too large");
    /* a body that ends inside the entry header */
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, 8, 40);
    assert_parse_fails(bytes, fx.size, "stray bytes");
    /* shorter than a header */
    assert_parse_fails(fx.bytes, 15, "truncated");
    free(bytes);
    free(fx.bytes);
}
END_TEST

START_TEST(test_corrupt_entry_header)
{
    fixture fx = load_fixture("ptx_zstd.fatbin");
    unsigned char *bytes = copy_bytes(fx.bytes, fx.size);
    const size_t entry = 16;

    put_u16(bytes, entry + 0x00, 0);
    assert_parse_fails(bytes, fx.size, "kind 0");
    memcpy(bytes, fx.bytes, fx.size);
    put_u32(bytes, entry + 0x04, 63);
    assert_parse_fails(bytes, fx.size, "header size 63");
    memcpy(bytes, fx.bytes, fx.size);
    put_u32(bytes, entry + 0x04, 0xffffffffu);
    assert_parse_fails(bytes, fx.size, "header size");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, entry + 0x08, 408);
    assert_parse_fails(bytes, fx.size, "payload bytes");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, entry + 0x08, UINT64_MAX);
    assert_parse_fails(bytes, fx.size, "payload bytes");
    memcpy(bytes, fx.bytes, fx.size);
    put_u32(bytes, entry + 0x10, 0);
    assert_parse_fails(bytes, fx.size, "compressed size 0");
    memcpy(bytes, fx.bytes, fx.size);
    put_u32(bytes, entry + 0x10, 401);
    assert_parse_fails(bytes, fx.size, "compressed size 401");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, entry + 0x28, 0x8011 | 0x2000);
    assert_parse_fails(bytes, fx.size, "both");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, entry + 0x38, 0);
    assert_parse_fails(bytes, fx.size, "uncompressed size 0");
    memcpy(bytes, fx.bytes, fx.size);
    put_u64(bytes, entry + 0x38, UINT64_MAX);
    assert_parse_fails(bytes, fx.size, "implausible");
    free(bytes);
    free(fx.bytes);
}
END_TEST

/* Parses a corrupted copy; when it parses, checks every entry lies inside it
 * and that decompression either fails or yields exactly the declared size. */
static void exercise(const unsigned char *bytes, size_t size)
{
    unsigned char *copy = copy_bytes(bytes, size);
    cudart_fatbin_entry entries[MAX_ENTRIES];
    char err[256];
    int count = 0;
    if (cudart_fatbin_parse(copy, size, entries, MAX_ENTRIES, &count, err, sizeof err) == 0) {
        for (int i = 0; i < count; i++) {
            const unsigned char *data = entries[i].data;
            ck_assert(data >= copy && data <= copy + size);
            ck_assert_uint_le(entries[i].size, (size_t)(copy + size - data));
            char *out = NULL;
            size_t out_size = 0;
            if (cudart_fatbin_entry_decompress(&entries[i], &out, &out_size, err, sizeof err) ==
                0) {
                ck_assert_uint_eq(out_size, entries[i].uncompressed_size);
                ck_assert_int_eq(out[out_size], '\0');
                free(out);
            } else {
                ck_assert_ptr_null(out);
                ck_assert_uint_gt(strlen(err), 0);
            }
        }
        char *ptx = NULL;
        if (cudart_fatbin_extract_ptx(entries, count, 1000, &ptx, NULL, err, sizeof err) == 0)
            free(ptx);
        else
            ck_assert_ptr_null(ptx);
    } else {
        ck_assert_uint_gt(strlen(err), 0);
    }
    free(copy);
}

static const char *all_fixtures[] = {"ptx_raw.fatbin",     "ptx_zstd.fatbin",
                                     "ptx_lz4.fatbin",     "ptx_lineinfo.fatbin",
                                     "multi_arch.fatbin",  "cubin_only.fatbin",
                                     "rdc_prelinked.fatbin", "rdc_linked.fatbin"};
#define FIXTURE_COUNT (sizeof all_fixtures / sizeof all_fixtures[0])

START_TEST(test_truncation_is_an_error)
{
    fixture fx = load_fixture(all_fixtures[_i]);
    for (size_t length = 1; length < fx.size; length++) {
        unsigned char *copy = copy_bytes(fx.bytes, length);
        cudart_fatbin_entry entries[MAX_ENTRIES];
        int count = 0;
        char err[256] = "";
        ck_assert_int_eq(
            cudart_fatbin_parse(copy, length, entries, MAX_ENTRIES, &count, err, sizeof err), -1);
        ck_assert_uint_gt(strlen(err), 0);
        free(copy);
    }
    free(fx.bytes);
}
END_TEST

START_TEST(test_every_header_byte_corrupted)
{
    static const int replacements[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40};
    fixture fx = load_fixture(all_fixtures[_i]);
    unsigned char *bytes = copy_bytes(fx.bytes, fx.size);

    /* header byte ranges: the container header, then each entry header */
    size_t starts[MAX_ENTRIES + 1], ends[MAX_ENTRIES + 1];
    int ranges = 0;
    starts[ranges] = 0;
    ends[ranges++] = 16;
    size_t offset = 16;
    while (offset + 64 <= fx.size && ranges <= MAX_ENTRIES) {
        size_t header = get_u32(fx.bytes, offset + 4);
        starts[ranges] = offset;
        ends[ranges++] = offset + header;
        offset += header + (size_t)get_u64(fx.bytes, offset + 8);
    }

    for (int range = 0; range < ranges; range++) {
        for (size_t at = starts[range]; at < ends[range]; at++) {
            for (size_t r = 0; r < sizeof replacements / sizeof replacements[0]; r++) {
                bytes[at] = (unsigned char)replacements[r];
                exercise(bytes, fx.size);
                bytes[at] = (unsigned char)(fx.bytes[at] ^ replacements[r]);
                exercise(bytes, fx.size);
            }
            bytes[at] = fx.bytes[at];
        }
    }
    free(bytes);
    free(fx.bytes);
}
END_TEST

START_TEST(test_corrupt_compressed_payloads)
{
    const char *names[] = {"ptx_zstd.fatbin", "ptx_lz4.fatbin"};
    for (size_t n = 0; n < 2; n++) {
        fixture fx = load_fixture(names[n]);
        unsigned char *bytes = copy_bytes(fx.bytes, fx.size);
        for (size_t at = 96; at < fx.size; at++) {
            bytes[at] ^= 0xff;
            exercise(bytes, fx.size);
            bytes[at] = 0;
            exercise(bytes, fx.size);
            bytes[at] = fx.bytes[at];
        }
        free(bytes);
        free(fx.bytes);
    }
}
END_TEST

START_TEST(test_wrong_sizes_fail_decompression)
{
    const char *names[] = {"ptx_zstd.fatbin", "ptx_lz4.fatbin"};
    for (size_t n = 0; n < 2; n++) {
        fixture fx = load_fixture(names[n]);
        cudart_fatbin_entry entries[MAX_ENTRIES];
        parse_ok(&fx, entries);
        const size_t claims[] = {974, 976, 100000, 1u << 29};
        for (size_t c = 0; c < sizeof claims / sizeof claims[0]; c++) {
            cudart_fatbin_entry entry = entries[0];
            entry.uncompressed_size = claims[c];
            char *ptx = NULL;
            char err[256] = "";
            ck_assert_int_eq(
                cudart_fatbin_extract_ptx(&entry, 1, 80, &ptx, NULL, err, sizeof err), -1);
            ck_assert_ptr_null(ptx);
            ck_assert_ptr_nonnull(strstr(err, "cannot read the PTX for compute_80"));
            /* LZ4: refused from the ratio bound, before allocating 512 MiB */
            if (n == 1 && claims[c] == (1u << 29))
                ck_assert_ptr_nonnull(strstr(err, "uncompressed bytes from 521 LZ4 bytes"));
        }
        /* a compressed length cut short */
        cudart_fatbin_entry entry = entries[0];
        entry.size -= 10;
        char *text = NULL;
        char err[256] = "";
        ck_assert_int_eq(cudart_fatbin_entry_decompress(&entry, &text, NULL, err, sizeof err), -1);
        ck_assert_ptr_null(text);
        free(fx.bytes);
    }
}
END_TEST

START_TEST(test_random_corruption)
{
    fixture fx = load_fixture(all_fixtures[_i]);
    unsigned char *bytes = copy_bytes(fx.bytes, fx.size);
    uint32_t state = 0x9e3779b9u ^ (uint32_t)_i;
    for (int round = 0; round < 300; round++) {
        memcpy(bytes, fx.bytes, fx.size);
        for (int hit = 0; hit < 4; hit++) {
            state = state * 1664525u + 1013904223u;
            size_t at = (state >> 8) % fx.size;
            state = state * 1664525u + 1013904223u;
            bytes[at] = (unsigned char)(state >> 24);
        }
        exercise(bytes, fx.size);
    }
    free(bytes);
    free(fx.bytes);
}
END_TEST

static Suite *fatbin_suite(void)
{
    Suite *suite = suite_create("fatbin");

    TCase *parse = tcase_create("parse");
    tcase_add_test(parse, test_parse_raw_ptx);
    tcase_add_test(parse, test_parse_zstd_ptx);
    tcase_add_test(parse, test_parse_lz4_ptx);
    tcase_add_test(parse, test_parse_trusts_header_without_size);
    tcase_add_test(parse, test_parse_multi_arch);
    tcase_add_test(parse, test_parse_reports_too_many_entries);
    tcase_add_test(parse, test_parse_lineinfo_long_header);
    tcase_add_test(parse, test_parse_null_arguments);
    suite_add_tcase(suite, parse);

    TCase *extract = tcase_create("extract");
    tcase_add_test(extract, test_extract_same_ptx_from_every_form);
    tcase_add_test(extract, test_decompress_sizes);
    tcase_add_test(extract, test_select_by_max_sm);
    tcase_add_test(extract, test_ptx_only_for_higher_sm);
    tcase_add_test(extract, test_cubin_only_advises_gencode);
    tcase_add_test(extract, test_select_prefers_portable_ptx);
    tcase_add_test(extract, test_lto_only_and_empty_messages);
    suite_add_tcase(suite, extract);

    TCase *wrapper = tcase_create("wrapper");
    tcase_add_test(wrapper, test_wrapper_version1_in_section);
    tcase_add_test(wrapper, test_wrapper_version2_rdc);
    tcase_add_test(wrapper, test_wrapper_errors);
    suite_add_tcase(suite, wrapper);

    TCase *malformed = tcase_create("malformed");
    tcase_set_timeout(malformed, 120);
    tcase_add_test(malformed, test_corrupt_container_header);
    tcase_add_test(malformed, test_corrupt_entry_header);
    tcase_add_loop_test(malformed, test_truncation_is_an_error, 0, (int)FIXTURE_COUNT);
    tcase_add_loop_test(malformed, test_every_header_byte_corrupted, 0, (int)FIXTURE_COUNT);
    tcase_add_test(malformed, test_corrupt_compressed_payloads);
    tcase_add_test(malformed, test_wrong_sizes_fail_decompression);
    tcase_add_loop_test(malformed, test_random_corruption, 0, (int)FIXTURE_COUNT);
    suite_add_tcase(suite, malformed);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(fatbin_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* libFuzzer target for `kemu run`'s command line: each input is an
 * argument list, one argument per line, that goes through the kemu
 * command's own entry point (src/cli/main.c, built with its main renamed
 * kemu_cli_main) as `kemu run k.ptx LINE...`: option parsing, the ARG forms
 * (in:, out:, inout:, scratch:, scalars, bytes:, bytes@, tmap=), the launch
 * plan, the launch itself, the checkers' reports and the writing of outputs.
 * k.ptx is the fixed module tests/fuzz/fuzz_run.ptx (its path comes from
 * the macro FUZZ_RUN_PTX or the environment variable of that name).
 *
 * Each run happens in a scratch directory that holds k.ptx, a few .npy
 * files (good and bad) and a bytes file, rewritten before every input;
 * every other file is removed after it. A '/' in an argument becomes '_',
 * so that no argument names a file outside that directory. Inputs that ask
 * for more than the fuzzer should wait for are skipped: over 16 blocks,
 * over 4 host threads, or an array over 2^20 elements. Launches are bounded
 * by steps (KEMU_STEP_LIMIT), the CUDA backend is never found
 * (KEMU_CUDA_LIBRARY names no file), and KEMU_THREADS is 1.
 *
 * Bad arguments must only ever give an error with a message and exit status
 * 2, a kernel fault status 1; a crash, a sanitizer report, a hang (over
 * 10 s), a leak or an allocation over 2 GB is a bug. Built and run by
 * tests/fuzz/run.sh (FUZZ_TARGETS=run); seeds tests/fuzz/corpus-run/,
 * reproducers tests/fuzz/regressions-run/. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int kemu_cli_main(int argc, char **argv); /* src/cli/main.c's main */

enum { MAX_ARGS = 48, MAX_BLOCKS = 16, MAX_HOST_THREADS = 4 };
#define MAX_ELEMENTS ((unsigned long long)1 << 20)

static char scratch_dir[64];
static char *module_text;
static size_t module_length;

/* The files of the scratch directory: name, bytes, length. */
typedef struct fixed_file {
    const char *name;
    const char *bytes;
    size_t length;
} fixed_file;

/* Builds a .npy v1.0 file in buf: the header dict for descr and shape
 * padded to 64 bytes, then `length` bytes of data. Returns its size. */
static size_t make_npy(char *buf, size_t capacity, const char *descr, const char *shape, const void *data,
                       size_t length)
{
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t header = 64 - 10; /* the dict, spaces and a newline, so that data starts at 64 */
    while (header < (size_t)n + 1)
        header += 64;
    if (10 + header + length > capacity)
        abort();
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(header & 0xff);
    buf[9] = (char)(header >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', header - (size_t)n - 1);
    buf[10 + header - 1] = '\n';
    memcpy(buf + 10 + header, data, length);
    return 10 + header + length;
}

static fixed_file files[] = {
    {"k.ptx", NULL, 0},     /* FUZZ_RUN_PTX */
    {"x.npy", NULL, 0},     /* f32 (16,), all 1.0 */
    {"i.npy", NULL, 0},     /* i32 (2, 3), 1..6 */
    {"h.npy", NULL, 0},     /* f16 (4,) */
    {"short.npy", NULL, 0}, /* f32 (64,) with the data of one element */
    {"s.bin", "\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12},
};
enum { NFILES = sizeof files / sizeof files[0] };

static void make_files(void)
{
    static char x[256], i[256], h[256], shortened[256];
    float ones[16];
    for (int k = 0; k < 16; k++)
        ones[k] = 1.0f;
    const int32_t counts[6] = {1, 2, 3, 4, 5, 6};
    const uint16_t halves[4] = {0x3c00, 0x4000, 0x4200, 0x4400};
    files[1].bytes = x;
    files[1].length = make_npy(x, sizeof x, "<f4", "(16,)", ones, sizeof ones);
    files[2].bytes = i;
    files[2].length = make_npy(i, sizeof i, "<i4", "(2, 3)", counts, sizeof counts);
    files[3].bytes = h;
    files[3].length = make_npy(h, sizeof h, "<f2", "(4,)", halves, sizeof halves);
    files[4].bytes = shortened;
    files[4].length = make_npy(shortened, sizeof shortened, "<f4", "(64,)", ones, 4);
}

static int write_file(const char *name, const char *bytes, size_t length)
{
    /* unlink first: a fuzzed run may have left a file of another kind or mode */
    unlink(name);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    ssize_t wrote = length ? write(fd, bytes, length) : 0;
    close(fd);
    return wrote == (ssize_t)length ? 0 : -1;
}

/* Removes every file of the (current) scratch directory but the fixed ones. */
static void remove_others(int keep_fixed)
{
    DIR *dir = opendir(".");
    if (!dir)
        return;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        const char *name = entry->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        int fixed = 0;
        for (int i = 0; keep_fixed && i < NFILES; i++)
            if (!strcmp(name, files[i].name))
                fixed = 1;
        if (!fixed && unlink(name) != 0)
            rmdir(name);
    }
    closedir(dir);
}

static void remove_scratch(void)
{
    int back = open(".", O_RDONLY | O_DIRECTORY);
    if (chdir(scratch_dir) == 0) {
        remove_others(0);
        if (back >= 0 && fchdir(back) != 0)
            return;
    }
    if (back >= 0)
        close(back);
    rmdir(scratch_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("FUZZ_RUN_PTX");
#ifdef FUZZ_RUN_PTX
    if (!path)
        path = FUZZ_RUN_PTX;
#endif
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "fuzz_run: cannot read the module %s (set FUZZ_RUN_PTX)\n", path ? path : "(none)");
        abort();
    }
    static char text[65536];
    module_length = fread(text, 1, sizeof text, f);
    fclose(f);
    module_text = text;
    files[0].bytes = module_text;
    files[0].length = module_length;
    make_files();
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/kemu-fuzz-run.XXXXXX");
    if (!mkdtemp(scratch_dir))
        abort();
    atexit(remove_scratch);
    setenv("KEMU_STEP_LIMIT", "20000", 1);
    setenv("KEMU_THREADS", "1", 1);
    setenv("KEMU_CUDA_LIBRARY", "/nonexistent/kemu-fuzz/libcuda.so.1", 1);
    return 0;
}

/* The product of the numbers in "X[,Y[,Z]]" or "AxBxC", saturating; 0 when
 * the text holds no number. */
static unsigned long long product(const char *text)
{
    unsigned long long result = 1, value = 0;
    int digits = 0, any = 0;
    for (const char *p = text;; p++) {
        if (*p >= '0' && *p <= '9') {
            value = value > (1ull << 40) ? value : value * 10 + (unsigned long long)(*p - '0');
            digits = 1;
            continue;
        }
        if (digits) {
            result = value && result > (1ull << 40) / value ? 1ull << 41 : result * (value ? value : 1);
            any = 1;
        }
        value = 0;
        digits = 0;
        if (!*p)
            break;
    }
    return any ? result : 0;
}

static int is_dtype(const char *field, size_t length)
{
    static const char *const names[] = {"f16", "bf16", "f32", "f64", "i8",  "i16", "i32",
                                        "i64", "u8",   "u16", "u32", "u64", "bool"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == length && !strncmp(field, names[i], length))
            return 1;
    return 0;
}

/* 1 when an argument names an array of more than MAX_ELEMENTS elements: a
 * field of digits and 'x' after a dtype field, in an argument of more than
 * two fields (TYPE:VALUE is a scalar). */
static int too_large_array(const char *arg)
{
    int fields = 1;
    for (const char *p = arg; *p; p++)
        fields += *p == ':';
    if (fields <= 2)
        return 0;
    const char *previous = NULL;
    size_t previous_length = 0;
    for (const char *field = arg;;) {
        const char *end = strchr(field, ':');
        size_t length = end ? (size_t)(end - field) : strlen(field);
        int shape = length > 0;
        for (size_t i = 0; i < length; i++)
            if (!(field[i] >= '0' && field[i] <= '9') && field[i] != 'x')
                shape = 0;
        if (shape && previous && is_dtype(previous, previous_length)) {
            char copy[256];
            snprintf(copy, sizeof copy, "%.*s", (int)(length < 255 ? length : 255), field);
            if (length > 255 || product(copy) > MAX_ELEMENTS)
                return 1;
        }
        if (!end)
            break;
        previous = field;
        previous_length = length;
        field = end + 1;
    }
    return 0;
}

/* 1 when the argument list asks for a launch the fuzzer should not wait for. */
static int too_expensive(int argc, char **argv)
{
    unsigned long long blocks = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (too_large_array(a) || (!strncmp(a, "tmap=", 5) && too_large_array(strchr(a, ':') ? strchr(a, ':') + 1 : a)))
            return 1;
        if (strncmp(a, "--", 2))
            continue;
        const char *eq = strchr(a, '=');
        size_t name_length = eq ? (size_t)(eq - a) : strlen(a);
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : "";
        if ((name_length == 6 && !strncmp(a, "--grid", 6)) || (name_length == 9 && !strncmp(a, "--cluster", 9))) {
            unsigned long long n = product(value);
            blocks = n && blocks > (1ull << 40) / n ? 1ull << 41 : blocks * (n ? n : 1);
        } else if (name_length == 9 && !strncmp(a, "--threads", 9)) {
            if (product(value) > MAX_HOST_THREADS)
                return 1;
        }
    }
    return blocks > MAX_BLOCKS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = 0;
    char *argv[MAX_ARGS + 4];
    int argc = 0;
    argv[argc++] = (char *)"kemu";
    argv[argc++] = (char *)"run";
    argv[argc++] = (char *)"k.ptx";
    int fixed_args = argc;
    for (char *line = copy; argc < MAX_ARGS + 3;) {
        char *newline = memchr(line, '\n', (size_t)(copy + size - line));
        if (newline)
            *newline = 0;
        for (char *p = line; *p; p++)
            if (*p == '/')
                *p = '_';
        argv[argc++] = line;
        if (!newline)
            break;
        line = newline + 1;
    }
    argv[argc] = NULL;
    if (too_expensive(argc - fixed_args, argv + fixed_args)) {
        free(copy);
        return 0;
    }
    int back = open(".", O_RDONLY | O_DIRECTORY);
    if (back < 0 || chdir(scratch_dir) != 0) {
        if (back >= 0)
            close(back);
        free(copy);
        return 0;
    }
    for (int i = 0; i < NFILES; i++)
        if (write_file(files[i].name, files[i].bytes, files[i].length))
            abort();
    int status = kemu_cli_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    /* 0 success, 1 a kernel fault (or checkers' findings), 2 usage or input
     * error, 3 backend unavailable; --error-exitcode may give any 0-255 */
    if (status < 0 || status > 255)
        __builtin_trap();
    remove_others(1);
    if (fchdir(back) != 0)
        abort();
    close(back);
    free(copy);
    return 0;
}

/* Unit tests for the device printf formatter (src/vm/printf_format.c).
 *
 * Argument buffers are laid out by hand at the offsets the vprintf ABI
 * gives (promoted types at natural alignment), and every expected string is
 * written out literally rather than computed with the host snprintf.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm/printf_format.h"

/* ---- helpers ---------------------------------------------------------- */

static void put_u32(uint8_t *buffer, size_t offset, uint32_t value)
{
    for (int byte = 0; byte < 4; byte++)
        buffer[offset + (size_t)byte] = (uint8_t)(value >> (8 * byte));
}

static void put_u64(uint8_t *buffer, size_t offset, uint64_t value)
{
    for (int byte = 0; byte < 8; byte++)
        buffer[offset + (size_t)byte] = (uint8_t)(value >> (8 * byte));
}

static void put_f64(uint8_t *buffer, size_t offset, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    put_u64(buffer, offset, bits);
}

/* A tiny device memory with a few strings at fixed addresses. */
#define STRING_HELLO 0x1000u
#define STRING_EMPTY 0x2000u
#define STRING_LONG 0x3000u
#define STRING_BAD 0xdead0000u

static char long_string[10001];
static int read_calls;

static int fake_read_string(void *context, uint64_t address, char *buffer, size_t capacity)
{
    (void)context;
    read_calls++;
    const char *source;
    switch (address) {
    case STRING_HELLO: source = "hello"; break;
    case STRING_EMPTY: source = ""; break;
    case STRING_LONG: source = long_string; break;
    default: return -1;
    }
    if (capacity == 0)
        return 0;
    size_t length = strlen(source);
    if (length > capacity - 1)
        length = capacity - 1;
    memcpy(buffer, source, length);
    buffer[length] = '\0';
    return 0;
}

typedef struct {
    char *text;
    size_t length;
    size_t capacity;
    int result;
} formatted;

static formatted format_with(const char *format, const uint8_t *args, size_t size)
{
    formatted f = { NULL, 0, 0, 0 };
    f.result = vm_printf_format(format, args, size, fake_read_string, NULL,
                                &f.text, &f.length, &f.capacity);
    return f;
}

/* Formats and checks text, length and return value in one go. */
#define EXPECT_FORMAT(format, args, size, expected_text, expected_result)        \
    do {                                                                          \
        formatted f_ = format_with((format), (args), (size));                     \
        ck_assert_int_eq(f_.result, (expected_result));                           \
        ck_assert_ptr_nonnull(f_.text);                                           \
        ck_assert_str_eq(f_.text, (expected_text));                               \
        ck_assert_uint_eq(f_.length, strlen(expected_text));                      \
        free(f_.text);                                                            \
    } while (0)

/* One 4-byte int argument at offset 0. */
static void expect_int(const char *format, int32_t value, const char *expected)
{
    uint8_t buffer[4];
    put_u32(buffer, 0, (uint32_t)value);
    EXPECT_FORMAT(format, buffer, sizeof(buffer), expected, 1);
}

/* One 8-byte integer argument at offset 0. */
static void expect_long(const char *format, uint64_t value, const char *expected)
{
    uint8_t buffer[8];
    put_u64(buffer, 0, value);
    EXPECT_FORMAT(format, buffer, sizeof(buffer), expected, 1);
}

/* One double argument at offset 0. */
static void expect_double(const char *format, double value, const char *expected)
{
    uint8_t buffer[8];
    put_f64(buffer, 0, value);
    EXPECT_FORMAT(format, buffer, sizeof(buffer), expected, 1);
}

/* ---- plain text and %% ------------------------------------------------- */

START_TEST(test_plain_text_without_arguments)
{
    EXPECT_FORMAT("hello, world\n", NULL, 0, "hello, world\n", 0);
    EXPECT_FORMAT("", NULL, 0, "", 0);
    EXPECT_FORMAT("100%% sure %%d", NULL, 0, "100% sure %d", 0);
    EXPECT_FORMAT("%5%|", NULL, 0, "%|", 0);
}
END_TEST

START_TEST(test_null_format_returns_minus_one)
{
    char *text = NULL;
    size_t length = 0, capacity = 0;
    ck_assert_int_eq(vm_printf_format(NULL, NULL, 0, fake_read_string, NULL,
                                      &text, &length, &capacity), VM_PRINTF_NULL_FORMAT);
    ck_assert_int_eq(VM_PRINTF_NULL_FORMAT, -1);
    ck_assert_ptr_null(text);
    ck_assert_uint_eq(length, 0);
}
END_TEST

START_TEST(test_null_output_pointers_are_internal_error)
{
    char *text = NULL;
    size_t length = 0, capacity = 0;
    ck_assert_int_eq(vm_printf_format("x", NULL, 0, NULL, NULL, NULL, &length, &capacity),
                     VM_PRINTF_INTERNAL_ERROR);
    ck_assert_int_eq(vm_printf_format("x", NULL, 0, NULL, NULL, &text, NULL, &capacity),
                     VM_PRINTF_INTERNAL_ERROR);
    ck_assert_int_eq(vm_printf_format("x", NULL, 0, NULL, NULL, &text, &length, NULL),
                     VM_PRINTF_INTERNAL_ERROR);
    ck_assert_int_eq(VM_PRINTF_INTERNAL_ERROR, -2);
}
END_TEST

START_TEST(test_appends_to_existing_output)
{
    char *text = NULL;
    size_t length = 0, capacity = 0;
    uint8_t buffer[4];
    put_u32(buffer, 0, 7);
    ck_assert_int_eq(vm_printf_format("a=%d;", buffer, 4, NULL, NULL, &text, &length, &capacity), 1);
    put_u32(buffer, 0, 8);
    ck_assert_int_eq(vm_printf_format("b=%d;", buffer, 4, NULL, NULL, &text, &length, &capacity), 1);
    ck_assert_str_eq(text, "a=7;b=8;");
    ck_assert_uint_eq(length, 8);
    ck_assert_uint_gt(capacity, length);
    free(text);
}
END_TEST

START_TEST(test_grows_caller_buffer_without_room)
{
    /* A caller buffer that is exactly full (no room for the terminator). */
    char *text = malloc(3);
    ck_assert_ptr_nonnull(text);
    memcpy(text, "abc", 3);
    size_t length = 3, capacity = 3;
    ck_assert_int_eq(vm_printf_format("def", NULL, 0, NULL, NULL, &text, &length, &capacity), 0);
    ck_assert_uint_eq(length, 6);
    ck_assert_str_eq(text, "abcdef");
    free(text);
}
END_TEST

/* ---- integers ---------------------------------------------------------- */

START_TEST(test_signed_decimal_flags_width_precision)
{
    expect_int("%d", -42, "-42");
    expect_int("%i", 123, "123");
    expect_int("[%5d]", 42, "[   42]");
    expect_int("[%-5d]", 42, "[42   ]");
    expect_int("[%05d]", -42, "[-0042]");
    expect_int("[%+d]", 42, "[+42]");
    expect_int("[% d]", 42, "[ 42]");
    expect_int("[%+ d]", 42, "[+42]");
    expect_int("[%.3d]", 7, "[007]");
    expect_int("[%8.3d]", -7, "[    -007]");
    expect_int("[%-+6d]", 5, "[+5    ]");
    expect_int("[%0-5d]", 42, "[42   ]");
    expect_int("[%--5d]", 42, "[42   ]");
    expect_int("[%.0d]", 0, "[]");
    expect_int("%d", INT32_MIN, "-2147483648");
    expect_int("%d", INT32_MAX, "2147483647");
}
END_TEST

START_TEST(test_unsigned_octal_hex)
{
    expect_int("%u", -1, "4294967295");
    expect_int("%x", 255, "ff");
    expect_int("%X", 255, "FF");
    expect_int("%#x", 255, "0xff");
    expect_int("%#X", 255, "0XFF");
    expect_int("%#x", 0, "0");
    expect_int("%o", 8, "10");
    expect_int("%#o", 8, "010");
    expect_int("[%08x]", 0xbeef, "[0000beef]");
    expect_int("[%#10x]", 0xbeef, "[    0xbeef]");
    expect_int("[%#010x]", 0xbeef, "[0x0000beef]");
    expect_int("%x", -1, "ffffffff");
}
END_TEST

START_TEST(test_short_and_char_lengths_narrow_an_int_slot)
{
    expect_int("%hd", 70000, "4464");
    expect_int("%hd", 40000, "-25536");
    expect_int("%hu", -1, "65535");
    expect_int("%hx", 0x12345, "2345");
    expect_int("%hhd", 300, "44");
    expect_int("%hhd", 200, "-56");
    expect_int("%hhu", -1, "255");
    expect_int("%hhx", 0x1ff, "ff");
}
END_TEST

START_TEST(test_64bit_integers)
{
    expect_long("%lld", (uint64_t)INT64_MIN, "-9223372036854775808");
    expect_long("%ld", (uint64_t)(int64_t)-5, "-5");
    expect_long("%llu", UINT64_MAX, "18446744073709551615");
    expect_long("%lx", 0x123456789abcdef0ull, "123456789abcdef0");
    expect_long("%llX", 0x123456789abcdef0ull, "123456789ABCDEF0");
    expect_long("%#llo", 8, "010");
    expect_long("%zd", (uint64_t)(int64_t)-5, "-5");
    expect_long("%zu", 1ull << 40, "1099511627776");
    expect_long("%jd", (uint64_t)(int64_t)-6, "-6");
    expect_long("%td", (uint64_t)(int64_t)-7, "-7");
    expect_long("[%20lld]", 1, "[                   1]");
    expect_long("[%-+.4lld]", 12, "[+0012]");
}
END_TEST

/* ---- floating point ---------------------------------------------------- */

START_TEST(test_fixed_notation)
{
    expect_double("%f", 3.14159, "3.141590");
    expect_double("%lf", 1.0, "1.000000");
    expect_double("%Lf", 1.0, "1.000000");
    expect_double("%.2f", 0.125, "0.12");
    expect_double("%.0f", 2.5, "2");
    expect_double("%.0f", 3.5, "4");
    expect_double("%#.0f", 3.0, "3.");
    expect_double("[%10.3f]", -1.5, "[    -1.500]");
    expect_double("[%-10.1f]", 1.0, "[1.0       ]");
    expect_double("[%010.2f]", -3.5, "[-000003.50]");
    expect_double("%+.1f", 2.25, "+2.2");
    expect_double("% .1f", 2.0, " 2.0");
    expect_double("%F", 1.5, "1.500000");
    expect_double("%f", -0.0, "-0.000000");
}
END_TEST

START_TEST(test_exponent_and_general_notation)
{
    expect_double("%e", 12345.678, "1.234568e+04");
    expect_double("%E", 12345.678, "1.234568E+04");
    expect_double("%.2e", 0.000123, "1.23e-04");
    expect_double("[%-12.1e]", 1.0, "[1.0e+00     ]");
    expect_double("%e", 0.0, "0.000000e+00");
    expect_double("%g", 0.0001, "0.0001");
    expect_double("%g", 0.00001, "1e-05");
    expect_double("%G", 0.00001, "1E-05");
    expect_double("%g", 100000.0, "100000");
    expect_double("%g", 1000000.0, "1e+06");
    expect_double("%g", 3.5, "3.5");
    expect_double("%#g", 3.5, "3.50000");
    expect_double("%.3g", 3.14159, "3.14");
}
END_TEST

START_TEST(test_hex_float_and_specials)
{
    expect_double("%a", 1.0, "0x1p+0");
    expect_double("%A", 1.0, "0X1P+0");
    expect_double("%a", 0.5, "0x1p-1");
    expect_double("%a", -3.0, "-0x1.8p+1");
    expect_double("%f", INFINITY, "inf");
    expect_double("%F", INFINITY, "INF");
    expect_double("%f", -INFINITY, "-inf");
    expect_double("%e", NAN, "nan");
    expect_double("%E", NAN, "NAN");
    expect_double("[%6f]", INFINITY, "[   inf]");
    expect_double("%+g", INFINITY, "+inf");
}
END_TEST

/* ---- characters, strings, pointers ------------------------------------- */

START_TEST(test_character)
{
    expect_int("%c", 'A', "A");
    expect_int("[%3c]", 'A', "[  A]");
    expect_int("[%-3c]", 'A', "[A  ]");
    expect_int("%lc", 'z', "z");
    expect_int("%c", 'A' + 256, "A"); /* the int is narrowed to unsigned char */
}
END_TEST

START_TEST(test_character_zero_is_a_nul_byte)
{
    uint8_t buffer[4];
    put_u32(buffer, 0, 0);
    formatted f = format_with("a%cb", buffer, sizeof(buffer));
    ck_assert_int_eq(f.result, 1);
    ck_assert_uint_eq(f.length, 3);
    ck_assert_int_eq(memcmp(f.text, "a\0b", 4), 0);
    free(f.text);
}
END_TEST

START_TEST(test_string_through_callback)
{
    uint8_t buffer[8];
    put_u64(buffer, 0, STRING_HELLO);
    EXPECT_FORMAT("%s!", buffer, 8, "hello!", 1);
    EXPECT_FORMAT("[%10s]", buffer, 8, "[     hello]", 1);
    EXPECT_FORMAT("[%-10s]", buffer, 8, "[hello     ]", 1);
    EXPECT_FORMAT("[%.3s]", buffer, 8, "[hel]", 1);
    EXPECT_FORMAT("[%6.2s]", buffer, 8, "[    he]", 1);
    EXPECT_FORMAT("[%.0s]", buffer, 8, "[]", 1);
    EXPECT_FORMAT("[%ls]", buffer, 8, "[hello]", 1);
    put_u64(buffer, 0, STRING_EMPTY);
    EXPECT_FORMAT("[%s]", buffer, 8, "[]", 1);
    EXPECT_FORMAT("[%3s]", buffer, 8, "[   ]", 1);
}
END_TEST

START_TEST(test_string_invalid_or_null_address)
{
    uint8_t buffer[8];
    /* a wild pointer is shown whole, under the width but not the precision */
    put_u64(buffer, 0, STRING_BAD);
    EXPECT_FORMAT("[%s]", buffer, 8, "[(invalid %s pointer 0xdead0000)]", 1);
    EXPECT_FORMAT("[%36s]", buffer, 8, "[     (invalid %s pointer 0xdead0000)]", 1);
    EXPECT_FORMAT("[%.3s]", buffer, 8, "[(invalid %s pointer 0xdead0000)]", 1);
    put_u64(buffer, 0, 0);
    read_calls = 0;
    EXPECT_FORMAT("[%s]", buffer, 8, "[(null)]", 1);
    ck_assert_int_eq(read_calls, 0);

    /* No callback at all: every string is unreadable. */
    put_u64(buffer, 0, STRING_HELLO);
    char *text = NULL;
    size_t length = 0, capacity = 0;
    ck_assert_int_eq(vm_printf_format("%s", buffer, 8, NULL, NULL, &text, &length, &capacity), 1);
    ck_assert_str_eq(text, "(null)");
    free(text);
}
END_TEST

START_TEST(test_long_string_is_read_whole)
{
    for (size_t i = 0; i < sizeof(long_string) - 1; i++)
        long_string[i] = (char)('a' + i % 26);
    long_string[sizeof(long_string) - 1] = '\0';
    uint8_t buffer[8];
    put_u64(buffer, 0, STRING_LONG);
    formatted f = format_with("<%s>", buffer, 8);
    ck_assert_int_eq(f.result, 1);
    ck_assert_uint_eq(f.length, 10002);
    ck_assert_int_eq(f.text[0], '<');
    ck_assert_int_eq(memcmp(f.text + 1, long_string, 10000), 0);
    ck_assert_int_eq(f.text[10001], '>');
    free(f.text);

    /* With a precision the read stops at the precision. */
    read_calls = 0;
    f = format_with("%.300s", buffer, 8);
    ck_assert_uint_eq(f.length, 300);
    ck_assert_int_eq(memcmp(f.text, long_string, 300), 0);
    ck_assert_int_eq(read_calls, 2);
    free(f.text);
}
END_TEST

START_TEST(test_pointer)
{
    expect_long("%p", 0x7f0012345678ull, "0x7f0012345678");
    expect_long("%p", 0, "(nil)");
    expect_long("[%20p]", 0x1234, "[              0x1234]");
    expect_long("[%-10p]", 0xabc, "[0xabc     ]");
    expect_long("[%8p]", 0, "[   (nil)]");
}
END_TEST

/* ---- buffer layout ----------------------------------------------------- */

START_TEST(test_mixed_layout_alignment)
{
    /* printf("%d %f %lld %c %s %d", 1, 2.5, -3LL, 'x', "hello", 9):
     * int@0, pad, double@8, long long@16, int(char)@24, pad, ptr@32, int@40. */
    uint8_t buffer[44];
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, 1);
    put_f64(buffer, 8, 2.5);
    put_u64(buffer, 16, (uint64_t)(int64_t)-3);
    put_u32(buffer, 24, 'x');
    put_u64(buffer, 32, STRING_HELLO);
    put_u32(buffer, 40, 9);
    EXPECT_FORMAT("%d %f %lld %c %s %d", buffer, sizeof(buffer),
                  "1 2.500000 -3 x hello 9", 6);
}
END_TEST

START_TEST(test_consecutive_ints_then_double)
{
    /* printf("%d %d %.1f %d", 1, 2, 0.5f, 3): int@0, int@4, double@8, int@16. */
    uint8_t buffer[20];
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, 1);
    put_u32(buffer, 4, 2);
    put_f64(buffer, 8, 0.5);
    put_u32(buffer, 16, 3);
    EXPECT_FORMAT("%d %d %.1f %d", buffer, sizeof(buffer), "1 2 0.5 3", 4);
}
END_TEST

START_TEST(test_char_then_long_and_short_then_double)
{
    /* printf("%c%lld", 'a', 1LL<<40): int@0, pad, long long@8. */
    uint8_t buffer[16];
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, 'a');
    put_u64(buffer, 8, 1ull << 40);
    EXPECT_FORMAT("%c%lld", buffer, sizeof(buffer), "a1099511627776", 2);

    /* printf("%hhd|%e", (char)-1, 1.0f): int@0, pad, double@8. */
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, (uint32_t)-1);
    put_f64(buffer, 8, 1.0);
    EXPECT_FORMAT("%hhd|%e", buffer, sizeof(buffer), "-1|1.000000e+00", 2);

    /* printf("%p %x", ptr, 16): ptr@0, int@8. */
    uint8_t buffer2[12];
    put_u64(buffer2, 0, 0x10);
    put_u32(buffer2, 8, 16);
    EXPECT_FORMAT("%p %x", buffer2, sizeof(buffer2), "0x10 10", 2);
}
END_TEST

/* ---- star width and precision ----------------------------------------- */

START_TEST(test_star_width_and_precision)
{
    uint8_t buffer[16];
    /* printf("[%*d]", 5, 42): int@0, int@4. */
    put_u32(buffer, 0, 5);
    put_u32(buffer, 4, 42);
    EXPECT_FORMAT("[%*d]", buffer, 8, "[   42]", 2);
    EXPECT_FORMAT("[%-*d]", buffer, 8, "[42   ]", 2);
    /* Negative width means left-justified. */
    put_u32(buffer, 0, (uint32_t)-5);
    EXPECT_FORMAT("[%*d]", buffer, 8, "[42   ]", 2);

    /* printf("%.*f", 2, 3.14159): int@0, pad, double@8. */
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, 2);
    put_f64(buffer, 8, 3.14159);
    EXPECT_FORMAT("%.*f", buffer, 16, "3.14", 2);
    /* Negative precision means none. */
    put_u32(buffer, 0, (uint32_t)-1);
    EXPECT_FORMAT("%.*f", buffer, 16, "3.141590", 2);

    /* printf("[%*.*s]", 6, 2, "hello"): int@0, int@4, ptr@8. */
    put_u32(buffer, 0, 6);
    put_u32(buffer, 4, 2);
    put_u64(buffer, 8, STRING_HELLO);
    EXPECT_FORMAT("[%*.*s]", buffer, 16, "[    he]", 3);
}
END_TEST

/* ---- missing arguments, limits, unknown specifiers --------------------- */

START_TEST(test_missing_arguments_print_specifier)
{
    uint8_t buffer[16];
    memset(buffer, 0, sizeof(buffer));
    put_u32(buffer, 0, 7);
    /* Second int does not fit in 4 bytes. */
    EXPECT_FORMAT("%d %d", buffer, 4, "7 %d", 1);
    /* A long long needs 8 bytes. */
    EXPECT_FORMAT("[%lld]", buffer, 4, "[%lld]", 0);
    /* The double would sit at offset 8..16 but the buffer has 12 bytes; the
     * int after it is missing too even though 4 bytes are left. */
    EXPECT_FORMAT("%d %5.2f %d", buffer, 12, "7 %5.2f %d", 1);
    /* No buffer at all. */
    EXPECT_FORMAT("a%db%sc", NULL, 16, "a%db%sc", 0);
    EXPECT_FORMAT("a%db", buffer, 0, "a%db", 0);
    /* Star width present, value missing: the whole specifier is printed
     * and nothing is taken. */
    put_u32(buffer, 0, 5);
    EXPECT_FORMAT("[%*d]", buffer, 4, "[%*d]", 0);
    /* %% still works after arguments ran out. */
    EXPECT_FORMAT("%d %d 100%%", buffer, 4, "5 %d 100%", 1);
}
END_TEST

START_TEST(test_at_most_32_arguments)
{
    uint8_t buffer[33 * 4];
    char format[33 * 3 + 1];
    char expected[256];
    size_t expected_length = 0;
    for (int i = 0; i < 33; i++) {
        put_u32(buffer, (size_t)i * 4, (uint32_t)(i % 10));
        memcpy(format + i * 3, "%d,", 3);
    }
    format[33 * 3] = '\0';
    for (int i = 0; i < 32; i++) {
        expected[expected_length++] = (char)('0' + i % 10);
        expected[expected_length++] = ',';
    }
    memcpy(expected + expected_length, "%d,", 4);
    EXPECT_FORMAT(format, buffer, sizeof(buffer), expected, 32);

    /* 31 ints then "%*d" needs two more slots: printed as written. */
    char star_format[31 * 2 + 4 + 1];
    for (int i = 0; i < 31; i++)
        memcpy(star_format + i * 2, "%d", 2);
    memcpy(star_format + 62, "|%*d", 5);
    char star_expected[31 + 5];
    for (int i = 0; i < 31; i++)
        star_expected[i] = (char)('0' + i % 10);
    memcpy(star_expected + 31, "|%*d", 5);
    EXPECT_FORMAT(star_format, buffer, sizeof(buffer), star_expected, 31);
}
END_TEST

START_TEST(test_percent_n_writes_nothing_and_skips_its_slot)
{
    /* printf("%d%n%d", 1, &count, 2): int@0, pad, ptr@8, int@16. */
    uint8_t buffer[20];
    memset(buffer, 0xcc, sizeof(buffer));
    put_u32(buffer, 0, 1);
    put_u64(buffer, 8, 0x5000);
    put_u32(buffer, 16, 2);
    EXPECT_FORMAT("%d%n%d", buffer, sizeof(buffer), "1%n2", 3);
    /* The pointer slot is read-only input: the buffer is unchanged. */
    ck_assert_uint_eq(buffer[8], 0x00);
    ck_assert_uint_eq(buffer[9], 0x50);
}
END_TEST

START_TEST(test_unknown_and_incomplete_specifiers)
{
    uint8_t buffer[4];
    put_u32(buffer, 0, 3);
    /* Unknown conversions take nothing: the %d still gets the 3. */
    EXPECT_FORMAT("%y %5k %d", buffer, 4, "%y %5k 3", 1);
    EXPECT_FORMAT("%1$d", buffer, 4, "%1$d", 0);
    EXPECT_FORMAT("%lhd|%d", buffer, 4, "%lhd|3", 1);
    EXPECT_FORMAT("end %", NULL, 0, "end %", 0);
    EXPECT_FORMAT("end %-08.", NULL, 0, "end %-08.", 0);
    EXPECT_FORMAT("end %ll", NULL, 0, "end %ll", 0);
}
END_TEST

START_TEST(test_huge_width_is_clamped)
{
    uint8_t buffer[8];
    put_u32(buffer, 0, 1);
    formatted f = format_with("%99999999999999999999d", buffer, 4);
    ck_assert_int_eq(f.result, 1);
    ck_assert_uint_eq(f.length, VM_PRINTF_MAX_FIELD);
    ck_assert_int_eq(f.text[VM_PRINTF_MAX_FIELD - 1], '1');
    ck_assert_int_eq(f.text[0], ' ');
    free(f.text);

    /* A star width of INT_MIN becomes a clamped left-justified field. */
    put_u32(buffer, 0, 0x80000000u);
    put_u32(buffer, 4, 1);
    f = format_with("%*d", buffer, 8);
    ck_assert_int_eq(f.result, 2);
    ck_assert_uint_eq(f.length, VM_PRINTF_MAX_FIELD);
    ck_assert_int_eq(f.text[0], '1');
    ck_assert_int_eq(f.text[VM_PRINTF_MAX_FIELD - 1], ' ');
    free(f.text);
}
END_TEST

/* Formats with vm_printf_format_checked and checks the problem it names. */
static void expect_problem(const char *format, const uint8_t *args, size_t size, const char *expected_text,
                           const char *expected_problem)
{
    char *text = NULL, problem[256];
    size_t length = 0, capacity = 0;
    memset(problem, 'x', sizeof(problem));
    vm_printf_format_checked(format, args, size, fake_read_string, NULL, &text, &length, &capacity, problem,
                             sizeof(problem));
    ck_assert_str_eq(text, expected_text);
    ck_assert_str_eq(problem, expected_problem);
    free(text);
}

START_TEST(test_problems_are_named)
{
    uint8_t buffer[8];
    put_u64(buffer, 0, STRING_HELLO);
    expect_problem("[%s]", buffer, 8, "[hello]", "");
    expect_problem("plain", NULL, 0, "plain", "");
    put_u64(buffer, 0, 0);
    expect_problem("[%s]", buffer, 8, "[(null)]", "");
    put_u64(buffer, 0, STRING_BAD);
    expect_problem("[%s]", buffer, 8, "[(invalid %s pointer 0xdead0000)]",
                   "%s argument 1 is 0xdead0000, not a readable device address; printed \"(invalid %s pointer 0xdead0000)\"");
    put_u32(buffer, 0, 5);
    expect_problem("%y %d", buffer, 4, "%y 5", "unknown conversion '%y'; printed as written");
    expect_problem("%d %\033", buffer, 4, "5 %\033", "unknown conversion '%\\x1b'; printed as written");
    expect_problem("%d %-", buffer, 4, "5 %-", "the format ends inside the conversion '%-'; printed as written");
    expect_problem("%d %d", buffer, 4, "5 %d", "the arguments (4 bytes) end before '%d'; printed as written");
    expect_problem("%n", buffer, 8, "%n", "'%n' writes nothing on the device; printed as written");
    /* only the first problem is named */
    expect_problem("%y %z", buffer, 4, "%y %z", "unknown conversion '%y'; printed as written");
    uint8_t many[4 * 33] = {0};
    char format[3 * 33 + 1] = "";
    for (int i = 0; i < 33; i++)
        strcat(format, "%d ");
    char *text = NULL, problem[128];
    size_t length = 0, capacity = 0;
    vm_printf_format_checked(format, many, sizeof(many), NULL, NULL, &text, &length, &capacity, problem,
                             sizeof(problem));
    ck_assert_str_eq(problem, "'%d' is past the 32 arguments printf takes; printed as written");
    free(text);
}
END_TEST

static Suite *printf_format_suite(void)
{
    Suite *suite = suite_create("printf_format");
    TCase *basics = tcase_create("basics");
    tcase_add_test(basics, test_plain_text_without_arguments);
    tcase_add_test(basics, test_null_format_returns_minus_one);
    tcase_add_test(basics, test_null_output_pointers_are_internal_error);
    tcase_add_test(basics, test_appends_to_existing_output);
    tcase_add_test(basics, test_grows_caller_buffer_without_room);
    suite_add_tcase(suite, basics);

    TCase *conversions = tcase_create("conversions");
    tcase_add_test(conversions, test_signed_decimal_flags_width_precision);
    tcase_add_test(conversions, test_unsigned_octal_hex);
    tcase_add_test(conversions, test_short_and_char_lengths_narrow_an_int_slot);
    tcase_add_test(conversions, test_64bit_integers);
    tcase_add_test(conversions, test_fixed_notation);
    tcase_add_test(conversions, test_exponent_and_general_notation);
    tcase_add_test(conversions, test_hex_float_and_specials);
    tcase_add_test(conversions, test_character);
    tcase_add_test(conversions, test_character_zero_is_a_nul_byte);
    tcase_add_test(conversions, test_string_through_callback);
    tcase_add_test(conversions, test_string_invalid_or_null_address);
    tcase_add_test(conversions, test_problems_are_named);
    tcase_add_test(conversions, test_long_string_is_read_whole);
    tcase_add_test(conversions, test_pointer);
    suite_add_tcase(suite, conversions);

    TCase *layout = tcase_create("layout");
    tcase_add_test(layout, test_mixed_layout_alignment);
    tcase_add_test(layout, test_consecutive_ints_then_double);
    tcase_add_test(layout, test_char_then_long_and_short_then_double);
    tcase_add_test(layout, test_star_width_and_precision);
    suite_add_tcase(suite, layout);

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_missing_arguments_print_specifier);
    tcase_add_test(limits, test_at_most_32_arguments);
    tcase_add_test(limits, test_percent_n_writes_nothing_and_skips_its_slot);
    tcase_add_test(limits, test_unknown_and_incomplete_specifiers);
    tcase_add_test(limits, test_huge_width_is_clamped);
    suite_add_tcase(suite, limits);
    return suite;
}

int main(void)
{
    SRunner *runner = srunner_create(printf_format_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

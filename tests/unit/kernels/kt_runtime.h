/* kt_runtime.h - kernel tests: memory spaces and calls, device printf,
 * assert and malloc, faults and hangs (tests/kernels/{memory,printf,
 * faults}.cu).
 *
 * Outputs are compared with C references; printf text with the host's
 * snprintf of the same formats; faults through kemu_report.fault_message,
 * which must name the kernel, the block and the thread (and, for assert,
 * carry CUDA's exact "file:line: function: block: [..], thread: [..]
 * Assertion `expr` failed." line). Included once, by test_kernels.c only.
 */
#ifndef KT_RUNTIME_H
#define KT_RUNTIME_H

#include "kt_harness.h"

/* ---- memory.cu --------------------------------------------------------- */

/* local_array (a dynamically indexed 64-int local array) and recursion
 * (recursive __noinline__ fib and ackermann through .func calls). */
START_TEST(test_local_recursion)
{
    enum { N = 200 };
    static int32_t idx[4 * N], got[N], want[N];
    static uint32_t in[N], rgot[2 * N], rwant[2 * N];
    kt_rng r = {90};
    for (int i = 0; i < N; i++) {
        int s = 0;
        for (int k = 0; k < 4; k++) {
            idx[4 * i + k] = (int32_t)kt_rand(&r);
            int j = idx[4 * i + k] & 63;
            s += j * j + i;
        }
        want[i] = s;
        in[i] = kt_rand(&r);
        uint32_t f[20] = {0, 1};
        for (int k = 2; k < 20; k++)
            f[k] = f[k - 1] + f[k - 2];
        rwant[2 * i] = f[in[i] % 20];
        rwant[2 * i + 1] = 2 * (in[i] % 8) + 3; /* ackermann(2, k) */
    }
    kt_ctx c;
    kt_open(&c, "memory", _i, 0);
    int n = N;
    uint64_t di = kt_buf(&c, idx, sizeof idx), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "local_array", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "local_array", (uint32_t *)got, (uint32_t *)want, N, 1);
    di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof rgot);
    kt_run(&c, "recursion", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, rgot, dout, sizeof rgot);
    KT_EXPECT(&c, "recursion (fib, ackermann)", rgot, rwant, 2 * N, 2);
    kt_close(&c);
}
END_TEST

/* struct_param: a char and a padded 32-byte struct (char, double, int4)
 * passed by value; the .func mixed_sum reads the struct and a generic
 * pointer to global, then to shared memory. */
START_TEST(test_struct_param)
{
    unsigned char m[32];
    float x[4] = {0.25f, -1.5f, 3.0f, 1e-3f};
    double got[3], want[3];
    int32_t quad[4] = {-7, 11, 100000, -3};
    double value = 12345.678;
    char tag = 'Z';
    memset(m, 0xee, sizeof m);
    m[0] = (unsigned char)tag;
    memcpy(m + 8, &value, 8);
    memcpy(m + 16, quad, 16);
    double s = (double)tag + value;
    for (int k = 0; k < 4; k++)
        s += quad[k];
    for (int k = 0; k < 4; k++)
        s += x[k];
    char cparam = -5;
    want[0] = -5.0, want[1] = s, want[2] = s;
    kt_ctx c;
    kt_open(&c, "memory", _i, 0);
    uint64_t dx = kt_buf(&c, x, sizeof x), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&cparam, m, &dx, &dout};
    kt_run(&c, "struct_param", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "struct_param (c, sum over global, sum over shared)", (uint64_t *)got, (uint64_t *)want, 3, 1);
    kt_close(&c);
}
END_TEST

/* const_and_globals: ld.const of an initialized table times a __device__
 * float, an atomic counter in a __device__ variable; then g_scale and the
 * __constant__ table are rewritten through kemu_module_get_global (as
 * cudaMemcpyToSymbol does) and the kernel runs again. */
START_TEST(test_const_globals)
{
    enum { N = 300 };
    static const int initial[16] = {1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987};
    int table[16];
    static int32_t in[N];
    static float got[N], want[N];
    kt_rng r = {91};
    for (int i = 0; i < N; i++)
        in[i] = (int32_t)kt_rand(&r);
    memcpy(table, initial, sizeof table);
    kt_ctx c;
    kt_open(&c, "memory", _i, 0);
    uint64_t g_calls = 0, g_scale = 0, c_table = 0;
    size_t size = 0;
    ck_assert_msg(kemu_module_get_global(c.mod, "g_calls", &g_calls, &size, &c.err) == KEMU_OK && size == 4,
                  "%s: g_calls: %s", c.where, c.err.message);
    ck_assert_msg(kemu_module_get_global(c.mod, "g_scale", &g_scale, &size, &c.err) == KEMU_OK && size == 4,
                  "%s: g_scale: %s", c.where, c.err.message);
    ck_assert_msg(kemu_module_get_global(c.mod, "c_table", &c_table, &size, &c.err) == KEMU_OK && size == 64,
                  "%s: c_table: %s", c.where, c.err.message);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got), dcalls = kt_buf(&c, NULL, 4);
    int n = N;
    void *args[] = {&di, &dout, &dcalls, &n};
    static const char *what[3] = {"const_and_globals", "const_and_globals after rewriting g_scale",
                                  "const_and_globals after rewriting c_table"};
    for (int round = 0; round < 3; round++) {
        float scale = round ? -0.125f : 2.5f;
        uint32_t zero = 0;
        if (round == 1) {
            kt_put(&c, g_scale, &scale, 4);
            kt_put(&c, g_calls, &zero, 4);
        }
        if (round == 2) {
            for (int k = 0; k < 16; k++)
                table[k] = 1000 - 37 * k;
            kt_put(&c, c_table, table, sizeof table);
            kt_put(&c, g_calls, &zero, 4);
        }
        for (int i = 0; i < N; i++)
            want[i] = (float)table[in[i] & 15] * scale;
        kt_run(&c, "const_and_globals", KT_D1(3), KT_D1(128), 0, args);
        kt_get(&c, got, dout, sizeof got);
        uint32_t calls = 0, counter = 0, wantn = N;
        kt_get(&c, &calls, dcalls, 4);
        kt_get(&c, &counter, g_calls, 4);
        KT_EXPECT(&c, what[round], (uint32_t *)got, (uint32_t *)want, N, 1);
        KT_EXPECT(&c, "const_and_globals calls[0]", &calls, &wantn, 1, 1);
        KT_EXPECT(&c, "const_and_globals g_calls", &counter, &wantn, 1, 1);
    }
    kt_close(&c);
}
END_TEST

/* vector_io (ld/st.v4.f32 and .v2.s32, ld.global.nc), ldg_restrict and
 * byte_access (u8/s8/u16 loads and stores with sign extension). */
START_TEST(test_vector_bytes)
{
    enum { N = 150 };
    static float in4[4 * N], out4[4 * N], w4[4 * N], ro[N], wro[N], x[N], y[N], wy[N];
    static int32_t in2[2 * N], out2[2 * N], w2[2 * N], bout[N], wb[N];
    static int8_t bytes[N];
    static int16_t o16[N], w16[N];
    kt_rng r = {92};
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 4; k++) {
            in4[4 * i + k] = kt_randf(&r, -100, 100);
            w4[4 * i + k] = in4[4 * i + k] * 2;
        }
        in2[2 * i] = (int32_t)kt_rand(&r) % 100000, in2[2 * i + 1] = (int32_t)kt_rand(&r);
        w2[2 * i] = in2[2 * i + 1], w2[2 * i + 1] = in2[2 * i];
        wro[i] = in4[4 * i] + (float)in2[2 * i];
        x[i] = kt_randf(&r, -1, 1);
        bytes[i] = (int8_t)kt_rand(&r);
        wb[i] = bytes[i] * 3;
        w16[i] = (int16_t)((int16_t)(uint16_t)((uint32_t)bytes[i] << 8) >> 3);
    }
    for (int i = 0; i < N; i++)
        wy[i] = x[i] + x[N - 1 - i];
    kt_ctx c;
    kt_open(&c, "memory", _i, 0);
    uint64_t d4 = kt_buf(&c, in4, sizeof in4), o4 = kt_buf(&c, NULL, sizeof out4), d2 = kt_buf(&c, in2, sizeof in2),
             o2 = kt_buf(&c, NULL, sizeof out2), dro = kt_buf(&c, NULL, sizeof ro);
    int n = N;
    void *args[] = {&d4, &o4, &d2, &o2, &dro, &n};
    kt_run(&c, "vector_io", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, out4, o4, sizeof out4);
    kt_get(&c, out2, o2, sizeof out2);
    kt_get(&c, ro, dro, sizeof ro);
    KT_EXPECT(&c, "vector_io float4", (uint32_t *)out4, (uint32_t *)w4, 4 * N, 4);
    KT_EXPECT(&c, "vector_io int2 swapped", (uint32_t *)out2, (uint32_t *)w2, 2 * N, 2);
    KT_EXPECT(&c, "vector_io __ldg sum", (uint32_t *)ro, (uint32_t *)wro, N, 1);
    uint64_t dx = kt_buf(&c, x, sizeof x), dy = kt_buf(&c, NULL, sizeof y);
    void *largs[] = {&dx, &dy, &n};
    kt_run(&c, "ldg_restrict", KT_D1(2), KT_D1(128), 0, largs);
    kt_get(&c, y, dy, sizeof y);
    KT_EXPECT(&c, "ldg_restrict", (uint32_t *)y, (uint32_t *)wy, N, 1);
    uint64_t db = kt_buf(&c, bytes, sizeof bytes), dbo = kt_buf(&c, NULL, sizeof bout),
             d16 = kt_buf(&c, NULL, sizeof o16);
    void *bargs[] = {&db, &dbo, &d16, &n};
    kt_run(&c, "byte_access", KT_D1(2), KT_D1(128), 0, bargs);
    kt_get(&c, bout, dbo, sizeof bout);
    kt_get(&c, o16, d16, sizeof o16);
    KT_EXPECT(&c, "byte_access s8 * 3", (uint32_t *)bout, (uint32_t *)wb, N, 1);
    KT_EXPECT(&c, "byte_access s16 shifts", (uint16_t *)o16, (uint16_t *)w16, N, 1);
    kt_close(&c);
}
END_TEST

/* volatile_poll: warp 0 spins on a volatile flag that warp 1 sets; the
 * scheduler must switch away from the spinning warp (10 s timeout). */
START_TEST(test_volatile_poll)
{
    kt_ctx c;
    kt_open(&c, "memory", _i, 10);
    int32_t zero = 0, got = 0, want = 42;
    uint64_t flag = kt_buf(&c, &zero, 4), data = kt_buf(&c, &zero, 4), out = kt_buf(&c, &zero, 4);
    void *args[] = {&flag, &data, &out};
    kt_run(&c, "volatile_poll", KT_D1(1), KT_D1(64), 0, args);
    kt_get(&c, &got, out, 4);
    KT_EXPECT(&c, "volatile_poll", (uint32_t *)&got, (uint32_t *)&want, 1, 1);
    kt_close(&c);
}
END_TEST

/* shared_wavefront: Rodinia nw's anti-diagonal sweep over a shared table,
 * where nvcc -O3 addresses cells as [%r+imm] from a 32-bit shared address
 * below the table; the sum wraps at 2^32 (kemu used to fault "out-of-bounds
 * shared load of 4 bytes at offset 4294967300"). n = 16 and 11 steps. */
START_TEST(test_shared_wavefront)
{
    static int32_t in[17 * 17], got[16], want[16];
    kt_rng r = {93};
    for (int i = 0; i < 17 * 17; i++)
        in[i] = (int32_t)(kt_rand(&r) % 2001) - 1000;
    kt_ctx c;
    kt_open(&c, "memory", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    for (int n = 16; n >= 11; n -= 5) {
        for (int tx = 0; tx < 16; tx++) {
            uint32_t acc = 0;
            for (int m = tx; m < n; m++) {
                int y = m - tx + 1, x = tx + 1;
                acc += (uint32_t)in[(y - 1) * 17 + x - 1] + (uint32_t)in[y * 17 + x - 1] +
                       (uint32_t)in[(y - 1) * 17 + x];
            }
            want[tx] = (int32_t)acc;
        }
        void *args[] = {&di, &dout, &n};
        kt_run(&c, "shared_wavefront", KT_D1(1), KT_D1(16), 0, args);
        kt_get(&c, got, dout, sizeof got);
        KT_EXPECT(&c, n == 16 ? "shared_wavefront n=16" : "shared_wavefront n=11", got, want, 16, 1);
    }
    kt_close(&c);
}
END_TEST

/* ---- printf.cu --------------------------------------------------------- */

/* print_formats: 3 blocks, thread 0 of each prints %d %u %x %f %e %g
 * %5.2f %s %c %p %lld %llu; the text must equal the host's snprintf of
 * the same formats, in block order. */
START_TEST(test_printf_formats)
{
    kt_ctx c;
    kt_open(&c, "printf", _i, 0);
    int v = -42;
    double d = 3.14159265358979;
    uint64_t ptr = kt_buf(&c, NULL, 16);
    char want[4096];
    size_t len = 0;
    for (int b = 0; b < 3; b++) {
        len += (size_t)snprintf(want + len, sizeof want - len, "block %d: d=%d u=%u x=%x\n", b, v, (unsigned)v,
                                (unsigned)v);
        len += (size_t)snprintf(want + len, sizeof want - len, "f=%f e=%e g=%g w=%5.2f\n", d, d, d, (double)(float)d);
        len += (size_t)snprintf(want + len, sizeof want - len, "s=%s c=%c p=%p\n", "kemu", 'A' + b,
                                (void *)(uintptr_t)ptr);
        len += (size_t)snprintf(want + len, sizeof want - len, "lld=%lld llu=%llu\n", (long long)v * -1000000000LL,
                                18446744073709551615ULL);
    }
    void *args[] = {&v, &d, &ptr};
    kemu_report rep;
    kemu_status st = kt_launch(&c, "print_formats", KT_D1(3), KT_D1(32), 0, args, &rep);
    ck_assert_msg(st == KEMU_OK, "%s: print_formats: %s", c.where, c.err.message);
    ck_assert_msg(rep.printf_output && rep.printf_length == len && memcmp(rep.printf_output, want, len) == 0,
                  "%s: print_formats printed (%zu bytes):\n%s\nwanted (%zu bytes):\n%s", c.where, rep.printf_length,
                  rep.printf_output ? rep.printf_output : "(null)", len, want);
    kemu_report_free(&rep);
    kt_close(&c);
}
END_TEST

/* Compares two strings of lines as multisets (sorted lines equal). */
static int kt_cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits text (modified in place) into at most max lines; returns count. */
static int kt_split_lines(char *text, char **lines, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(text, "\n", &save); tok && n < max; tok = strtok_r(NULL, "\n", &save))
        lines[n++] = tok;
    qsort(lines, (size_t)n, sizeof *lines, kt_cmp_lines);
    return n;
}

/* print_lanes: all 96 threads print "t=%d v=%d"; every line must appear
 * exactly once (the order across threads is unspecified). */
START_TEST(test_printf_lanes)
{
    enum { B = 96 };
    static int32_t in[B];
    static char want[B * 32], got[B * 64];
    static char *wl[B + 8], *gl[B + 8];
    size_t len = 0;
    for (int t = 0; t < B; t++) {
        in[t] = t * 37 - 1000;
        len += (size_t)snprintf(want + len, sizeof want - len, "t=%d v=%d\n", t, in[t]);
    }
    kt_ctx c;
    kt_open(&c, "printf", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in);
    void *args[] = {&di};
    kemu_report rep;
    kemu_status st = kt_launch(&c, "print_lanes", KT_D1(1), KT_D1(B), 0, args, &rep);
    ck_assert_msg(st == KEMU_OK, "%s: print_lanes: %s", c.where, c.err.message);
    ck_assert_msg(rep.printf_output && rep.printf_length == len, "%s: print_lanes printed %zu bytes, want %zu",
                  c.where, rep.printf_length, len);
    memcpy(got, rep.printf_output, len);
    got[len] = 0;
    kemu_report_free(&rep);
    int nw = kt_split_lines(want, wl, B + 8), ng = kt_split_lines(got, gl, B + 8);
    ck_assert_int_eq(ng, nw);
    for (int i = 0; i < nw; i++)
        ck_assert_msg(strcmp(wl[i], gl[i]) == 0, "%s: print_lanes line mismatch: got '%s' want '%s'", c.where, gl[i],
                      wl[i]);
    kt_close(&c);
}
END_TEST

/* assert_when: passes when no element is bad; with in[69] bad (block 1,
 * thread 5 of 64-thread blocks) the launch fails with CUDA's message. */
START_TEST(test_assert)
{
    enum { N = 128 };
    static int32_t in[N], got[N], want[N];
    for (int i = 0; i < N; i++) {
        in[i] = i * 3 + 1;
        want[i] = in[i] * 2;
    }
    kt_ctx c;
    kt_open(&c, "printf", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    int bad = -1, n = N;
    void *args[] = {&di, &dout, &bad, &n};
    kt_run(&c, "assert_when", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "assert_when without a bad value", (uint32_t *)got, (uint32_t *)want, N, 1);
    bad = in[69];
    const char *needles[] = {"printf.cu:31: void assert_when(const int *, int *, int, int): block: [1,0,0], "
                             "thread: [5,0,0] Assertion `in[i] != bad` failed.",
                             NULL};
    kt_expect_fault(&c, "assert_when", KT_D1(2), KT_D1(64), 0, args, needles);
    kt_close(&c);
}
END_TEST

/* heap_roundtrip (malloc/fill/sum/free per thread; an impossible size
 * gives NULL everywhere) and heap_publish/heap_consume (an allocation
 * outliving its launch). */
START_TEST(test_device_malloc)
{
    enum { N = 200 };
    static int32_t got[N], want[N];
    kt_ctx c;
    kt_open(&c, "printf", _i, 0);
    uint64_t dout = kt_buf(&c, NULL, sizeof got);
    int count = 10, n = N;
    for (int i = 0; i < N; i++)
        want[i] = i * (count * (count - 1) / 2);
    void *args[] = {&dout, &count, &n};
    kt_run(&c, "heap_roundtrip", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "heap_roundtrip", (uint32_t *)got, (uint32_t *)want, N, 1);
    count = 1 << 28;
    for (int i = 0; i < N; i++)
        want[i] = -1;
    kt_run(&c, "heap_roundtrip", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "heap_roundtrip with an impossible size (NULL)", (uint32_t *)got, (uint32_t *)want, N, 1);
    uint64_t slot = kt_buf(&c, NULL, 8), out = kt_buf(&c, NULL, 4);
    void *pargs[] = {&slot};
    kt_run(&c, "heap_publish", KT_D1(1), KT_D1(32), 0, pargs);
    uint64_t p = 0;
    kt_get(&c, &p, slot, 8);
    ck_assert_msg(p != 0 && p % 16 == 0, "%s: heap_publish stored pointer 0x%llx (want non-NULL, 16-aligned)",
                  c.where, (unsigned long long)p);
    void *cargs[] = {&slot, &out};
    kt_run(&c, "heap_consume", KT_D1(1), KT_D1(32), 0, cargs);
    int32_t v = 0, seven = 7;
    kt_get(&c, &v, out, 4);
    KT_EXPECT(&c, "heap_consume reads the published allocation", (uint32_t *)&v, (uint32_t *)&seven, 1, 1);
    kt_close(&c);
}
END_TEST

/* ---- faults.cu --------------------------------------------------------- */

/* Out-of-bounds global store (past the end and before the start), a
 * misaligned load, trap: each fails the launch with a message naming the
 * kernel, the block and the thread; in-bounds variants succeed. */
START_TEST(test_faults)
{
    kt_ctx c;
    kt_open(&c, "faults", _i, 10);
    int32_t buf[16], zero16[16] = {0}, one = 1;
    uint64_t p = kt_buf(&c, zero16, sizeof zero16);
    long long index = 3;
    void *args[] = {&p, &index};
    kt_run(&c, "oob_global_write", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, buf, p, sizeof buf);
    KT_EXPECT(&c, "oob_global_write in bounds", (uint32_t *)&buf[3], (uint32_t *)&one, 1, 1);
    index = 100;
    const char *oob[] = {"oob_global_write", "block (0,0,0)", "thread (0,0,0)", "global store of 4 bytes", NULL};
    kt_expect_fault(&c, "oob_global_write", KT_D1(1), KT_D1(32), 0, args, oob);
    index = -1;
    kt_expect_fault(&c, "oob_global_write", KT_D1(1), KT_D1(32), 0, args, oob);

    uint8_t bytes[16];
    for (int i = 0; i < 16; i++)
        bytes[i] = (uint8_t)(i * 17);
    uint64_t db = kt_buf(&c, bytes, sizeof bytes), dout = kt_buf(&c, NULL, 4);
    int skew = 4, got = 0, want;
    memcpy(&want, bytes + 4, 4);
    void *margs[] = {&db, &dout, &skew};
    kt_run(&c, "misaligned_load", KT_D1(1), KT_D1(32), 0, margs);
    kt_get(&c, &got, dout, 4);
    KT_EXPECT(&c, "misaligned_load aligned", (uint32_t *)&got, (uint32_t *)&want, 1, 1);
    skew = 1;
    const char *mis[] = {"misaligned_load", "misaligned", "block (0,0,0)", "thread (0,0,0)", "global load of 4 bytes",
                         NULL};
    kt_expect_fault(&c, "misaligned_load", KT_D1(1), KT_D1(32), 0, margs, mis);

    static int32_t tout[128], twant[128];
    for (int i = 0; i < 128; i++)
        twant[i] = i;
    uint64_t dt = kt_buf(&c, NULL, sizeof tout);
    int which = -1;
    void *targs[] = {&dt, &which};
    kt_run(&c, "trap_when", KT_D1(2), KT_D1(64), 0, targs);
    kt_get(&c, tout, dt, sizeof tout);
    KT_EXPECT(&c, "trap_when without a trap", (uint32_t *)tout, (uint32_t *)twant, 128, 1);
    which = 70;
    const char *trap[] = {"trap_when", "trap", "block (1,0,0)", "thread (6,0,0)", NULL};
    kt_expect_fault(&c, "trap_when", KT_D1(2), KT_D1(64), 0, targs, trap);
    kt_close(&c);
}
END_TEST

/* The fault message carries the PTX file and, with -lineinfo, the CUDA
 * source line from .loc (faults.cu:10 is p[index] = 1). */
START_TEST(test_fault_lines)
{
    kt_ctx c;
    kt_open_custom(&c, "faults", "sm_80.lineinfo", 0, NULL, 10, KEMU_UNINIT_NAN);
    int32_t zero16[16] = {0};
    uint64_t p = kt_buf(&c, zero16, sizeof zero16);
    long long index = 1000;
    void *args[] = {&p, &index};
    const char *needles[] = {"faults.sm_80.lineinfo.ptx:", "faults.cu:10", NULL};
    kt_expect_fault(&c, "oob_global_write", KT_D1(1), KT_D1(32), 0, args, needles);
    kt_close(&c);
}
END_TEST

/* oob_shared_read: far past the block's shared memory (offset 1000 ints)
 * faults as an out-of-bounds shared load; one int past the 64-int array
 * must fault as well (see the pending list). */
START_TEST(test_oob_shared_far)
{
    kt_ctx c;
    kt_open(&c, "faults", _i, 10);
    uint64_t dout = kt_buf(&c, NULL, 64 * 4);
    int offset = 1000;
    void *args[] = {&dout, &offset};
    const char *needles[] = {"oob_shared_read", "shared load of 4 bytes", "block (0,0,0)", NULL};
    kt_expect_fault(&c, "oob_shared_read", KT_D1(1), KT_D1(64), 0, args, needles);
    kt_close(&c);
}
END_TEST

START_TEST(test_oob_shared_near)
{
    kt_ctx c;
    kt_open(&c, "faults", _i, 10);
    uint64_t dout = kt_buf(&c, NULL, 64 * 4);
    int offset = 1;
    void *args[] = {&dout, &offset};
    const char *needles[] = {"oob_shared_read", "shared load of 4 bytes", "block (0,0,0)", "thread (63,0,0)", NULL};
    kt_expect_fault(&c, "oob_shared_read", KT_D1(1), KT_D1(64), 0, args, needles);
    kt_close(&c);
}
END_TEST

/* infinite_loop: with a 1 s device timeout the launch stops with a
 * timeout fault; with the flag already set it returns at once. (The
 * livelock check, which would prove the spin stuck, starts too late to
 * come first: KEMU_LIVELOCK_GRACE.) */
START_TEST(test_timeout)
{
    kt_ctx c;
    setenv("KEMU_LIVELOCK_GRACE", "1000", 1);
    kt_open(&c, "faults", _i, 1);
    int32_t one = 1, zero = 0;
    uint64_t flag = kt_buf(&c, &one, 4);
    void *args[] = {&flag};
    kt_run(&c, "infinite_loop", KT_D1(2), KT_D1(64), 0, args);
    kt_put(&c, flag, &zero, 4);
    const char *needles[] = {"infinite_loop", "timed out", NULL};
    kt_expect_fault(&c, "infinite_loop", KT_D1(2), KT_D1(64), 0, args, needles);
    kt_close(&c);
    unsetenv("KEMU_LIVELOCK_GRACE");
}
END_TEST

/* barrier_deadlock: warp 0 waits in bar.sync 0 while warp 1 spins on a
 * flag only warp 0 would set. Proven stuck (a livelock) well before the
 * 20 s timeout; stopped by a 2 s timeout when the livelock check starts
 * later (KEMU_LIVELOCK_GRACE), the fault must still say where the warps
 * wait: the barrier of warp 0 (pending). */
START_TEST(test_barrier_deadlock_timeout)
{
    kt_ctx c;
    kt_open(&c, "faults", _i, 20);
    int32_t zero = 0;
    uint64_t flag = kt_buf(&c, &zero, 4);
    void *args[] = {&flag};
    const char *livelock[] = {"barrier_deadlock", "livelock: no warp of the block can make progress",
                              "warp 0 lanes 0xffffffff wait at", "(barrier 0)", "warp 1 lanes 0xffffffff run at",
                              NULL};
    kt_expect_fault(&c, "barrier_deadlock", KT_D1(1), KT_D1(64), 0, args, livelock);
    kt_close(&c);
    setenv("KEMU_LIVELOCK_GRACE", "1000", 1);
    kt_open(&c, "faults", _i, 2);
    flag = kt_buf(&c, &zero, 4);
    const char *needles[] = {"barrier_deadlock", "timed out", NULL};
    kt_expect_fault(&c, "barrier_deadlock", KT_D1(1), KT_D1(64), 0, args, needles);
    kt_close(&c);
    unsetenv("KEMU_LIVELOCK_GRACE");
}
END_TEST

START_TEST(test_barrier_deadlock_names_barrier)
{
    kt_ctx c;
    kt_open(&c, "faults", _i, 2);
    int32_t zero = 0;
    uint64_t flag = kt_buf(&c, &zero, 4);
    void *args[] = {&flag};
    const char *needles[] = {"barrier_deadlock", "warp 0 lanes 0xffffffff wait at", "(barrier 0)", NULL};
    kt_expect_fault(&c, "barrier_deadlock", KT_D1(1), KT_D1(64), 0, args, needles);
    kt_close(&c);
}
END_TEST

/* uninit_shared_read: odd slots were never written and read the device's
 * shared-memory fill (0xFF bytes by default, zero with KEMU_UNINIT_ZERO);
 * shared_race: the value read is one of the writers' thread ids. */
START_TEST(test_uninit_shared_race)
{
    static int32_t got[256], want[256];
    for (int pass = 0; pass < 2; pass++) {
        kt_ctx c;
        kt_open_custom(&c, "faults", kt_configs[_i].variant, kt_configs[_i].threads, kt_configs[_i].schedule, 0,
                       pass ? KEMU_UNINIT_ZERO : KEMU_UNINIT_NAN);
        for (int t = 0; t < 256; t++)
            want[t] = (t & 1) ? (pass ? 0 : -1) : t;
        uint64_t dout = kt_buf(&c, NULL, sizeof got);
        void *args[] = {&dout};
        kt_run(&c, "uninit_shared_read", KT_D1(1), KT_D1(256), 0, args);
        kt_get(&c, got, dout, sizeof got);
        KT_EXPECT(&c, pass ? "uninit_shared_read (zero fill)" : "uninit_shared_read (0xFF fill)", (uint32_t *)got,
                  (uint32_t *)want, 256, 1);
        kt_run(&c, "shared_race", KT_D1(1), KT_D1(96), 0, args);
        kt_get(&c, got, dout, 4);
        ck_assert_msg(got[0] >= 0 && got[0] < 96, "%s: shared_race read %d", c.where, got[0]);
        kt_close(&c);
    }
}
END_TEST

#endif /* KT_RUNTIME_H */

/* kt_harness.h - the driver side of tests/unit/test_kernels.c.
 *
 * Opens a committed PTX variant of a test kernel module (tests/kernels/
 * NAME.VARIANT.ptx, directory from -DKERNELS_DIR) on a fresh emulated
 * device through the public C API, moves buffers in and out, launches
 * kernels and compares outputs against references the tests compute in C.
 * Every helper asserts with Check on failure, naming the module, the
 * variant and the run configuration, so a test body stays a list of steps.
 * Included once, by test_kernels.c only.
 */
#ifndef KT_HARNESS_H
#define KT_HARNESS_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"

#ifndef KERNELS_DIR
#error "compile with -DKERNELS_DIR='\"/path/to/tests/kernels\"'"
#endif

/* Run configurations. A test registered for configuration i loads the PTX
 * variant kt_configs[i].variant on a device with that host-thread count and
 * schedule; the reference is the same for all of them, so passing every
 * configuration also shows the outputs are identical across them. */
typedef struct kt_config {
    const char *name;     /* shown in failure messages */
    const char *variant;  /* PTX file suffix: NAME.<variant>.ptx */
    int threads;          /* kemu_device_config.threads */
    const char *schedule; /* kemu_device_config.schedule */
} kt_config;

enum {
    KT_O3 = 0, /* sm_80 -O3, default threads and schedule */
    KT_SM75,   /* sm_75 -O3 */
    KT_SM90,   /* sm_90 -O3 */
    KT_DEBUG,  /* sm_80 -G */
    KT_T1,     /* sm_80 -O3, one host thread */
    KT_T2,     /* sm_80 -O3, two host threads */
    KT_R1,     /* sm_80 -O3, schedule random:1 */
    KT_R2,     /* sm_80 -O3, schedule random:2 */
    KT_NCONFIGS
};

static const kt_config kt_configs[KT_NCONFIGS] = {
    {"sm_80.O3", "sm_80.O3", 0, NULL},
    {"sm_75.O3", "sm_75.O3", 0, NULL},
    {"sm_90.O3", "sm_90.O3", 0, NULL},
    {"sm_80.G", "sm_80.G", 0, NULL},
    {"sm_80.O3/threads=1", "sm_80.O3", 1, NULL},
    {"sm_80.O3/threads=2", "sm_80.O3", 2, NULL},
    {"sm_80.O3/random:1", "sm_80.O3", 0, "random:1"},
    {"sm_80.O3/random:2", "sm_80.O3", 0, "random:2"},
};

/* Configuration sets (bit i = configuration i) used when registering. */
#define KT_BIT(i) (1u << (i))
#define KT_ONLY_O3 KT_BIT(KT_O3)
#define KT_VARIANTS (KT_BIT(KT_O3) | KT_BIT(KT_SM75) | KT_BIT(KT_SM90) | KT_BIT(KT_DEBUG))
#define KT_SCHEDULES (KT_BIT(KT_T1) | KT_BIT(KT_T2) | KT_BIT(KT_R1) | KT_BIT(KT_R2))
#define KT_ALL (KT_VARIANTS | KT_SCHEDULES)
#define KT_O3_SCHEDULES (KT_BIT(KT_O3) | KT_SCHEDULES)

/* One open module on its own device. */
typedef struct kt_ctx {
    kemu_device *dev;
    kemu_module *mod;
    kemu_error err;
    unsigned cluster[3]; /* cluster dims for kt_launch; all 0: none */
    char where[256];     /* "module.variant [config]" for messages */
} kt_ctx;

/* Opens KERNELS_DIR/<module>.<variant>.ptx on a new device with the given
 * host threads, schedule, per-launch timeout (0: none) and shared-memory
 * fill. Asserts that the device is created and the module loads (with
 * kemu's message). */
static void kt_open_custom(kt_ctx *c, const char *module, const char *variant, int threads,
                           const char *schedule, double timeout, kemu_uninit uninit)
{
    char path[1024];
    memset(c, 0, sizeof *c);
    snprintf(path, sizeof path, "%s/%s.%s.ptx", KERNELS_DIR, module, variant);
    snprintf(c->where, sizeof c->where, "%s.%s [threads=%d schedule=%s]", module, variant, threads,
             schedule ? schedule : "default");
    kemu_device_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = threads;
    cfg.schedule = schedule;
    cfg.timeout = timeout;
    cfg.uninit = uninit;
    kemu_status st = kemu_device_create(&cfg, &c->dev, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: kemu_device_create: %s", c->where, c->err.message);
    st = kemu_module_load_ptx_file(c->dev, path, &c->mod, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: loading %s failed (%s): %s", c->where, path, kemu_status_string(st),
                  c->err.message);
}

/* Opens <module> in run configuration `config` (an index in kt_configs)
 * with per-launch timeout `timeout` seconds (0: none) and the 0xFF
 * shared-memory fill. Asserts on failure. */
static void kt_open(kt_ctx *c, const char *module, int config, double timeout)
{
    const kt_config *k = &kt_configs[config];
    kt_open_custom(c, module, k->variant, k->threads, k->schedule, timeout, KEMU_UNINIT_NAN);
    snprintf(c->where + strlen(c->where), sizeof c->where - strlen(c->where), " %s", k->name);
}

/* Releases the device and with it every module and allocation. */
static void kt_close(kt_ctx *c)
{
    kemu_device_destroy(c->dev);
    c->dev = NULL;
    c->mod = NULL;
}

/* Allocates `bytes` of device memory and, if host is not NULL, copies host
 * there; otherwise the memory keeps the 0xFF fill. Returns the device
 * address; asserts on failure. */
static uint64_t kt_buf(kt_ctx *c, const void *host, size_t bytes)
{
    uint64_t addr = 0;
    kemu_status st = kemu_malloc(c->dev, bytes ? bytes : 1, KEMU_UNINIT_NAN, &addr, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: kemu_malloc(%zu): %s", c->where, bytes, c->err.message);
    if (host && bytes) {
        st = kemu_memcpy_htod(c->dev, addr, host, bytes, &c->err);
        ck_assert_msg(st == KEMU_OK, "%s: kemu_memcpy_htod: %s", c->where, c->err.message);
    }
    return addr;
}

/* Copies `bytes` from device address addr to host. Asserts on failure. */
static void kt_get(kt_ctx *c, void *host, uint64_t addr, size_t bytes)
{
    kemu_status st = kemu_memcpy_dtoh(c->dev, host, addr, bytes, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: kemu_memcpy_dtoh: %s", c->where, c->err.message);
}

/* Copies `bytes` from host to device address addr. Asserts on failure. */
static void kt_put(kt_ctx *c, uint64_t addr, const void *host, size_t bytes)
{
    kemu_status st = kemu_memcpy_htod(c->dev, addr, host, bytes, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: kemu_memcpy_htod: %s", c->where, c->err.message);
}

/* Launches kernel `name` with grid g, block b (3 dims each, 0 read as 1),
 * `shared` bytes of dynamic shared memory and the cluster dims c->cluster.
 * The report (may be NULL) is filled by kemu_launch and must be freed by
 * the caller with kemu_report_free. Returns kemu_launch's status; c->err
 * holds the message. */
static kemu_status kt_launch(kt_ctx *c, const char *name, const unsigned g[3], const unsigned b[3],
                             size_t shared, void **args, kemu_report *report)
{
    kemu_kernel *k = NULL;
    kemu_status st = kemu_module_get_kernel(c->mod, name, &k, &c->err);
    ck_assert_msg(st == KEMU_OK, "%s: no kernel %s: %s", c->where, name, c->err.message);
    kemu_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.grid, g, sizeof cfg.grid);
    memcpy(cfg.block, b, sizeof cfg.block);
    cfg.shared_bytes = shared;
    memcpy(cfg.cluster, c->cluster, sizeof cfg.cluster);
    return kemu_launch(k, &cfg, args, report, &c->err);
}

/* As kt_launch, asserting that the launch succeeds (no fault). Device
 * printf output, if any, is discarded. */
static void kt_run(kt_ctx *c, const char *name, const unsigned g[3], const unsigned b[3], size_t shared,
                   void **args)
{
    kemu_report rep;
    kemu_status st = kt_launch(c, name, g, b, shared, args, &rep);
    kemu_report_free(&rep);
    ck_assert_msg(st == KEMU_OK, "%s: launch of %s failed (%s): %s", c->where, name, kemu_status_string(st),
                  c->err.message);
}

/* Launches a kernel that must fault: asserts KEMU_ERR_KERNEL_FAULT, a
 * report with `faulted` set, and that the fault message contains each of
 * the NULL-terminated strings in `needles`. */
static void kt_expect_fault(kt_ctx *c, const char *name, const unsigned g[3], const unsigned b[3], size_t shared,
                            void **args, const char *const *needles)
{
    kemu_report rep;
    kemu_status st = kt_launch(c, name, g, b, shared, args, &rep);
    char msg[sizeof rep.fault_message];
    snprintf(msg, sizeof msg, "%s", rep.fault_message);
    int faulted = rep.faulted;
    kemu_report_free(&rep);
    ck_assert_msg(st == KEMU_ERR_KERNEL_FAULT && faulted, "%s: %s: expected a kernel fault, got status %s (%s)",
                  c->where, name, kemu_status_string(st), st ? c->err.message : "no error");
    for (int i = 0; needles[i]; i++)
        ck_assert_msg(strstr(msg, needles[i]) != NULL, "%s: %s: the fault message lacks \"%s\": %s", c->where,
                      name, needles[i], msg);
}

/* Shorthands for launch dimensions. */
#define KT_D1(x) ((const unsigned[3]){(x), 1, 1})
#define KT_D3(x, y, z) ((const unsigned[3]){(x), (y), (z)})

/* Compares n elements of width `size` bytes (1, 2, 4 or 8) bit for bit and
 * fails naming what, the configuration, the number of differences and the
 * first three (index, got, want). `group` > 1 also prints index/group and
 * index%group, for outputs laid out as K results per element. */
static void kt_expect_bits(const kt_ctx *c, const char *what, const void *got, const void *want, size_t n,
                           size_t size, size_t group)
{
    size_t bad = 0;
    char detail[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t g = 0, w = 0;
        memcpy(&g, (const char *)got + i * size, size);
        memcpy(&w, (const char *)want + i * size, size);
        if (g == w)
            continue;
        if (bad < 3 && len < sizeof detail - 100) {
            if (group > 1)
                len += (size_t)snprintf(detail + len, sizeof detail - len, " [%zu = elem %zu, result %zu]",
                                        i, i / group, i % group);
            else
                len += (size_t)snprintf(detail + len, sizeof detail - len, " [%zu]", i);
            len += (size_t)snprintf(detail + len, sizeof detail - len, " got 0x%0*llx want 0x%0*llx;",
                                    (int)(2 * size), (unsigned long long)g, (int)(2 * size),
                                    (unsigned long long)w);
        }
        bad++;
    }
    ck_assert_msg(bad == 0, "%s: %s: %zu of %zu values differ:%s", c->where, what, bad, n, detail);
}

/* kt_expect_bits with the element size taken from got's pointer type
 * (uint16_t, [u]int32_t or uint64_t; other types do not compile). */
#define KT_EXPECT(c, what, got, want, n, group) \
    kt_expect_bits((c), (what), (got), (want), (n), \
                   _Generic((got), uint16_t *: 2, uint32_t *: 4, int32_t *: 4, uint64_t *: 8), (group))

/* Compares n floats (size 4) or doubles (size 8) bit for bit, except that
 * where loose is NULL or loose[i % group] == 'x' any two NaNs are equal. */
static void kt_expect_fp(const kt_ctx *c, const char *what, const void *got, const void *want, size_t n,
                         size_t size, size_t group, const char *loose)
{
    static uint64_t fixed[16384];
    ck_assert(n <= sizeof fixed / sizeof fixed[0]);
    char *w = (char *)fixed;
    for (size_t i = 0; i < n; i++) {
        const char *g = (const char *)got + i * size, *e = (const char *)want + i * size;
        int nan_g, nan_w;
        if (size == 4) {
            float a, b;
            memcpy(&a, g, 4), memcpy(&b, e, 4);
            nan_g = isnan(a), nan_w = isnan(b);
        } else {
            double a, b;
            memcpy(&a, g, 8), memcpy(&b, e, 8);
            nan_g = isnan(a), nan_w = isnan(b);
        }
        memcpy(w + i * size, (nan_g && nan_w && (!loose || loose[i % group] == 'x')) ? g : e, size);
    }
    kt_expect_bits(c, what, got, fixed, n, size, group);
}

/* Maps a float's bits to an integer that orders like the float, so that
 * differences count ulps (-0 and +0 both map to 0). */
static int32_t kt_f32_ordered(float x)
{
    int32_t i;
    memcpy(&i, &x, 4);
    return i < 0 ? INT32_MIN - i : i;
}

/* Fails unless every got[i] is within `ulps` f32 ulps of want[i] (NaN only
 * matches NaN; -0 equals +0). For approximate ops. Reports the first three
 * differences. */
static void kt_expect_f32_ulps(const kt_ctx *c, const char *what, const float *got, const float *want, size_t n,
                               size_t group, int64_t ulps)
{
    size_t bad = 0, len = 0;
    char detail[512] = "";
    for (size_t i = 0; i < n; i++) {
        float g = got[i], w = want[i];
        int ok;
        if (isnan(w) || isnan(g))
            ok = isnan(w) && isnan(g);
        else {
            int64_t d = (int64_t)kt_f32_ordered(g) - kt_f32_ordered(w);
            ok = (d < 0 ? -d : d) <= ulps;
        }
        if (ok)
            continue;
        if (bad < 3 && len < sizeof detail - 100)
            len += (size_t)snprintf(detail + len, sizeof detail - len, " [%zu = elem %zu, result %zu] got %a want %a;",
                                    i, i / (group ? group : 1), i % (group ? group : 1), (double)g, (double)w);
        bad++;
    }
    ck_assert_msg(bad == 0, "%s: %s: %zu of %zu values beyond %lld ulp:%s", c->where, what, bad, n,
                  (long long)ulps, detail);
}

/* Fails unless |got[i] - want[i]| <= abs_tol + rel_tol*|want[i]| for every
 * i (NaN only matches NaN, infinities must be equal). */
static void kt_expect_f64_close(const kt_ctx *c, const char *what, const double *got, const double *want,
                                size_t n, size_t group, double abs_tol, double rel_tol)
{
    size_t bad = 0, len = 0;
    char detail[512] = "";
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        int ok;
        if (isnan(w) || isnan(g))
            ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g))
            ok = g == w;
        else
            ok = fabs(g - w) <= abs_tol + rel_tol * fabs(w);
        if (ok)
            continue;
        if (bad < 3 && len < sizeof detail - 100)
            len += (size_t)snprintf(detail + len, sizeof detail - len, " [%zu = elem %zu, result %zu] got %a want %a;",
                                    i, i / (group ? group : 1), i % (group ? group : 1), g, w);
        bad++;
    }
    ck_assert_msg(bad == 0, "%s: %s: %zu of %zu values out of tolerance:%s", c->where, what, bad, n, detail);
}

/* A small deterministic generator (xorshift64*) for test inputs. */
typedef struct kt_rng { uint64_t s; } kt_rng;

/* Returns the next 32 random bits. */
static uint32_t kt_rand(kt_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Returns a uniform float in [lo, hi). */
static float kt_randf(kt_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(kt_rand(r) >> 8) * (1.0f / 16777216.0f);
}

/* Bit casts. */
static inline uint32_t kt_f2u(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float kt_u2f(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static inline uint64_t kt_d2u(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline double kt_u2d(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* Test registration: each case names a Check test and the configurations
 * it runs in (bit set over kt_configs). Configurations in `pending` are
 * known to fail today; they go to the "pending" TCase, which runs only
 * when KEMU_PENDING=1, so `make check` stays green while the failures stay
 * visible and reproducible. */
typedef struct kt_case {
    const char *group; /* the TCase of the passing configurations */
    const TTest *test;
    unsigned configs;
    unsigned pending;
} kt_case;

#endif /* KT_HARNESS_H */

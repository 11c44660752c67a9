/* kemu's libcudart replacement, core: the runtime state and its
 * configuration from the environment (set by `kemu exec`), the error model
 * (per-thread last error, kernel faults that become sticky at the next
 * synchronizing call), device printf output released at synchronization
 * points, the emulated device, and what happens at process exit (pending
 * output and faults, the checkers' report). Registration of the program's
 * device code is in module.c, launches in launch.c; everything runs
 * synchronously, in issue order, on one emulated device. */
#include "config.h"
#include "cudart/runtime.h"
#include "exec/call_support.h"
#include "exec/exec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cudart_state cudart_global;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Thread_local cudaError_t cudart_last_error;
static _Thread_local int lock_depth;     /* how often this thread holds the (recursive) lock */
static _Thread_local int current_device; /* cudaSetDevice */

/* ---- pointer map ---------------------------------------------------------- */

static size_t ptr_hash(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

void *cudart_ptrmap_get(const cudart_ptrmap *m, const void *key)
{
    if (!m->cap || !key)
        return NULL;
    for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return NULL;
        if (m->keys[i] == key)
            return m->values[i];
    }
}

int cudart_ptrmap_put(cudart_ptrmap *m, const void *key, void *value)
{
    if (!key)
        return -1;
    if ((m->count + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        const void **keys = calloc(cap, sizeof *keys);
        void **values = calloc(cap, sizeof *values);
        if (!keys || !values) {
            free(keys);
            free(values);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = ptr_hash(m->keys[i], cap);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            values[j] = m->values[i];
        }
        free(m->keys);
        free(m->values);
        m->keys = keys;
        m->values = values;
        m->cap = cap;
    }
    size_t i = ptr_hash(key, m->cap);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->count++;
    m->keys[i] = key;
    m->values[i] = value;
    return 0;
}

void cudart_ptrmap_remove(cudart_ptrmap *m, const void *key)
{
    if (!m->cap || !key)
        return;
    size_t i = ptr_hash(key, m->cap);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        return;
    m->keys[i] = NULL;
    m->count--;
    /* re-insert the rest of the cluster (backward-shift deletion) */
    for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        const void *k = m->keys[j];
        void *v = m->values[j];
        m->keys[j] = NULL;
        size_t h = ptr_hash(k, m->cap);
        while (m->keys[h])
            h = (h + 1) & (m->cap - 1);
        m->keys[h] = k;
        m->values[h] = v;
    }
}

void cudart_ptrmap_free(cudart_ptrmap *m)
{
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/* ---- state and configuration ---------------------------------------------- */

static void runtime_init(void)
{
    cudart_state *s = &cudart_global;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_cond_init(&s->idle, NULL);
    const char *v;
    s->ndevices = 1;
    if ((v = getenv("KEMU_DEVICES")) && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > CUDART_MAX_DEVICES)
            fprintf(stderr, "kemu: KEMU_DEVICES wants a number of devices from 1 to %d, got '%s'; using 1\n",
                    CUDART_MAX_DEVICES, v);
        else
            s->ndevices = (int)n;
    }
    if ((v = getenv("KEMU_ARCH")) && *v)
        snprintf(s->arch, sizeof s->arch, "%s", v);
    if ((v = getenv("KEMU_THREADS")) && *v)
        s->threads = atoi(v);
    if ((v = getenv("KEMU_SCHEDULE")) && *v)
        snprintf(s->schedule, sizeof s->schedule, "%s", v);
    if ((v = getenv("KEMU_TIMEOUT")) && *v)
        s->timeout = strtod(v, NULL);
    if ((v = getenv("KEMU_PROGRESS")) && *v)
        s->progress = strtod(v, NULL);
    s->uninit = KEMU_UNINIT_NAN;
    if ((v = getenv("KEMU_UNINIT")) && *v) {
        if (!strcmp(v, "zero"))
            s->uninit = KEMU_UNINIT_ZERO;
        else if (!strcmp(v, "pattern"))
            s->uninit = KEMU_UNINIT_PATTERN;
    }
    if ((v = getenv("KEMU_CUDART_TRACE")) && *v && strcmp(v, "0"))
        s->trace = 1;
    if ((v = getenv("KEMU_DUMP_PTX")) && *v)
        snprintf(s->dump_ptx_dir, sizeof s->dump_ptx_dir, "%s", v);
    s->limits[cudaLimitStackSize] = 1024;
    s->limits[cudaLimitPrintfFifoSize] = 1u << 20;
    s->limits[cudaLimitMallocHeapSize] = 8u << 20;
    s->limits[cudaLimitDevRuntimeSyncDepth] = 2;
    s->limits[cudaLimitDevRuntimePendingLaunchCount] = 2048;
    s->limits[cudaLimitMaxL2FetchGranularity] = 64;
    s->initialized = 1;
}

void cudart_lock(void)
{
    pthread_once(&init_once, runtime_init);
    pthread_mutex_lock(&cudart_global.lock);
    lock_depth++;
}

void cudart_unlock(void)
{
    lock_depth--;
    if (!lock_depth && cudart_copy_open) /* a copy or set has ended (racecheck across streams) */
        cudart_order_end();
    pthread_mutex_unlock(&cudart_global.lock);
}

/* Releases the lock however deep this thread holds it; returns the depth
 * for relock. */
static int unlock_all(void)
{
    int depth = lock_depth;
    for (int i = 0; i < depth; i++)
        cudart_unlock();
    return depth;
}

static void relock(int depth)
{
    for (int i = 0; i < depth; i++)
        cudart_lock();
}

int cudart_current(void)
{
    return current_device;
}

void cudart_set_current(int device)
{
    current_device = device;
}

cudart_dev *cudart_cur(void)
{
    return &cudart_global.devs[current_device];
}

void cudart_wait_idle(unsigned mask)
{
    cudart_state *s = &cudart_global;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < s->ndevices; i++)
            if ((mask >> i & 1) && s->devs[i].busy && !pthread_equal(s->devs[i].busy_thread, pthread_self()))
                busy = 1;
        if (!busy)
            return;
        /* pthread_cond_wait releases a recursive mutex held once */
        int depth = lock_depth;
        for (int i = 1; i < depth; i++)
            pthread_mutex_unlock(&s->lock);
        pthread_cond_wait(&s->idle, &s->lock);
        for (int i = 1; i < depth; i++)
            pthread_mutex_lock(&s->lock);
    }
}

int cudart_run_unlocked_begin(int device)
{
    cudart_state *s = &cudart_global;
    if (s->ndevices < 2)
        return -1; /* one device: launches keep the lock, as they always have */
    s->devs[device].busy = 1;
    s->devs[device].busy_thread = pthread_self();
    return unlock_all();
}

void cudart_run_unlocked_end(int device, int depth)
{
    if (depth < 0)
        return;
    relock(depth);
    cudart_global.devs[device].busy = 0;
    pthread_cond_broadcast(&cudart_global.idle);
}

void cudart_trace(const char *fmt, ...)
{
    if (!cudart_global.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kemu: cudart: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- errors --------------------------------------------------------------- */

cudaError_t cudart_result(cudaError_t err)
{
    if (err != cudaSuccess)
        cudart_last_error = err;
    return err;
}

cudaError_t cudart_check_sticky(void)
{
    return cudart_cur()->sticky_error;
}

void cudart_flush_printf(void)
{
    cudart_state *s = &cudart_global;
    if (!s->printf_length)
        return;
    fwrite(s->printf_pending, 1, s->printf_length, stdout);
    fflush(stdout);
    s->printf_length = 0;
}

cudaError_t cudart_synchronize(void)
{
    return cudart_synchronize_device(current_device);
}

cudaError_t cudart_synchronize_device(int index)
{
    cudart_dev *s = &cudart_global.devs[index];
    cudart_flush_printf();
    if (s->pending_error != cudaSuccess) {
        if (s->sticky_error == cudaSuccess)
            s->sticky_error = s->pending_error;
        if (s->pending_message) {
            fprintf(stderr, "kemu: %s\n", s->pending_message);
            fflush(stderr);
        }
        free(s->pending_message);
        s->pending_message = NULL;
        s->pending_error = cudaSuccess;
    }
    return s->sticky_error;
}

void cudart_warn_unsupported(const char *name)
{
    static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
    static cudart_ptrmap warned;
    pthread_mutex_lock(&warn_lock);
    if (!cudart_ptrmap_get(&warned, name)) {
        cudart_ptrmap_put(&warned, name, (void *)name);
        fprintf(stderr, "kemu: %s is not supported yet\n", name);
        fflush(stderr);
    }
    pthread_mutex_unlock(&warn_lock);
}

/* The last error, cleared by cudaGetLastError even when it is a sticky
 * (context-corrupting) error: as on an H200 with runtime 13.0, the second
 * cudaGetLastError after a fault returns cudaSuccess, and so does
 * cudaPeekAtLastError; the next call that needs the context returns the
 * sticky error again and sets it as the last error. */
CUDART_API cudaError_t cudaGetLastError(void)
{
    cudart_lock();
    cudaError_t e = cudart_last_error;
    cudart_last_error = cudaSuccess;
    cudart_unlock();
    return e;
}

CUDART_API cudaError_t cudaPeekAtLastError(void)
{
    cudart_lock();
    cudaError_t e = cudart_last_error;
    cudart_unlock();
    return e;
}

/* ---- the device ------------------------------------------------------------ */

/* Applies the checker settings of `kemu exec --tool` (KEMU_TOOL ...). */
static void configure_checks(kemu_device *dev)
{
    const char *tools = getenv("KEMU_TOOL");
    if (!tools || !*tools)
        return;
    kemu_check_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.racecheck_warp = KEMU_CHECK_AUTO;
    cfg.racecheck_benign = KEMU_CHECK_WARN;
    if (strstr(tools, "memcheck")) cfg.tools |= KEMU_TOOL_MEMCHECK;
    if (strstr(tools, "racecheck")) cfg.tools |= KEMU_TOOL_RACECHECK;
    if (strstr(tools, "initcheck")) cfg.tools |= KEMU_TOOL_INITCHECK;
    if (strstr(tools, "synccheck")) cfg.tools |= KEMU_TOOL_SYNCCHECK;
    const char *v;
    if ((v = getenv("KEMU_RACECHECK_WARP")))
        cfg.racecheck_warp = !strcmp(v, "error") ? KEMU_CHECK_ERROR : !strcmp(v, "off") ? KEMU_CHECK_OFF
                           : !strcmp(v, "warn") ? KEMU_CHECK_WARN : KEMU_CHECK_AUTO;
    if ((v = getenv("KEMU_RACECHECK_BENIGN")))
        cfg.racecheck_benign = !strcmp(v, "error") ? KEMU_CHECK_ERROR : !strcmp(v, "off") ? KEMU_CHECK_OFF : KEMU_CHECK_WARN;
    if ((v = getenv("KEMU_LEAK_CHECK")) && !strcmp(v, "full"))
        cfg.leak_check = 1;
    kemu_error err;
    if (kemu_device_set_checks(dev, &cfg, &err))
        fprintf(stderr, "kemu: cannot enable the checkers: %s\n", err.message);
}

cudaError_t cudart_device(kemu_device **out)
{
    return cudart_device_at(current_device, out);
}

cudaError_t cudart_device_at(int index, kemu_device **out)
{
    cudart_state *s = &cudart_global;
    cudart_dev *d = &s->devs[index];
    if (d->device)
        cudart_wait_idle(1u << index); /* (another thread may reset it meanwhile) */
    if (d->device) {
        *out = d->device;
        return cudaSuccess;
    }
    if (d->failed)
        return cudaErrorNoDevice;
    cudart_arch_info arch;
    if (s->arch[0]) {
        if (cudart_arch_lookup(s->arch, &arch)) {
            fprintf(stderr, "kemu: unknown architecture '%s' in KEMU_ARCH (use sm_75, sm_80, sm_86, sm_87, sm_89, "
                            "sm_90, sm_100 or sm_120)\n", s->arch);
            d->failed = 1;
            return cudaErrorNoDevice;
        }
    } else {
        unsigned best = 0;
        for (int i = 0; i < s->nfatbins; i++) {
            unsigned sm = s->fatbins[i]->max_ptx_sm;
            if (sm > best)
                best = sm;
        }
        cudart_arch_for_sm(best ? best : 80, &arch);
    }
    kemu_device_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.arch = arch.name;
    cfg.threads = s->threads;
    cfg.schedule = s->schedule[0] ? s->schedule : NULL;
    cfg.timeout = s->timeout;
    cfg.uninit = s->uninit;
    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_device *dev = NULL;
    if (kemu_device_create(&cfg, &dev, &err) || kemu_device_set_ordinal(dev, index, &err)) {
        fprintf(stderr, "kemu: cannot create the emulated device: %s\n", err.message);
        kemu_device_destroy(dev);
        d->failed = 1;
        return cudaErrorNoDevice;
    }
    /* unified addressing: every device knows the others' memory, and its
     * kernels reach it where peer access is enabled */
    for (int i = 0; i < s->ndevices; i++) {
        if (i == index || !s->devs[i].device)
            continue;
        cudart_wait_idle(1u << i);
        if (kemu_device_set_peer_access(dev, s->devs[i].device, d->peer[i], &err) ||
            kemu_device_set_peer_access(s->devs[i].device, dev, s->devs[i].peer[index], &err)) {
            fprintf(stderr, "kemu: cannot create the emulated device: %s\n", err.message);
            for (int j = 0; j <= i; j++)
                if (s->devs[j].device && j != index)
                    kemu_device_set_peer_access(s->devs[j].device, dev, -1, NULL);
            kemu_device_destroy(dev);
            d->failed = 1;
            return cudaErrorNoDevice;
        }
    }
    /* another device's kernel may write the memory a kernel polls */
    if (s->ndevices > 1)
        kemu_device_set_host_writes(dev, 1);
    d->device = dev;
    s->device_sm = (unsigned)arch.sm;
    exec_set_printf_fifo(dev, s->limits[cudaLimitPrintfFifoSize]);
    exec_set_heap_size(dev, s->limits[cudaLimitMallocHeapSize]);
    exec_set_device_runtime(dev, s->limits[cudaLimitDevRuntimePendingLaunchCount], CUDART_VERSION_NUMBER);
    kemu_device_set_progress(dev, s->progress);
    configure_checks(dev);
    const char *fidelity = getenv("KEMU_FIDELITY_REPORT");
    if (fidelity && *fidelity == '1')
        kemu_device_set_fidelity_report(dev, 1, NULL);
    if (s->ndevices > 1)
        cudart_trace("device %d: %s", index, arch.name);
    else
        cudart_trace("device %s", arch.name);
    *out = dev;
    cudart_check_snapshot();
    return cudaSuccess;
}

/* ---- process exit ------------------------------------------------------------- */

/* Findings in the last snapshot; SIZE_MAX: none written since the last report. */
static size_t snapshot_count = SIZE_MAX;

void cudart_check_snapshot(void)
{
    /* of device 0 (several devices: the others' findings come in the
     * report at exit only) */
    cudart_dev *d = &cudart_global.devs[0];
    const char *path = getenv("KEMU_CHECK_SNAPSHOT_FILE");
    if (!d->device || d->busy || !path || !*path)
        return;
    size_t n = exec_check_count(d->device);
    if (n == snapshot_count)
        return;
    kemu_check_summary summary;
    kemu_error err;
    const char *v = getenv("KEMU_CHECK_PRINT_LIMIT");
    if (exec_check_snapshot(d->device, v ? atoi(v) : 0, &summary, &err))
        return;
    /* written whole, then renamed over the last one: a program killed
     * while writing leaves the previous snapshot */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        const char *text = summary.text ? summary.text : "", *json = summary.json ? summary.json : "{}";
        fprintf(f, "kemu-check-snapshot %zu %zu %zu\n%s%s", summary.errors, summary.warnings, strlen(text), text, json);
        if (fclose(f) == 0 && rename(tmp, path) == 0)
            snapshot_count = n;
        else
            unlink(tmp);
    }
    kemu_check_summary_free(&summary);
}

static void report_checks_of(kemu_device *dev)
{
    static size_t total_errors, total_warnings;
    static int reports;
    const char *tools = getenv("KEMU_TOOL");
    if (!dev || !tools || !*tools)
        return;
    kemu_check_summary summary;
    kemu_error err;
    const char *v = getenv("KEMU_CHECK_PRINT_LIMIT");
    if (kemu_check_results(dev, v ? atoi(v) : 0, &summary, &err)) {
        fprintf(stderr, "kemu: %s\n", err.message);
        return;
    }
    cudart_flush_printf();
    fflush(stdout);
    FILE *log = stderr;
    if ((v = getenv("KEMU_CHECK_LOG_FILE")) && *v && !(log = fopen(v, reports ? "a" : "w"))) {
        fprintf(stderr, "kemu: cannot write %s: %s\n", v, strerror(errno));
        log = stderr;
    }
    fputs(summary.text ? summary.text : "", log);
    if (log != stderr)
        fclose(log);
    else
        fflush(stderr);
    if ((v = getenv("KEMU_CHECK_REPORT_FILE")) && *v) {
        FILE *f = fopen(v, "w");
        if (f) {
            fputs(summary.json ? summary.json : "{}", f);
            fclose(f);
        } else {
            fprintf(stderr, "kemu: cannot write %s: %s\n", v, strerror(errno));
        }
    }
    total_errors += summary.errors;
    total_warnings += summary.warnings;
    reports++;
    if ((v = getenv("KEMU_CHECK_STATUS_FILE")) && *v) {
        FILE *f = fopen(v, "w");
        if (f) {
            fprintf(f, "%zu %zu\n", total_errors, total_warnings);
            fclose(f);
        }
    }
    kemu_check_summary_free(&summary);
    /* reported: kemu exec has nothing to print for the program */
    if ((v = getenv("KEMU_CHECK_SNAPSHOT_FILE")) && *v)
        unlink(v);
    snapshot_count = SIZE_MAX;
}

void cudart_report_checks(void)
{
    report_checks_of(cudart_cur()->device);
}

__attribute__((destructor)) static void runtime_fini(void)
{
    if (!cudart_global.initialized)
        return;
    cudart_lock();
    cudart_wait_idle(~0u);
    cudart_order_end();
    for (int i = 0; i < cudart_global.ndevices; i++) {
        cudart_synchronize_device(i);
        report_checks_of(cudart_global.devs[i].device);
    }
    /* kemu exec --fidelity-report */
    const char *fidelity = getenv("KEMU_FIDELITY_REPORT");
    for (int i = 0; fidelity && *fidelity == '1' && i < cudart_global.ndevices; i++) {
        char *text = NULL;
        if (!cudart_global.devs[i].device ||
            kemu_fidelity_report(cudart_global.devs[i].device, &text, NULL, NULL))
            continue;
        cudart_flush_printf();
        fflush(stdout);
        if (cudart_global.ndevices > 1)
            fprintf(stderr, "kemu: device %d:\n", i);
        fputs(text, stderr);
        free(text);
    }
    cudart_unlock();
}

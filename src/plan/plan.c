/* Launch plans (include/kemu/plan.h): the one sequence behind every front
 * door. A plan checks its operands and output files, lays the operands out
 * on the emulator (and on a GPU through src/cuda/), launches, reads the
 * outputs back, compares the backends and commits all output files or
 * none. It sits below the CLI, the call room and the Python package, and
 * above exec/ and cuda/: it never prints, and nothing here knows a front
 * door's syntax (messages name operands by number; front doors reword). */
#include "plan/plan_internal.h"
#include "kemu/plan.h"
#include "cuda/backend.h"
#include "cuda/compare.h"
#include "exec/call_support.h"
#include "exec/exec.h"
#include "io/npy.h"
#include "util.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SHARED operands start at shared-memory offsets aligned to this */
#define PLAN_SHARED_ALIGN 128u

typedef struct plan_operand {
    kemu_operand op;
    kemu_plan_tensor_map tmap;
    int has_tmap;            /* the parameter gets a tensor map (tmap) over the buffer */
    io_array array;          /* buffers: dtype, shape, count; data is op.data or owned */
    int owns_data;
    size_t bytes;
    uint64_t emu_address;    /* the emulator's buffer (SHARED: the shared-space address) */
    uint64_t gpu_address;
    io_array gpu_copy;       /* both backends: the GPU's output */
    char *write_path;        /* output_file, symlinks followed */
    int in_place;            /* write_path is a character device: written in place, never replaced */
} plan_operand;

/* One backend's launch arguments: 64-bit values, 32-bit ones for .u32
 * SHARED parameters, tensor maps, and one pointer per parameter. */
typedef struct plan_side {
    uint64_t *values;
    uint32_t *values32;
    uint8_t *maps;
    void **args;
} plan_side;

struct kemu_plan {
    kemu_kernel *kernel;
    kemu_device *dev;
    kemu_plan_config cfg;
    kemu_tolerance tolerance;
    plan_operand *ops;
    int nops, cap;
    plan_side emu, gpu;
    uint8_t *shared_image;       /* SHARED operands' fill: every block's dynamic shared memory starts so */
    uint64_t shared_image_size;
    int oob_shared_class;
    cuda_backend *backend;
    int ran;                     /* kemu_plan_run was called: a plan runs once */
    char fault[sizeof(((kemu_error *)0)->message)];
};

static kemu_status plan_fail(kemu_plan_result *r, kemu_error *err, kemu_plan_stage stage, int operand,
                             kemu_status st, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static kemu_status plan_fail(kemu_plan_result *r, kemu_error *err, kemu_plan_stage stage, int operand,
                             kemu_status st, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->stage = stage;
    r->operand = operand;
    return util_error(err, st, "%s", msg);
}

static int is_buffer(const plan_operand *o) { return o->op.kind != KEMU_OPERAND_VALUE; }
static int is_output(const plan_operand *o)
{
    return o->op.kind == KEMU_OPERAND_OUT || o->op.kind == KEMU_OPERAND_INOUT;
}
static int is_fresh(const plan_operand *o)
{
    return o->op.kind == KEMU_OPERAND_OUT || o->op.kind == KEMU_OPERAND_SCRATCH || o->op.kind == KEMU_OPERAND_SHARED;
}

static io_uninit_mode io_fill_mode(kemu_uninit u)
{
    return u == KEMU_UNINIT_ZERO ? IO_UNINIT_ZERO : u == KEMU_UNINIT_PATTERN ? IO_UNINIT_PATTERN : IO_UNINIT_NAN;
}

/* The VM_OOB_FILL class of a dtype's fill: bools true (5); floats and
 * signed integers the pattern of their width (1-4: 1, 2, 4, 8 bytes);
 * unsigned integers all bits set (0). */
static int fill_class(io_dtype dt)
{
    if (dt == IO_DT_BOOL)
        return 5;
    if (!io_dtype_is_float(dt) && !io_dtype_is_signed(dt))
        return 0;
    size_t n = io_dtype_size(dt);
    return n == 1 ? 1 : n == 2 ? 2 : n == 4 ? 3 : 4;
}

static uint64_t shared_align(uint64_t x) { return (x + PLAN_SHARED_ALIGN - 1) / PLAN_SHARED_ALIGN * PLAN_SHARED_ALIGN; }

kemu_status kemu_plan_create(kemu_kernel *k, const kemu_plan_config *cfg, kemu_plan **out, kemu_error *err)
{
    if (!out)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_create: NULL result pointer");
    *out = NULL;
    if (!k || !cfg)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_create: NULL kernel or configuration");
    kemu_plan *p = calloc(1, sizeof *p);
    if (!p)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    p->kernel = k;
    p->dev = k->mod->dev;
    p->cfg = *cfg;
    if (!p->cfg.backends)
        p->cfg.backends = KEMU_BACKEND_EMULATOR;
    if (cfg->tolerance) {
        p->tolerance = *cfg->tolerance;
        p->cfg.tolerance = &p->tolerance;
    }
    *out = p;
    return KEMU_OK;
}

kemu_status kemu_plan_add(kemu_plan *p, const kemu_operand *op, kemu_error *err)
{
    if (!p || !op)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_add: NULL plan or operand");
    if (p->ran)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_add: the plan has run");
    int i = p->nops;
    if (op->kind < KEMU_OPERAND_IN || op->kind > KEMU_OPERAND_VALUE)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: unknown kind %d", i, (int)op->kind);
    plan_operand o;
    memset(&o, 0, sizeof o);
    o.op = *op;
    if (op->kind == KEMU_OPERAND_VALUE) {
        if (!op->value || !op->size)
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: a value needs its bytes", i);
    } else {
        if (!op->dtype || io_dtype_parse(op->dtype, &o.array.dtype))
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: unknown dtype '%s'", i,
                              op->dtype ? op->dtype : "(null)");
        if (op->ndim < 0 || op->ndim > KEMU_PLAN_MAX_DIMS || op->ndim > IO_MAX_DIMS)
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: %d dimensions (at most %d)", i, op->ndim,
                              KEMU_PLAN_MAX_DIMS);
        o.array.ndim = op->ndim;
        o.array.count = 1;
        for (int d = 0; d < op->ndim; d++) {
            o.array.shape[d] = op->shape[d];
            if (__builtin_mul_overflow(o.array.count, op->shape[d], &o.array.count))
                return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: the array is too large", i);
        }
        if (__builtin_mul_overflow(o.array.count, io_dtype_size(o.array.dtype), &o.bytes))
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: the array is too large", i);
        if (!op->data && (op->kind == KEMU_OPERAND_IN || op->kind == KEMU_OPERAND_INOUT) && !op->aliased)
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "operand %d: an input needs its data", i);
        if (op->aliased) {
            if (op->kind != KEMU_OPERAND_OUT || op->alias_input < 0 || op->alias_input >= i ||
                (p->ops[op->alias_input].op.kind != KEMU_OPERAND_IN &&
                 p->ops[op->alias_input].op.kind != KEMU_OPERAND_INOUT))
                return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                                  "operand %d: only an output aliases, and only an earlier input", i);
            const io_array *in = &p->ops[op->alias_input].array;
            if (in->dtype != o.array.dtype || in->count != o.array.count)
                return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                                  "operand %d: an aliased output has its input's dtype and size", i);
        }
        if (op->tensor_map) {
            o.tmap = *op->tensor_map;
            o.has_tmap = 1;
        }
        o.op.tensor_map = NULL; /* the plan's copy is o.tmap */
    }
    if (p->nops == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        plan_operand *n = realloc(p->ops, (size_t)cap * sizeof *n);
        if (!n)
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        p->ops = n;
        p->cap = cap;
    }
    p->ops[p->nops++] = o;
    return KEMU_OK;
}

int kemu_plan_operand_count(const kemu_plan *p) { return p ? p->nops : 0; }

void *kemu_plan_data(const kemu_plan *p, int i)
{
    return p && i >= 0 && i < p->nops ? p->ops[i].array.data : NULL;
}

const void *kemu_plan_gpu_data(const kemu_plan *p, int i)
{
    return p && i >= 0 && i < p->nops ? p->ops[i].gpu_copy.data : NULL;
}

char *kemu_plan_gpu_output_file(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(n + 16);
    if (!out)
        return NULL;
    if (n > 4 && !strcmp(path + n - 4, ".npy"))
        snprintf(out, n + 16, "%.*s.cuda.npy", (int)(n - 4), path);
    else
        snprintf(out, n + 16, "%s.cuda.npy", path);
    return out;
}

static void side_free(plan_side *s)
{
    free(s->values);
    free(s->values32);
    free(s->maps);
    free(s->args);
    memset(s, 0, sizeof *s);
}

static int side_alloc(plan_side *s, int n)
{
    size_t np = (size_t)n + 1;
    s->values = calloc(np, sizeof *s->values);
    s->values32 = calloc(np, sizeof *s->values32);
    s->args = calloc(np, sizeof *s->args);
    s->maps = aligned_alloc(64, np * KEMU_TENSOR_MAP_BYTES);
    return s->values && s->values32 && s->args && s->maps ? 0 : -1;
}

/* The emulator's buffers go back before the run returns (the checkers'
 * leak report is about the kernel's own allocations). */
static void free_emulator_buffers(kemu_plan *p)
{
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (is_buffer(o) && o->op.kind != KEMU_OPERAND_SHARED && !o->op.aliased && o->emu_address)
            kemu_free(p->dev, o->emu_address, NULL);
        o->emu_address = 0;
    }
}

void kemu_plan_destroy(kemu_plan *p)
{
    if (!p)
        return;
    free_emulator_buffers(p);
    for (int i = 0; i < p->nops; i++) {
        if (p->ops[i].owns_data)
            io_array_free(&p->ops[i].array);
        io_array_free(&p->ops[i].gpu_copy);
        free(p->ops[i].write_path);
    }
    free(p->ops);
    side_free(&p->emu);
    side_free(&p->gpu);
    free(p->shared_image);
    cuda_backend_close(p->backend);
    free(p);
}

void kemu_plan_result_free(kemu_plan_result *r)
{
    if (!r)
        return;
    kemu_report_free(&r->report);
    free(r->gpu_jit_log);
    free(r->comparisons);
    r->gpu_jit_log = NULL;
    r->comparisons = NULL;
}

/* ---- checks before anything runs ------------------------------------ */

static const char *param_desc(const kemu_param_info *pi, char *buf, size_t n)
{
    if (pi->is_array)
        snprintf(buf, n, ".b8[%zu]", pi->size);
    else
        snprintf(buf, n, "%s", pi->type);
    return buf;
}

/* Each operand against its kernel parameter. */
static kemu_status check_operands(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    int np = kemu_kernel_param_count(p->kernel);
    if (np != p->nops)
        return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, -1, KEMU_ERR_INVALID_ARGUMENT,
                         "kernel '%s' takes %d parameter%s but the plan has %d operand%s", kemu_kernel_name(p->kernel),
                         np, np == 1 ? "" : "s", p->nops, p->nops == 1 ? "" : "s");
    for (int i = 0; i < np; i++) {
        const plan_operand *o = &p->ops[i];
        kemu_param_info pi;
        char tb[64];
        kemu_kernel_param(p->kernel, i, &pi);
        param_desc(&pi, tb, sizeof tb);
        if (o->op.kind == KEMU_OPERAND_VALUE) {
            if (o->op.size != pi.size)
                return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_INVALID_ARGUMENT,
                                 "parameter %d '%s' is %s (%zu bytes) but the value is %zu bytes", i, pi.name, tb,
                                 pi.size, o->op.size);
        } else if (o->has_tmap) {
            if (pi.size != KEMU_TENSOR_MAP_BYTES)
                return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_INVALID_ARGUMENT,
                                 "parameter %d '%s' is %s (%zu bytes), not a tensor map (%d bytes)", i, pi.name, tb,
                                 pi.size, KEMU_TENSOR_MAP_BYTES);
        } else if (pi.is_array || (pi.size != 8 && !(o->op.kind == KEMU_OPERAND_SHARED && pi.size == 4))) {
            return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_INVALID_ARGUMENT,
                             "parameter %d '%s' is %s (%zu bytes), not a pointer", i, pi.name, tb, pi.size);
        }
    }
    return KEMU_OK;
}

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!a || !b)
        return 0;
    if (realpath(a, ra) && realpath(b, rb))
        return strcmp(ra, rb) == 0;
    return strcmp(a, b) == 0;
}

static kemu_status path_problem(kemu_plan_result *r, kemu_error *err, int i, int other, kemu_plan_path_problem why,
                                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static kemu_status path_problem(kemu_plan_result *r, kemu_error *err, int i, int other, kemu_plan_path_problem why,
                                const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->stage = KEMU_PLAN_STAGE_OUTPUT_FILE;
    r->operand = i;
    r->other_operand = other;
    r->path_problem = why;
    return util_error(err, why == KEMU_PLAN_PATH_UNWRITABLE ? KEMU_ERR_IO : KEMU_ERR_INVALID_ARGUMENT, "%s", msg);
}

/* Where writing to path lands: path itself, or the target a chain of
 * symlinks leads to (the target of a dangling one). NULL: no memory. */
static char *follow_symlinks(const char *path)
{
    char *cur = strdup(path);
    for (int depth = 0; cur && depth < 40; depth++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char target[PATH_MAX];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return cur;
        target[n] = 0;
        char *next;
        if (target[0] == '/') {
            next = strdup(target);
        } else {
            char *slash = strrchr(cur, '/');
            size_t dl = slash ? (size_t)(slash - cur) + 1 : 0;
            next = malloc(dl + (size_t)n + 1);
            if (next) {
                memcpy(next, cur, dl);
                memcpy(next + dl, target, (size_t)n + 1);
            }
        }
        free(cur);
        cur = next;
    }
    return cur; /* a loop: writing fails and says so */
}

/* Nothing the user gave is overwritten silently: an output file is not an
 * input's file (unless it is its own or its alias's), the module, the spec
 * or another output's; a symlink is followed to its target; the target is a
 * regular file (or none yet) in a writable directory, or a character device
 * that is written in place. */
static kemu_status check_output_files(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    for (int i = 0; i < p->nops; i++) {
        plan_operand *po = &p->ops[i];
        const kemu_operand *o = &po->op;
        if (!o->output_file)
            continue;
        if (!(po->write_path = follow_symlinks(o->output_file)))
            return plan_fail(r, err, KEMU_PLAN_STAGE_OUTPUT_FILE, i, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        for (int j = 0; j < p->nops; j++) {
            const char *src = p->ops[j].op.source_file;
            if (j == i || (o->aliased && j == o->alias_input) || !src || !same_file(po->write_path, src))
                continue;
            return path_problem(r, err, i, j, KEMU_PLAN_PATH_IS_INPUT, "operand %d would overwrite %s, the file of operand %d",
                                i, src, j);
        }
        if (same_file(po->write_path, p->cfg.ptx_path))
            return path_problem(r, err, i, -1, KEMU_PLAN_PATH_IS_MODULE, "operand %d would overwrite the PTX module %s",
                                i, p->cfg.ptx_path);
        if (same_file(po->write_path, p->cfg.spec_file))
            return path_problem(r, err, i, -1, KEMU_PLAN_PATH_IS_SPEC, "operand %d would overwrite %s, the call spec",
                                i, p->cfg.spec_file);
        for (int j = 0; j < i; j++)
            if (p->ops[j].write_path && same_file(po->write_path, p->ops[j].write_path))
                return path_problem(r, err, i, j, KEMU_PLAN_PATH_SAME_OUTPUT, "operands %d and %d both write %s", j, i,
                                    o->output_file);
    }
    for (int i = 0; i < p->nops; i++) {
        plan_operand *po = &p->ops[i];
        const char *path = po->op.output_file, *target = po->write_path;
        if (!path)
            continue;
        struct stat st;
        if (stat(target, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return path_problem(r, err, i, -1, KEMU_PLAN_PATH_UNWRITABLE, "cannot write %s: it is a directory", path);
            if (S_ISCHR(st.st_mode)) {
                po->in_place = 1;
                if (access(target, W_OK) != 0)
                    return path_problem(r, err, i, -1, KEMU_PLAN_PATH_UNWRITABLE, "cannot write %s: %s", path,
                                        strerror(errno));
                continue;
            }
            if (!S_ISREG(st.st_mode))
                return path_problem(r, err, i, -1, KEMU_PLAN_PATH_UNWRITABLE,
                                    "cannot write %s: it is a %s, not a regular file", path,
                                    S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ? "socket"
                                    : S_ISBLK(st.st_mode) ? "block device" : "special file");
        }
        char *copy = strdup(target);
        if (!copy)
            return plan_fail(r, err, KEMU_PLAN_STAGE_OUTPUT_FILE, i, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        const char *dir = dirname(copy);
        int bad = access(dir, W_OK | X_OK) != 0, e = errno;
        kemu_status st2 = KEMU_OK;
        if (bad)
            st2 = path_problem(r, err, i, -1, KEMU_PLAN_PATH_UNWRITABLE, "cannot write %s: %s: %s", path, dir,
                               strerror(e));
        free(copy);
        if (st2)
            return st2;
    }
    return KEMU_OK;
}

/* ---- laying the operands out ----------------------------------------- */

/* Host memory of every buffer; fresh ones get the fill. */
static kemu_status prepare_host(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    io_uninit_mode fill = io_fill_mode(p->cfg.uninit);
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_buffer(o))
            continue;
        if (o->op.data) {
            o->array.data = o->op.data;
        } else {
            char msg[256];
            if (io_array_alloc(&o->array, msg, sizeof msg))
                return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_OUT_OF_MEMORY, "%s", msg);
            o->owns_data = 1;
        }
        if (is_fresh(o))
            io_fill_uninit(o->array.data, o->array.count, o->array.dtype, fill);
    }
    return KEMU_OK;
}

/* SHARED operands: 128-aligned places after the launch's own dynamic shared
 * bytes, and the image every block's dynamic shared memory starts with. */
static kemu_status layout_shared(kemu_plan *p, kemu_launch_config *lc, kemu_plan_result *r, kemu_error *err)
{
    uint64_t base = exec_kernel_dynamic_shared_base(p->kernel), end = base + lc->shared_bytes;
    int any = 0;
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (o->op.kind != KEMU_OPERAND_SHARED)
            continue;
        uint64_t at = shared_align(end);
        o->emu_address = at;
        end = at + o->bytes;
        any = 1;
        if (end > 0xffffffffull)
            return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_LAUNCH_CONFIG,
                             "the shared-memory operands do not fit in shared memory");
    }
    lc->shared_bytes = (size_t)(end - base);
    r->shared_bytes = lc->shared_bytes;
    if (!any)
        return KEMU_OK;
    io_uninit_mode fill = io_fill_mode(p->cfg.uninit);
    p->shared_image_size = end - base;
    p->shared_image = malloc((size_t)p->shared_image_size);
    if (!p->shared_image)
        return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    io_fill_uninit_bytes(p->shared_image, (size_t)p->shared_image_size, fill);
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (o->op.kind != KEMU_OPERAND_SHARED)
            continue;
        io_fill_uninit(p->shared_image + (o->emu_address - base), o->array.count, o->array.dtype, fill);
        /* reads past the end of shared memory are past the last SHARED operand */
        p->oob_shared_class = 1 + fill_class(o->array.dtype);
    }
    return KEMU_OK;
}

/* Encodes operand o's tensor map over its buffer at `address` with the
 * emulator's encoder (backend NULL) or the driver's. */
static int encode_tensor_map(cuda_backend *backend, const plan_operand *o, uint64_t address, void *map,
                             cuda_status *cst, char *msg, size_t len)
{
    const kemu_plan_tensor_map *t = &o->tmap;
    const io_array *tensor = &o->array;
    int dtype;
    switch (tensor->dtype) {
    case IO_DT_U8: case IO_DT_I8: case IO_DT_BOOL: dtype = KEMU_TMAP_UINT8; break;
    case IO_DT_U16: case IO_DT_I16: dtype = KEMU_TMAP_UINT16; break;
    case IO_DT_U32: dtype = KEMU_TMAP_UINT32; break;
    case IO_DT_I32: dtype = KEMU_TMAP_INT32; break;
    case IO_DT_U64: dtype = KEMU_TMAP_UINT64; break;
    case IO_DT_I64: dtype = KEMU_TMAP_INT64; break;
    case IO_DT_F16: dtype = KEMU_TMAP_FLOAT16; break;
    case IO_DT_BF16: dtype = KEMU_TMAP_BFLOAT16; break;
    case IO_DT_F32: dtype = t->tf32 ? KEMU_TMAP_TFLOAT32 : KEMU_TMAP_FLOAT32; break;
    default: dtype = KEMU_TMAP_FLOAT64; break;
    }
    if (t->rank < 1 || t->rank > 5 || (unsigned)tensor->ndim != t->rank) {
        snprintf(msg, len, "tmap: the box has %u dimensions but the buffer has %d", t->rank, tensor->ndim);
        return -1;
    }
    /* CUDA's order: dimension 0 innermost */
    uint64_t dims[5], strides[4];
    uint32_t box[5], es[5];
    uint64_t stride = io_dtype_size(tensor->dtype);
    for (unsigned i = 0; i < t->rank; i++) {
        unsigned k = t->rank - 1 - i;
        dims[i] = tensor->shape[k];
        box[i] = t->box[k];
        es[i] = t->element_strides[k];
        if (i)
            strides[i - 1] = stride;
        stride *= tensor->shape[k];
    }
    if (backend) {
        *cst = cuda_backend_encode_tensor_map(backend, map, dtype, t->rank, address, dims, strides, box, es,
                                              t->swizzle, t->nan_fill, msg, len);
        return *cst == CUDA_STATUS_OK ? 0 : -1;
    }
    kemu_error e;
    if (kemu_tensor_map_encode_tiled(map, dtype, t->rank, address, dims, strides, box, es, KEMU_TMAP_INTERLEAVE_NONE,
                                     t->swizzle, 0, t->nan_fill, &e)) {
        snprintf(msg, len, "%s", e.message);
        return -1;
    }
    return 0;
}

/* One backend's launch arguments from its buffer addresses. */
static void set_arguments(kemu_plan *p, plan_side *s, int gpu)
{
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (o->op.kind == KEMU_OPERAND_VALUE) {
            s->args[i] = (void *)o->op.value;
            continue;
        }
        if (o->has_tmap) {
            s->args[i] = s->maps + (size_t)i * KEMU_TENSOR_MAP_BYTES;
            continue;
        }
        /* a GPU finds SHARED operands through the wrapper: their arguments are 0 there */
        uint64_t v = gpu ? (o->op.kind == KEMU_OPERAND_SHARED ? 0 : o->gpu_address) : o->emu_address;
        kemu_param_info pi;
        kemu_kernel_param(p->kernel, i, &pi);
        s->values[i] = v;
        s->values32[i] = (uint32_t)v;
        s->args[i] = pi.size == 4 ? (void *)&s->values32[i] : (void *)&s->values[i];
    }
}

/* Allocates and fills every buffer on the emulator and encodes its tensor
 * maps. */
static kemu_status place_on_emulator(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    if (side_alloc(&p->emu, p->nops))
        return plan_fail(r, err, KEMU_PLAN_STAGE_EMULATOR, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_buffer(o) || o->op.kind == KEMU_OPERAND_SHARED)
            continue;
        if (o->op.aliased) {
            o->emu_address = p->ops[o->op.alias_input].emu_address;
        } else {
            kemu_error e;
            /* fresh buffers hold the fill unwritten: initcheck sees them so */
            if (kemu_malloc(p->dev, o->bytes, p->cfg.uninit, &o->emu_address, &e) ||
                (is_fresh(o) ? kemu_fill_uninit(p->dev, o->emu_address, o->array.data, o->bytes, &e)
                             : kemu_memcpy_htod(p->dev, o->emu_address, o->array.data, o->bytes, &e)))
                return plan_fail(r, err, KEMU_PLAN_STAGE_EMULATOR, i, e.status, "%s", e.message);
            exec_set_fill_class(p->dev, o->emu_address, fill_class(o->array.dtype));
        }
        if (o->has_tmap) {
            char msg[1024];
            if (encode_tensor_map(NULL, o, o->emu_address, p->emu.maps + (size_t)i * KEMU_TENSOR_MAP_BYTES, NULL, msg,
                                  sizeof msg))
                return plan_fail(r, err, KEMU_PLAN_STAGE_OPERANDS, i, KEMU_ERR_INVALID_ARGUMENT, "%s", msg);
        }
    }
    set_arguments(p, &p->emu, 0);
    return KEMU_OK;
}

/* The GPU side stops: unavailable (no usable GPU) or a failed driver call. */
static kemu_status gpu_stop(kemu_plan_result *r, kemu_error *err, int operand, cuda_status cst)
{
    r->gpu_unavailable = cst == CUDA_STATUS_UNAVAILABLE;
    r->stage = KEMU_PLAN_STAGE_GPU;
    r->operand = operand;
    return util_error(err, KEMU_ERR_UNSUPPORTED, "%s", r->gpu_message);
}

/* The PTX the GPU runs: the module's, wrapped when there are SHARED operands. */
static kemu_status gpu_ptx(kemu_plan *p, char **text, size_t *len, kemu_plan_result *r, kemu_error *err)
{
    kemu_error e;
    if (p->cfg.ptx_text) {
        *len = p->cfg.ptx_length ? p->cfg.ptx_length : strlen(p->cfg.ptx_text);
        if (!(*text = malloc(*len + 1)))
            return plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(*text, p->cfg.ptx_text, *len);
        (*text)[*len] = 0;
    } else if (!p->cfg.ptx_path) {
        return plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, KEMU_ERR_INVALID_ARGUMENT,
                         "the GPU needs the module's PTX: the plan names no file and holds no text");
    } else if (util_read_file(p->cfg.ptx_path, text, len, &e)) {
        return plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, e.status, "%s", e.message);
    }
    int any_shared = 0;
    plan_wrap_param *wp = calloc((size_t)p->nops + 1, sizeof *wp);
    if (!wp)
        return plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    /* the emulator's offsets from the 128-aligned start of the dynamic shared memory */
    uint64_t start = shared_align(exec_kernel_dynamic_shared_base(p->kernel));
    for (int i = 0; i < p->nops; i++) {
        kemu_param_info pi;
        kemu_kernel_param(p->kernel, i, &pi);
        wp[i].name = pi.name;
        wp[i].size = pi.size;
        wp[i].smem = p->ops[i].op.kind == KEMU_OPERAND_SHARED;
        if (wp[i].smem)
            wp[i].smem_offset = p->ops[i].emu_address - start;
        any_shared |= wp[i].smem;
    }
    kemu_status st = KEMU_OK;
    if (any_shared) {
        char *wrapped, msg[512];
        size_t wlen;
        if (plan_wrap_shared(*text, *len, kemu_kernel_name(p->kernel), p->nops, wp, &wrapped, &wlen, msg, sizeof msg)) {
            st = plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, KEMU_ERR_UNSUPPORTED,
                           "cannot give the GPU the smem scratch: %s", msg);
        } else {
            free(*text);
            *text = wrapped;
            *len = wlen;
            r->gpu_wrapped = 1;
        }
    }
    free(wp);
    return st;
}

/* Opens the GPU, JIT-loads the PTX and uploads every buffer as the
 * emulator has it before its launch. */
static kemu_status place_on_gpu(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    int ordinal = p->cfg.cuda_device;
    cuda_status cst = cuda_backend_open(ordinal, &p->backend, r->gpu_message, sizeof r->gpu_message);
    if (cst)
        return gpu_stop(r, err, -1, cst == CUDA_STATUS_UNAVAILABLE ? cst : CUDA_STATUS_FAILED);
    snprintf(r->gpu_name, sizeof r->gpu_name, "%s", cuda_backend_device_name(p->backend));
    r->gpu_sm = cuda_backend_device_sm(p->backend);
    int target = cuda_kernel_target_sm(p->kernel);
    if (target > r->gpu_sm) {
        snprintf(r->gpu_message, sizeof r->gpu_message, "CUDA device %d (%s) is sm_%d, but %s targets sm_%d", ordinal,
                 r->gpu_name, r->gpu_sm, p->cfg.ptx_path ? p->cfg.ptx_path : "the kernel's PTX", target);
        return gpu_stop(r, err, -1, CUDA_STATUS_UNAVAILABLE);
    }
    char *text = NULL;
    size_t len = 0;
    kemu_status st = gpu_ptx(p, &text, &len, r, err);
    if (st) {
        free(text);
        return st;
    }
    cst = cuda_backend_load_ptx(p->backend, text, len, kemu_kernel_name(p->kernel), r->gpu_message,
                                sizeof r->gpu_message);
    free(text);
    if (cst) {
        const char *log = cuda_backend_jit_log(p->backend);
        if (*log)
            r->gpu_jit_log = strdup(log);
        return gpu_stop(r, err, -1, cst == CUDA_STATUS_UNAVAILABLE ? cst : CUDA_STATUS_FAILED);
    }
    if (side_alloc(&p->gpu, p->nops))
        return plan_fail(r, err, KEMU_PLAN_STAGE_GPU, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_buffer(o) || o->op.kind == KEMU_OPERAND_SHARED)
            continue;
        if (o->op.aliased) {
            o->gpu_address = p->ops[o->op.alias_input].gpu_address;
        } else if (cuda_backend_alloc(p->backend, o->bytes, &o->gpu_address, r->gpu_message, sizeof r->gpu_message) ||
                   cuda_backend_copy_to_device(p->backend, o->gpu_address, o->array.data, o->bytes, r->gpu_message,
                                               sizeof r->gpu_message)) {
            return gpu_stop(r, err, i, CUDA_STATUS_FAILED);
        }
    }
    /* tensor maps: encoded by the driver over the GPU's buffers */
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_buffer(o) || !o->has_tmap)
            continue;
        cuda_status tst = CUDA_STATUS_OK;
        if (encode_tensor_map(p->backend, o, o->gpu_address, p->gpu.maps + (size_t)i * KEMU_TENSOR_MAP_BYTES, &tst,
                              r->gpu_message, sizeof r->gpu_message))
            return gpu_stop(r, err, i, tst == CUDA_STATUS_UNAVAILABLE ? tst : CUDA_STATUS_FAILED);
    }
    set_arguments(p, &p->gpu, 1);
    return KEMU_OK;
}

/* ---- running ----------------------------------------------------------- */

/* The emulator's launch, with the plan's fills; a fault is kept in p->fault. */
static kemu_status launch_on_emulator(kemu_plan *p, const kemu_launch_config *lc, kemu_plan_result *r,
                                      kemu_error *err)
{
    kemu_device *dev = p->dev;
    kemu_uninit saved = dev->cfg.uninit;
    dev->cfg.uninit = p->cfg.uninit;
    dev->oob_reads_fill = p->cfg.oob_reads_fill;
    dev->oob_shared_class = p->oob_shared_class;
    dev->shared_init = p->shared_image;
    dev->shared_init_size = p->shared_image_size;
    kemu_error e;
    memset(&e, 0, sizeof e);
    kemu_status st = kemu_launch(p->kernel, lc, p->emu.args, &r->report, &e);
    dev->cfg.uninit = saved;
    dev->oob_reads_fill = 0;
    dev->oob_shared_class = 0;
    dev->shared_init = NULL;
    dev->shared_init_size = 0;
    r->emulator_ran = 1;
    if (p->cfg.printf_stream && r->report.printf_length) {
        fwrite(r->report.printf_output, 1, r->report.printf_length, p->cfg.printf_stream);
        fflush(p->cfg.printf_stream);
    }
    if (st == KEMU_ERR_KERNEL_FAULT) {
        r->emulator_faulted = 1;
        snprintf(p->fault, sizeof p->fault, "%s", e.message);
        return KEMU_OK;
    }
    if (st) {
        if (err)
            *err = e;
        r->stage = KEMU_PLAN_STAGE_EMULATOR;
        r->operand = -1;
    }
    return st;
}

static kemu_status launch_on_gpu(kemu_plan *p, const kemu_launch_config *lc, kemu_plan_result *r, kemu_error *err)
{
    cuda_status cst = cuda_backend_launch(p->backend, lc, p->gpu.args, &r->gpu_seconds, r->gpu_message,
                                          sizeof r->gpu_message);
    r->gpu_ran = 1;
    if (cst == CUDA_STATUS_KERNEL_FAULT) {
        r->gpu_faulted = 1;
        return KEMU_OK;
    }
    return cst ? gpu_stop(r, err, -1, cst) : KEMU_OK;
}

/* Copies the outputs back: the emulator's into their host memory (when it
 * ran and did not fault, or keep_outputs), the GPU's into their host memory
 * when it ran alone, or into its own copies next to the emulator's. */
static kemu_status read_back(kemu_plan *p, int use_emu, int use_gpu, kemu_plan_result *r, kemu_error *err)
{
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_output(o))
            continue;
        kemu_error e;
        char msg[2048];
        if (use_emu && kemu_memcpy_dtoh(p->dev, o->array.data, o->emu_address, o->bytes, &e))
            return plan_fail(r, err, KEMU_PLAN_STAGE_READBACK, i, e.status, "%s", e.message);
        if (!use_gpu)
            continue;
        void *dst = o->array.data;
        if (use_emu) {
            o->gpu_copy = o->array;
            o->gpu_copy.data = NULL;
            if (io_array_alloc(&o->gpu_copy, msg, sizeof msg))
                return plan_fail(r, err, KEMU_PLAN_STAGE_READBACK, i, KEMU_ERR_OUT_OF_MEMORY, "%s", msg);
            dst = o->gpu_copy.data;
        }
        if (cuda_backend_copy_to_host(p->backend, dst, o->gpu_address, o->bytes, msg, sizeof msg))
            return plan_fail(r, err, KEMU_PLAN_STAGE_READBACK, i, KEMU_ERR_IO, "cuda: %s", msg);
    }
    return KEMU_OK;
}

static const char *operand_label(const plan_operand *o, int i, char *buf, size_t len)
{
    if (o->op.label)
        return o->op.label;
    if (o->op.output_file)
        return o->op.output_file;
    snprintf(buf, len, "operand %d", i);
    return buf;
}

/* Both backends, neither faulted: every output of the emulator against the GPU's. */
static kemu_status compare_backends(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    cuda_tolerance tolerance;
    if (p->cfg.tolerance) {
        io_compare_opts opts = {p->cfg.tolerance->ulps, p->cfg.tolerance->rtol, p->cfg.tolerance->atol, 0};
        cuda_tolerance_from_user(&opts, &tolerance);
    } else {
        cuda_tolerance_for_kernel(p->kernel, &tolerance);
    }
    snprintf(r->tolerance, sizeof r->tolerance, "%s", tolerance.description);
    r->comparisons = calloc((size_t)p->nops + 1, sizeof *r->comparisons);
    if (!r->comparisons)
        return plan_fail(r, err, KEMU_PLAN_STAGE_READBACK, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    r->compared = 1;
    for (int i = 0; i < p->nops; i++) {
        plan_operand *o = &p->ops[i];
        if (!is_output(o))
            continue;
        kemu_plan_comparison *c = &r->comparisons[i];
        io_compare_result res;
        char label[64];
        memset(&res, 0, sizeof res);
        cuda_compare_buffer(operand_label(o, i, label, sizeof label), &o->array, &o->gpu_copy, &tolerance.opts, &res,
                            c->line, sizeof c->line);
        c->compared = 1;
        c->mismatches = res.mismatches;
        c->max_ulps = res.max_ulps;
        c->first_mismatch = res.mismatches && res.n_first > 0 ? (long long)res.first_mismatch[0] : -1;
        r->ncompared++;
        r->differing += res.mismatches != 0;
    }
    return KEMU_OK;
}

/* Writes every output file (and the GPU's copies, when compared) to a
 * temporary file first, then the character devices in place, then renames
 * the temporary files: a failure before the renames changes no file. */
static kemu_status write_outputs(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    int n = 0;
    for (int i = 0; i < p->nops; i++)
        n += p->ops[i].op.output_file ? 2 : 0;
    if (!n) {
        r->outputs_written = 1;
        return KEMU_OK;
    }
    char **staged = calloc((size_t)n, sizeof *staged), **paths = calloc((size_t)n, sizeof *paths);
    int *owner = calloc((size_t)n, sizeof *owner), m = 0;
    kemu_status st = KEMU_OK;
    char msg[2048];
    if (!staged || !paths || !owner) {
        st = plan_fail(r, err, KEMU_PLAN_STAGE_WRITE, -1, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        goto out;
    }
    for (int i = 0; i < p->nops && !st; i++) {
        plan_operand *o = &p->ops[i];
        if (!o->op.output_file || !is_output(o) || o->in_place)
            continue;
        owner[m] = i;
        paths[m] = strdup(o->write_path);
        if (!paths[m] || io_npy_stage(paths[m], &o->array, &staged[m], msg, sizeof msg)) {
            st = plan_fail(r, err, KEMU_PLAN_STAGE_WRITE, i, paths[m] ? KEMU_ERR_IO : KEMU_ERR_OUT_OF_MEMORY, "%s",
                           paths[m] ? msg : "out of memory");
            m++;
            break;
        }
        m++;
        if (!r->compared || !r->comparisons[i].compared)
            continue;
        owner[m] = i;
        paths[m] = kemu_plan_gpu_output_file(o->op.output_file);
        if (!paths[m] || io_npy_stage(paths[m], &o->gpu_copy, &staged[m], msg, sizeof msg)) {
            st = plan_fail(r, err, KEMU_PLAN_STAGE_WRITE, i, paths[m] ? KEMU_ERR_IO : KEMU_ERR_OUT_OF_MEMORY,
                           "%s%s", paths[m] ? "cuda: " : "", paths[m] ? msg : "out of memory");
            m++;
            break;
        }
        m++;
    }
    for (int i = 0; i < p->nops && !st; i++) {
        plan_operand *o = &p->ops[i];
        if (o->op.output_file && is_output(o) && o->in_place &&
            io_npy_write_in_place(o->write_path, &o->array, msg, sizeof msg))
            st = plan_fail(r, err, KEMU_PLAN_STAGE_WRITE, i, KEMU_ERR_IO, "%s", msg);
    }
    for (int k = 0; k < m; k++) {
        if (st) {
            io_npy_discard(staged[k]);
        } else if (io_npy_commit(staged[k], paths[k], msg, sizeof msg)) {
            /* a rename failed: the files staged after it stay unwritten */
            st = plan_fail(r, err, KEMU_PLAN_STAGE_WRITE, owner[k], KEMU_ERR_IO, "%s", msg);
        }
        staged[k] = NULL;
    }
    if (!st)
        r->outputs_written = 1;
out:
    for (int k = 0; paths && k < m; k++)
        free(paths[k]);
    free(staged);
    free(paths);
    free(owner);
    return st;
}

kemu_status kemu_plan_run(kemu_plan *p, kemu_plan_result *r, kemu_error *err)
{
    kemu_plan_result local;
    if (!r)
        r = &local;
    memset(r, 0, sizeof *r);
    r->operand = r->other_operand = -1;
    if (!p)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_run: NULL plan");
    if (p->ran)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_plan_run: a plan runs once; make another");
    p->ran = 1;
    int use_emu = (p->cfg.backends & KEMU_BACKEND_EMULATOR) != 0, use_gpu = (p->cfg.backends & KEMU_BACKEND_CUDA) != 0;
    kemu_launch_config lc = p->cfg.launch;
    kemu_status st;
    if ((st = check_operands(p, r, err)) || (st = check_output_files(p, r, err)) || (st = prepare_host(p, r, err)) ||
        (st = layout_shared(p, &lc, r, err)) || (use_emu && (st = place_on_emulator(p, r, err))) ||
        (use_gpu && (st = place_on_gpu(p, r, err))) || (use_emu && (st = launch_on_emulator(p, &lc, r, err))) ||
        (use_gpu && (st = launch_on_gpu(p, &lc, r, err))))
        goto out;
    int emu_outputs = use_emu && (!r->emulator_faulted || p->cfg.keep_outputs);
    int gpu_outputs = use_gpu && !r->gpu_faulted && (!use_emu || !r->emulator_faulted);
    if ((emu_outputs || gpu_outputs) && (st = read_back(p, emu_outputs, gpu_outputs, r, err)))
        goto out;
    if (use_emu && use_gpu && !r->emulator_faulted && !r->gpu_faulted && (st = compare_backends(p, r, err)))
        goto out;
    if ((emu_outputs || (gpu_outputs && !use_emu)) && (st = write_outputs(p, r, err)))
        goto out;
    if (r->emulator_faulted)
        st = util_error(err, KEMU_ERR_KERNEL_FAULT, "%s", p->fault);
    else if (r->gpu_faulted)
        st = util_error(err, KEMU_ERR_KERNEL_FAULT, "cuda: %s", r->gpu_message);
out:
    free_emulator_buffers(p);
    if (r == &local)
        kemu_plan_result_free(&local);
    return st;
}

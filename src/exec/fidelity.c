/* The fidelity report (kemu_device_set_fidelity_report; `--fidelity-report`
 * of run, call and exec; docs/fidelity.md, "How far to trust a run"):
 * while it is on, every launch counts the thread-instructions it executes
 * at each pc (through the interpreter's op hook, in front of the checkers'
 * or the debugger's hooks, which it passes every event on to:
 * vm_hooks_chain), and at the
 * launch's end files each executed instruction under what is known of how
 * exactly kemu reproduces the hardware there:
 *  - exact: results the PTX ISA defines bit for bit (integer, IEEE-rounded
 *    float, conversions, memory, control, warp ops), and the tensor-core
 *    f16/bf16/tf32 sums, which follow the model fitted to recorded H200
 *    results (docs/semantics.md, "Tensor-core arithmetic");
 *  - approximate: the .approx special functions and divisions, with the
 *    bound measured against the H200 (docs/fidelity.md, "Approximate
 *    instructions"), and tensor-core sums not fitted to hardware yet (fp8);
 *  - order-dependent: atomics (the values they return, and for floats the
 *    rounding of the sum, depend on the order of the threads);
 *  - model-dependent: values that describe the machine rather than the
 *    computation (clocks, timers, SM and warp ids, nanosleep);
 *  - refused: instructions kemu cannot execute (the launch faults there).
 * Reports are kept per kernel over all launches, in first-launch order. */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/fidelity.h"
#include "ptx/ptx.h"
#include "util.h"

enum { FID_EXACT = 0, FID_APPROX, FID_ORDER, FID_MODEL, FID_REFUSED, FID_CLASSES };
static const char *const class_key[FID_CLASSES] = {"exact", "approximate", "order_dependent", "model_dependent",
                                                   "refused"};

/* One instruction of a kernel's report that is not plainly exact. */
typedef struct fid_entry {
    int cls;
    char what[64];       /* "ex2.approx.f32" */
    const char *note;    /* the bound, or why */
    int line;            /* PTX line */
    uint64_t lanes;      /* thread-instructions */
} fid_entry;

typedef struct fid_kernel {
    char *name;
    uint64_t launches;
    uint64_t lanes[FID_CLASSES];
    fid_entry *entries;
    size_t nentries, capentries;
} fid_kernel;

struct exec_fidelity {
    pthread_mutex_t lock;
    fid_kernel *kernels;
    size_t nkernels, capkernels;
};

/* One launch being counted (a device launch inside it has its own). */
struct exec_fidelity_launch {
    vm_hooks_chain chain; /* first: the hooks installed, passing events on to the launch's others */
    exec_fidelity *fid;
    const bc_module *mod;
    uint64_t **counts; /* lanes by function index, then pc */
    int nfunctions;
};

exec_fidelity *exec_fidelity_new(void)
{
    exec_fidelity *f = calloc(1, sizeof *f);
    if (f)
        pthread_mutex_init(&f->lock, NULL);
    return f;
}

void exec_fidelity_free(exec_fidelity *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nkernels; i++) {
        free(f->kernels[i].name);
        free(f->kernels[i].entries);
    }
    free(f->kernels);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* ---- what an op is ---------------------------------------------------------- */

static const char *type_suffix(int t)
{
    const char *s = ptx_type_name((ptx_type)t);
    return s ? s : "";
}

/* Files op under a class, with its name and note. */
static int classify(const bc_op *op, char *what, size_t n, const char **note)
{
    *note = NULL;
    switch (op->code) {
    case BC_FUNARY: {
        static const char *const names[] = {"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh"};
        int approx = op->mode2 == BC_RND_APPROX || op->mode2 == BC_RND_NONE;
        if (!approx || op->mode > BC_FN_TANH)
            return FID_EXACT;
        snprintf(what, n, "%s.approx%s%s", names[op->mode], op->flags & BC_F_FTZ ? ".ftz" : "", type_suffix(op->type));
        if (op->type != PTX_T_F32) {
            *note = "not measured on hardware (kemu computes the f32 function and rounds)";
            return FID_APPROX;
        }
        switch (op->mode) {
        case BC_FN_EX2: *note = "within 1 ULP of the H200 (97.6% of recorded results bit-identical)"; break;
        case BC_FN_LG2:
            *note = "within 508 ULP of the H200, absolute error about 2^-23 near 0 (99.1% bit-identical)";
            break;
        case BC_FN_SIN: *note = "within 14 ULP of the H200 (89.0% bit-identical)"; break;
        case BC_FN_COS: *note = "within 11 ULP of the H200 (88.9% bit-identical)"; break;
        case BC_FN_TANH: *note = "within 43 ULP of the H200 (89.6% bit-identical)"; break;
        case BC_FN_RSQRT: *note = "within 1 ULP of the H200 (98.8% bit-identical)"; break;
        default: *note = "the PTX ISA's bound for .approx (not measured on hardware)"; break;
        }
        return FID_APPROX;
    }
    case BC_FDIV:
        if (op->mode != BC_RND_APPROX && op->mode != BC_RND_FULL)
            return FID_EXACT;
        snprintf(what, n, "div.%s%s", op->mode == BC_RND_APPROX ? "approx" : "full", type_suffix(op->type));
        *note = op->mode == BC_RND_APPROX ? "within 2 ULP of the H200 (98.6% of recorded results bit-identical)"
                                          : "within 2 ULP (the PTX ISA's bound for div.full; not measured)";
        return FID_APPROX;
    case BC_MATRIX: {
        int sub = op->mode & 15;
        if (sub != MATRIX_WMMA_MMA && sub != MATRIX_MMA_SYNC && sub != MATRIX_WGMMA)
            return FID_EXACT;
        const char *kind = sub == MATRIX_WGMMA ? "wgmma" : sub == MATRIX_MMA_SYNC ? "mma.sync" : "wmma.mma";
        if (op->type == PTX_T_E4M3 || op->type == PTX_T_E5M2) {
            snprintf(what, n, "%s%s", kind, type_suffix(op->type));
            *note = "fp8 sums as an f32 FMA chain; the H200 accumulates more coarsely (not modelled yet: "
                    "last bits differ)";
            return FID_APPROX;
        }
        return FID_EXACT;
    }
    case BC_ATOM: {
        static const char *const names[] = {"add", "min", "max", "inc", "dec", "cas", "exch", "and", "or", "xor", "ld"};
        int returns = op->d != BC_NONE;
        snprintf(what, n, "%s.%s%s", returns ? "atom" : "red", op->mode2 <= BC_ATOM_LD ? names[op->mode2] : "op",
                 type_suffix(op->type));
        int is_float = op->type == PTX_T_F32 || op->type == PTX_T_F64 || op->type == PTX_T_F16 ||
                       op->type == PTX_T_BF16 || op->type == PTX_T_F16X2 || op->type == PTX_T_BF16X2;
        int commutes = op->mode2 == BC_ATOM_ADD || op->mode2 == BC_ATOM_MIN || op->mode2 == BC_ATOM_MAX ||
                       op->mode2 == BC_ATOM_AND || op->mode2 == BC_ATOM_OR || op->mode2 == BC_ATOM_XOR;
        if (!returns && commutes && (!is_float || op->mode2 != BC_ATOM_ADD))
            return FID_EXACT; /* what memory keeps is the same in every order */
        *note = is_float && op->mode2 == BC_ATOM_ADD
                    ? returns ? "the values returned and the rounding of the sum depend on the order of the threads"
                              : "the rounding of the sum depends on the order of the threads"
                    : returns ? "the values returned (and for exch, cas, inc and dec what memory keeps) depend on "
                                "the order of the threads"
                              : "what memory keeps depends on the order of the threads";
        return FID_ORDER;
    }
    case BC_S2R:
        switch (op->mode) {
        case BC_SR_CLOCK: case BC_SR_CLOCK_HI: case BC_SR_CLOCK64:
            snprintf(what, n, "%%clock");
            *note = "kemu's clocks count the warp's instructions, not cycles";
            return FID_MODEL;
        case BC_SR_GLOBALTIMER: case BC_SR_GLOBALTIMER_LO: case BC_SR_GLOBALTIMER_HI:
            snprintf(what, n, "%%globaltimer");
            *note = "the host's clock, not the GPU's";
            return FID_MODEL;
        case BC_SR_SMID: case BC_SR_NSMID: case BC_SR_WARPID: case BC_SR_NWARPID:
            snprintf(what, n, "%%smid/%%warpid");
            *note = "kemu's model of the machine's placement, not the hardware's";
            return FID_MODEL;
        default:
            return FID_EXACT;
        }
    case BC_NANOSLEEP:
        snprintf(what, n, "nanosleep");
        *note = "yields the warp; no time passes";
        return FID_MODEL;
    case BC_UNSUPPORTED:
        snprintf(what, n, "(an instruction kemu cannot execute)");
        *note = "the launch faults here";
        return FID_REFUSED;
    default:
        return FID_EXACT;
    }
}

/* ---- counting a launch ------------------------------------------------------ */

static void t_op(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    exec_fidelity_launch *fl = ctx;
    int i = f->fn->index;
    if (i >= 0 && i < fl->nfunctions && fl->mod->functions[i] == f->fn && pc < f->fn->ncode)
        __atomic_fetch_add(&fl->counts[i][pc], (uint64_t)__builtin_popcount(mask), __ATOMIC_RELAXED);
    const vm_hooks *inner = fl->chain.inner;
    if (inner && inner->op)
        inner->op(inner->ctx, b, w, f, pc, mask);
}

exec_fidelity_launch *exec_fidelity_begin(exec_fidelity *fid, vm_launch *L, const vm_hooks **hooks)
{
    exec_fidelity_launch *fl = calloc(1, sizeof *fl);
    int n = L->mod->nfunctions;
    if (fl)
        fl->counts = calloc((size_t)(n ? n : 1), sizeof *fl->counts);
    for (int i = 0; fl && fl->counts && i < n; i++)
        if (!(fl->counts[i] = calloc(L->mod->functions[i]->ncode ? L->mod->functions[i]->ncode : 1,
                                     sizeof(uint64_t)))) {
            while (i-- > 0)
                free(fl->counts[i]);
            free(fl->counts);
            fl->counts = NULL;
        }
    if (!fl || !fl->counts) { /* out of memory: no report for this launch */
        free(fl);
        return NULL;
    }
    fl->fid = fid;
    fl->mod = L->mod;
    fl->nfunctions = n;
    /* every other event goes on to the hooks already there */
    vm_hooks_chain_init(&fl->chain, *hooks);
    vm_hooks *h = &fl->chain.hooks;
    h->op = t_op;
    *hooks = h;
    return fl;
}

static fid_kernel *kernel_of(exec_fidelity *fid, const char *name)
{
    for (size_t i = 0; i < fid->nkernels; i++)
        if (!strcmp(fid->kernels[i].name, name))
            return &fid->kernels[i];
    if (fid->nkernels == fid->capkernels) {
        size_t cap = fid->capkernels ? 2 * fid->capkernels : 4;
        fid_kernel *grown = realloc(fid->kernels, cap * sizeof *grown);
        if (!grown)
            return NULL;
        fid->kernels = grown;
        fid->capkernels = cap;
    }
    fid_kernel *k = &fid->kernels[fid->nkernels];
    memset(k, 0, sizeof *k);
    if (!(k->name = strdup(name)))
        return NULL;
    fid->nkernels++;
    return k;
}

static void add_entry(fid_kernel *k, int cls, const char *what, const char *note, int line, uint64_t lanes)
{
    for (size_t i = 0; i < k->nentries; i++) {
        fid_entry *e = &k->entries[i];
        if (e->cls == cls && e->line == line && !strcmp(e->what, what)) {
            e->lanes += lanes;
            return;
        }
    }
    if (k->nentries == k->capentries) {
        size_t cap = k->capentries ? 2 * k->capentries : 8;
        fid_entry *grown = realloc(k->entries, cap * sizeof *grown);
        if (!grown)
            return;
        k->entries = grown;
        k->capentries = cap;
    }
    fid_entry *e = &k->entries[k->nentries++];
    e->cls = cls;
    snprintf(e->what, sizeof e->what, "%s", what);
    e->note = note;
    e->line = line;
    e->lanes = lanes;
}

void exec_fidelity_end(exec_fidelity_launch *fl, vm_launch *L)
{
    if (!fl)
        return;
    exec_fidelity *fid = fl->fid;
    pthread_mutex_lock(&fid->lock);
    fid_kernel *k = kernel_of(fid, L->kernel->name);
    if (k)
        k->launches++;
    for (int i = 0; k && i < fl->nfunctions; i++) {
        const bc_function *fn = L->mod->functions[i];
        for (uint32_t pc = 0; pc < fn->ncode; pc++) {
            uint64_t lanes = fl->counts[i][pc];
            if (!lanes)
                continue;
            char what[64];
            const char *note;
            int cls = classify(&fn->code[pc], what, sizeof what, &note);
            k->lanes[cls] += lanes;
            if (cls != FID_EXACT) {
                int line = fn->srcs && fn->code[pc].src < fn->nsrcs ? fn->srcs[fn->code[pc].src].line : 0;
                add_entry(k, cls, what, note, line, lanes);
            }
        }
    }
    pthread_mutex_unlock(&fid->lock);
    for (int i = 0; i < fl->nfunctions; i++)
        free(fl->counts[i]);
    free(fl->counts);
    free(fl);
}

/* ---- the report ------------------------------------------------------------------ */

static const char *const class_title[FID_CLASSES] = {
    "exact (bit for bit as the PTX ISA defines it, or as the tensor-core model fitted to the H200)",
    "approximate", "order-dependent", "model-dependent", "refused"};

char *exec_fidelity_text(exec_fidelity *fid)
{
    util_buffer b = {0};
    pthread_mutex_lock(&fid->lock);
    for (size_t i = 0; i < fid->nkernels; i++) {
        fid_kernel *k = &fid->kernels[i];
        uint64_t total = 0;
        for (int c = 0; c < FID_CLASSES; c++)
            total += k->lanes[c];
        util_buffer_printf(&b, "kemu: fidelity of %s (%llu launch%s, %llu thread-instructions):\n", k->name,
                           (unsigned long long)k->launches, k->launches == 1 ? "" : "es", (unsigned long long)total);
        for (int c = 0; c < FID_CLASSES; c++) {
            if (!k->lanes[c] && c != FID_EXACT)
                continue;
            util_buffer_printf(&b, "  %s: %llu (%.1f%%)\n", class_title[c], (unsigned long long)k->lanes[c],
                               total ? 100.0 * (double)k->lanes[c] / (double)total : 0.0);
            for (size_t e = 0; e < k->nentries; e++)
                if (k->entries[e].cls == c)
                    util_buffer_printf(&b, "    %s (line %d): %llu: %s\n", k->entries[e].what, k->entries[e].line,
                                       (unsigned long long)k->entries[e].lanes, k->entries[e].note);
        }
    }
    if (!fid->nkernels)
        util_buffer_printf(&b, "kemu: fidelity: no kernel ran\n");
    pthread_mutex_unlock(&fid->lock);
    return b.data ? b.data : strdup("");
}

char *exec_fidelity_json(exec_fidelity *fid)
{
    json_t *kernels = json_array();
    pthread_mutex_lock(&fid->lock);
    for (size_t i = 0; kernels && i < fid->nkernels; i++) {
        fid_kernel *k = &fid->kernels[i];
        json_t *o = json_object(), *counts = json_object(), *items = json_array();
        for (int c = 0; c < FID_CLASSES; c++)
            json_object_set_new(counts, class_key[c], json_integer((json_int_t)k->lanes[c]));
        for (size_t e = 0; e < k->nentries; e++)
            json_array_append_new(items, json_pack("{s:s,s:s,s:i,s:I,s:s}", "class", class_key[k->entries[e].cls],
                                                   "instruction", k->entries[e].what, "line", k->entries[e].line,
                                                   "thread_instructions", (json_int_t)k->entries[e].lanes, "note",
                                                   k->entries[e].note));
        json_object_set_new(o, "kernel", json_string(k->name));
        json_object_set_new(o, "launches", json_integer((json_int_t)k->launches));
        json_object_set_new(o, "thread_instructions", counts);
        json_object_set_new(o, "instructions", items);
        json_array_append_new(kernels, o);
    }
    pthread_mutex_unlock(&fid->lock);
    char *text = kernels ? json_dumps(kernels, JSON_COMPACT) : NULL;
    json_decref(kernels);
    return text;
}

/* ---- the C API --------------------------------------------------------------------- */

kemu_status kemu_device_set_fidelity_report(kemu_device *dev, int on, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_set_fidelity_report: NULL device");
    if (on && !dev->fidelity && !(dev->fidelity = exec_fidelity_new()))
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    if (!on) {
        exec_fidelity_free(dev->fidelity);
        dev->fidelity = NULL;
    }
    return KEMU_OK;
}

kemu_status kemu_fidelity_report(kemu_device *dev, char **text, char **json, kemu_error *err)
{
    if (!dev || !dev->fidelity)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_fidelity_report: %s", !dev ? "NULL device" : "the report is not on for this device");
    if (text && !(*text = exec_fidelity_text(dev->fidelity)))
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    if (json && !(*json = exec_fidelity_json(dev->fidelity))) {
        if (text) {
            free(*text);
            *text = NULL;
        }
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return KEMU_OK;
}

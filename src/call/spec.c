/* The JSON reader of `kemu call`: parses a call spec with jansson, checks
 * every field's type and name (one error naming the field's JSON path,
 * such as "outputs[1].shape"), resolves file names against the spec's
 * directory and fills a kemu_call_spec. Value checks that the C API makes
 * anyway (dtype names, index ranges, which fields go together) are left to
 * it, so both report them in the same words. */
#include "call/spec.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct spec_reader {
    call_spec_doc *doc;
    const char *dir;        /* the spec's directory, or NULL for "." */
    const char *out_dir;
    char *err;
    size_t errlen;
} spec_reader;

static int fail(spec_reader *R, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(spec_reader *R, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(R->err, R->errlen, "%s: %s", path, msg);
    return -1;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static void join(char *buf, size_t len, const char *prefix, const char *key)
{
    if (prefix && *prefix)
        snprintf(buf, len, "%.180s.%.60s", prefix, key);
    else
        snprintf(buf, len, "%s", key);
}

static void index_path(char *buf, size_t len, const char *prefix, size_t i)
{
    snprintf(buf, len, "%.200s[%zu]", prefix, i);
}

/* Refuses keys of obj not in `known` (NULL-terminated). */
static int check_keys(spec_reader *R, json_t *obj, const char *path, const char *const *known)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int ok = 0;
        for (int i = 0; known[i] && !ok; i++)
            ok = !strcmp(key, known[i]);
        if (ok)
            continue;
        char list[512] = "", p[256];
        size_t k = 0;
        for (int i = 0; known[i] && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", known[i]);
        join(p, sizeof p, path, key);
        return fail(R, p, "unknown field (%s takes %s)", path && *path ? path : "a call spec", list);
    }
    return 0;
}

static int want_object(spec_reader *R, json_t *v, const char *path)
{
    if (!json_is_object(v))
        return fail(R, path, "expected an object, got %s", type_name(v));
    return 0;
}

static int want_array(spec_reader *R, json_t *v, const char *path)
{
    if (!json_is_array(v))
        return fail(R, path, "expected an array, got %s", type_name(v));
    return 0;
}

static int get_string(spec_reader *R, json_t *obj, const char *key, const char *prefix, const char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_string(v)) {
        char p[256];
        join(p, sizeof p, prefix, key);
        return fail(R, p, "expected a string, got %s", type_name(v));
    }
    *out = json_string_value(v);
    return 0;
}

/* An integer in [lo, hi]. */
static int get_int(spec_reader *R, json_t *v, const char *path, long long lo, long long hi, long long *out)
{
    if (!json_is_integer(v))
        return fail(R, path, "expected an integer, got %s", type_name(v));
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return fail(R, path, "%lld is out of range (%lld to %lld)", x, lo, hi);
    *out = x;
    return 0;
}

/* An array of at most max integers in [lo, hi]. */
static int get_dims(spec_reader *R, json_t *v, const char *path, int max, long long lo, long long hi,
                    unsigned long long *dims, int *n)
{
    if (want_array(R, v, path))
        return -1;
    if (json_array_size(v) > (size_t)max)
        return fail(R, path, "has %zu dimensions; at most %d", json_array_size(v), max);
    for (size_t i = 0; i < json_array_size(v); i++) {
        char p[256];
        long long x = 0;
        index_path(p, sizeof p, path, i);
        if (get_int(R, json_array_get(v, i), p, lo, hi, &x))
            return -1;
        dims[i] = (unsigned long long)x;
    }
    *n = (int)json_array_size(v);
    return 0;
}

/* A file name from the spec, resolved against the spec's directory (or
 * out_dir for outputs). The result is owned by the doc. */
static const char *resolve(spec_reader *R, const char *name, int output)
{
    const char *base = output && R->out_dir ? R->out_dir : R->dir;
    if (name[0] == '/' || !base)
        return name;
    char **grown = realloc(R->doc->paths, (R->doc->npaths + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    R->doc->paths = grown;
    size_t len = strlen(base) + strlen(name) + 2;
    char *p = malloc(len);
    if (!p)
        return NULL;
    snprintf(p, len, "%s/%s", base, name);
    R->doc->paths[R->doc->npaths++] = p;
    return p;
}

static int get_file(spec_reader *R, json_t *obj, const char *key, const char *prefix, int output, const char **out)
{
    const char *name = NULL;
    if (get_string(R, obj, key, prefix, &name))
        return -1;
    if (!name)
        return 0;
    char p[256];
    join(p, sizeof p, prefix, key);
    if (!*name)
        return fail(R, p, "empty file name");
    *out = resolve(R, name, output);
    if (!*out)
        return fail(R, p, "out of memory");
    return 0;
}

static int read_mesh(spec_reader *R, json_t *v, const char *path, kemu_call_mesh *m)
{
    static const char *const known[] = {"grid", "cluster", "num_threads", "thread_name", "grid_names",
                                        "cluster_names", NULL};
    char p[256];
    memset(m, 0, sizeof *m);
    if (want_object(R, v, path) || check_keys(R, v, path, known))
        return -1;
    unsigned long long dims[3];
    json_t *x;
    if ((x = json_object_get(v, "grid"))) {
        join(p, sizeof p, path, "grid");
        if (get_dims(R, x, p, 3, 1, 0x7fffffff, dims, &m->grid_ndim))
            return -1;
        for (int i = 0; i < m->grid_ndim; i++)
            m->grid[i] = (unsigned)dims[i];
    }
    if ((x = json_object_get(v, "cluster"))) {
        join(p, sizeof p, path, "cluster");
        if (get_dims(R, x, p, 3, 1, 0x7fffffff, dims, &m->cluster_ndim))
            return -1;
        for (int i = 0; i < m->cluster_ndim; i++)
            m->cluster[i] = (unsigned)dims[i];
    }
    if ((x = json_object_get(v, "num_threads"))) {
        long long n = 0;
        join(p, sizeof p, path, "num_threads");
        if (get_int(R, x, p, 1, 0x7fffffff, &n))
            return -1;
        m->num_threads = (unsigned)n;
    }
    if (get_string(R, v, "thread_name", path, &m->thread_name))
        return -1;
    static const char *const names[] = {"grid_names", "cluster_names"};
    for (int k = 0; k < 2; k++) {
        if (!(x = json_object_get(v, names[k])))
            continue;
        join(p, sizeof p, path, names[k]);
        if (want_array(R, x, p))
            return -1;
        for (size_t i = 0; i < json_array_size(x); i++) {
            char q[256];
            index_path(q, sizeof q, p, i);
            if (!json_is_string(json_array_get(x, i)))
                return fail(R, q, "expected a string, got %s", type_name(json_array_get(x, i)));
        }
    }
    return 0;
}

/* dtype and shape go together; inputs read from .npy may leave both out. */
static int read_dtype_shape(spec_reader *R, json_t *v, const char *path, const char **dtype, int *ndim,
                            unsigned long long *shape)
{
    char p[256];
    if (get_string(R, v, "dtype", path, dtype))
        return -1;
    json_t *s = json_object_get(v, "shape");
    if (*dtype && !s) {
        join(p, sizeof p, path, "shape");
        return fail(R, p, "missing (required with \"dtype\"; [] for a 0-d array)");
    }
    if (s && !*dtype) {
        join(p, sizeof p, path, "dtype");
        return fail(R, p, "missing (required with \"shape\")");
    }
    if (s) {
        join(p, sizeof p, path, "shape");
        if (get_dims(R, s, p, KEMU_CALL_MAX_DIMS, 0, 0x7fffffffffffffffll, shape, ndim))
            return -1;
    }
    return 0;
}

static int read_arrays(spec_reader *R, json_t *root, const char *key, int output, kemu_call_array **out, int *n)
{
    static const char *const in_known[] = {"name", "npy", "dtype", "shape", "init", NULL};
    static const char *const out_known[] = {"name", "npy", "dtype", "shape", NULL};
    json_t *v = json_object_get(root, key);
    if (!v)
        return 0;
    if (want_array(R, v, key))
        return -1;
    *n = (int)json_array_size(v);
    *out = calloc(json_array_size(v) + 1, sizeof **out);
    if (!*out)
        return fail(R, key, "out of memory");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        kemu_call_array *a = &(*out)[i];
        char p[256];
        index_path(p, sizeof p, key, i);
        if (want_object(R, e, p) || check_keys(R, e, p, output ? out_known : in_known) ||
            get_string(R, e, "name", p, &a->name) || get_file(R, e, "npy", p, output, &a->npy) ||
            get_string(R, e, "init", p, &a->init) || read_dtype_shape(R, e, p, &a->dtype, &a->ndim, a->shape))
            return -1;
    }
    return 0;
}

static int read_scratch(spec_reader *R, json_t *root, call_spec_doc *d)
{
    static const char *const known[] = {"name", "dtype", "shape", "memory_space", NULL};
    static const char *const space_known[] = {"space", "core_type", NULL};
    json_t *v = json_object_get(root, "scratch");
    if (!v)
        return 0;
    if (want_array(R, v, "scratch"))
        return -1;
    d->scratch = calloc(json_array_size(v) + 1, sizeof *d->scratch);
    if (!d->scratch)
        return fail(R, "scratch", "out of memory");
    d->spec.nscratch = (int)json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i), *ms;
        kemu_call_scratch *sc = &d->scratch[i];
        const char *name = NULL, *space = "smem";
        char p[256], q[256], r[256];
        index_path(p, sizeof p, "scratch", i);
        if (want_object(R, e, p) || check_keys(R, e, p, known) || get_string(R, e, "name", p, &name) ||
            read_dtype_shape(R, e, p, &sc->dtype, &sc->ndim, sc->shape))
            return -1;
        if (!sc->dtype) {
            join(q, sizeof q, p, "dtype");
            return fail(R, q, "missing (scratch needs \"dtype\" and \"shape\")");
        }
        join(q, sizeof q, p, "memory_space");
        if ((ms = json_object_get(e, "memory_space"))) {
            if (json_is_object(ms)) {
                if (check_keys(R, ms, q, space_known) || get_string(R, ms, "space", q, &space) ||
                    get_string(R, ms, "core_type", q, &sc->core_type))
                    return -1;
                join(r, sizeof r, q, "space");
            } else if (json_is_string(ms)) {
                space = json_string_value(ms);
                snprintf(r, sizeof r, "%s", q);
            } else {
                return fail(R, q, "expected \"smem\", \"gmem\" or {\"space\": ..., \"core_type\": ...}, got %s",
                            type_name(ms));
            }
            if (!strcmp(space, "smem"))
                sc->memory_space = KEMU_CALL_SMEM;
            else if (!strcmp(space, "gmem"))
                sc->memory_space = KEMU_CALL_GMEM;
            else
                return fail(R, r, "unknown memory space \"%s\" (smem or gmem)", space);
        }
    }
    return 0;
}

static int read_grid(spec_reader *R, json_t *root, kemu_call_spec *s)
{
    json_t *v = json_object_get(root, "grid");
    if (!v)
        return 0;
    if (want_array(R, v, "grid"))
        return -1;
    if (json_array_size(v) > KEMU_CALL_MAX_DIMS)
        return fail(R, "grid", "has %zu dimensions; at most %d", json_array_size(v), KEMU_CALL_MAX_DIMS);
    s->has_grid = 1;
    s->grid_ndim = (int)json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        char p[256];
        index_path(p, sizeof p, "grid", i);
        if (json_is_object(e)) {
            static const char *const known[] = {"dynamic", NULL};
            if (check_keys(R, e, p, known) || get_string(R, e, "dynamic", p, &s->grid[i].dynamic))
                return -1;
            if (!s->grid[i].dynamic) {
                char q[256];
                join(q, sizeof q, p, "dynamic");
                return fail(R, q, "missing (the name of the input holding the bound)");
            }
        } else {
            long long x = 0;
            if (!json_is_integer(e))
                return fail(R, p, "expected a positive integer or {\"dynamic\": \"<input name>\"}, got %s",
                            type_name(e));
            if (get_int(R, e, p, 1, 0x7fffffff, &x))
                return -1;
            s->grid[i].size = (unsigned long long)x;
        }
    }
    return 0;
}

static int read_aliases(spec_reader *R, json_t *root, call_spec_doc *d)
{
    json_t *v = json_object_get(root, "input_output_aliases");
    if (!v)
        return 0;
    if (want_array(R, v, "input_output_aliases"))
        return -1;
    d->aliases = calloc(json_array_size(v) + 1, sizeof *d->aliases);
    if (!d->aliases)
        return fail(R, "input_output_aliases", "out of memory");
    d->spec.naliases = (int)json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        char p[256], q[256];
        index_path(p, sizeof p, "input_output_aliases", i);
        if (!json_is_array(e) || json_array_size(e) != 2)
            return fail(R, p, "expected [input index, output index], got %s",
                        json_is_array(e) ? "an array of another length" : type_name(e));
        for (int k = 0; k < 2; k++) {
            long long x = 0;
            index_path(q, sizeof q, p, (size_t)k);
            if (get_int(R, json_array_get(e, (size_t)k), q, 0, 0x7fffffff, &x))
                return -1;
            d->aliases[i][k] = (int)x;
        }
    }
    return 0;
}

static int read_scalars(spec_reader *R, json_t *root, call_spec_doc *d)
{
    static const char *const known[] = {"name", "dtype", "value", NULL};
    json_t *v = json_object_get(root, "scalar_operands");
    if (!v)
        return 0;
    if (want_array(R, v, "scalar_operands"))
        return -1;
    d->scalars = calloc(json_array_size(v) + 1, sizeof *d->scalars);
    if (!d->scalars)
        return fail(R, "scalar_operands", "out of memory");
    d->spec.nscalar_operands = (int)json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i), *x;
        char p[256], q[256];
        index_path(p, sizeof p, "scalar_operands", i);
        if (want_object(R, e, p) || check_keys(R, e, p, known) ||
            get_string(R, e, "name", p, &d->scalars[i].name) || get_string(R, e, "dtype", p, &d->scalars[i].dtype))
            return -1;
        join(q, sizeof q, p, "value");
        if (!(x = json_object_get(e, "value")))
            return fail(R, q, "missing");
        if (!json_is_number(x))
            return fail(R, q, "expected a number, got %s", type_name(x));
        d->scalars[i].value = json_number_value(x);
        if (!d->scalars[i].dtype) {
            join(q, sizeof q, p, "dtype");
            return fail(R, q, "missing");
        }
    }
    return 0;
}

static int read_mpmd(spec_reader *R, json_t *root, call_spec_doc *d)
{
    static const char *const known[] = {"mesh", "kernel", NULL};
    json_t *v = json_object_get(root, "mpmd");
    if (!v)
        return 0;
    if (want_array(R, v, "mpmd"))
        return -1;
    d->spec.has_mpmd = 1;
    d->mpmd = calloc(json_array_size(v) + 1, sizeof *d->mpmd);
    if (!d->mpmd)
        return fail(R, "mpmd", "out of memory");
    d->spec.nmpmd = (int)json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i), *m;
        char p[256], q[256];
        index_path(p, sizeof p, "mpmd", i);
        if (want_object(R, e, p) || check_keys(R, e, p, known) || get_string(R, e, "kernel", p, &d->mpmd[i].kernel))
            return -1;
        join(q, sizeof q, p, "mesh");
        if (!(m = json_object_get(e, "mesh")))
            return fail(R, q, "missing (each mpmd pair is a mesh and the kernel it runs)");
        if (read_mesh(R, m, q, &d->mpmd[i].mesh))
            return -1;
    }
    return 0;
}

static int read_interpret(spec_reader *R, json_t *root, kemu_call_interpret *in)
{
    static const char *const known[] = {"detect_races", "uninitialized_memory", "out_of_bounds_reads", NULL};
    json_t *v = json_object_get(root, "interpret"), *x;
    const char *s = NULL;
    if (!v || json_is_true(v))
        return 0;
    if (!json_is_object(v))
        return fail(R, "interpret", "expected an object (or true), got %s", type_name(v));
    if (check_keys(R, v, "interpret", known))
        return -1;
    if ((x = json_object_get(v, "detect_races"))) {
        if (!json_is_boolean(x))
            return fail(R, "interpret.detect_races", "expected a boolean, got %s", type_name(x));
        in->detect_races = json_is_true(x);
    }
    if (get_string(R, v, "uninitialized_memory", "interpret", &s))
        return -1;
    if (s) {
        if (!strcmp(s, "nan"))
            in->uninitialized_memory = KEMU_UNINIT_NAN;
        else if (!strcmp(s, "zero"))
            in->uninitialized_memory = KEMU_UNINIT_ZERO;
        else
            return fail(R, "interpret.uninitialized_memory", "expected \"nan\" or \"zero\", got \"%s\"", s);
    }
    s = NULL;
    if (get_string(R, v, "out_of_bounds_reads", "interpret", &s))
        return -1;
    if (s) {
        if (!strcmp(s, "raise"))
            in->out_of_bounds_reads = KEMU_CALL_OOB_RAISE;
        else if (!strcmp(s, "uninitialized"))
            in->out_of_bounds_reads = KEMU_CALL_OOB_UNINITIALIZED;
        else
            return fail(R, "interpret.out_of_bounds_reads", "expected \"raise\" or \"uninitialized\", got \"%s\"", s);
    }
    return 0;
}

static int read_root(spec_reader *R, json_t *root)
{
    static const char *const known[] = {"comment", "ptx", "kernel", "grid", "mesh", "block", "inputs", "outputs",
                                        "scratch", "input_output_aliases", "scalar_operands", "mpmd",
                                        "external_meshes", "interpret", NULL};
    call_spec_doc *d = R->doc;
    kemu_call_spec *s = &d->spec;
    json_t *v;
    const char *comment = NULL;
    if (!json_is_object(root)) {
        snprintf(R->err, R->errlen, "a call spec is a JSON object, not %s", type_name(root));
        return -1;
    }
    if (check_keys(R, root, "", known) || get_string(R, root, "comment", "", &comment) ||
        get_file(R, root, "ptx", "", 0, &s->ptx) || get_string(R, root, "kernel", "", &s->kernel) ||
        read_grid(R, root, s))
        return -1;
    if (!s->ptx)
        return fail(R, "ptx", "missing (the PTX module holding the kernel)");
    if ((v = json_object_get(root, "mesh"))) {
        if (read_mesh(R, v, "mesh", &d->mesh))
            return -1;
        s->mesh = &d->mesh;
    }
    if ((v = json_object_get(root, "block"))) {
        unsigned long long dims[3];
        int n;
        if (get_dims(R, v, "block", 3, 1, 1024, dims, &n))
            return -1;
        if (n == 0)
            return fail(R, "block", "needs 1 to 3 dimensions");
        for (int i = 0; i < 3; i++)
            s->block[i] = i < n ? (unsigned)dims[i] : 1;
    }
    if (read_arrays(R, root, "inputs", 0, &d->inputs, &s->ninputs) ||
        read_arrays(R, root, "outputs", 1, &d->outputs, &s->noutputs) || read_scratch(R, root, d) ||
        read_aliases(R, root, d) || read_scalars(R, root, d) || read_mpmd(R, root, d) ||
        read_interpret(R, root, &s->interpret))
        return -1;
    if ((v = json_object_get(root, "external_meshes"))) {
        if (want_array(R, v, "external_meshes"))
            return -1;
        d->external_meshes = calloc(json_array_size(v) + 1, sizeof *d->external_meshes);
        if (!d->external_meshes)
            return fail(R, "external_meshes", "out of memory");
        s->nexternal_meshes = (int)json_array_size(v);
        for (size_t i = 0; i < json_array_size(v); i++) {
            char p[256];
            index_path(p, sizeof p, "external_meshes", i);
            if (read_mesh(R, json_array_get(v, i), p, &d->external_meshes[i]))
                return -1;
        }
    }
    s->inputs = d->inputs;
    s->outputs = d->outputs;
    s->scratch = d->scratch;
    s->input_output_aliases = (const int (*)[2])d->aliases;
    s->scalar_operands = d->scalars;
    s->mpmd = d->mpmd;
    s->external_meshes = d->external_meshes;
    return 0;
}

int call_spec_load(const char *path, const char *out_dir, call_spec_doc *doc, char *err, size_t errlen)
{
    memset(doc, 0, sizeof *doc);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line <= 0)
            snprintf(err, errlen, "%s", je.text);
        else
            snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return -1;
    }
    doc->json = root;
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        call_spec_free(doc);
        return -1;
    }
    char *slash = strrchr(copy, '/');
    const char *dir = NULL;
    if (slash) {
        slash[slash == copy ? 1 : 0] = 0;
        dir = copy;
    }
    spec_reader R = {doc, dir, out_dir, err, errlen};
    int rc = read_root(&R, root);
    free(copy);
    if (rc)
        call_spec_free(doc);
    else
        doc->spec.spec_file = path; /* never an output */
    return rc;
}

void call_spec_free(call_spec_doc *d)
{
    if (!d)
        return;
    if (d->json)
        json_decref((json_t *)d->json);
    free(d->inputs);
    free(d->outputs);
    free(d->scratch);
    free(d->aliases);
    free(d->scalars);
    free(d->mpmd);
    free(d->external_meshes);
    for (size_t i = 0; i < d->npaths; i++)
        free(d->paths[i]);
    free(d->paths);
    memset(d, 0, sizeof *d);
}

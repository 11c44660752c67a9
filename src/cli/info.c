/* `kemu info`: describes a PTX module — version, target, and for each entry
 * its parameters (name, type, size, alignment, offset), shared and local
 * memory, register counts, performance directives and the extern
 * functions it calls. `--json` prints the same as one JSON object. */
#include "config.h"
#include "cli/cli.h"
#include "exec/exec.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static json_t *dims(const unsigned d[3])
{
    if (!d[0])
        return json_null();
    return json_pack("[i,i,i]", d[0], d[1] ? d[1] : 1, d[2] ? d[2] : 1);
}

/* Extern functions a function calls (directly), as a JSON array of names. */
static json_t *externs_called(const bc_module *m, const bc_function *fn)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < fn->ncode; i++) {
        const bc_op *op = &fn->code[i];
        if (op->code != BC_CALL_BUILTIN)
            continue;
        const char *name = m->functions[op->imm]->name;
        int seen = 0;
        for (size_t k = 0; k < json_array_size(a); k++)
            if (!strcmp(json_string_value(json_array_get(a, k)), name))
                seen = 1;
        if (!seen)
            json_array_append_new(a, json_string(name));
    }
    return a;
}

static json_t *module_json(kemu_module *mod)
{
    const bc_module *m = mod->bc;
    json_t *o = json_object();
    char ver[32];
    snprintf(ver, sizeof ver, "%d.%d", mod->ptx->version_major, mod->ptx->version_minor);
    json_object_set_new(o, "file", json_string(mod->ptx->filename));
    json_object_set_new(o, "version", json_string(ver));
    json_object_set_new(o, "target", json_string(mod->ptx->target));
    json_object_set_new(o, "address_size", json_integer(mod->ptx->address_size));
    json_object_set_new(o, "static_shared_bytes", json_integer((json_int_t)m->shared_static_size));
    json_object_set_new(o, "dynamic_shared", json_boolean(m->has_dynamic_shared));
    json_object_set_new(o, "const_bytes", json_integer((json_int_t)m->const_size));
    json_object_set_new(o, "global_bytes", json_integer((json_int_t)m->global_size));
    json_t *ents = json_array();
    for (int i = 0; i < m->nfunctions; i++) {
        const bc_function *fn = m->functions[i];
        if (!fn->is_entry)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(fn->name));
        json_t *ps = json_array();
        for (int p = 0; p < fn->nparams; p++) {
            const bc_param *pp = &fn->params[p];
            char ty[48];
            if (pp->is_array)
                snprintf(ty, sizeof ty, ".b8[%llu]", (unsigned long long)pp->size);
            else
                snprintf(ty, sizeof ty, "%s", ptx_type_name(pp->type));
            json_array_append_new(ps, json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", pp->name, "type", ty, "size",
                                                 (json_int_t)pp->size, "align", (json_int_t)pp->align, "offset",
                                                 (json_int_t)pp->offset));
        }
        json_object_set_new(e, "params", ps);
        json_object_set_new(e, "param_bytes", json_integer((json_int_t)fn->param_size));
        json_object_set_new(e, "static_shared_bytes", json_integer((json_int_t)fn->shared_static_size));
        json_object_set_new(e, "local_bytes_per_thread", json_integer((json_int_t)fn->local_size));
        json_object_set_new(e, "registers_declared", json_integer(fn->nregs_declared));
        json_object_set_new(e, "register_slots", json_integer(fn->nslots));
        json_object_set_new(e, "predicates", json_integer(fn->npreds));
        json_object_set_new(e, "maxntid", dims(fn->maxntid));
        json_object_set_new(e, "reqntid", dims(fn->reqntid));
        json_object_set_new(e, "reqnctapercluster", dims(fn->reqnctapercluster));
        json_object_set_new(e, "explicitcluster", json_boolean(fn->explicitcluster));
        json_object_set_new(e, "maxclusterrank", json_integer(fn->maxclusterrank));
        json_object_set_new(e, "minnctapersm", json_integer(fn->minnctapersm));
        json_object_set_new(e, "maxnreg", json_integer(fn->maxnreg));
        json_object_set_new(e, "calls_functions", json_boolean(fn->uses_calls));
        json_object_set_new(e, "extern_calls", externs_called(m, fn));
        json_array_append_new(ents, e);
    }
    json_object_set_new(o, "entries", ents);
    json_t *funcs = json_array();
    for (int i = 0; i < m->nfunctions; i++)
        if (!m->functions[i]->is_entry)
            json_array_append_new(funcs, json_pack("{s:s,s:b}", "name", m->functions[i]->name, "extern",
                                                   m->functions[i]->is_extern));
    json_object_set_new(o, "functions", funcs);
    return o;
}

static void print_text(json_t *o)
{
    printf("%s: PTX %s, target %s, %lld-bit addresses\n", json_string_value(json_object_get(o, "file")),
           json_string_value(json_object_get(o, "version")), json_string_value(json_object_get(o, "target")),
           (long long)json_integer_value(json_object_get(o, "address_size")));
    printf("module: %lld bytes static shared%s, %lld bytes const, %lld bytes global\n",
           (long long)json_integer_value(json_object_get(o, "static_shared_bytes")),
           json_is_true(json_object_get(o, "dynamic_shared")) ? " + dynamic shared" : "",
           (long long)json_integer_value(json_object_get(o, "const_bytes")),
           (long long)json_integer_value(json_object_get(o, "global_bytes")));
    json_t *ents = json_object_get(o, "entries");
    for (size_t i = 0; i < json_array_size(ents); i++) {
        json_t *e = json_array_get(ents, i);
        printf("\nentry %s\n", json_string_value(json_object_get(e, "name")));
        json_t *ps = json_object_get(e, "params");
        printf("  parameters (%lld bytes):\n", (long long)json_integer_value(json_object_get(e, "param_bytes")));
        for (size_t p = 0; p < json_array_size(ps); p++) {
            json_t *pp = json_array_get(ps, p);
            printf("    %zu  %-12s %-40s size %-4lld align %-3lld offset %lld\n", p,
                   json_string_value(json_object_get(pp, "type")), json_string_value(json_object_get(pp, "name")),
                   (long long)json_integer_value(json_object_get(pp, "size")),
                   (long long)json_integer_value(json_object_get(pp, "align")),
                   (long long)json_integer_value(json_object_get(pp, "offset")));
        }
        printf("  shared memory: %lld bytes static\n",
               (long long)json_integer_value(json_object_get(e, "static_shared_bytes")));
        printf("  local memory: %lld bytes per thread\n",
               (long long)json_integer_value(json_object_get(e, "local_bytes_per_thread")));
        printf("  registers: %lld declared, %lld predicates\n",
               (long long)json_integer_value(json_object_get(e, "registers_declared")),
               (long long)json_integer_value(json_object_get(e, "predicates")));
        static const char *const dn[] = {"maxntid", "reqntid", "reqnctapercluster"};
        for (int d = 0; d < 3; d++) {
            json_t *v = json_object_get(e, dn[d]);
            if (json_is_array(v))
                printf("  .%s %lld, %lld, %lld\n", dn[d], (long long)json_integer_value(json_array_get(v, 0)),
                       (long long)json_integer_value(json_array_get(v, 1)),
                       (long long)json_integer_value(json_array_get(v, 2)));
        }
        if (json_is_true(json_object_get(e, "explicitcluster")))
            printf("  .explicitcluster\n");
        if (json_integer_value(json_object_get(e, "maxclusterrank")))
            printf("  .maxclusterrank %lld\n", (long long)json_integer_value(json_object_get(e, "maxclusterrank")));
        if (json_integer_value(json_object_get(e, "minnctapersm")))
            printf("  .minnctapersm %lld\n", (long long)json_integer_value(json_object_get(e, "minnctapersm")));
        if (json_integer_value(json_object_get(e, "maxnreg")))
            printf("  .maxnreg %lld\n", (long long)json_integer_value(json_object_get(e, "maxnreg")));
        json_t *ex = json_object_get(e, "extern_calls");
        if (json_array_size(ex)) {
            printf("  calls extern:");
            for (size_t k = 0; k < json_array_size(ex); k++)
                printf(" %s", json_string_value(json_array_get(ex, k)));
            printf("\n");
        }
    }
}

int cli_info_main(int argc, char **argv)
{
    const char *file = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error("info", "unknown option '%s'", argv[i]);
        else if (!file)
            file = argv[i];
        else
            return cli_usage_error("info", "unexpected argument '%s'", argv[i]);
    }
    if (!file)
        return cli_usage_error("info", "no PTX file given");
    kemu_error err;
    kemu_device *dev;
    kemu_module *mod;
    if (kemu_device_create(NULL, &dev, &err))
        return CLI_EXIT_USAGE;
    if (kemu_module_load_ptx_file(dev, file, &mod, &err)) {
        fprintf(stderr, "%s", err.message);
        if (err.message[0] && err.message[strlen(err.message) - 1] != '\n')
            fputc('\n', stderr);
        kemu_device_destroy(dev);
        return CLI_EXIT_USAGE;
    }
    json_t *o = module_json(mod);
    if (json) {
        char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (t)
            printf("%s\n", t);
        free(t);
    } else {
        print_text(o);
    }
    json_decref(o);
    kemu_device_destroy(dev);
    return CLI_EXIT_OK;
}

/* Host functions bound to PTX `.extern .func` names
 * (kemu_device_bind_native), called through libffi with the C types that
 * the PTX parameter types map to. The libffi call interface of each bound
 * function is prepared once when a module is loaded. */
#include "config.h"
#include "exec/exec.h"

#include <ffi.h>
#include <stdlib.h>
#include <string.h>

typedef struct exec_native_call {
    void (*fn)(void);
    ffi_cif cif;
    ffi_type **arg_types;
    ffi_type *ret_type;
    int nargs;
    int *is_array;          /* aggregate parameters are passed as pointers */
} exec_native_call;

static ffi_type *ffi_of(const bc_param *p, int *is_array)
{
    *is_array = 0;
    if (p->is_array) {
        *is_array = 1;
        return &ffi_type_pointer;
    }
    switch (p->type) {
    case PTX_T_U8: case PTX_T_B8: return &ffi_type_uint8;
    case PTX_T_S8: return &ffi_type_sint8;
    case PTX_T_U16: case PTX_T_B16: case PTX_T_F16: case PTX_T_BF16: return &ffi_type_uint16;
    case PTX_T_S16: return &ffi_type_sint16;
    case PTX_T_U32: case PTX_T_B32: return &ffi_type_uint32;
    case PTX_T_S32: return &ffi_type_sint32;
    case PTX_T_U64: case PTX_T_B64: return &ffi_type_uint64;
    case PTX_T_S64: return &ffi_type_sint64;
    case PTX_T_F32: return &ffi_type_float;
    case PTX_T_F64: return &ffi_type_double;
    default: return NULL;
    }
}

kemu_status exec_natives_prepare(kemu_module *mod, kemu_error *err)
{
    const bc_module *m = mod->bc;
    for (int i = 0; i < m->nfunctions; i++) {
        const bc_function *f = m->functions[i];
        if (f->builtin != BC_BUILTIN_NATIVE + 1)
            continue;
        if (!mod->natives) {
            mod->natives = calloc((size_t)m->nfunctions, sizeof *mod->natives);
            if (!mod->natives)
                return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        }
        exec_native_call *c = calloc(1, sizeof *c);
        if (!c)
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        mod->natives[i] = c;
        for (int k = 0; k < mod->dev->nnatives; k++)
            if (!strcmp(mod->dev->natives[k].name, f->name))
                c->fn = mod->dev->natives[k].fn;
        c->nargs = f->nparams;
        c->arg_types = calloc((size_t)f->nparams + 1, sizeof *c->arg_types);
        c->is_array = calloc((size_t)f->nparams + 1, sizeof *c->is_array);
        if (!c->arg_types || !c->is_array)
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        for (int p = 0; p < f->nparams; p++) {
            c->arg_types[p] = ffi_of(&f->params[p], &c->is_array[p]);
            if (!c->arg_types[p])
                return util_error(err, KEMU_ERR_UNSUPPORTED,
                                  "native function '%s': parameter %d has type %s, which cannot be passed to C",
                                  f->name, p, ptx_type_name(f->params[p].type));
        }
        if (f->nrets > 1)
            return util_error(err, KEMU_ERR_UNSUPPORTED, "native function '%s' returns %d values; at most one is supported",
                              f->name, f->nrets);
        int dummy = 0;
        c->ret_type = f->nrets ? ffi_of(&f->rets[0], &dummy) : &ffi_type_void;
        if (!c->ret_type || dummy)
            return util_error(err, KEMU_ERR_UNSUPPORTED, "native function '%s': unsupported return type", f->name);
        if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, (unsigned)f->nparams, c->ret_type, c->arg_types) != FFI_OK)
            return util_error(err, KEMU_ERR_UNSUPPORTED, "native function '%s': libffi cannot describe its signature",
                              f->name);
    }
    return KEMU_OK;
}

void exec_natives_free(kemu_module *mod)
{
    if (!mod->natives)
        return;
    for (int i = 0; i < mod->bc->nfunctions; i++) {
        exec_native_call *c = mod->natives[i];
        if (!c)
            continue;
        free(c->arg_types);
        free(c->is_array);
        free(c);
    }
    free(mod->natives);
    mod->natives = NULL;
}

int exec_call_native(void *ctx, int fn_index, void **args, void *ret)
{
    kemu_module *mod = ctx;
    if (!mod->natives || !mod->natives[fn_index] || !mod->natives[fn_index]->fn)
        return -1;
    exec_native_call *c = mod->natives[fn_index];
    void *argv[64];
    void *ptrs[64];
    for (int i = 0; i < c->nargs && i < 64; i++) {
        if (c->is_array[i]) {
            ptrs[i] = args[i];
            argv[i] = &ptrs[i];
        } else {
            argv[i] = args[i];
        }
    }
    /* libffi widens small integer results to a full register */
    ffi_arg wide = 0;
    union { ffi_arg i; float f; double d; } r;
    memset(&r, 0, sizeof r);
    ffi_call(&c->cif, c->fn, &r, argv);
    if (ret && c->ret_type != &ffi_type_void) {
        if (c->ret_type == &ffi_type_float)
            memcpy(ret, &r.f, 4);
        else if (c->ret_type == &ffi_type_double)
            memcpy(ret, &r.d, 8);
        else {
            wide = r.i;
            memcpy(ret, &wide, c->ret_type->size);
        }
    }
    return 0;
}

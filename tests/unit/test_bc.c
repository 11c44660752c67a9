/* Unit tests of the lowering (src/bc/): register slots, constant pooling,
 * opcode selection per type and modifier, label resolution, module layout
 * of shared/const/global variables and parameter offsets, and the
 * disassembler. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bc/bc.h"
#include "util.h"

static bc_module *lower(const char *src)
{
    ptx_module *p;
    bc_module *m;
    kemu_error err;
    memset(&err, 0, sizeof err);
    ck_assert_msg(ptx_parse(src, strlen(src), "t.ptx", &p, &err) == KEMU_OK, "%s", err.message);
    ck_assert_msg(bc_module_layout(p, NULL, NULL, &m, &err) == KEMU_OK, "%s", err.message);
    ck_assert_msg(bc_module_lower(m, 0x1000, &err) == KEMU_OK, "%s", err.message);
    return m;
}

static void release(bc_module *m)
{
    ptx_module *p = m->ptx;
    bc_module_free(m);
    ptx_module_free(p);
}

#define H ".version 8.0\n.target sm_80\n.address_size 64\n"


START_TEST(opcode_selection)
{
    bc_module *m = lower(H ".visible .entry k()\n{\n .reg .f32 %f<3>; .reg .b32 %r<3>; .reg .b64 %rd<2>;\n"
                           " add.f32 %f1, %f2, 0f3F800000;\n add.rz.f32 %f1, %f1, %f2;\n"
                           " add.s32 %r1, %r2, 5;\n mul.wide.u32 %rd1, %r1, %r2;\n"
                           " fma.rn.f32 %f1, %f1, %f2, %f1;\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k");
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(k->ncode, 7); /* ret, then the exit every function ends with */
    ck_assert_int_eq(k->code[0].code, BC_ADD_F32);  /* the round-to-nearest fast path */
    ck_assert_int_eq(k->code[1].code, BC_FADD);     /* directed rounding */
    ck_assert_int_eq(k->code[1].mode, BC_RND_RZ);
    ck_assert_int_eq(k->code[2].code, BC_ADD);
    ck_assert_int_eq(k->code[2].type, PTX_T_S32);
    ck_assert_int_eq(k->code[3].code, BC_MUL_WIDE);
    ck_assert_int_eq(k->code[4].code, BC_FMA_F32);
    ck_assert_int_eq(k->code[5].code, BC_EXIT);
    /* the immediate lives in a constant slot with its f32 bits */
    int found = 0;
    for (uint32_t i = 0; i < k->nconsts; i++)
        if (k->const_slots[i] == k->code[0].b && k->const_values[i] == 0x3F800000u)
            found = 1;
    ck_assert(found);
    release(m);
}
END_TEST

START_TEST(constants_are_pooled)
{
    bc_module *m = lower(H ".visible .entry k()\n{\n .reg .b32 %r<4>;\n"
                           " add.s32 %r1, %r2, 7;\n add.s32 %r3, %r1, 7;\n add.s32 %r3, %r3, 8;\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k");
    ck_assert_uint_eq(k->nconsts, 2);
    ck_assert_uint_eq(k->code[0].b, k->code[1].b);
    ck_assert_uint_ne(k->code[1].b, k->code[2].b);
    /* registers first, then constants: 4 registers + 2 constants */
    ck_assert_uint_eq(k->nslots, 6);
    release(m);
}
END_TEST

/* Many distinct constants, each used twice, over two functions: every
 * repeat shares its first slot, every slot holds its own value, and the
 * second function's pool starts empty (the index is per function). */
START_TEST(many_constants_are_pooled)
{
    enum { NCONST = 5000 };
    util_buffer b = {0};
    for (int f = 0; f < 2; f++) {
        util_buffer_printf(&b, "%s.visible .entry k%d()\n{\n .reg .b64 %%rd<3>;\n", f ? "" : H, f);
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < NCONST; i++)
                util_buffer_printf(&b, " add.u64 %%rd1, %%rd2, %llu;\n", 1000000007ull * (unsigned long long)i + 3ull * f);
        util_buffer_printf(&b, " ret;\n}\n");
    }
    bc_module *m = lower(b.data);
    for (int f = 0; f < 2; f++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", f);
        bc_function *k = bc_module_find(m, name);
        ck_assert_ptr_nonnull(k);
        ck_assert_uint_eq(k->nconsts, NCONST);
        for (int i = 0; i < NCONST; i++) {
            uint32_t slot = k->code[i].b;
            ck_assert_uint_eq(k->code[NCONST + i].b, slot);
            int found = 0;
            for (uint32_t c = 0; c < k->nconsts && !found; c++)
                found = k->const_slots[c] == slot && k->const_values[c] == 1000000007ull * (uint64_t)i + 3ull * (uint64_t)f;
            ck_assert_msg(found, "constant %d of %s", i, name);
        }
    }
    release(m);
    util_buffer_free(&b);
}
END_TEST

START_TEST(labels_and_guards)
{
    bc_module *m = lower(H ".visible .entry k()\n{\n .reg .b32 %r<2>; .reg .pred %p<2>;\n"
                           "$top:\n setp.lt.u32 %p1, %r1, 10;\n @!%p1 bra $out;\n add.s32 %r1, %r1, 1;\n"
                           " bra.uni $top;\n$out:\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k");
    ck_assert_int_eq(k->code[1].code, BC_BRA);
    ck_assert_int_eq(k->code[1].imm, 4);
    ck_assert(k->code[1].flags & BC_F_GUARD_NEG);
    ck_assert_uint_eq(k->code[1].guard, k->code[0].d);
    ck_assert_int_eq(k->code[3].imm, 0);
    ck_assert(k->code[3].flags & BC_F_UNI);
    release(m);
}
END_TEST

START_TEST(module_layout)
{
    bc_module *m = lower(H ".global .align 8 .b8 g1[12];\n.global .align 4 .u32 g2 = 5;\n"
                           ".const .align 4 .f32 c1[3] = {0f3F800000, 0f40000000, 0f40400000};\n"
                           ".shared .align 16 .b8 s1[100];\n.shared .align 4 .b8 s2[8];\n"
                           ".extern .shared .align 16 .b8 dyn[];\n"
                           ".visible .entry k(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[20], .param .f32 d)\n{\n ret;\n}\n");
    ck_assert_uint_eq(m->shared_static_size, 108);
    ck_assert_int_eq(m->has_dynamic_shared, 1);
    ck_assert_uint_eq(m->const_size, 12);
    ck_assert_uint_eq(m->const_init[4], 0x00);
    ck_assert_uint_eq(m->const_init[7], 0x40);
    int seen = 0;
    for (int i = 0; i < m->nsymbols; i++) {
        const bc_symbol *s = &m->symbols[i];
        if (!strcmp(s->name, "g1")) { ck_assert_uint_eq(s->address, 0x1000); seen++; }
        if (!strcmp(s->name, "g2")) { ck_assert_uint_eq(s->address, 0x1010); seen++; }
        if (!strcmp(s->name, "s2")) { ck_assert_uint_eq(s->address, 100); seen++; }
        if (!strcmp(s->name, "dyn")) { ck_assert_uint_eq(s->address, 112); seen++; }
    }
    ck_assert_int_eq(seen, 4);
    ck_assert_uint_eq(m->global_init[0x10], 5);
    bc_function *k = bc_module_find(m, "k");
    /* CUDA ABI: each parameter at its natural (or declared) alignment */
    ck_assert_uint_eq(k->params[0].offset, 0);
    ck_assert_uint_eq(k->params[1].offset, 8);
    ck_assert_uint_eq(k->params[2].offset, 16);
    ck_assert_uint_eq(k->params[3].offset, 36);
    ck_assert_uint_eq(k->param_size, 40);
    release(m);
}
END_TEST

START_TEST(disassembly_names_sources)
{
    bc_module *m = lower(H ".file 1 \"k.cu\"\n.visible .entry k(.param .u64 p)\n{\n .reg .b32 %r<2>; .reg .b64 %rd<2>;\n"
                           " .loc 1 12 3\n ld.param.u64 %rd1, [p];\n mov.u32 %r1, %tid.x;\n st.global.u32 [%rd1+4], %r1;\n ret;\n}\n");
    util_buffer b = {0};
    bc_disassemble(m, bc_module_find(m, "k"), &b);
    ck_assert_msg(strstr(b.data, "S2R r1 = %tid.x"), "%s", b.data);
    ck_assert_msg(strstr(b.data, "ST.u32 [r3+4], r1 .global"), "%s", b.data);
    ck_assert_msg(strstr(b.data, "; t.ptx:9 (k.cu:12)"), "%s", b.data);
    util_buffer_free(&b);
    release(m);
}
END_TEST

START_TEST(calls_copy_parameters)
{
    bc_module *m = lower(H ".func (.param .b32 r) f(.param .b32 a, .param .b64 b)\n{\n .reg .b32 %r;\n"
                           " ld.param.b32 %r, [a];\n st.param.b32 [r], %r;\n ret;\n}\n"
                           ".visible .entry k()\n{\n .reg .b32 %r;\n {\n .param .b32 p0;\n .param .b64 p1;\n"
                           " st.param.b32 [p0], 1;\n .param .b32 rv;\n call.uni (rv), f, (p0, p1);\n"
                           " ld.param.b32 %r, [rv];\n }\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k"), *f = bc_module_find(m, "f");
    ck_assert_uint_eq(k->ncalls, 1);
    const bc_call *c = &k->calls[0];
    ck_assert_int_eq(c->callee, f->index);
    ck_assert_int_eq(c->nargs, 2);
    ck_assert_uint_eq(c->args[0].to, f->params[0].offset);
    ck_assert_uint_eq(c->args[1].to, f->params[1].offset);
    ck_assert_uint_eq(c->args[1].size, 8);
    ck_assert_uint_eq(c->rets[0].from, f->rets[0].offset);
    ck_assert_int_eq(k->uses_calls, 1);
    release(m);
}
END_TEST

/* The device runtime's .extern functions (dynamic parallelism) lower to
 * CALL_BUILTIN: CDP2's __cudaCDP2 names, CDP1's plain names and _ptsz forms
 * alike; other cuda* names stay unknown externs. */
START_TEST(device_runtime_names)
{
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2GetParameterBufferV2"), BC_DEVRT_GET_PARAMETER_BUFFER_V2);
    ck_assert_int_eq(bc_devrt_of("cudaGetParameterBufferV2"), BC_DEVRT_GET_PARAMETER_BUFFER_V2);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2LaunchDeviceV2_ptsz"), BC_DEVRT_LAUNCH_DEVICE_V2);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2GetLastError"), BC_DEVRT_GET_LAST_ERROR);
    ck_assert_int_eq(bc_devrt_of("cudaDeviceSynchronize"), BC_DEVRT_DEVICE_SYNCHRONIZE);
    ck_assert_int_eq(bc_devrt_of("__cudaDeviceSynchronizeDeprecationAvoidance"), BC_DEVRT_DEVICE_SYNCHRONIZE);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2MemcpyAsync"), BC_DEVRT_MEMCPY_ASYNC);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2MemsetAsync_ptsz"), BC_DEVRT_MEMSET_ASYNC);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2Memcpy2DAsync"), BC_DEVRT_MEMCPY_2D_ASYNC);
    ck_assert_int_eq(bc_devrt_of("cudaMemset2DAsync"), BC_DEVRT_MEMSET_2D_ASYNC);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2Memcpy3DAsync"), BC_DEVRT_MEMCPY_3D_ASYNC);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2Memset3DAsync_ptsz"), BC_DEVRT_MEMSET_3D_ASYNC);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2FuncGetAttributes"), BC_DEVRT_FUNC_GET_ATTRIBUTES);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2OccupancyMaxActiveBlocksPerMultiprocessorWithFlags"),
                     BC_DEVRT_OCCUPANCY_WITH_FLAGS);
    ck_assert_int_eq(bc_devrt_of("cudaGetErrorString"), BC_DEVRT_GET_ERROR_STRING);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2GetErrorName"), BC_DEVRT_GET_ERROR_NAME);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2GraphLaunch"), BC_DEVRT_UNSUPPORTED);
    ck_assert_int_eq(bc_devrt_of("cudaGraphSetConditional"), BC_DEVRT_GRAPH_SET_CONDITIONAL);
    ck_assert_int_eq(bc_devrt_of("cudaLaunchKernel"), BC_DEVRT_NONE);
    ck_assert_int_eq(bc_devrt_of("__cudaCDP2"), BC_DEVRT_NONE);
    ck_assert_int_eq(bc_devrt_of("vprintf"), BC_DEVRT_NONE);
    bc_module *m = lower(H ".extern .func (.param .b32 r) __cudaCDP2GetLastError();\n"
                           ".visible .entry k()\n{\n .reg .b32 %r;\n {\n .param .b32 rv;\n"
                           " call.uni (rv), __cudaCDP2GetLastError, ();\n ld.param.b32 %r, [rv];\n }\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k"), *f = bc_module_find(m, "__cudaCDP2GetLastError");
    ck_assert_int_eq(f->builtin, BC_BUILTIN_DEVRT + 1);
    ck_assert_int_eq(f->devrt, BC_DEVRT_GET_LAST_ERROR);
    int found = 0;
    for (uint32_t pc = 0; pc < k->ncode; pc++)
        if (k->code[pc].code == BC_CALL_BUILTIN && k->code[pc].mode == BC_BUILTIN_DEVRT)
            found = 1;
    ck_assert_int_eq(found, 1);
    release(m);
}
END_TEST

/* ld.param by name keeps the unchecked uniform LD_KPARAM only when the
 * whole access lies in the parameter block, known at load time; the rest
 * lowers to the checked LD, which faults at run time. */
START_TEST(kernel_param_fast_path_stays_in_block)
{
    bc_module *m = lower(H ".visible .entry k(.param .u64 x, .param .u32 a, .param .u32 b)\n{\n"
                           " .reg .b32 %r<3>; .reg .b64 %rd<2>;\n"
                           " ld.param.u32 %r1, [a+4];\n ld.param.u32 %r1, [b-4];\n"
                           " ld.param.v2.u32 {%r1, %r2}, [a];\n ld.param.u64 %rd1, [x];\n"
                           " ld.param.u32 %r1, [b+4];\n ld.param.u32 %r1, [x-4];\n"
                           " ld.param.v2.u32 {%r1, %r2}, [b];\n ld.param.u64 %rd1, [a+100000];\n ret;\n}\n");
    bc_function *k = bc_module_find(m, "k");
    ck_assert_uint_eq(k->param_size, 16);
    static const int64_t inside[] = {12, 8, 8, 12, 0};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(k->code[i].code, BC_LD_KPARAM);
        ck_assert_int_eq(k->code[i].imm, inside[i]);
    }
    for (int i = 5; i < 9; i++) {
        ck_assert_int_eq(k->code[i].code, BC_LD);
        ck_assert_int_eq(k->code[i].mode, BC_SPACE_PARAM_KERNEL);
    }
    ck_assert_int_eq(k->code[7].n, 2); /* the vector is checked as one access */
    release(m);
}
END_TEST

/* The copy propagation of optimize.c: which copies go, which stay, and
 * that branch targets follow the ops that moved. */
static int count_op(const bc_function *f, int code)
{
    int n = 0;
    for (uint32_t pc = 0; pc < f->ncode; pc++)
        n += f->code[pc].code == code;
    return n;
}

#define COPIES H ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<12>; .reg .b64 %rd<3>; .reg .pred %p<2>;\n" \
    " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n" \
    /* an immediate: goes, its readers read the constant */ \
    " mov.u32 %r2, 7;\n add.u32 %r3, %r1, %r2;\n" \
    /* a register read in the same block: goes */ \
    " mov.b32 %r4, %r3;\n mul.lo.u32 %r5, %r4, %r4;\n" \
    /* the source written before the read: stays */ \
    " mov.b32 %r6, %r5;\n add.u32 %r5, %r5, 1;\n add.u32 %r7, %r6, %r5;\n" \
    /* read in another block: stays */ \
    " mov.b32 %r8, %r7;\n setp.eq.u32 %p1, %r1, 0;\n @%p1 bra $skip;\n add.u32 %r7, %r7, 2;\n" \
    "$skip:\n add.u32 %r9, %r8, %r7;\n" \
    " mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd2, %rd1, %rd2;\n st.global.u32 [%rd2], %r9;\n ret;\n}\n"

START_TEST(copy_propagation)
{
    bc_optimize_set(0);
    bc_module *m0 = lower(COPIES);
    bc_optimize_set(1);
    bc_module *m1 = lower(COPIES);
    bc_function *k0 = bc_module_find(m0, "k"), *k1 = bc_module_find(m1, "k");
    /* without the pass: the four copies (mov %r1, %tid.x is an S2R) */
    ck_assert_int_eq(count_op(k0, BC_MOV), 4);
    /* with it: the immediate and the same-block copy are gone */
    ck_assert_int_eq(count_op(k1, BC_MOV), 2);
    ck_assert_uint_eq(k1->ncode, k0->ncode - 2);
    /* add %r3 reads the constant 7 */
    int found = 0;
    for (uint32_t pc = 0; pc < k1->ncode; pc++) {
        const bc_op *op = &k1->code[pc];
        if (op->code != BC_ADD || op->b == BC_NONE)
            continue;
        for (uint32_t c = 0; c < k1->nconsts; c++)
            if (k1->const_slots[c] == op->b && k1->const_values[c] == 7)
                found = 1;
    }
    ck_assert_msg(found, "no add reads the constant 7");
    /* the mul reads the copy's source twice */
    for (uint32_t pc = 0; pc < k1->ncode; pc++)
        if (k1->code[pc].code == BC_MUL_LO)
            ck_assert_uint_eq(k1->code[pc].a, k1->code[pc].b);
    /* the branch lands on the op after $skip, two ops earlier than before */
    uint32_t skip0 = 0, skip1 = 0;
    ck_assert(bc_function_label_pc(k0, "$skip", &skip0) == 0);
    ck_assert(bc_function_label_pc(k1, "$skip", &skip1) == 0);
    ck_assert_uint_eq(skip1, skip0 - 2);
    for (uint32_t pc = 0; pc < k1->ncode; pc++)
        if (k1->code[pc].code == BC_BRA)
            ck_assert_int_eq(k1->code[pc].imm, (int64_t)skip1);
    ck_assert_int_eq(k1->code[skip1].code, BC_ADD);
    release(m0);
    release(m1);
}
END_TEST

/* Predicate ops (PSETP: and/or/xor/not of predicates) name predicate
 * numbers, not register slots: a copy whose destination slot has the
 * number of a predicate they use still goes. 38 or.pred ops use p1-p39,
 * which covers every register slot of this small kernel. */
START_TEST(copies_past_predicate_ops)
{
    char ptx[8192];
    int n = snprintf(ptx, sizeof ptx, "%s", H ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<40>; .reg .b32 %r<8>;"
                     " .reg .f32 %f<4>; .reg .b64 %rd<3>;\n ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n"
                     " setp.eq.u32 %p1, %r1, 3;\n");
    for (int i = 2; i < 40; i++)
        n += snprintf(ptx + n, sizeof ptx - (size_t)n, " or.pred %%p%d, %%p%d, %%p%d;\n", i, i - 1, i - 1);
    snprintf(ptx + n, sizeof ptx - (size_t)n, "%s",
             " shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n mov.b32 %f1, %r2;\n add.f32 %f2, %f1, %f1;\n"
             " mov.b32 %r3, %f2;\n selp.b32 %r4, %r3, 0, %p39;\n st.global.u32 [%rd1], %r4;\n ret;\n}\n");
    bc_optimize_set(0);
    bc_module *m0 = lower(ptx);
    bc_optimize_set(1);
    bc_module *m1 = lower(ptx);
    bc_function *k0 = bc_module_find(m0, "k"), *k1 = bc_module_find(m1, "k");
    ck_assert_int_eq(count_op(k0, BC_PSETP), 38);
    ck_assert_int_eq(count_op(k0, BC_MOV), 2);
    ck_assert_int_eq(count_op(k1, BC_MOV), 0);
    ck_assert_int_eq(count_op(k1, BC_PSETP), 38);
    release(m0);
    release(m1);
}
END_TEST

/* Fused pairs (optimize.c): which pairs fuse into xcode, when the
 * shuffle's result is not written, that code keeps the PTX's ops, and that
 * `kemu dis` (bc_disassemble) shows the fused form. */
#define PAIRS H ".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<12>; .reg .f32 %f<4>; .reg .b64 %rd<3>;" \
    " .reg .pred %p<3>;\n ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mov.b32 %f1, %r1;\n" \
    /* 2, 3: a shuffle read only by the max: fused, not written */ \
    " shfl.sync.bfly.b32 %r2, %r1, 4, 31, -1;\n mov.b32 %f2, %r2;\n max.f32 %f3, %f1, %f2;\n" \
    /* 4, 5: read again after the add: fused, written */ \
    " shfl.sync.down.b32 %r3, %r1, 1, 31, -1;\n add.u32 %r4, %r3, %r1;\n" \
    /* 6, 7: the lane in a register: not fused */ \
    " shfl.sync.bfly.b32 %r5, %r1, %r4, 31, -1;\n add.u32 %r6, %r5, %r3;\n" \
    /* 8, 9: a segmented shuffle (width 16): not fused */ \
    " shfl.sync.bfly.b32 %r7, %r1, 1, 0x0f1f, -1;\n add.u32 %r8, %r7, %r6;\n" \
    /* 10, 11: compare and branch */ \
    " setp.eq.u32 %p1, %r8, 0;\n @%p1 bra $end;\n" \
    /* 12, 13: a compare and a branch that another branch targets: not fused */ \
    " setp.eq.u32 %p2, %r8, 1;\n$again:\n @%p2 bra $again;\n" \
    " mov.b32 %r9, %f3;\n add.u32 %r10, %r9, %r4;\n st.global.u32 [%rd1], %r10;\n$end:\n ret;\n}\n"

START_TEST(fused_pairs)
{
    bc_optimize_set(0);
    bc_module *m0 = lower(PAIRS);
    bc_optimize_set(1);
    bc_module *m1 = lower(PAIRS);
    bc_function *k0 = bc_module_find(m0, "k"), *k1 = bc_module_find(m1, "k");
    ck_assert_ptr_null(k0->xcode);
    ck_assert_ptr_nonnull(k1->xcode);
    int fold = 0, fold_dead = 0, setp_bra = 0;
    for (uint32_t pc = 0; pc < k1->ncode; pc++) {
        const bc_op *x = &k1->xcode[pc], *op = &k1->code[pc];
        /* code keeps the PTX's ops; xcode differs only in the fused opcode and flag */
        ck_assert_int_ne(op->code, BC_SHFL_FOLD);
        ck_assert_int_ne(op->code, BC_SETP_BRA);
        if (x->code == BC_SHFL_FOLD) {
            ck_assert_int_eq(op->code, BC_SHFL);
            fold++;
            fold_dead += (x->flags & BC_F_D_DEAD) != 0;
            ck_assert(k1->code[pc + 1].code == BC_FMAX || k1->code[pc + 1].code == BC_ADD);
            /* written exactly when something besides the pair reads it */
            ck_assert_int_eq((x->flags & BC_F_D_DEAD) != 0, k1->code[pc + 1].code == BC_FMAX);
        } else if (x->code == BC_SETP_BRA) {
            ck_assert_int_eq(op->code, BC_SETP);
            ck_assert_int_eq(k1->code[pc + 1].code, BC_BRA);
            setp_bra++;
        } else {
            ck_assert_int_eq(x->code, op->code);
        }
        ck_assert_uint_eq(x->flags & ~(uint32_t)BC_F_D_DEAD, op->flags);
    }
    ck_assert_int_eq(fold, 2);
    ck_assert_int_eq(fold_dead, 1);
    ck_assert_int_eq(setp_bra, 1);
    ck_assert_int_eq(count_op(k1, BC_SHFL), 4);
    util_buffer b = {0};
    bc_disassemble(m1, k1, &b);
    util_buffer_append(&b, "", 1);
    ck_assert_ptr_nonnull(strstr(b.data, "SHFL_FOLD"));
    ck_assert_ptr_nonnull(strstr(b.data, "(d not written)"));
    ck_assert_ptr_nonnull(strstr(b.data, "+FMAX.f32"));
    ck_assert_ptr_nonnull(strstr(b.data, "SETP_BRA.u32"));
    ck_assert_ptr_nonnull(strstr(b.data, "+@p"));
    util_buffer_free(&b);
    release(m0);
    release(m1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, opcode_selection);
    tcase_add_test(tc, constants_are_pooled);
    tcase_add_test(tc, labels_and_guards);
    tcase_add_test(tc, module_layout);
    tcase_add_test(tc, disassembly_names_sources);
    tcase_add_test(tc, calls_copy_parameters);
    tcase_add_test(tc, kernel_param_fast_path_stays_in_block);
    tcase_add_test(tc, many_constants_are_pooled);
    tcase_add_test(tc, device_runtime_names);
    tcase_add_test(tc, copy_propagation);
    tcase_add_test(tc, copies_past_predicate_ops);
    tcase_add_test(tc, fused_pairs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* test_kernels.c - data-driven correctness tests of the interpreter.
 *
 * Runs the committed test kernels (tests/kernels/NAME.VARIANT.ptx, compiled
 * by nvcc from NAME.cu) through the public C API and compares every output
 * with a reference the test computes in C. Each test runs in one or more
 * run configurations (PTX variant sm_80/sm_75/sm_90 -O3 or sm_80 -G, host
 * threads 1 or 2, schedules random:1 and random:2; see kt_harness.h), so
 * passing a test in every configuration also shows that its outputs do not
 * depend on them. Configurations that fail today are registered in the
 * TCase "pending", which runs only with KEMU_PENDING=1; the rest must pass.
 * Build with -DKERNELS_DIR='"<srcdir>/tests/kernels"'.
 */
#include "kernels/kt_harness.h"
#include "kernels/kt_ref.h"
#include "kernels/kt_basic.h"
#include "kernels/kt_warp_atomics.h"
#include "kernels/kt_intops.h"
#include "kernels/kt_half.h"
#include "kernels/kt_floatops.h"
#include "kernels/kt_runtime.h"
#include "kernels/kt_mma_cluster.h"

/* Finds (or creates and adds) the TCase called name in s. */
static TCase *kt_tcase(Suite *s, TCase **made, const char **names, int *nmade, const char *name)
{
    for (int i = 0; i < *nmade; i++)
        if (strcmp(names[i], name) == 0)
            return made[i];
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    names[*nmade] = name;
    made[(*nmade)++] = tc;
    return tc;
}

static Suite *kernels_suite(int with_pending)
{
    /* Every test and the configurations it runs in; `pending` marks the
     * configurations that fail today (see the diagnosis next to each). */
    const kt_case kt_cases[] = {
        /* elementwise.cu */
        {"elementwise", test_saxpy, KT_ALL, 0},
        {"elementwise", test_vadd, KT_VARIANTS, 0},
        {"elementwise", test_grid_stride, KT_O3_SCHEDULES, 0},
        {"elementwise", test_index_grids, KT_ALL, 0},
        /* copyprop.cu */
        {"copyprop", test_copy_cases, KT_ALL, 0},
        {"copyprop", test_warp_bitcast_sum, KT_ALL, 0},
        /* fusion.cu */
        {"fusion", test_fold_full_warps, KT_ALL, 0},
        {"fusion", test_fold_partial_warp, KT_ALL, 0},
        /* reduce.cu */
        {"reduce", test_reduce_tree, KT_ALL, 0},
        {"reduce", test_reduce_warp, KT_ALL, 0},
        {"reduce", test_reduce_dyn, KT_ALL, 0},
        /* static shared memory is sized per kernel */
        {"reduce", test_reduce_dyn_max_shared, KT_ONLY_O3, 0},
        /* -G: a shfl.sync inside the .func __shfl_down_sync, called after the
         * lanes of warp 0 diverged and reconverged */
        {"reduce", test_reduce_two_level, KT_ALL, 0},
        /* divergence.cu */
        {"divergence", test_classify_switch, KT_ALL, 0},
        {"divergence", test_loops_early_exit, KT_ALL, 0},
        {"divergence", test_spin_lock_its, KT_ALL, 0},
        {"divergence", test_spin_lock_lanes, KT_ALL, 0},
        {"divergence", test_barrier_votes, KT_ALL, 0},
        /* sync.cu */
        {"sync", test_named_barriers, KT_ALL, 0},
        {"sync", test_syncwarp_masks, KT_ALL, 0},
        {"sync", test_fence_last_block, KT_ALL, 0},
        {"sync", test_cp_async, KT_BIT(KT_O3) | KT_BIT(KT_SM90) | KT_BIT(KT_DEBUG), 0},
        {"sync", test_mbarrier, KT_BIT(KT_O3) | KT_BIT(KT_SM90) | KT_BIT(KT_DEBUG), 0},
        /* warp.cu */
        {"warp", test_shfl_modes, KT_ALL, 0},
        {"warp", test_shfl_f64_partial, KT_ALL, 0},
        {"warp", test_votes, KT_ALL, 0},
        {"warp", test_match, KT_ALL, 0},
        {"warp", test_redux, KT_ALL & ~KT_BIT(KT_SM75), 0},
        {"warp", test_lane_regs, KT_VARIANTS, 0},
        /* warp_groups.cu: several member masks at one warp-synchronous op */
        {"warp_groups", test_partition_reduce, KT_ALL, 0},
        {"warp_groups", test_group_masks, KT_ALL & ~KT_BIT(KT_SM75), 0},
        /* -G: each __reduce_add_sync etc. is a .func call, and the late
         * lanes call it in a frame of their own, so they never join the
         * lanes of their group that wait in the earlier call's frame
         * (deadlock); groups in two frames of one call site do not merge */
        {"warp_groups", test_group_masks_late, KT_ALL & ~KT_BIT(KT_SM75), KT_BIT(KT_DEBUG)},
        {"warp_groups", test_group_elect, KT_BIT(KT_SM90), 0},
        /* atomics.cu */
        {"atomics", test_atomic_int_global, KT_ALL, 0},
        {"atomics", test_atomic_64_global, KT_ALL, 0},
        {"atomics", test_atomic_float_cas, KT_ALL, 0},
        {"atomics", test_atomic_shared, KT_ALL, 0},
        {"atomics", test_atomic_histogram_red, KT_ALL, 0},
        {"atomics", test_atomic_half2, KT_O3_SCHEDULES | KT_BIT(KT_SM90) | KT_BIT(KT_DEBUG), 0},
        /* intops.cu */
        {"intops", test_wide_mul, KT_VARIANTS, 0},
        {"intops", test_add_carry_128, KT_VARIANTS, 0},
        {"intops", test_shifts_wide, KT_VARIANTS, 0},
        {"intops", test_bit_ops, KT_VARIANTS, 0},
        {"intops", test_bitfield, KT_VARIANTS, 0},
        {"intops", test_lop3_sad, KT_VARIANTS, 0},
        {"intops", test_divide, KT_VARIANTS, 0},
        /* half.cu */
        {"half", test_half_arith, KT_VARIANTS, 0},
        {"half", test_half2_arith, KT_VARIANTS, 0},
        {"half", test_bf16_arith, KT_VARIANTS, 0},
        {"half", test_to_half, KT_VARIANTS, 0},
        {"half", test_half_int_conv, KT_VARIANTS, 0},
        {"half", test_pack_half2, KT_VARIANTS, 0},
        {"half", test_tf32, KT_VARIANTS & ~KT_BIT(KT_SM75), 0},
        {"half", test_bf16_fma_nan_minmax, KT_VARIANTS & ~KT_BIT(KT_SM75), 0},
        /* floatops.cu */
        {"floatops", test_round_f32, KT_VARIANTS, 0},
        {"floatops", test_round_f64, KT_VARIANTS, 0},
        {"floatops", test_ftz_f32, KT_VARIANTS, 0},
        {"floatops", test_special_f32, KT_VARIANTS, 0},
        {"floatops", test_round_to_int, KT_VARIANTS, 0},
        {"floatops", test_f2i, KT_VARIANTS, 0},
        {"floatops", test_d2x, KT_VARIANTS, 0},
        {"floatops", test_cvt_in_range, KT_VARIANTS, 0},
        {"floatops", test_i2f, KT_VARIANTS, 0},
        {"floatops", test_approx_f32, KT_VARIANTS, 0},
        {"floatops", test_libm, KT_VARIANTS, 0},
        {"floatops", test_nan_minmax_xorsign, KT_VARIANTS & ~KT_BIT(KT_SM75), 0},
        /* memory.cu */
        {"memory", test_local_recursion, KT_ALL, 0},
        {"memory", test_struct_param, KT_VARIANTS, 0},
        {"memory", test_const_globals, KT_VARIANTS | KT_BIT(KT_T2), 0},
        {"memory", test_vector_bytes, KT_VARIANTS, 0},
        {"memory", test_volatile_poll, KT_ALL, 0},
        {"memory", test_shared_wavefront, KT_ALL, 0},
        /* printf.cu */
        {"printf", test_printf_formats, KT_ALL, 0},
        {"printf", test_printf_lanes, KT_ALL, 0},
        {"printf", test_assert, KT_VARIANTS | KT_BIT(KT_T2), 0},
        {"printf", test_device_malloc, KT_ALL, 0},
        /* faults.cu */
        {"faults", test_faults, KT_VARIANTS | KT_BIT(KT_T2), 0},
        {"faults", test_fault_lines, KT_ONLY_O3, 0},
        {"faults", test_oob_shared_far, KT_VARIANTS, 0},
        /* one int past a 64-int shared array faults: each kernel gets only
         * the static shared memory it uses */
        {"faults", test_oob_shared_near, KT_ONLY_O3, 0},
        {"faults", test_timeout, KT_BIT(KT_O3) | KT_BIT(KT_T2), 0},
        {"faults", test_barrier_deadlock_timeout, KT_ONLY_O3, 0},
        /* the timeout fault lists where each warp runs or waits */
        {"faults", test_barrier_deadlock_names_barrier, KT_ONLY_O3, 0},
        {"faults", test_uninit_shared_race, KT_VARIANTS, 0},
        /* mma.cu */
        {"mma", test_wmma, KT_VARIANTS, 0},
        {"mma", test_ldmatrix, KT_VARIANTS, 0},
        {"mma", test_mma_sync, KT_VARIANTS, 0},
        {"mma", test_wmma_bf16_tf32, KT_VARIANTS & ~KT_BIT(KT_SM75), 0},
        /* cluster.cu: always the sm_90 PTX; the configuration picks threads
         * and schedule */
        {"cluster", test_cluster_regs, KT_O3_SCHEDULES, 0},
        {"cluster", test_cluster_dsmem, KT_O3_SCHEDULES, 0},
    };
    Suite *s = suite_create("kernels");
    TCase *made[64];
    const char *names[64];
    int nmade = 0;
    for (size_t k = 0; k < sizeof kt_cases / sizeof kt_cases[0]; k++) {
        const kt_case *tc = &kt_cases[k];
        for (int i = 0; i < KT_NCONFIGS; i++) {
            if (!(tc->configs & KT_BIT(i)))
                continue;
            int pending = (tc->pending & KT_BIT(i)) != 0;
            if (pending && !with_pending)
                continue;
            TCase *t = kt_tcase(s, made, names, &nmade, pending ? "pending" : tc->group);
            tcase_add_loop_test(t, tc->test, i, i + 1);
        }
    }
    return s;
}

int main(void)
{
    const char *p = getenv("KEMU_PENDING");
    int with_pending = p && strcmp(p, "1") == 0;
    SRunner *sr = srunner_create(kernels_suite(with_pending));
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

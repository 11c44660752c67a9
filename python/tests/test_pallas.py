"""JAX Pallas kernels (Pallas' Triton lowering) run on kemu through
kemu.pallas: JAX lowers them for CUDA on a CPU-only jaxlib, Triton compiles
the Triton IR to PTX, kemu runs it. Skips without jax or triton."""
import os

import numpy as np
import pytest

if os.environ.get("KEMU_TEST_NO_TRITON"):
    pytest.skip("Triton is not run against a sanitizer build of libkemu", allow_module_level=True)
jax = pytest.importorskip("jax")
pytest.importorskip("triton")
pl = pytest.importorskip("jax.experimental.pallas")
pltriton = pytest.importorskip("jax.experimental.pallas.triton")
jnp = jax.numpy

import kemu  # noqa: E402
import kemu.pallas as kp  # noqa: E402

BLOCK = 256


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def add(x, y):
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // BLOCK,),
                          in_specs=[pl.BlockSpec((BLOCK,), lambda i: (i,))] * 2,
                          out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
                          compiler_params=pltriton.CompilerParams(num_warps=4))(x, y)


def softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


def softmax(x, rows=4):
    return pl.pallas_call(softmax_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(x.shape[0] // rows,),
                          in_specs=[pl.BlockSpec((rows, x.shape[1]), lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((rows, x.shape[1]), lambda i: (i, 0)),
                          compiler_params=pltriton.CompilerParams(num_warps=4))(x)


def racy_sum_kernel(x_ref, acc_ref, o_ref):
    # every program adds its block into the one output element: a cross-program
    # race on a GPU (Pallas' interpret=True runs the programs one after another
    # and gets the sum)
    o_ref[0] = o_ref[0] + jnp.sum(x_ref[...])


def racy_sum(x, acc):
    return pl.pallas_call(racy_sum_kernel, out_shape=jax.ShapeDtypeStruct((1,), x.dtype), grid=(x.shape[0] // BLOCK,),
                          in_specs=[pl.BlockSpec((BLOCK,), lambda i: (i,)), pl.BlockSpec((1,), lambda i: (0,))],
                          out_specs=pl.BlockSpec((1,), lambda i: (0,)), input_output_aliases={1: 0},
                          compiler_params=pltriton.CompilerParams(num_warps=4))(x, acc)


def oob_kernel(x_ref, o_ref):
    i = pl.program_id(0)
    o_ref[...] = x_ref[pl.ds(i * BLOCK + 8, BLOCK)]  # the last program reads 8 elements past the end


def oob(x):
    return pl.pallas_call(oob_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // BLOCK,),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
                          compiler_params=pltriton.CompilerParams(num_warps=4))(x)


def test_vector_add():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4 * BLOCK).astype(np.float32)
    y = rng.standard_normal(4 * BLOCK).astype(np.float32)
    out = kp.call(add, x, y)
    np.testing.assert_array_equal(out, x + y)
    assert kp.call.last_launches[0].warp_instructions > 0
    # JAX CPU arrays are inputs too
    np.testing.assert_array_equal(kp.call(add, jnp.asarray(x), jnp.asarray(y)), x + y)


def test_lowering_names_grid_and_warps():
    x = jax.ShapeDtypeStruct((8 * BLOCK,), jnp.float32)
    [k], outs = kp.lower(add, x, x)
    assert k.grid == (8, 1, 1) and k.num_warps == 4 and k.operands == [0, 1] and k.results == [0]
    assert "tt.func" in k.ttir and outs[0].shape == (8 * BLOCK,)
    assert ".entry" in k.compile("sm_80").asm["ptx"]


def test_row_softmax():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 128)).astype(np.float32)
    out = kp.call(softmax, x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_racecheck_catches_a_cross_program_race():
    x = np.ones(4 * BLOCK, np.float32)
    acc = np.zeros(1, np.float32)
    [k], _ = kp.lower(racy_sum, x, acc)
    assert k.aliases == {0: 1}
    with pytest.raises(kemu.CheckerError) as e:
        kp.call(racy_sum, x, acc, tools=["racecheck"])
    assert "between blocks" in e.value.report.text
    # one program: no race, and the aliased output starts as the input
    out = kp.call(racy_sum, x[:BLOCK], np.full(1, 5.0, np.float32), tools=["racecheck"])
    assert out[0] == BLOCK + 5.0 and acc[0] == 0.0


def test_out_of_bounds_read_is_caught():
    # Pallas' interpret=True clamps this slice to the array and says nothing
    x = np.arange(2 * BLOCK, dtype=np.float32)
    with pytest.raises((kemu.KernelFault, kemu.CheckerError)) as e:
        kp.call(oob, x, tools=["memcheck"])
    assert "oob_kernel" in str(e.value) or "out of bounds" in str(e.value).lower(), str(e.value)


def test_refuses_what_is_not_a_pallas_call():
    x = np.ones(BLOCK, np.float32)
    with pytest.raises(kemu.KemuError, match="Pallas calls on its own arguments"):
        kp.call(lambda a, b: add(a, b) * 2, x, x)

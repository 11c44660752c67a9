#!/bin/sh
# test_matrix again with the tensor-core model's portable tile loop (the
# one hosts without AVX2 run): both loops must match the references.
KEMU_TENSOR_PORTABLE=1
export KEMU_TENSOR_PORTABLE
exec tests/unit/test_matrix

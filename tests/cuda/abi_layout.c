/* Prints the sizes and field offsets listed in abi_fields.h, either for
 * kemu's own declarations of the CUDA runtime ABI (src/cudart/cuda_abi.h)
 * or, built with -DUSE_CUDA_HEADERS and CUDA's include directory, for
 * CUDA's headers. tests/cuda/run.sh builds both and requires the same
 * output, so a layout that drifts from CUDA's is caught. */
#include <stddef.h>
#include <stdio.h>
#ifdef USE_CUDA_HEADERS
#include <cuda_runtime_api.h>
#else
#include "cudart/cuda_abi.h"
#endif

int main(void)
{
#define ABI_SIZE(type) printf("sizeof(%s) = %zu\n", #type, sizeof(type));
#define ABI_FIELD(type, field) printf("offsetof(%s, %s) = %zu\n", #type, #field, offsetof(type, field));
#include "abi_fields.h"
#undef ABI_SIZE
#undef ABI_FIELD
    return 0;
}

/* What NVIDIA's nccl.h includes as <cuda_runtime.h>, for building kemu's
 * libnccl: kemu's own CUDA runtime ABI (cudaStream_t and friends), so that
 * nccl.h alone (from the CUDA toolkit or the nvidia-nccl wheels) is enough
 * and no CUDA toolkit header is needed. Never installed. */
#ifndef KEMU_NCCL_SHIM_CUDA_RUNTIME_H
#define KEMU_NCCL_SHIM_CUDA_RUNTIME_H
#include "cudart/cuda_abi.h"
#ifndef CUDART_VERSION
#define CUDART_VERSION CUDART_VERSION_NUMBER
#endif
#endif

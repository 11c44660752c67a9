/* What NVIDIA's nccl.h includes as <cuda_bf16.h>: nothing that kemu's libnccl
 * uses (it converts the element types itself, nccl_reduce.c). */
#ifndef KEMU_NCCL_SHIM_CUDA_BF16_H
#define KEMU_NCCL_SHIM_CUDA_BF16_H
#endif

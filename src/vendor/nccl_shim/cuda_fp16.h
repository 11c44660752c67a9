/* What NVIDIA's nccl.h includes as <cuda_fp16.h>: nothing that kemu's libnccl
 * uses (it converts the element types itself, nccl_reduce.c). */
#ifndef KEMU_NCCL_SHIM_CUDA_FP16_H
#define KEMU_NCCL_SHIM_CUDA_FP16_H
#endif

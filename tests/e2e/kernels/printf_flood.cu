// Device printf past the printf FIFO (cudaLimitPrintfFifoSize, 1 MiB by
// default): each thread prints `lines` lines of 34 bytes. The e2e cases
// run-printf-fifo* check that output stops at the FIFO size with a note,
// and that a launch printing far more than that stays bounded in memory.
#include <cstdio>

extern "C" __global__ void printf_flood(int lines)
{
    for (int i = 0; i < lines; i++)
        printf("block %4d thread %3d line %6d\n", blockIdx.x, threadIdx.x, i);
}

#!/bin/sh
# Regenerates the committed PTX of the debugger's test kernels (needs nvcc).
set -e
cd "$(dirname "$0")"
${NVCC:-nvcc} -ptx -arch=sm_80 -lineinfo dbg.cu -o dbg.ptx

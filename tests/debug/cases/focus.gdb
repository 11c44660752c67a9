# cuda-gdb's focus commands and reports; registers of all lanes side by side
break dbg.cu:16
run
cuda
info cuda kernels
info cuda blocks
info cuda warps
cuda block 1,0,0 thread 37,0,0
cuda block 0,0,0 thread 37,0,0
p threadIdx.x
cuda warp 0 lane 7
p threadIdx.x
p/x %r1
p %p1@lanes
p %f3@lanes
info cuda lanes
cuda block 0,0,0 thread 200,0,0
kill

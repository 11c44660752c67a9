# a breakpoint by CUDA line with a condition on the thread, a temporary
# breakpoint by function, hit counts, delete and disable
break dbg.cu:16 if threadIdx.x == 35
tbreak _Z5scaleff
info breakpoints
run
bt
p threadIdx.x
continue
p threadIdx.x
p blockIdx.x * blockDim.x + threadIdx.x
info breakpoints
disable 1
continue

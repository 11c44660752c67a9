# a Triton kernel: breakpoints and steps by Python source line (Triton's .loc)
break kernels.py:34 if blockIdx.x == 1
run
bt
p offs
p blockIdx.x * 128 + threadIdx.x
list
list
next
info cuda blocks
continue

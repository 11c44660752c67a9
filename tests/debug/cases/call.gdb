# kemu debug call: a Pallas-style call spec under the debugger (PTX without .loc: PTX lines)
break reverse_scale if threadIdx.x == 40 && blockIdx.x == 2
run
p blockIdx.x
p threadIdx.x
stepi 4
p/x %rd5
info cuda kernels
x/2i $pc
kill

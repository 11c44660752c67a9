# break on fault stops before the faulting store runs, at the lane that faults
break on fault
run
p threadIdx.x
p %r1
info cuda lanes
bt
continue

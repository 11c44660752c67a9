# breakpoints by PTX line and bytecode pc; memory in every space
break dbg.ptx:141
break *reduce+3
info breakpoints
run
x/2i $pc
continue
info cuda warps
x/4xw @shared 0
x/2f @param 0
p ((@shared float *)0)[1]
p *(float *)reduce_param_0
info args
delete 2
continue
info cuda lanes
kill

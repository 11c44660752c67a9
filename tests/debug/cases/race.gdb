# break on race stops at the access racecheck reports, with its warp in focus
break on race
run
info cuda warps
p threadIdx.x
continue

# set var: registers, predicates and memory of the focused lane change what
# the kernel computes; print LHS = RHS; errors; replay refuses afterwards
break dbg.cu:16
run
p %f3
set var %f3 = 100
p %f3
p %f3@lanes
cuda thread 1
print %f3 = -2.5
set variable %r1 = 7.9
p %r1
p/x %r1 = -1
set var %p1 = 1
p %p1
set %p1 = 0
p %p1
p ((float *)saxpy_param_3)[0]
set var ((float *)saxpy_param_3)[0] = 42
p ((float *)saxpy_param_3)[0]
p saxpy_param_1 = 9
p saxpy_param_1
set var no_such = 1
set var 3 = 4
set var %f3 == 1
set var %f3 = no_such
reverse-stepi
delete
break dbg.cu:18
continue
p ((float *)saxpy_param_3)[0]
p ((float *)saxpy_param_3)[1]
p ((float *)saxpy_param_3)[2]
kill

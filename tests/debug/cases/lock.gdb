# gdb's scheduler-locking: the focused warp runs alone while stepping (step) or always (on);
# when it waits for the others at a barrier, the debugger stops and says so
break dbg.cu:25
run
set scheduler-locking step
next
info cuda warps
next
set scheduler-locking on
continue
reverse-stepi
kill

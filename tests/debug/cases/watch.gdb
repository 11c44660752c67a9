# a watchpoint on shared memory names each writer; the run is replayed to
# answer who wrote an address and what touched it since the last barrier,
# and to go back to the previous watchpoint hit
break reduce
run
p ((float*)&buf)[3]
watch ((float*)&buf)[3]
delete 1
continue
continue
x/4f &buf
info last-writer ((float*)&buf)[3]
info history ((float*)&buf)[3]
reverse-continue
p ((float*)&buf)[3]
continue
continue
info breakpoints
kill

# stepping by line into and out of a .func, by instruction, and backwards
break saxpy
run
next
next
step
step
step
bt
up
p %r1
down
step
info registers %f1 %f2 %f3
p %f1 * %f2
finish
next
stepi
stepi 3
info line
reverse-stepi
reverse-stepi
x/3i $pc
kill

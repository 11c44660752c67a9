# source variables of an nvcc -G kernel (DWARF in the PTX) by their CUDA names
break dwarf.cu:24
run
p j
p i
delete
break dwarf.cu:26
continue
p j
p acc
p scale
p n
p p
p *p
p p[1]
p pr
p pr.b
p hist
info args
info locals
continue
p j
p acc
info locals
cuda thread 5
p i
p acc
p p[j]
p hist[j - 1]
p &pr
p (&pr)->a
p j + 1
p i@lanes
p no_such_variable
p pr.zz
delete
break twice
continue
info args
info locals
cuda thread 5
next
next
info args
info locals
p y * 10
bt
up
info locals
down
delete
break dwarf.cu:31
continue
p i
info locals
set var i = 77
p i
p i + 1
set var acc = 0.5
p acc
kill

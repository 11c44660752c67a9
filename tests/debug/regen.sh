#!/bin/sh
# Regenerates the committed PTX of the debugger's test kernels (needs
# nvcc): dbg.cu with line info, dwarf.cu with nvcc -G (DWARF in the PTX:
# source variables). The .file path is made relative, so reports and transcripts do
# not depend on the directory it was built in; kemu finds dbg.cu beside
# the PTX. After regenerating, rerun the transcripts with
# KEMU_DEBUG_REGEN=1 sh run.sh and read the diff.
set -e
cd "$(dirname "$0")"
for k in dbg spin; do
    ${NVCC:-nvcc} -ptx -arch=sm_80 -lineinfo $k.cu -o $k.ptx
done
${NVCC:-nvcc} -ptx -arch=sm_80 -G dwarf.cu -o dwarf.ptx
sed -i 's|^\(\s*\.file\s\+[0-9]\+\s\+"\)[^"]*/\([^/"]*\)"|\1\2"|' dbg.ptx spin.ptx dwarf.ptx

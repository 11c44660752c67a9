#!/bin/sh
# Regenerates the committed PTX of the debugger's test kernels (needs
# nvcc). The .file path is made relative, so reports and transcripts do
# not depend on the directory it was built in; kemu finds dbg.cu beside
# the PTX. After regenerating, rerun the transcripts with
# KEMU_DEBUG_REGEN=1 sh run.sh and read the diff.
set -e
cd "$(dirname "$0")"
for k in dbg spin; do
    ${NVCC:-nvcc} -ptx -arch=sm_80 -lineinfo $k.cu -o $k.ptx
    sed -i 's|^\(\s*\.file\s\+[0-9]\+\s\+"\)[^"]*/\([^/"]*\)"|\1\2"|' $k.ptx
done

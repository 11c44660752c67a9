#!/bin/sh
# Packs the kemu built in this source tree into one directory that runs on
# another x86-64 Linux machine without building anything there: a GPU machine
# that has the NVIDIA driver but no compiler, autotools or -dev packages.
#
# usage: tests/gpu/bundle.sh DIR
# (in a build tree apart from the sources, set top_builddir to it)
#
# DIR/bin/kemu and DIR/lib/libkemu.so.0 are the built program and library,
# DIR/lib/kemu/ kemu's libcudart.so.13 and .12 (for `kemu exec`);
# DIR/lib also gets every other shared library they need (libffi, libzstd,
# liblz4, libjansson, libgomp, ...) and DIR/glibc the C library and dynamic
# loader they were linked against. DIR/kemu is the command to run: it uses the
# machine's own C library when that is recent enough, and the bundled loader
# and C library otherwise (KEMU_BUNDLE_LOADER=system|bundled forces one). Either
# way the CUDA driver is found as usual (dlopen("libcuda.so.1"), or
# KEMU_CUDA_LIBRARY). DIR/REVISION names the git revision of the sources.
#
# Then, on the GPU machine:  KEMU=DIR/kemu tests/gpu/crosscheck.sh
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../.." && pwd)
BUILD=${top_builddir:-$SRC}
prog=$BUILD/src/.libs/kemu
lib=$BUILD/.libs/libkemu.so.0
if [ ! -f "$prog" ] || [ ! -f "$lib" ]; then
    echo "bundle: build kemu first (./configure && make): $prog or $lib is missing" >&2
    exit 1
fi
command -v ldd >/dev/null 2>&1 || { echo "bundle: ldd not found" >&2; exit 1; }

dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "${dir:?}/bin" "${dir:?}/lib" "${dir:?}/glibc" "${dir:?}/kemu"
mkdir -p "$dir/bin" "$dir/lib" "$dir/glibc"
cp "$prog" "$dir/bin/kemu"
cp -L "$lib" "$dir/lib/libkemu.so.0"
# kemu's CUDA runtime for `kemu exec`, found next to libkemu (lib/kemu/)
runtimes=$(ls "$BUILD"/lib/kemu/libcudart.so.* 2>/dev/null || true)
for rt in $runtimes; do
    mkdir -p "$dir/lib/kemu"
    cp -L "$rt" "$dir/lib/kemu/"
done

# Every library the program and libkemu load, as this machine resolves them.
# The C library's own parts (and the loader) go to glibc/: they must come
# together from one glibc, and only the bundled loader may load them.
# shellcheck disable=SC2086 # runtimes: paths without blanks, or none
deps=$(LD_LIBRARY_PATH="$BUILD/.libs" ldd "$prog" "$lib" $runtimes |
    sed -n 's/^[[:space:]]*\([^ ]*\) => \(\/[^ ]*\) .*/\1 \2/p; s/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) .*/loader \1/p' |
    sort -u)
# shellcheck disable=SC2086
missing=$(LD_LIBRARY_PATH="$BUILD/.libs" ldd "$prog" "$lib" $runtimes | grep 'not found' || true)
if [ -n "$missing" ]; then
    echo "bundle: a library kemu needs is missing here:" >&2
    printf '%s\n' "$missing" >&2
    exit 1
fi
printf '%s\n' "$deps" | while read -r name path; do
    [ -n "$name" ] || continue
    case $name in
    libkemu.so.*) ;;
    loader) cp -L "$path" "$dir/glibc/$(basename "$path")" ;;
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libmvec.so.* | ld-linux*)
        cp -L "$path" "$dir/glibc/$name" ;;
    *) cp -L "$path" "$dir/lib/$name" ;;
    esac
done
loader=$(cd "$dir/glibc" && ls ld-linux* 2>/dev/null | head -1)
[ -n "$loader" ] || { echo "bundle: ldd named no dynamic loader" >&2; exit 1; }
# libcuda.so.1 (loaded with dlopen) needs libdl, libpthread and librt from the
# same glibc as the bundled loader: take them too where they exist.
libcdir=$(dirname "$(printf '%s\n' "$deps" | sed -n 's/^libc\.so\.6 //p')")
for extra in libdl.so.2 libpthread.so.0 librt.so.1; do
    [ -f "$libcdir/$extra" ] && [ ! -f "$dir/glibc/$extra" ] && cp -L "$libcdir/$extra" "$dir/glibc/$extra"
done

cat > "$dir/kemu" <<EOF
#!/bin/sh
# kemu from a bundle made by tests/gpu/bundle.sh (kemu $(LD_LIBRARY_PATH="$BUILD/.libs" "$prog" --version 2>/dev/null | sed 's/^kemu //'), built $(date -u '+%Y-%m-%d')).
d=\$(cd "\$(dirname "\$0")" && pwd)
mode=\${KEMU_BUNDLE_LOADER:-}
if [ -z "\$mode" ]; then
    if LD_LIBRARY_PATH="\$d/lib" "\$d/bin/kemu" --version >/dev/null 2>&1; then mode=system; else mode=bundled; fi
fi
case \$mode in
system) LD_LIBRARY_PATH="\$d/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/bin/kemu" "\$@" ;;
bundled) exec "\$d/glibc/$loader" --library-path "\$d/lib:\$d/glibc\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" "\$d/bin/kemu" "\$@" ;;
*) echo "kemu bundle: KEMU_BUNDLE_LOADER must be system or bundled" >&2; exit 2 ;;
esac
EOF
chmod +x "$dir/kemu"
# the sources it was built from, for crosscheck.sh's table ("-dirty": with
# uncommitted changes)
(cd "$SRC" && git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown) > "$dir/REVISION"
size=$(du -sk "$dir" | cut -f1)
echo "bundle: $dir ($size KiB): run $dir/kemu" >&2

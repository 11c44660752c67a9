#!/usr/bin/env python3
"""Writes the hand-made reproducers of tests/fuzz/regressions-npy/,
regressions-fatbin/ and regressions-call/: inputs of the kinds that readers
of these formats have got wrong (lengths that lie, sizes that overflow or
point past the end, decompression that disagrees with its header, specs of
the wrong types), each of which kemu must now read or refuse with a message.
Run from anywhere; it rewrites those folders' gen-* files and leaves other
files (reproducers the fuzzers found) alone. Standard library only."""
import json
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write(folder, name, data):
    path = os.path.join(HERE, folder, "gen-" + name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)


# ---- .npy -------------------------------------------------------------------
def npy(header, data=b"", version=(1, 0), length=None, pad=True):
    """A .npy file with this header text (padded to 64 bytes unless pad is
    False) and data; `length` overrides the header length field."""
    h = header.encode("latin-1") if isinstance(header, str) else header
    size_field = 2 if version[0] == 1 else 4
    if pad:
        total = 6 + 2 + size_field + len(h) + 1
        h = h + b" " * ((64 - total % 64) % 64) + b"\n"
    n = len(h) if length is None else length
    fmt = "<H" if size_field == 2 else "<I"
    return b"\x93NUMPY" + bytes(version) + struct.pack(fmt, n) + h + data


def npy_cases():
    f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
    yield "magic-only.npy", b"\x93NUMPY"
    yield "magic-bad.npy", b"\x93NUMPZ\x01\x00\x10\x00" + b" " * 16
    yield "version-9.npy", npy(f4 % "(2,)", b"\0" * 8, version=(9, 0))
    yield "header-length-past-end.npy", npy(f4 % "(2,)", b"\0" * 8, length=0xFFFF)
    yield "v2-header-length-4G.npy", npy(f4 % "(2,)", b"\0" * 8, version=(2, 0), length=0xFFFFFFFF)
    yield "header-length-zero.npy", npy(f4 % "(2,)", b"\0" * 8, length=0)
    yield "header-unterminated-dict.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", b"\0" * 8)
    yield "header-nul-bytes.npy", npy("{'descr': '<f4'\0\0\0, 'fortran_order': False, 'shape': (2,), }", b"\0" * 8)
    yield "data-truncated.npy", npy(f4 % "(1000,)", b"\0" * 12)
    yield "data-none.npy", npy(f4 % "(3, 4)")
    yield "shape-product-overflow.npy", npy(f4 % "(4294967296, 4294967296, 16)", b"\0" * 16)
    yield "shape-2-to-62.npy", npy(f4 % "(4611686018427387904,)", b"\0" * 16)
    yield "shape-negative.npy", npy(f4 % "(-1,)", b"\0" * 4)
    yield "shape-40-dims.npy", npy(f4 % ("(" + "1, " * 40 + ")"), b"\0" * 4)
    yield "shape-nested.npy", npy(f4 % "((2,), 3)", b"\0" * 24)
    yield "shape-float.npy", npy(f4 % "(2.5,)", b"\0" * 12)
    yield "shape-digits-1000.npy", npy(f4 % ("(" + "9" * 1000 + ",)"), b"\0" * 4)
    yield "descr-object.npy", npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", b"\0" * 16)
    yield "descr-unicode.npy", npy("{'descr': '<U8', 'fortran_order': False, 'shape': (2,), }", b"\0" * 64)
    yield "descr-structured.npy", npy("{'descr': [('a', '<f4'), ('b', '<i8')], 'fortran_order': False, 'shape': (2,), }",
                                      b"\0" * 24)
    yield "descr-empty.npy", npy("{'descr': '', 'fortran_order': False, 'shape': (2,), }", b"\0" * 8)
    yield "descr-big-endian-f8-truncated.npy", npy("{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }",
                                                   b"\x3f\xf0" + b"\0" * 6)
    yield "fortran-3d-truncated.npy", npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }",
                                          b"\1\0\0\0" * 20)
    yield "fortran-order-string.npy", npy("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (2,), }", b"\0" * 8)
    yield "key-missing-shape.npy", npy("{'descr': '<f4', 'fortran_order': False, }", b"\0" * 8)
    yield "key-duplicate.npy", npy("{'descr': '<f4', 'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                   b"\0" * 16)
    yield "dict-not-a-dict.npy", npy("[1, 2, 3]", b"\0" * 8)
    yield "header-unpadded-odd.npy", npy(f4 % "(2,)", b"\0" * 8, pad=False)
    yield "header-huge-spaces.npy", npy(f4 % "(1,)" + " " * 70000 + "\n", b"\0" * 4, version=(2, 0), pad=False)


# ---- fatbin -----------------------------------------------------------------
FATBIN_MAGIC = 0xBA55ED50
PTX = b"\n.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n\0"


def container(body, version=1, header_size=16, body_size=None):
    if body_size is None:
        body_size = len(body)
    head = struct.pack("<IHHQ", FATBIN_MAGIC, version, header_size, body_size)
    return head + b"\0" * max(0, min(header_size, 256) - 16) + body


def entry(payload, kind=1, header_size=64, payload_size=None, compressed=0, options=0, minor=0, major=8, sm=80,
          name_offset=0, name_length=0, flags=0x11, uncompressed=0, extra=b""):
    if payload_size is None:
        payload_size = len(payload)
    head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, header_size, payload_size, compressed, options, minor,
                       major, sm, name_offset, name_length, flags, 0, uncompressed)
    head += extra
    # pad to the declared header size, unless it lies (then the payload
    # follows the 64 bytes read)
    head += b"\0" * max(0, min(header_size, 256) - len(head))
    return head + payload


def pad8(b):
    return b + b"\0" * ((8 - len(b) % 8) % 8)


def lz4_literals(data):
    """A raw LZ4 block holding `data` as literals only."""
    n = len(data)
    if n < 15:
        return bytes([n << 4]) + data
    out = bytearray([0xF0])
    rest = n - 15
    while rest >= 255:
        out.append(255)
        rest -= 255
    out.append(rest)
    return bytes(out) + data


def zstd_raw_frame(data, content_size=None):
    """A zstd frame with one raw block and a 4-byte content size field."""
    if content_size is None:
        content_size = len(data)
    frame = b"\x28\xb5\x2f\xfd" + bytes([0x80]) + struct.pack("<I", content_size)
    block_header = (len(data) << 3) | 1  # last block, raw
    return frame + struct.pack("<I", block_header)[:3] + data


def fatbin_cases():
    good = entry(pad8(PTX))
    yield "container-only-magic.fatbin", struct.pack("<I", FATBIN_MAGIC)
    yield "container-version-2.fatbin", container(good, version=2)
    yield "container-header-size-8.fatbin", container(good, header_size=8)
    yield "container-header-size-65535.fatbin", container(good, header_size=0xFFFF)
    yield "container-body-past-end.fatbin", container(good, body_size=len(good) + 4096)
    yield "container-body-size-max.fatbin", container(good, body_size=0xFFFFFFFFFFFFFFFF)
    yield "entry-header-size-16.fatbin", container(entry(pad8(PTX), header_size=16))
    yield "entry-header-size-4G.fatbin", container(entry(pad8(PTX), header_size=0xFFFFFFFF))
    yield "entry-payload-past-end.fatbin", container(entry(pad8(PTX), payload_size=len(PTX) + 4096))
    yield "entry-payload-size-wraps.fatbin", container(entry(pad8(PTX), payload_size=0xFFFFFFFFFFFFFFC0))
    yield "entry-kind-0.fatbin", container(entry(pad8(PTX), kind=0))
    yield "entry-trailing-nonzero.fatbin", container(good + b"\x01" * 24)
    yield "entry-name-offset-wild.fatbin", container(entry(pad8(PTX), name_offset=0x7FFFFFF0, name_length=64))
    yield "entry-options-offset-wild.fatbin", container(entry(pad8(PTX), options=0xFFFFFFF0, header_size=80))
    yield "entry-ptx-without-nul.fatbin", container(entry(b".version 8.0\n.target sm_80\n.address_size 64\n" * 3))
    yield "entry-sm-0.fatbin", container(entry(pad8(PTX), sm=0))
    yield "entries-100.fatbin", container(good * 100)
    # LZ4
    block = lz4_literals(PTX)
    yield "lz4-compressed-size-0.fatbin", container(
        entry(pad8(block), flags=0x2011, compressed=0, uncompressed=len(PTX)))
    yield "lz4-compressed-size-past-payload.fatbin", container(
        entry(pad8(block), flags=0x2011, compressed=len(block) + 64, uncompressed=len(PTX)))
    yield "lz4-uncompressed-smaller.fatbin", container(
        entry(pad8(block), flags=0x2011, compressed=len(block), uncompressed=len(PTX) - 10))
    yield "lz4-uncompressed-larger.fatbin", container(
        entry(pad8(block), flags=0x2011, compressed=len(block), uncompressed=len(PTX) + 10))
    yield "lz4-uncompressed-1T.fatbin", container(
        entry(pad8(block), flags=0x2011, compressed=len(block), uncompressed=1 << 40))
    yield "lz4-garbage.fatbin", container(
        entry(pad8(b"\xff" * 40), flags=0x2011, compressed=40, uncompressed=4000))
    yield "lz4-and-zstd.fatbin", container(
        entry(pad8(block), flags=0xA011, compressed=len(block), uncompressed=len(PTX)))
    # zstd
    frame = zstd_raw_frame(PTX)
    yield "zstd-ok-raw-block.fatbin", container(
        entry(pad8(frame), flags=0x8011, compressed=len(frame), uncompressed=len(PTX)))
    yield "zstd-content-size-disagrees.fatbin", container(
        entry(pad8(zstd_raw_frame(PTX, len(PTX) + 100)), flags=0x8011, compressed=len(frame),
              uncompressed=len(PTX) + 100))
    yield "zstd-uncompressed-1G-plus-1.fatbin", container(
        entry(pad8(frame), flags=0x8011, compressed=len(frame), uncompressed=(1 << 30) + 1))
    yield "zstd-truncated-frame.fatbin", container(
        entry(pad8(frame[:20]), flags=0x8011, compressed=20, uncompressed=len(PTX)))
    yield "zstd-bad-magic.fatbin", container(
        entry(pad8(b"\0" * 4 + frame[4:]), flags=0x8011, compressed=len(frame), uncompressed=len(PTX)))
    yield "zstd-is-zlib.fatbin", container(
        entry(pad8(zlib.compress(PTX)), flags=0x8011, compressed=len(zlib.compress(PTX)), uncompressed=len(PTX)))


# ---- call specs -------------------------------------------------------------
def call_cases():
    base = {
        "ptx": "reverse_scale.ptx", "kernel": "reverse_scale", "grid": [4], "block": [256],
        "inputs": [{"name": "x", "dtype": "f32", "shape": [1024], "init": "arange"},
                   {"name": "w", "dtype": "f32", "shape": [256], "init": "fill=0.5"}],
        "outputs": [{"name": "y", "dtype": "f32", "shape": [1024]}],
        "scratch": [{"name": "tile", "dtype": "f32", "shape": [256], "memory_space": "smem"}],
    }

    def spec(**changes):
        s = json.loads(json.dumps(base))
        for k, v in changes.items():
            if v is None:
                s.pop(k, None)
            else:
                s[k] = v
        return json.dumps(s, indent=1)

    yield "empty.json", ""
    yield "not-an-object.json", "[1, 2, 3]"
    yield "truncated.json", spec()[:120]
    yield "nul-inside.json", spec().replace('"arange"', '"ara\\u0000nge"')
    yield "deep-nesting.json", "[" * 20000 + "]" * 20000
    yield "duplicate-key.json", '{"ptx": "reverse_scale.ptx", "ptx": "call_kernels.ptx", "kernel": "reverse_scale"}'
    yield "ptx-missing.json", spec(ptx=None)
    yield "ptx-number.json", spec(ptx=7)
    yield "kernel-and-mpmd.json", spec(mpmd=[{"mesh": {"grid": [1]}, "kernel": "reverse_scale"}])
    yield "kernel-missing.json", spec(kernel=None)
    yield "kernel-unknown.json", spec(kernel="nope")
    yield "grid-zero.json", spec(grid=[0])
    yield "grid-negative.json", spec(grid=[-4])
    yield "grid-2-to-63.json", spec(grid=[9223372036854775807])
    yield "grid-2-to-64.json", spec(grid=[18446744073709551616])
    yield "grid-float.json", spec(grid=[4.5])
    yield "grid-9-dims.json", spec(grid=[1] * 9)
    yield "grid-huge-product.json", spec(grid=[65536, 65536, 65536])
    yield "grid-dynamic-unknown.json", spec(grid=[{"dynamic": "nope"}])
    yield "block-zero.json", spec(block=[0])
    yield "block-2048.json", spec(block=[2048])
    yield "block-4-dims.json", spec(block=[1, 1, 1, 1])
    yield "block-string.json", spec(block="256")
    yield "inputs-not-array.json", spec(inputs={"x": 1})
    yield "input-no-dtype.json", spec(inputs=[{"name": "x", "shape": [1024], "init": "arange"}, base["inputs"][1]])
    yield "input-bad-dtype.json", spec(inputs=[{"name": "x", "dtype": "f128", "shape": [1024], "init": "arange"},
                                             base["inputs"][1]])
    yield "input-shape-negative.json", spec(inputs=[{"name": "x", "dtype": "f32", "shape": [-1], "init": "arange"},
                                                  base["inputs"][1]])
    yield "input-shape-huge.json", spec(inputs=[{"name": "x", "dtype": "f64", "shape": [4294967296, 4294967296],
                                                 "init": "zeros"}, base["inputs"][1]])
    yield "input-shape-zero.json", spec(inputs=[{"name": "x", "dtype": "f32", "shape": [0], "init": "zeros"},
                                              base["inputs"][1]])
    yield "input-init-unknown.json", spec(inputs=[{"name": "x", "dtype": "f32", "shape": [1024], "init": "random"},
                                                base["inputs"][1]])
    yield "input-npy-and-init.json", spec(inputs=[{"name": "x", "npy": "x.npy", "dtype": "f32", "shape": [1024],
                                                   "init": "zeros"}, base["inputs"][1]])
    yield "names-duplicate.json", spec(outputs=[{"name": "x", "dtype": "f32", "shape": [1024]}])
    yield "output-no-shape.json", spec(outputs=[{"name": "y", "dtype": "f32"}])
    yield "alias-out-of-range.json", spec(input_output_aliases=[[5, 0]])
    yield "alias-negative.json", spec(input_output_aliases=[[0, -1]])
    yield "alias-twice.json", spec(input_output_aliases=[[0, 0], [1, 0]])
    yield "alias-shape-differs.json", spec(input_output_aliases=[[1, 0]])
    yield "alias-not-pair.json", spec(input_output_aliases=[[0]])
    yield "scratch-space-unknown.json", spec(scratch=[{"name": "tile", "dtype": "f32", "shape": [256],
                                                       "memory_space": "tmem"}])
    yield "scratch-smem-1G.json", spec(scratch=[{"name": "tile", "dtype": "f32", "shape": [268435456],
                                                "memory_space": "smem"}])
    yield "mesh-and-block.json", spec(mesh={"grid": [2], "num_threads": 1})
    yield "mesh-threads-huge.json", spec(block=None, mesh={"grid": [2], "num_threads": 4294967295})
    yield "mesh-cluster-17.json", spec(block=None, grid=None, mesh={"grid": [17], "cluster": [17]})
    yield "interpret-bad.json", spec(interpret={"uninitialized_memory": "garbage"})
    yield "interpret-number.json", spec(interpret=3)
    yield "scalar-operands-wrong.json", spec(scalar_operands=[{"dtype": "f32", "value": "x"}])
    yield "unknown-field.json", spec(frobnicate=True)
    yield "params-mismatch.json", spec(inputs=[base["inputs"][0]])


def main():
    for name, data in npy_cases():
        write("regressions-npy", name, data)
    for name, data in fatbin_cases():
        write("regressions-fatbin", name, data)
    for name, data in call_cases():
        write("regressions-call", name, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generate a large PTX module for kemu's PTX load benchmark.

The module imitates what nvcc -O3 emits for a kernel template instantiated a
few thousand times (see bench/kernels/many_templates.cu, the CUDA source this
follows): mangled entry names, .maxntid, a demoted .shared tile, ld.param,
cvta.to.global, mad.lo / mul.wide address arithmetic, guarded ld.global.nc
loads, st.shared / ld.shared, bar.sync, per-variant arithmetic (fma, mad,
min/max, setp + selp), st.global, and a few non-inlined .func helpers that
kernels call. The output is deterministic: the same arguments always give
the same bytes.

Usage: gen_large_ptx.py [--kernels N] [--lineinfo] [-o FILE]
"""

import argparse
import struct
import sys

# element type -> (Itanium mangling letter, PTX type, register prefix,
#                  register declaration type, size in bytes, zero literal)
TYPES = [
    ("f", "f32", "%f", ".f32", 4, "0f00000000"),
    ("d", "f64", "%fd", ".f64", 8, "0d0000000000000000"),
    ("i", "s32", "%r", ".b32", 4, "0"),
    ("j", "u32", "%r", ".b32", 4, "0"),
]
TILES = [32, 64, 128, 256]
UNROLLS = [1, 2, 4]
VARIANTS = 64


class Kernel:
    """Emits one kernel body, counting registers per class as it goes."""

    def __init__(self, index, tinfo, tile, unroll, variant, lineinfo):
        self.index = index
        self.mangle, self.ptype, self.vprefix, self.vdecl, self.size, self.zero = tinfo
        self.tile, self.unroll, self.variant = tile, unroll, variant
        self.lineinfo = lineinfo
        self.name = "_Z11tile_kernelI%sLi%dELi%dELi%dEEvPKT_S2_PS0_S0_i" % (
            self.mangle, tile, unroll, variant)
        self.tile_name = "_ZZ11tile_kernelI%sLi%dELi%dELi%dEEvPKT_S2_PS0_S0_iE4tile" % (
            self.mangle, tile, unroll, variant)
        self.counts = {"%p": 0, "%r": 0, "%rd": 0, "%f": 0, "%fd": 0}
        self.lines = []
        self.labels = 0
        self.is_float = self.ptype in ("f32", "f64")
        self.movtype = self.ptype if self.is_float else "b32"

    def reg(self, prefix):
        self.counts[prefix] += 1
        return "%s%d" % (prefix, self.counts[prefix])

    def val(self):
        return self.reg(self.vprefix)

    def label(self):
        self.labels += 2
        return "$L__BB%d_%d" % (self.index, self.labels)

    def emit(self, text):
        self.lines.append("\t" + text)

    def place(self, label):
        self.lines.append("")
        self.lines.append(label + ":")

    def loc(self, line):
        if self.lineinfo:
            self.emit(".loc\t1 %d %d" % (line, 5 + self.variant % 20))

    def combine(self, a, b, scale):
        """The variant's expression of a, b and scale; returns its register."""
        t, v = self.ptype, self.variant % 8
        out = self.val()
        if self.is_float:
            if v == 0:
                self.emit("fma.rn.%s \t%s, %s, %s, %s;" % (t, out, a, scale, b))
            elif v == 1:
                self.emit("fma.rn.%s \t%s, %s, %s, %s;" % (t, out, a, b, scale))
            elif v in (2, 3):
                p = self.reg("%p")
                m = self.val()
                self.emit("setp.%s.%s \t%s, %s, %s;" % ("gt" if v == 2 else "lt", t, p, a, b))
                self.emit("selp.%s \t%s, %s, %s, %s;" % (t, m, a, b, p))
                op = "mul.rn" if v == 2 else "add.rn"
                self.emit("%s.%s \t%s, %s, %s;" % (op, t, out, m, scale))
            elif v == 4:
                sq = self.val()
                prod = self.val()
                self.emit("mul.rn.%s \t%s, %s, %s;" % (t, sq, b, b))
                self.emit("mul.rn.%s \t%s, %s, %s;" % (t, prod, a, a))
                self.emit("fma.rn.%s \t%s, %s, %s, %s;" % (t, out, prod, scale, sq))
            elif v == 5:
                d = self.val()
                self.emit("sub.rn.%s \t%s, %s, %s;" % (t, d, a, b))
                self.emit("fma.rn.%s \t%s, %s, %s, %s;" % (t, out, d, scale, a))
            elif v == 6:
                k = self.val()
                bits = ("0f%08X" if t == "f32" else "0d%016X") % self.float_bits(self.variant)
                self.emit("mul.rn.%s \t%s, %s, %s;" % (t, k, b, bits))
                fused = self.val()
                self.emit("fma.rn.%s \t%s, %s, %s, %s;" % (t, fused, a, scale, k))
                self.emit("sub.rn.%s \t%s, %s, %s;" % (t, out, fused, k))
            else:
                s = self.val()
                c = self.val()
                bits = ("0f%08X" if t == "f32" else "0d%016X") % self.float_bits(self.variant // 8)
                self.emit("add.rn.%s \t%s, %s, %s;" % (t, s, a, b))
                self.emit("add.rn.%s \t%s, %s, %s;" % (t, c, scale, bits))
                self.emit("mul.rn.%s \t%s, %s, %s;" % (t, out, s, c))
        else:
            if v == 0:
                self.emit("mad.lo.%s \t%s, %s, %s, %s;" % (t, out, a, scale, b))
            elif v == 1:
                self.emit("mad.lo.%s \t%s, %s, %s, %s;" % (t, out, a, b, scale))
            elif v in (2, 3):
                m = self.val()
                self.emit("%s.%s \t%s, %s, %s;" % ("max" if v == 2 else "min", t, m, a, b))
                op = "mul.lo" if v == 2 else "add"
                self.emit("%s.%s \t%s, %s, %s;" % (op, t, out, m, scale))
            elif v == 4:
                sq = self.val()
                prod = self.val()
                self.emit("mul.lo.%s \t%s, %s, %s;" % (t, sq, b, b))
                self.emit("mul.lo.%s \t%s, %s, %s;" % (t, prod, a, a))
                self.emit("mad.lo.%s \t%s, %s, %s, %s;" % (t, out, prod, scale, sq))
            elif v == 5:
                d = self.val()
                self.emit("sub.%s \t%s, %s, %s;" % (t, d, a, b))
                self.emit("mad.lo.%s \t%s, %s, %s, %s;" % (t, out, d, scale, a))
            elif v == 6:
                k = self.val()
                self.emit("mul.lo.%s \t%s, %s, %d;" % (t, k, b, self.variant))
                fused = self.val()
                self.emit("mad.lo.%s \t%s, %s, %s, %s;" % (t, fused, a, scale, k))
                self.emit("sub.%s \t%s, %s, %s;" % (t, out, fused, k))
            else:
                s = self.val()
                c = self.val()
                self.emit("add.%s \t%s, %s, %s;" % (t, s, a, b))
                self.emit("add.%s \t%s, %s, %d;" % (t, c, scale, self.variant // 8))
                self.emit("mul.lo.%s \t%s, %s, %s;" % (t, out, s, c))
        return out

    def float_bits(self, n):
        if self.ptype == "f32":
            return struct.unpack("<I", struct.pack("<f", float(n)))[0]
        return struct.unpack("<Q", struct.pack("<d", float(n)))[0]

    def body(self, helper):
        t, size, tile, unroll = self.ptype, self.size, self.tile, self.unroll
        ldt = "f32" if t == "f32" else "f64" if t == "f64" else t
        param = self.name + "_param_%d"
        rd_in, rd_other, rd_out = self.reg("%rd"), self.reg("%rd"), self.reg("%rd")
        scale = self.val()
        n = self.reg("%r")
        self.loc(30)
        self.emit("ld.param.u64 \t%s, [%s];" % (rd_in, param % 0))
        self.emit("ld.param.u64 \t%s, [%s];" % (rd_other, param % 1))
        self.emit("ld.param.u64 \t%s, [%s];" % (rd_out, param % 2))
        self.emit("ld.param.%s \t%s, [%s];" % (ldt if self.is_float else "u32", scale, param % 3))
        self.emit("ld.param.u32 \t%s, [%s];" % (n, param % 4))
        self.loc(33)
        ctaid, tid = self.reg("%r"), self.reg("%r")
        base, idx = self.reg("%r"), self.reg("%r")
        self.emit("mov.u32 \t%s, %%ctaid.x;" % ctaid)
        self.emit("mov.u32 \t%s, %%tid.x;" % tid)
        if self.variant % 3 == 0:
            ntid = self.reg("%r")
            self.emit("mov.u32 \t%s, %%ntid.x;" % ntid)
            self.emit("mul.lo.s32 \t%s, %s, %s;" % (base, ctaid, ntid))
            scaled = self.reg("%r")
            self.emit("mul.lo.s32 \t%s, %s, %d;" % (scaled, base, unroll))
            self.emit("add.s32 \t%s, %s, %s;" % (idx, scaled, tid))
        else:
            shift = (tile * unroll).bit_length() - 1
            self.emit("shl.b32 \t%s, %s, %d;" % (base, ctaid, shift))
            self.emit("add.s32 \t%s, %s, %s;" % (idx, base, tid))
        gin = self.reg("%rd")
        offset = self.reg("%rd")
        addr = self.reg("%rd")
        self.emit("cvta.to.global.u64 \t%s, %s;" % (gin, rd_in))
        self.emit("mul.wide.s32 \t%s, %s, %d;" % (offset, idx, size))
        self.emit("add.s64 \t%s, %s, %s;" % (addr, gin, offset))
        soff, sbase, saddr = self.reg("%r"), self.reg("%r"), self.reg("%r")
        self.emit("shl.b32 \t%s, %s, %d;" % (soff, tid, size.bit_length() - 1))
        self.emit("mov.u32 \t%s, %s;" % (sbase, self.tile_name))
        self.emit("add.s32 \t%s, %s, %s;" % (saddr, sbase, soff))
        guards = []
        self.loc(37)
        for u in range(unroll):
            element = self.val()
            guard = self.reg("%p")
            guards.append(guard)
            if u == 0:
                self.emit("setp.ge.s32 \t%s, %s, %s;" % (guard, idx, n))
            else:
                shifted = self.reg("%r")
                self.emit("add.s32 \t%s, %s, %d;" % (shifted, idx, u * tile))
                self.emit("setp.ge.s32 \t%s, %s, %s;" % (guard, shifted, n))
            self.emit("mov.%s \t%s, %s;" % (self.movtype, element, self.zero))
            skip = self.label()
            self.emit("@%s bra \t%s;" % (guard, skip))
            self.lines.append("")
            disp = "+%d" % (u * tile * size) if u else ""
            self.emit("ld.global.nc.%s \t%s, [%s%s];" % (ldt, element, addr, disp))
            self.place(skip)
            self.emit("st.shared.%s \t[%s%s], %s;" % (ldt, saddr, disp, element))
        self.loc(39)
        self.emit("bar.sync \t0;")
        gother = self.reg("%rd")
        oaddr = self.reg("%rd")
        self.emit("cvta.to.global.u64 \t%s, %s;" % (gother, rd_other))
        self.emit("add.s64 \t%s, %s, %s;" % (oaddr, gother, offset))
        acc = self.val()
        self.emit("mov.%s \t%s, %s;" % (self.movtype, acc, self.zero))
        mask = tile * unroll * size - size
        for u in range(unroll):
            skip = self.label()
            self.emit("@%s bra \t%s;" % (guards[u], skip))
            self.lines.append("")
            self.loc(44)
            nsum, nmask, naddr = self.reg("%r"), self.reg("%r"), self.reg("%r")
            self.emit("add.s32 \t%s, %s, %d;" % (nsum, soff, u * tile * size + size))
            self.emit("and.b32  \t%s, %s, %d;" % (nmask, nsum, mask))
            self.emit("add.s32 \t%s, %s, %s;" % (naddr, sbase, nmask))
            other, neighbour, mine = self.val(), self.val(), self.val()
            disp = "+%d" % (u * tile * size) if u else ""
            self.emit("ld.global.nc.%s \t%s, [%s%s];" % (ldt, other, oaddr, disp))
            self.emit("ld.shared.%s \t%s, [%s];" % (ldt, neighbour, naddr))
            b = self.val()
            self.emit("add%s.%s \t%s, %s, %s;" % (".rn" if self.is_float else "", t, b, neighbour, other))
            self.emit("ld.shared.%s \t%s, [%s%s];" % (ldt, mine, saddr, disp))
            self.loc(46)
            r = self.combine(mine, b, scale)
            self.emit("add%s.%s \t%s, %s, %s;" % (".rn" if self.is_float else "", t, acc, acc, r))
            self.place(skip)
        self.loc(48)
        self.emit("bar.sync \t0;")
        if helper:
            # a non-inlined device function, as nvcc emits for __noinline__
            self.lines.append("\t{ // callseq %d, 0" % self.index)
            self.emit(".param .%s param0;" % ("b32" if size == 4 else "b64"))
            self.emit("st.param.%s \t[param0], %s;" % ("b32" if size == 4 else "b64", acc))
            self.emit(".param .%s retval0;" % ("b32" if size == 4 else "b64"))
            self.emit("call.uni (retval0), \n\t%s, \n\t(\n\tparam0\n\t);" % helper)
            self.emit("ld.param.%s \t%s, [retval0];" % ("b32" if size == 4 else "b64", acc))
            self.lines.append("\t} // callseq %d" % self.index)
        done = self.label()
        self.emit("@%s bra \t%s;" % (guards[0], done))
        self.lines.append("")
        self.loc(51)
        gout, oa = self.reg("%rd"), self.reg("%rd")
        self.emit("cvta.to.global.u64 \t%s, %s;" % (gout, rd_out))
        self.emit("add.s64 \t%s, %s, %s;" % (oa, gout, offset))
        self.emit("st.global.%s \t[%s], %s;" % (ldt, oa, acc))
        self.place(done)
        self.emit("ret;")

    def text(self, helper):
        self.body(helper)
        out = []
        out.append("\t// .globl\t%s" % self.name)
        out.append(".visible .entry %s(" % self.name)
        ptypes = ["u64", "u64", "u64", self.ptype if self.is_float else "u32", "u32"]
        params = ["\t.param .%s %s_param_%d" % (pt, self.name, i) for i, pt in enumerate(ptypes)]
        out.append(",\n".join(params))
        out.append(")")
        out.append(".maxntid %d, 1, 1" % self.tile)
        out.append("{")
        decls = [("%p", ".pred"), ("%r", ".b32"), ("%f", ".f32"), ("%fd", ".f64"), ("%rd", ".b64")]
        for prefix, dtype in decls:
            if self.counts[prefix]:
                out.append("\t.reg %s \t%s<%d>;" % (dtype, prefix, self.counts[prefix] + 1))
        out.append("\t// demoted variable")
        out.append("\t.shared .align %d .b8 %s[%d];" % (self.size, self.tile_name,
                                                         self.tile * self.unroll * self.size))
        out.append("")
        out.extend(self.lines)
        out.append("")
        out.append("}")
        return "\n".join(out) + "\n"


def helper_func(type_index):
    """A small non-inlined device function per element type."""
    mangle, ptype, prefix, decl, size, zero = TYPES[type_index]
    bits = "b32" if size == 4 else "b64"
    name = "_Z13finish_helperI%sET_S0_" % mangle
    if ptype in ("f32", "f64"):
        op = "mul.rn.%s \t%s2, %s1, %s1;" % (ptype, prefix, prefix, prefix)
    else:
        op = "mul.lo.%s \t%s2, %s1, %s1;" % (ptype, prefix, prefix, prefix)
    text = (".func  (.param .%s func_retval0) %s(\n\t.param .%s %s_param_0\n)\n{\n"
            "\t.reg %s \t%s<3>;\n\n"
            "\tld.param.%s \t%s1, [%s_param_0];\n\t%s\n\tst.param.%s \t[func_retval0], %s2;\n\tret;\n\n}\n"
            % (bits, name, bits, name, decl, prefix, bits, prefix, name, op, bits, prefix))
    return name, text


def generate(kernel_count, lineinfo, out):
    out.write("//\n// Generated by bench/gen_large_ptx.py for kemu's PTX load benchmark\n"
              "// (in the style of NVIDIA NVVM output for bench/kernels/many_templates.cu)\n//\n\n")
    out.write(".version 9.0\n.target sm_80\n.address_size 64\n\n")
    helpers = []
    for i in range(len(TYPES)):
        name, text = helper_func(i)
        helpers.append(name)
        out.write(".func  (.param .%s func_retval0) %s(\n\t.param .%s %s_param_0\n)\n;\n"
                  % ("b32" if TYPES[i][4] == 4 else "b64", name,
                     "b32" if TYPES[i][4] == 4 else "b64", name))
    if lineinfo:
        out.write(".file\t1 \"/bench/kernels/many_templates.cu\"\n")
    out.write("\n")
    combos = [(t, tile, u, v) for t in range(len(TYPES)) for tile in TILES
              for u in UNROLLS for v in range(VARIANTS)]
    for index in range(kernel_count):
        t, tile, unroll, variant = combos[index % len(combos)]
        if index >= len(combos):  # past one full set: new variant numbers
            variant += VARIANTS * (index // len(combos))
        kernel = Kernel(index, TYPES[t], tile, unroll, variant, lineinfo)
        helper = helpers[t] if variant % 16 == 15 else None
        out.write(kernel.text(helper))
    for i in range(len(TYPES)):
        out.write("\t// .globl\t%s\n" % helpers[i])
        out.write(helper_func(i)[1])


def generate_immediates(count, out):
    """One kernel that adds `count` distinct 64-bit immediates: each is a
    constant the lowering interns, the case that was quadratic."""
    out.write(".version 8.0\n.target sm_80\n.address_size 64\n\n")
    out.write(".visible .entry many_immediates(.param .u64 out)\n{\n\t.reg .b64 %rd<4>;\n\n")
    out.write("\tld.param.u64 %rd1, [out];\n\tmov.u64 %rd2, 0;\n")
    for i in range(count):
        out.write("\tadd.u64 %%rd2, %%rd2, %d;\n" % (10000000019 * i + 7))
    out.write("\tcvta.to.global.u64 %rd3, %rd1;\n\tst.global.u64 [%rd3], %rd2;\n\tret;\n}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=len(TYPES) * len(TILES) * len(UNROLLS) * VARIANTS,
                        help="number of .entry kernels (default %(default)s)")
    parser.add_argument("--lineinfo", action="store_true", help="emit .file/.loc as nvcc -lineinfo does")
    parser.add_argument("--immediates", type=int, default=0, metavar="N",
                        help="instead: one kernel with N distinct 64-bit immediates (constant interning)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    args = parser.parse_args()
    if args.kernels < 1:
        parser.error("--kernels must be at least 1")

    def write(out):
        if args.immediates > 0:
            generate_immediates(args.immediates, out)
        else:
            generate(args.kernels, args.lineinfo, out)

    if args.output == "-":
        write(sys.stdout)
    else:
        with open(args.output, "w", newline="\n") as f:
            write(f)


if __name__ == "__main__":
    main()

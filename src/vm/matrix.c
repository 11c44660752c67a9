/* Warp-wide matrix operations: wmma.load/store/mma, mma.sync, ldmatrix and
 * stmatrix. The interpreter calls vm_matrix_op once per warp-instruction
 * when every lane of the warp that has not exited is present; the op's
 * fields are laid out by src/bc/lower_matrix.c (see the encoding there).
 * Memory is reached only through vm_resolve, so bounds, alignment and
 * state-space faults are reported like those of ld/st.
 *
 * wmma fragment layout (PTX leaves it unspecified; kemu's choice):
 *   For a fragment of an R x C matrix, U = R*C/32 is the number of
 *   distinct elements per lane. Lane l holds the elements l*U .. l*U+U-1
 *   of the matrix in row-major order (whatever the memory layout), so
 *   element e of lane l is at row (l*U + e%U) / C, column (l*U + e%U) % C.
 *   Element e lives in fragment register e / P, bits (e % P) * width up,
 *   where P elements fit one register (2 for f16/bf16, 4 for s8/u8, 1 for
 *   tf32/f32/s32/f64). Every fragment holds each element exactly once,
 *   except the f16 A and B fragments, whose size PTX fixes at 8 f16x2
 *   registers (16 elements) for every shape: there element e and e+U hold
 *   the same matrix element (2 copies for m16n16k16, 4 for the 16x8/8x16
 *   operands of m32n8k16 and m8n32k16). wmma.load fills every copy and
 *   wmma.mma reads the first one, so element-wise code over fragment.x[]
 *   works. The layout does not depend on .row/.col, so a fragment loaded
 *   row-major may be stored column-major. Each lane loads and stores its
 *   own elements with its own address and stride operands.
 *   Alignment: each lane's matrix start and stride in bytes must be
 *   multiples of min(fragment bytes, 16), the weakest rule that both the
 *   PTX ISA (fragment size) and the CUDA guide (256-bit pointer, 16-byte
 *   ldm) imply; elements must be naturally aligned (vm_resolve).
 *
 * mma.sync and ldmatrix/stmatrix follow the PTX ISA fragment tables
 * (groupID = lane >> 2, threadID_in_group = lane % 4).
 *
 * Arithmetic: D = A*B + C element by element.
 *   f16/bf16/tf32 inputs: as an H200's tensor cores add (tensor_dot and
 *   tensor_tile below: exact products, groups of 16 (4 for tf32) truncated
 *   at a common exponent, each group's sum rounded toward zero to f32; an
 *   f16 D rounded once); NaN or infinite operands as an f32 FMA chain in k
 *   order; NaNs are the canonical 0x7fffffff / 0x7fff. tf32 operands use
 *   the register's f32 bits with the low 13 mantissa bits ignored (a NaN
 *   stays a NaN). fp8 (e4m3/e5m2, wgmma and mma.sync): an f32 FMA chain in
 *   k order (not measured on a GPU). .satfinite on a float D turns +-inf
 *   into +-MAX_NORM.
 *   f64: acc = fma(a_k, b_k, acc) in k order in the instruction's rounding
 *   mode (.rn by default).
 *   s8/u8: the exact sum in 64 bits; without .satfinite it wraps to 32
 *   bits, with .satfinite it is clamped to [INT32_MIN, INT32_MAX].
 * With AVX2 the loops run 8 output columns at a time and give the same
 * bits as the portable ones (KEMU_TENSOR_PORTABLE=1 selects those; see
 * docs/performance.md, "Tensor cores, round two"). */
#include "vm/vm_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define MATRIX_MAX_ELEMENTS 512 /* the largest operand: 32x16 or 16x32 */

/* One operand of a matrix instruction as the lanes hold it. */
typedef struct fragment_shape {
    unsigned rows, cols;     /* of the matrix */
    int type;                /* ptx_type of its elements */
    unsigned element_size;   /* bytes per element, in memory and in registers */
    unsigned per_register;   /* elements per register */
    unsigned registers;      /* registers per lane */
    unsigned unique;         /* distinct elements per lane: rows * cols / 32 */
    int mma_sync;            /* PTX mma.sync layout, else kemu's wmma layout */
    int which;               /* MATRIX_A ... MATRIX_D */
} fragment_shape;

static unsigned element_size_of(int t)
{
    switch (t) {
    case PTX_T_S8: case PTX_T_U8: case PTX_T_E4M3: case PTX_T_E5M2: return 1;
    case PTX_T_F16: case PTX_T_BF16: case PTX_T_B16: return 2;
    case PTX_T_F64: return 8;
    default: return 4;
    }
}

static void fragment_init(fragment_shape *s, int which, unsigned rows, unsigned cols, int type,
                          unsigned registers, int mma_sync)
{
    s->rows = rows;
    s->cols = cols;
    s->type = type;
    s->element_size = element_size_of(type);
    s->per_register = type == PTX_T_F64 ? 1 : 4 / s->element_size;
    s->registers = registers;
    s->unique = rows * cols / 32;
    s->mma_sync = mma_sync;
    s->which = which;
}

/* Row and column of element e (0 .. registers*per_register-1) of lane l. */
static void fragment_coordinates(const fragment_shape *s, unsigned l, unsigned e, unsigned *row, unsigned *col)
{
    if (!s->mma_sync) {
        unsigned index = l * s->unique + e % s->unique;
        *row = index / s->cols;
        *col = index % s->cols;
        return;
    }
    /* PTX ISA "Matrix Fragments for mma.mMnNkK": lanes form 8 groups of 4;
     * each lane of a group holds p consecutive k elements per 32 bits */
    unsigned g = l >> 2, q = l & 3;
    unsigned p = s->element_size >= 4 ? 1 : 4 / s->element_size;
    switch (s->which) {
    case MATRIX_A:
        if (s->rows == 16) {
            *row = g + 8 * ((e / p) & 1);
            *col = p * q + e % p + 4 * p * (e / (2 * p));
        } else {
            *row = g;
            *col = p * q + e % p + 4 * p * (e / p);
        }
        break;
    case MATRIX_B:
        *row = p * q + e % p + 4 * p * (e / p);
        *col = g;
        break;
    default: /* C and D */
        if (s->rows == 16) {
            *row = g + 8 * ((e >> 1) & 1);
            *col = 2 * q + (e & 1);
        } else {
            *row = g;
            *col = 2 * q + e;
        }
        break;
    }
}

/* In the mma.sync layout, row * cols + col of element e of lane l (as
 * fragment_coordinates gives them) is part[l] + mma_offset(e), part as
 * mma_lane_parts fills it (groupID g = l / 4, threadID q = l % 4). */
static void mma_lane_parts(const fragment_shape *s, unsigned part[VM_WARP])
{
    unsigned p = s->per_register, cols = s->cols; /* elements per 32 bits */
    switch (s->which) {
    case MATRIX_A:
        for (unsigned l = 0; l < VM_WARP; l++)
            part[l] = (l >> 2) * cols + p * (l & 3);
        break;
    case MATRIX_B:
        for (unsigned l = 0; l < VM_WARP; l++)
            part[l] = p * (l & 3) * cols + (l >> 2);
        break;
    default:
        for (unsigned l = 0; l < VM_WARP; l++)
            part[l] = (l >> 2) * cols + 2 * (l & 3);
        break;
    }
}

static unsigned mma_offset(const fragment_shape *s, unsigned e)
{
    /* p, elements per 32 bits, is 1, 2 or 4: shifts and masks, no division */
    unsigned p = s->per_register, lg = (unsigned)__builtin_ctz(p);
    unsigned ep = e >> lg, eq = e & (p - 1);
    switch (s->which) {
    case MATRIX_A:
        return s->rows == 16 ? 8 * (ep & 1) * s->cols + eq + 4 * p * (ep >> 1) : eq + 4 * p * ep;
    case MATRIX_B: return (eq + 4 * p * ep) * s->cols;
    default: return s->rows == 16 ? 8 * ((e >> 1) & 1) * s->cols + (e & 1) : e;
    }
}

/* Element j of a register value. */
static uint64_t register_element(const fragment_shape *s, uint64_t v, unsigned j)
{
    if (s->element_size == 8)
        return v;
    unsigned bits = s->element_size * 8;
    return (v >> (j * bits)) & ((1ull << bits) - 1);
}

static uint32_t matrix_shape_m(const bc_op *op) { return 1u << (op->src_size & 15); }
static uint32_t matrix_shape_n(const bc_op *op) { return 1u << ((op->src_size >> 4) & 15); }
static uint32_t matrix_shape_k(const bc_op *op) { return 1u << ((op->src_size >> 8) & 15); }

/* wmma.load.{a,b,c} and wmma.store.d: every lane moves its own elements. */
static int wmma_memory(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    int is_store = (op->mode & 15) == MATRIX_WMMA_STORE;
    int which = (op->mode >> 4) & 3;
    unsigned M = matrix_shape_m(op), N = matrix_shape_n(op), K = matrix_shape_k(op);
    unsigned rows = which == MATRIX_A ? M : which == MATRIX_B ? K : M;
    unsigned cols = which == MATRIX_A ? K : N;
    const uint32_t *list = f->fn->lists + op->list;
    unsigned nregs = (unsigned)op->n - 1;
    fragment_shape s;
    fragment_init(&s, which, rows, cols, op->type, nregs, 0);
    unsigned fragment_bytes = nregs * (op->type == PTX_T_F64 ? 8u : 4u);
    unsigned align = fragment_bytes < 16 ? fragment_bytes : 16;
    int column_major = (op->mode & MATRIX_COLUMN_MAJOR) != 0;
    uint64_t *R = f->regs;
    const uint64_t *base = SLOT(R, op->a), *stride = SLOT(R, list[nregs]);
    uint64_t addr[VM_WARP] = {0}, first_at[VM_WARP] = {0};
    uint8_t *ptrs[VM_WARP];
    /* each lane's distinct elements, in matrix order */
    uint8_t bytes[VM_WARP][128];
    unsigned size = s.element_size, run = s.unique * size, piece = run < align ? run : align;
    int in_rows = !column_major && cols % s.unique == 0; /* each lane's elements lie in one row */
    /* align and cols are powers of two in every wmma shape: masks and
     * shifts instead of a division per lane (the general forms stay) */
    int align_pow2 = !(align & (align - 1)), cols_pow2 = cols && !(cols & (cols - 1));
    unsigned cols_shift = cols_pow2 ? (unsigned)__builtin_ctz(cols) : 0;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        unsigned l = (unsigned)__builtin_ctz(mm);
        uint64_t start = base[l] + (uint64_t)op->imm;
        if (op->flags & BC_F_ADDR32)
            start = (uint32_t)start; /* a 32-bit address register: the sum wraps */
        uint64_t leading = (uint32_t)stride[l];
        if (align_pow2 ? ((start | leading * size) & (align - 1)) != 0 : (start % align || (leading * size) % align))
            return vm_fault_at(b, w, f, pc, l, 716,
                               "misaligned address: wmma.%s of matrix %c at 0x%llx with stride %llu: the matrix "
                               "start and the stride in bytes must be multiples of %u",
                               is_store ? "store" : "load", "abcd"[which], (unsigned long long)start,
                               (unsigned long long)leading, align);
        if (is_store)
            for (unsigned e = 0; e < s.unique; e++) {
                uint64_t v = register_element(&s, SLOT(R, list[e / s.per_register])[l], e % s.per_register);
                if (size == 4) {
                    uint32_t v32 = (uint32_t)v;
                    memcpy(bytes[l] + e * 4, &v32, 4);
                } else
                    memcpy(bytes[l] + e * size, &v, size);
            }
        if (in_rows) {
            unsigned first = l * s.unique;
            unsigned row = cols_pow2 ? first >> cols_shift : first / cols, col = first - row * cols;
            first_at[l] = start + ((uint64_t)row * leading + col) * size;
            continue;
        }
        for (unsigned e = 0; e < s.unique; e++) {
            unsigned row, col;
            fragment_coordinates(&s, l, e, &row, &col);
            uint64_t offset = column_major ? (uint64_t)col * leading + row : (uint64_t)row * leading + col;
            addr[l] = start + offset * size;
            if (vm_resolve(b, w, f, pc, op->mode2, 1u << l, addr, 0, size, is_store, ptrs))
                return -1;
            if (is_store)
                memcpy(ptrs[l], bytes[l] + e * size, size);
            else
                memcpy(bytes[l] + e * size, ptrs[l], size);
        }
    }
    if (in_rows) /* consecutive in one row of memory: the warp moves them in aligned pieces */
        for (unsigned o = 0; o < run; o += piece) {
            LANES(m, addr[l] = first_at[l] + o);
            if (vm_resolve(b, w, f, pc, op->mode2, m, addr, 0, piece, is_store, ptrs))
                return -1;
            if (is_store)
                LANES(m, memcpy(ptrs[l], bytes[l] + o, piece));
            else if (piece == 16)
                LANES(m, memcpy(bytes[l] + o, ptrs[l], 16));
            else
                LANES(m, memcpy(bytes[l] + o, ptrs[l], piece));
        }
    if (is_store)
        return 0;
    for (unsigned r = 0; r < nregs; r++) {
        uint64_t *v = SLOT(R, list[r]);
        switch (size) {
        case 2: {
            unsigned lo_at = ((2 * r) % s.unique) * 2, hi_at = ((2 * r + 1) % s.unique) * 2;
            if (hi_at == lo_at + 2) { /* the pair lies together */
                LANES(m, {
                    uint32_t x;
                    memcpy(&x, bytes[l] + lo_at, 4);
                    v[l] = x;
                });
                break;
            }
            LANES(m, {
                uint16_t lo, hi;
                memcpy(&lo, bytes[l] + lo_at, 2);
                memcpy(&hi, bytes[l] + hi_at, 2);
                v[l] = (uint32_t)lo | (uint32_t)hi << 16;
            });
            break;
        }
        case 4: {
            unsigned at = (r % s.unique) * 4;
            LANES(m, {
                uint32_t x;
                memcpy(&x, bytes[l] + at, 4);
                v[l] = x;
            });
            break;
        }
        case 1: { /* four to a register */
            unsigned at[4];
            for (unsigned h = 0; h < 4; h++)
                at[h] = (r * 4 + h) % s.unique;
            LANES(m, {
                uint32_t word = 0;
                for (unsigned h = 0; h < 4; h++)
                    word |= (uint32_t)bytes[l][at[h]] << (8 * h);
                v[l] = word;
            });
            break;
        }
        default: {
            unsigned at[8];
            for (unsigned h = 0; h < s.per_register && h < 8; h++)
                at[h] = ((r * s.per_register + h) % s.unique) * size;
            LANES(m, {
                uint64_t word = 0;
                for (unsigned h = 0; h < s.per_register && h < 8; h++) {
                    uint64_t bits = 0;
                    memcpy(&bits, bytes[l] + at[h], size);
                    word |= bits << (h * size * 8);
                }
                v[l] = word;
            });
            break;
        }
        }
    }
    return 0;
}

/* Reads the matrix an operand's fragments hold, from every lane. In kemu's
 * wmma layout lane l's distinct elements are the matrix's l*U .. l*U+U-1
 * in row-major order, so they are copied without coordinates. */
static void gather(const fragment_shape *s, const uint64_t *regs, const uint32_t *slots, uint64_t *matrix)
{
    if (!s->mma_sync) {
        unsigned U = s->unique, P = s->per_register, bits = s->element_size * 8;
        if (P == 1 && s->element_size == 8)
            for (unsigned e = 0; e < U; e++) {
                const uint64_t *v = SLOT(regs, slots[e]);
                for (unsigned l = 0; l < VM_WARP; l++)
                    matrix[l * U + e] = v[l];
            }
        else if (P == 1)
            for (unsigned e = 0; e < U; e++) {
                const uint64_t *v = SLOT(regs, slots[e]);
                for (unsigned l = 0; l < VM_WARP; l++)
                    matrix[l * U + e] = (uint32_t)v[l];
            }
        else if (P == 2 && U % 2 == 0 && U <= 16) { /* 16-bit pairs: lane by lane, both halves of a register */
            const uint64_t *v[8];
            for (unsigned r = 0; r < U / 2; r++)
                v[r] = SLOT(regs, slots[r]);
            for (unsigned l = 0; l < VM_WARP; l++)
                for (unsigned r = 0; r < U / 2; r++) {
                    matrix[l * U + 2 * r] = v[r][l] & 0xffff;
                    matrix[l * U + 2 * r + 1] = (v[r][l] >> 16) & 0xffff;
                }
        } else
            for (unsigned e = 0; e < U; e++) {
                const uint64_t *v = SLOT(regs, slots[e / P]);
                unsigned shift = (e % P) * bits;
                uint64_t mask = (1ull << bits) - 1;
                for (unsigned l = 0; l < VM_WARP; l++)
                    matrix[l * U + e] = (v[l] >> shift) & mask;
            }
        return;
    }
    unsigned elements = s->registers * s->per_register, P = s->per_register, lane_part[VM_WARP];
    unsigned bits = s->element_size * 8;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    mma_lane_parts(s, lane_part);
    unsigned plg = (unsigned)__builtin_ctz(P); /* P is 1, 2 or 4 */
    for (unsigned e = 0; e < elements; e++) {
        const uint64_t *v = SLOT(regs, slots[e >> plg]);
        unsigned at = mma_offset(s, e), shift = bits >= 64 ? 0 : (e & (P - 1)) * bits;
        for (unsigned l = 0; l < VM_WARP; l++)
            matrix[lane_part[l] + at] = (v[l] >> shift) & mask; /* register_element */
    }
}

/* Writes a matrix into the fragments of the lanes in m. */
static void scatter(const fragment_shape *s, uint64_t *regs, const uint32_t *slots, const uint64_t *matrix,
                    uint32_t m)
{
    if (!s->mma_sync) { /* element e of lane l: the matrix's l*U + e % U */
        unsigned U = s->unique, P = s->per_register, bits = s->element_size * 8;
        for (unsigned r = 0; r < s->registers; r++) {
            uint64_t *v = SLOT(regs, slots[r]);
            if (P == 1) {
                unsigned at = r % U;
                LANES(m, v[l] = matrix[l * U + at]);
            } else {
                unsigned at[8];
                for (unsigned h = 0; h < P && h < 8; h++)
                    at[h] = (r * P + h) % U;
                LANES(m, {
                    uint64_t word = 0;
                    for (unsigned h = 0; h < P && h < 8; h++)
                        word |= matrix[l * U + at[h]] << (h * bits);
                    v[l] = word;
                });
            }
        }
        return;
    }
    unsigned lane_part[VM_WARP], P = s->per_register, bits = s->element_size * 8;
    mma_lane_parts(s, lane_part);
    for (unsigned r = 0; r < s->registers; r++) {
        uint64_t *v = SLOT(regs, slots[r]);
        if (P == 1) {
            unsigned at = mma_offset(s, r);
            LANES(m, v[l] = matrix[lane_part[l] + at]);
            continue;
        }
        unsigned at[8];
        for (unsigned h = 0; h < P; h++)
            at[h] = mma_offset(s, r * P + h);
        LANES(m, {
            uint64_t word = 0;
            for (unsigned h = 0; h < P; h++)
                word |= matrix[lane_part[l] + at[h]] << (h * bits);
            v[l] = word;
        });
    }

}

/* An 8-bit float (OCP e4m3 or e5m2) as f32 (exact). */
static float fp8_to_f32(int type, uint8_t v)
{
    if (type == PTX_T_E5M2) /* the top byte of an f16 */
        return vm_f16_to_f32((uint16_t)(v << 8));
    /* e4m3: bias 7, no infinities, S.1111.111 is NaN */
    unsigned e = (v >> 3) & 15, m = v & 7;
    float x;
    if (e == 15 && m == 7)
        return vm_f32_from_bits(VM_F32_CANONICAL_NAN);
    if (e == 0)
        x = ldexpf((float)m, -9);
    else
        x = ldexpf((float)(8 + m), (int)e - 10);
    return (v & 0x80) ? -x : x;
}

/* A multiplicand or accumulator element as f32 (exact for every type). */
static float element_to_f32(int type, uint64_t bits)
{
    switch (type) {
    case PTX_T_E4M3: case PTX_T_E5M2: return fp8_to_f32(type, (uint8_t)bits);
    case PTX_T_F16: return vm_f16_to_f32((uint16_t)bits);
    case PTX_T_BF16: return vm_bf16_to_f32((uint16_t)bits);
    case PTX_T_TF32: {
        float x = vm_f32_from_bits((uint32_t)bits);
        return x != x ? vm_f32_from_bits(VM_F32_CANONICAL_NAN) : vm_f32_from_bits((uint32_t)bits & 0xffffe000u);
    }
    default: return vm_f32_from_bits((uint32_t)bits);
    }
}

static int64_t element_to_int(int type, uint64_t bits)
{
    switch (type) {
    case PTX_T_S8: return (int8_t)(uint8_t)bits;
    case PTX_T_U8: return (uint8_t)bits;
    default: return (int32_t)(uint32_t)bits;
    }
}

/* ---- the tensor cores' floating-point accumulation ---------------------------
 *
 * A tensor core does not round each product-add as an FMA chain would. What
 * an H200 computes for D = A*B + C with f16, bf16 and tf32 inputs, fitted to
 * its outputs bit for bit (mma.sync m16n8k16 and m16n8k8 f16, wmma
 * m16n16k16 f16 and bf16, wmma m16n16k8 tf32, wgmma m64n64k16 f16, f32 and
 * f16 accumulators: 48 input sets with wide exponent ranges, sign mixes and
 * cancellation; every element matched, against 52-64% for an exactly
 * rounded sum; docs/semantics.md, "Tensor-core arithmetic"):
 *  - products are exact; each has the nominal exponent ea + eb, the sum of
 *    its operands' exponents (a subnormal's being its format's minimum),
 *    whatever the product of the significands (in [1, 4));
 *  - k runs in consecutive groups of G products (16 for f16 and bf16, or K
 *    when K is smaller; 4 for tf32); the accumulator (C, then each group's
 *    result) joins the first group as one more term;
 *  - in a group, every nonzero term is truncated toward zero (in sign and
 *    magnitude) to a multiple of 2^(emax - 25), emax the largest nominal
 *    exponent of the group's nonzero terms (the accumulator's is its f32
 *    exponent); the truncated terms are summed exactly;
 *  - the sum is rounded toward zero to f32; an f16 result is rounded once,
 *    to nearest even, from the exact sum of the last group.
 * Not measured, kept as IEEE arithmetic would have it: NaN and infinite
 * operands, a group of zeros only (its sign), overflow (toward zero: the
 * largest finite value), fp8 inputs (an FMA chain, as before). */

/* The f16/bf16/tf32 operands of the model, decoded once per instruction.
 * Element (i, k) of A is at i*K + k (rows in k order) and element (k, j) of
 * B at tensor_b_at(k, j, K): B in blocks of 8 columns, each block K rows of
 * 8, so that the tile loop below reads 8 columns of B with one load, each
 * k at a constant offset. Each element is its
 * bits in the format (raw, the sign flipped by `flip`), and a signed
 * integer significand m and nominal exponent x with value m * 2^(x - frac)
 * (a subnormal's x: the format's minimum), x being TENSOR_ZERO for a zero
 * (m = 0) and TENSOR_NONFINITE for an infinity or NaN. */
#define TENSOR_ZERO INT16_MIN
#define TENSOR_NONFINITE INT16_MAX
static inline unsigned tensor_b_at(unsigned k, unsigned j, unsigned K)
{
    return ((j >> 3) * K + k) * 8 + (j & 7);
}

/* Elements of a K x N B in that layout (N rounded up to 8). */
#define TENSOR_B_SIZE(K, N) ((K) * (((N) + 7) & ~7u))

typedef struct tensor_operand {
    const uint32_t *raw;
    uint32_t flip;
    int type;
    int32_t *m, *x;
    int nonfinite; /* any element is an infinity or NaN (tensor_decode_all) */
} tensor_operand;

/* Fraction bits of a format's significand. */
static int format_frac(int type)
{
    switch (type) {
    case PTX_T_BF16: return 7;
    default: return 10; /* f16, tf32 */
    }
}


/* One element's bits v as m and x: the exponent field (v >> es) & em, the
 * fraction (v >> fs) & fm, the sign bit sb, the bias. */
static inline void tensor_decode_bits(uint32_t v, int es, uint32_t em, int fs, uint32_t fm, int sb, int bias,
                                      int32_t *m, int32_t *x)
{
    uint32_t e = (v >> es) & em, fraction = (v >> fs) & fm;
    int32_t mag = (int32_t)(e ? fraction | (fm + 1) : fraction);
    int32_t nominal = e ? (int32_t)e - bias : 1 - bias;
    if (e == em) {
        mag = 0;
        nominal = TENSOR_NONFINITE;
    } else if (!mag)
        nominal = TENSOR_ZERO;
    *m = (v >> sb) & 1 ? -mag : mag;
    *x = nominal;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* tensor_decode_bits for the 8 elements of v, into *m and *x; returns the
 * lanes that hold an infinity or NaN (all ones). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
tensor_decode8v(__m256i v, int es, uint32_t em, int fs, uint32_t fm, int sb, int bias, __m256i *m, __m256i *x)
{
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(v, es), _mm256_set1_epi32((int)em));
    __m256i fraction = _mm256_and_si256(_mm256_srli_epi32(v, fs), _mm256_set1_epi32((int)fm));
    __m256i subnormal = _mm256_cmpeq_epi32(e, _mm256_setzero_si256());
    __m256i mag = _mm256_or_si256(fraction, _mm256_andnot_si256(subnormal, _mm256_set1_epi32((int)fm + 1)));
    __m256i nominal = _mm256_blendv_epi8(_mm256_sub_epi32(e, _mm256_set1_epi32(bias)),
                                         _mm256_set1_epi32(1 - bias), subnormal);
    __m256i nonfinite = _mm256_cmpeq_epi32(e, _mm256_set1_epi32((int)em));
    mag = _mm256_andnot_si256(nonfinite, mag);
    nominal = _mm256_blendv_epi8(nominal, _mm256_set1_epi32(TENSOR_ZERO),
                                 _mm256_cmpeq_epi32(mag, _mm256_setzero_si256()));
    nominal = _mm256_blendv_epi8(nominal, _mm256_set1_epi32(TENSOR_NONFINITE), nonfinite);
    __m256i neg = _mm256_srai_epi32(_mm256_slli_epi32(v, 31 - sb), 31);
    *m = _mm256_sub_epi32(_mm256_xor_si256(mag, neg), neg);
    *x = nominal;
    return nonfinite;
}

/* The same from memory (the sign flipped by flip); returns a mask of the
 * nonfinite elements. */
__attribute__((target("avx2"))) static inline int tensor_decode8(const uint32_t *r, uint32_t flip, int es,
                                                                 uint32_t em, int fs, uint32_t fm, int sb, int bias,
                                                                 int32_t *m, int32_t *x)
{
    __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)r), _mm256_set1_epi32((int)flip)), vm, vx;
    __m256i nonfinite = tensor_decode8v(v, es, em, fs, fm, sb, bias, &vm, &vx);
    _mm256_storeu_si256((__m256i *)m, vm);
    _mm256_storeu_si256((__m256i *)x, vx);
    return _mm256_movemask_ps(_mm256_castsi256_ps(nonfinite));
}

__attribute__((target("avx2"))) static int tensor_decode_avx2(tensor_operand *o, unsigned n)
{
    const uint32_t *r = o->raw;
    uint32_t flip = o->flip;
    int any = 0;
    switch (o->type) {
    case PTX_T_F16:
        for (unsigned e = 0; e < n; e += 8)
            any |= tensor_decode8(r + e, flip, 10, 31, 0, 0x3ff, 15, 15, o->m + e, o->x + e);
        break;
    case PTX_T_BF16:
        for (unsigned e = 0; e < n; e += 8)
            any |= tensor_decode8(r + e, flip, 7, 255, 0, 0x7f, 15, 127, o->m + e, o->x + e);
        break;
    default:
        for (unsigned e = 0; e < n; e += 8)
            any |= tensor_decode8(r + e, flip, 23, 255, 13, 0x3ff, 31, 127, o->m + e, o->x + e);
        break;
    }
    return any != 0;
}
#endif

static int tensor_use_avx2(void);

/* The n elements of an operand: m, x and nonfinite from raw. */
static void tensor_decode_all(tensor_operand *o, unsigned n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (n % 8 == 0 && tensor_use_avx2()) {
        o->nonfinite = tensor_decode_avx2(o, n);
        return;
    }
#endif
    const uint32_t *r = o->raw;
    uint32_t flip = o->flip;
    for (unsigned e = 0; e < n; e++)
        switch (o->type) {
        case PTX_T_F16:
            tensor_decode_bits(r[e] ^ flip, 10, 31, 0, 0x3ff, 15, 15, &o->m[e], &o->x[e]);
            break;
        case PTX_T_BF16:
            tensor_decode_bits(r[e] ^ flip, 7, 255, 0, 0x7f, 15, 127, &o->m[e], &o->x[e]);
            break;
        default: /* tf32: the f32 bits, the low 13 fraction bits ignored */
            tensor_decode_bits(r[e] ^ flip, 23, 255, 13, 0x3ff, 31, 127, &o->m[e], &o->x[e]);
            break;
        }
    int any = 0;
    for (unsigned e = 0; e < n; e++)
        any |= o->x[e] == TENSOR_NONFINITE;
    o->nonfinite = any;
}

/* An element's exact value (for the IEEE paths). */
static inline float tensor_value(const tensor_operand *o, unsigned e)
{
    return element_to_f32(o->type, o->raw[e] ^ o->flip);
}

static void nonfinite_rows(const int32_t *x, unsigned rows, unsigned K, uint8_t *bad)
{
    for (unsigned r = 0; r < rows; r++) {
        int any = 0;
        for (unsigned k = 0; k < K; k++)
            any |= x[r * K + k] == TENSOR_NONFINITE;
        bad[r] = (uint8_t)any;
    }
}

static void nonfinite_columns(const int32_t *x, unsigned K, unsigned N, uint8_t *bad)
{
    memset(bad, 0, N);
    for (unsigned k = 0; k < K; k++)
        for (unsigned j = 0; j < N; j++)
            bad[j] |= x[tensor_b_at(k, j, K)] == TENSOR_NONFINITE;
}

/* 2^e as a double, e in [-1022, 1023] */
static double tensor_pow2(int e)
{
    return vm_f64_from_bits((uint64_t)(e + 1023) << 52);
}

/* G, the products per group, or 0 where the model was not measured. At most
 * 16: the tile loop sums 8 terms below 2^27 (and the accumulator, below
 * 2^26) in an int32. */
static unsigned tensor_group(int atype, unsigned K)
{
    switch (atype) {
    case PTX_T_F16: case PTX_T_BF16: return K < 16 ? K : 16;
    case PTX_T_TF32: return 4;
    default: return 0;
    }
}

/* A term in units of 2^q (q = emax - 25): the significand product p,
 * whose unit lies `shift` bits above 2^q when its nominal exponent is emax,
 * d = emax - its nominal exponent, truncated toward zero in magnitude. For
 * a product of two significands of frac_a and frac_b fraction bits,
 * shift = 25 - frac_a - frac_b (the term stays below 2^27); for the f32
 * accumulator, 2. Exactly trunc(value * 2^-q). */
static inline int32_t tensor_term(int32_t p, int d, int shift)
{
    uint32_t mag = (uint32_t)(p < 0 ? -p : p) << shift;
    mag = d > 31 ? 0 : mag >> d;
    return p < 0 ? -(int32_t)mag : (int32_t)mag;
}

/* below this, a group held only zeros (a zero operand's exponent is
 * TENSOR_ZERO, which no real exponent sum comes near) */
#define TENSOR_NO_TERM (INT16_MIN / 2)

/* One element (i, j): sum over k of A(i,k) * B(k,j) plus acc, in groups of
 * G as above (nonfinite: row i of A or column j of B holds an infinity or
 * NaN). With to_f16, returns the f16 bits of the result in *h. */
static float tensor_dot(const tensor_operand *A, const tensor_operand *B, unsigned i, unsigned j,
                        unsigned K, unsigned G, int shift, float acc, int nonfinite, int to_f16, uint16_t *h)
{
    const int32_t *ma = A->m + i * K, *xa = A->x + i * K, *mb = B->m + tensor_b_at(0, j, K),
                  *xb = B->x + tensor_b_at(0, j, K); /* row k at k * 8 */
    if (nonfinite || !isfinite(acc)) { /* IEEE: NaN and infinity as an FMA chain gives them */
        for (unsigned k = 0; k < K; k++)
            acc = fmaf(tensor_value(A, i * K + k), tensor_value(B, tensor_b_at(k, j, K)), acc);
        if (to_f16)
            *h = vm_f32_to_f16_flags(acc, VM_RN, 0);
        return acc;
    }
    for (unsigned k0 = 0; k0 < K; k0 += G) {
        unsigned n = k0 + G < K ? G : K - k0;
        int32_t am, ax;
        tensor_decode_bits(vm_f32_bits(acc), 23, 255, 0, 0x7fffff, 31, 127, &am, &ax); /* an f32 */
        int emax = ax == TENSOR_ZERO ? INT_MIN : ax;
        for (unsigned k = k0; k < k0 + n; k++) {
            int e = xa[k] + xb[k * 8];
            emax = e > emax ? e : emax;
        }
        if (emax < TENSOR_NO_TERM) { /* only zeros: IEEE's sign of zero */
            for (unsigned k = k0; k < k0 + n; k++)
                acc = fmaf(tensor_value(A, i * K + k), tensor_value(B, tensor_b_at(k, j, K)), acc);
            continue;
        }
        int64_t sum = tensor_term(am, emax - ax, 2);
        for (unsigned k = k0; k < k0 + n; k++)
            sum += tensor_term(ma[k] * mb[k * 8], emax - (xa[k] + xb[k * 8]), shift);
        /* q = emax - 25 lies within -277..229: the scaling is exact */
        double exact = (double)sum * tensor_pow2(emax - 25);
        if (to_f16 && k0 + n == K) {
            *h = vm_f64_to_f16(exact, VM_RN);
            return vm_f16_to_f32(*h);
        }
        acc = vm_f64_to_f32(exact, VM_RZ);
    }
    if (to_f16)
        *h = vm_f32_to_f16_flags(acc, VM_RN, 0);
    return acc;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The term of tensor_term for 8 lanes (vpsrlvd shifts a count above 31 to
 * zero; d is never negative where the term counts). */
__attribute__((target("avx2"))) static inline __m256i tensor_term8(__m256i p, __m256i d, __m128i shift)
{
    __m256i mag = _mm256_srlv_epi32(_mm256_sll_epi32(_mm256_abs_epi32(p), shift), d);
    return _mm256_sign_epi32(mag, p);
}

/* 4 sums s0 + s1 (int32 lanes) times 2^q (q: int32 lanes) as doubles: exact,
 * the sums lying below 2^32 and q within -277..229. */
__attribute__((target("avx2"))) static inline __m256d tensor_exact4(__m128i s0, __m128i s1, __m128i q)
{
    __m256i scale = _mm256_slli_epi64(_mm256_add_epi64(_mm256_cvtepi32_epi64(q), _mm256_set1_epi64x(1023)), 52);
    __m256d sum = _mm256_add_pd(_mm256_cvtepi32_pd(s0), _mm256_cvtepi32_pd(s1));
    return _mm256_mul_pd(sum, _mm256_castsi256_pd(scale));
}

/* 8 group sums (s0 + s1 in units of 2^(emax - 25)) rounded toward zero to
 * f32, as vm_f64_to_f32(.., VM_RZ) does: the nearest f32, one step toward
 * zero where it lies farther out (an overflow to infinity steps back to
 * the largest finite value). */
__attribute__((target("avx2"))) static inline __m256 tensor_round8(__m256i s0, __m256i s1, __m256i emax)
{
    const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i q = _mm256_sub_epi32(emax, _mm256_set1_epi32(25));
    __m256d x[2];
    __m128 f[2];
    __m128i farther[2];
    for (int half = 0; half < 2; half++) {
        __m128i a = half ? _mm256_extracti128_si256(s0, 1) : _mm256_castsi256_si128(s0);
        __m128i b = half ? _mm256_extracti128_si256(s1, 1) : _mm256_castsi256_si128(s1);
        __m128i e = half ? _mm256_extracti128_si256(q, 1) : _mm256_castsi256_si128(q);
        x[half] = tensor_exact4(a, b, e);
        f[half] = _mm256_cvtpd_ps(x[half]);
        __m256d back = _mm256_cvtps_pd(f[half]);
        __m256d out = _mm256_cmp_pd(_mm256_and_pd(back, abs_mask), _mm256_and_pd(x[half], abs_mask), _CMP_GT_OQ);
        farther[half] = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(out), pick));
    }
    __m256i bits = _mm256_castps_si256(_mm256_set_m128(f[1], f[0]));
    __m256i step = _mm256_set_m128i(farther[1], farther[0]); /* -1 where a step back is due */
    return _mm256_castsi256_ps(_mm256_add_epi32(bits, step));
}

/* The accumulator of 8 columns as m and x (*am, *ax; an f32), and the
 * group's largest nominal exponent: the accumulator's (unless it is zero)
 * and those of the n products (xa: row i of A; bx: B's exponents from row
 * k0, a row every N). Lanes with an infinite or NaN accumulator are
 * tensor_dot's and their values do not matter. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
tensor_emax8(__m256 acc, const int32_t *xa, const int32_t *bx, unsigned N, unsigned n, __m256i *am, __m256i *ax)
{
    tensor_decode8v(_mm256_castps_si256(acc), 23, 255, 0, 0x7fffff, 31, 127, am, ax);
    __m256i emax = _mm256_blendv_epi8(*ax, _mm256_set1_epi32(-(1 << 30)),
                                      _mm256_cmpeq_epi32(*ax, _mm256_set1_epi32(TENSOR_ZERO)));
#pragma GCC unroll 16
    for (unsigned k = 0; k < n; k++)
        emax = _mm256_max_epi32(emax, _mm256_add_epi32(_mm256_set1_epi32(xa[k]),
                                                       _mm256_loadu_si256((const __m256i *)(bx + k * N))));
    return emax;
}

/* One group of n products for 8 columns j0.. (ma, xa: row i of A from k0;
 * bm, bx: B from row k0 and column j0): the largest nominal exponent of the
 * terms and the accumulator's (emax), and the terms truncated to units of
 * 2^(emax - 25), summed in two int32 halves (each below 2^31: at most 8
 * products below 2^27 and the accumulator below 2^26). */
__attribute__((target("avx2"), always_inline)) static inline void
tensor_group8(const int32_t *ma, const int32_t *xa, const int32_t *bm, const int32_t *bx, unsigned N, unsigned n,
              __m256 acc, __m128i shift, __m256i *emax_out, __m256i *s0_out, __m256i *s1_out)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i am, ax;
    __m256i emax = tensor_emax8(acc, xa, bx, N, n, &am, &ax);
    __m256i s0 = tensor_term8(am, _mm256_sub_epi32(emax, ax), _mm_cvtsi32_si128(2)), s1 = zero;
#pragma GCC unroll 16
    for (unsigned k = 0; k < n; k++) {
        __m256i p = _mm256_mullo_epi32(_mm256_set1_epi32(ma[k]), _mm256_loadu_si256((const __m256i *)(bm + k * N)));
        __m256i e = _mm256_add_epi32(_mm256_set1_epi32(xa[k]), _mm256_loadu_si256((const __m256i *)(bx + k * N)));
        __m256i t = tensor_term8(p, _mm256_sub_epi32(emax, e), shift);
        if (k & 1)
            s1 = _mm256_add_epi32(s1, t);
        else
            s0 = _mm256_add_epi32(s0, t);
    }
    *emax_out = emax;
    *s0_out = s0;
    *s1_out = s1;
}

/* tensor_group8 with the terms in f32, for operands whose nominal exponents
 * lie within -60..60 (every f16; bf16 and tf32 where tensor_in_f32 says
 * so): a product of two such values is exact in f32 (at most 22
 * significant bits, exponents -120..121), and so are its scaling by 2^-q
 * (q = emax - 25, 2^-q within 2^-102..2^127) and its truncation by
 * vcvttps2dq for every term of a unit or more (the term is below 2^27); a
 * smaller one truncates to 0 however it rounds. The same holds for the
 * accumulator (an f32 whose exponent is at most emax). An element whose
 * emax lies below -102 (only an accumulator that small, the products
 * zero) is left to tensor_dot. fa: row i of A from k0 as floats; fb: B from
 * row k0 and column j0. */
__attribute__((target("avx2"), always_inline)) static inline void
tensor_group8_f32(const float *fa, const int32_t *xa, const float *fb, const int32_t *bx, unsigned N, unsigned n,
                  __m256 acc, __m256i *emax_out, __m256i *s0_out, __m256i *s1_out)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i am, ax; /* am unused here: the accumulator enters as a float */
    __m256i emax = tensor_emax8(acc, xa, bx, N, n, &am, &ax);
    /* 2^-q = 2^(25 - emax) */
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(152), emax), 23));
    __m256i s0 = _mm256_cvttps_epi32(_mm256_mul_ps(acc, scale)), s1 = zero;
#pragma GCC unroll 16
    for (unsigned k = 0; k < n; k++) {
        /* the product first: a zero product scales to 0 where B alone would overflow */
        __m256 p = _mm256_mul_ps(_mm256_set1_ps(fa[k]), _mm256_loadu_ps(fb + k * N));
        __m256i t = _mm256_cvttps_epi32(_mm256_mul_ps(p, scale));
        if (k & 1)
            s1 = _mm256_add_epi32(s1, t);
        else
            s0 = _mm256_add_epi32(s0, t);
    }
    *emax_out = emax;
    *s0_out = s0;
    *s1_out = s1;
}

/* An operand's n elements as floats, m * 2^(x - frac) (exact for x within
 * -60..60; a zero, an infinity or a NaN as 0: those take tensor_dot).
 * Returns whether every nonzero finite element's x lies within -60..60. */
__attribute__((target("avx2"))) static int tensor_floats(const tensor_operand *o, unsigned n, float *f)
{
    const __m256i lo = _mm256_set1_epi32(-60), hi = _mm256_set1_epi32(60);
    __m256i outside = _mm256_setzero_si256();
    int frac = format_frac(o->type);
    for (unsigned e = 0; e < n; e += 8) {
        __m256i m = _mm256_loadu_si256((const __m256i *)(o->m + e));
        __m256i x = _mm256_loadu_si256((const __m256i *)(o->x + e));
        __m256i real = _mm256_andnot_si256(_mm256_cmpeq_epi32(x, _mm256_set1_epi32(TENSOR_ZERO)),
                                           _mm256_cmpgt_epi32(_mm256_set1_epi32(TENSOR_NONFINITE), x));
        __m256i wide = _mm256_or_si256(_mm256_cmpgt_epi32(lo, x), _mm256_cmpgt_epi32(x, hi));
        outside = _mm256_or_si256(outside, _mm256_and_si256(real, wide));
        /* 2^(x - frac) where x is in range */
        __m256i xc = _mm256_min_epi32(_mm256_max_epi32(x, lo), hi);
        __m256i p = _mm256_slli_epi32(_mm256_add_epi32(xc, _mm256_set1_epi32(127 - frac)), 23);
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(m), _mm256_castsi256_ps(p));
        _mm256_storeu_ps(f + e, _mm256_and_ps(v, _mm256_castsi256_ps(real)));
    }
    return _mm256_testz_si256(outside, outside);
}

/* D (M x N) = A*B + C as tensor_dot computes it, 8 columns at a time: the
 * exponents, significand products and truncated terms of a group in AVX2
 * lanes, and the f32 rounding of the group sums (an f16 D's rounding per
 * element). Elements that take an IEEE path (an infinity or NaN, a group
 * of zeros only) are done by tensor_dot. N is a multiple of 8. */
__attribute__((target("avx2"))) static void tensor_tile_avx2(const tensor_operand *A, const tensor_operand *B,
                                                            const uint8_t *bad_a, const uint8_t *bad_b, unsigned M,
                                                            unsigned N, unsigned K, unsigned G, int shift,
                                                            const float *c, int to_f16, float *d, uint16_t *h)
{
    const __m128i sh = _mm_cvtsi32_si128(shift);
    const __m256i no_term = _mm256_set1_epi32(TENSOR_NO_TERM), exp_mask = _mm256_set1_epi32(0x7f800000),
                  f32_floor = _mm256_set1_epi32(-102);
    /* the terms in f32 (tensor_group8_f32) where the exponents allow */
    float fa[MATRIX_MAX_ELEMENTS], fb[16 * 256];
    int in_f32 = M * K <= MATRIX_MAX_ELEMENTS && K * N <= 16 * 256 && M * K % 8 == 0;
    if (in_f32)
        in_f32 = tensor_floats(A, M * K, fa) && tensor_floats(B, K * N, fb);
    for (unsigned i = 0; i < M; i++) {
        const int32_t *ma = A->m + i * K, *xa = A->x + i * K;
        for (unsigned j0 = 0; j0 < N; j0 += 8) {
            __m256 acc = _mm256_loadu_ps(c + i * N + j0);
            uint16_t h16[8] = {0};
            /* lanes for tensor_dot: an infinity or NaN in the operands or C */
            unsigned special = bad_a[i] ? 0xffu : 0;
            if (B->nonfinite)
                for (unsigned l = 0; l < 8; l++)
                    special |= (unsigned)bad_b[j0 + l] << l;
            __m256i bits = _mm256_castps_si256(acc);
            special |= (unsigned)_mm256_movemask_ps(
                _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(bits, exp_mask), exp_mask)));
            for (unsigned k0 = 0; k0 < K && special != 0xff; k0 += G) {
                unsigned n = k0 + G < K ? G : K - k0;
                __m256i emax, s0, s1;
                unsigned at = tensor_b_at(k0, j0, K); /* then row k0 + k at + 8k */
                if (in_f32 && n == 16)
                    tensor_group8_f32(fa + i * K + k0, xa + k0, fb + at, B->x + at, 8, 16, acc, &emax, &s0, &s1);
                else if (in_f32)
                    tensor_group8_f32(fa + i * K + k0, xa + k0, fb + at, B->x + at, 8, n, acc, &emax, &s0, &s1);
                else if (n == 16)
                    tensor_group8(ma + k0, xa + k0, B->m + at, B->x + at, 8, 16, acc, sh, &emax, &s0, &s1);
                else
                    tensor_group8(ma + k0, xa + k0, B->m + at, B->x + at, 8, n, acc, sh, &emax, &s0, &s1);
                /* a group of zeros only; in f32, also a scale 2^(25 - emax) beyond
                 * f32 (an accumulator below 2^-102 with zero products) */
                special |= (unsigned)_mm256_movemask_ps(
                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(in_f32 ? f32_floor : no_term, emax)));
                if (!(to_f16 && k0 + n == K)) {
                    acc = tensor_round8(s0, s1, emax);
                    continue;
                }
                /* the last group of an f16 D: rounded once, to nearest */
                int32_t sum0[8], sum1[8], ex[8];
                float out[8];
                _mm256_storeu_si256((__m256i *)sum0, s0);
                _mm256_storeu_si256((__m256i *)sum1, s1);
                _mm256_storeu_si256((__m256i *)ex, emax);
                for (unsigned l = 0; l < 8; l++) {
                    double exact = (double)((int64_t)sum0[l] + sum1[l]) * tensor_pow2(ex[l] - 25);
                    h16[l] = (special & (1u << l)) ? 0 : vm_f64_to_f16(exact, VM_RN);
                    out[l] = vm_f16_to_f32(h16[l]);
                }
                acc = _mm256_loadu_ps(out);
            }
            if (!special) {
                _mm256_storeu_ps(d + i * N + j0, acc);
                if (to_f16)
                    memcpy(h + i * N + j0, h16, sizeof h16);
                continue;
            }
            float out[8];
            _mm256_storeu_ps(out, acc);
            for (unsigned l = 0; l < 8; l++) {
                unsigned x = i * N + j0 + l;
                if (special & (1u << l))
                    d[x] = tensor_dot(A, B, i, j0 + l, K, G, shift, c[x], bad_a[i] | bad_b[j0 + l], to_f16, &h[x]);
                else {
                    d[x] = out[l];
                    h[x] = h16[l];
                }
            }
        }
    }
}
#endif

/* Whether the tile loop may use AVX2: the host has it and
 * KEMU_TENSOR_PORTABLE (read once; for tests of the portable loop) is unset
 * or 0. Both loops give the same bits. */
static int tensor_use_avx2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int use = -1;
    if (use < 0) {
        const char *p = getenv("KEMU_TENSOR_PORTABLE");
        use = __builtin_cpu_supports("avx2") && !(p && *p && strcmp(p, "0"));
    }
    return use;
#else
    return 0;
#endif
}

/* D (M x N, d and with to_f16 also h) = A*B + C (c) for f16/bf16/tf32
 * operands in the tensor-core model, G products per group. */
static void tensor_tile(const tensor_operand *A, const tensor_operand *B, unsigned M, unsigned N, unsigned K,
                        unsigned G, const float *c, int to_f16, float *d, uint16_t *h)
{
    uint8_t bad_a[64], bad_b[256];
    if (A->nonfinite)
        nonfinite_rows(A->x, M, K, bad_a);
    else
        memset(bad_a, 0, M);
    if (B->nonfinite)
        nonfinite_columns(B->x, K, N, bad_b);
    else
        memset(bad_b, 0, N);
    int shift = 25 - format_frac(A->type) - format_frac(B->type);
#if defined(__x86_64__) && defined(__GNUC__)
    if (N % 8 == 0 && tensor_use_avx2()) {
        tensor_tile_avx2(A, B, bad_a, bad_b, M, N, K, G, shift, c, to_f16, d, h);
        return;
    }
#endif
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++)
            d[i * N + j] = tensor_dot(A, B, i, j, K, G, shift, c[i * N + j], bad_a[i] | bad_b[j], to_f16,
                                      &h[i * N + j]);
}

/* The products below convert every operand once, then run the k loop on
 * host numbers; B is transposed so that the k loop reads memory in order. */
static void multiply_f64(unsigned M, unsigned N, unsigned K, const uint64_t *a, const uint64_t *b,
                         const uint64_t *c, vm_round r, uint64_t *d)
{
    double fa[MATRIX_MAX_ELEMENTS], fb[MATRIX_MAX_ELEMENTS];
    for (unsigned x = 0; x < M * K; x++)
        fa[x] = vm_f64_from_bits(a[x]);
    for (unsigned k = 0; k < K; k++)
        for (unsigned j = 0; j < N; j++)
            fb[j * K + k] = vm_f64_from_bits(b[k * N + j]);
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++) {
            double acc = vm_f64_from_bits(c[i * N + j]);
            for (unsigned k = 0; k < K; k++)
                acc = vm_fma_f64(fa[i * K + k], fb[j * K + k], acc, r);
            d[i * N + j] = vm_f64_bits(acc);
        }
}

/* D (M x N) = A*B + C on 8-bit integers (ia: M x K, ib: K x N, both as
 * int32; c and d: int32): the exact sum, wrapped to 32 bits or, with
 * satfinite, clamped. A dot product of K <= 32 products of 8-bit values is
 * below 2^21 in magnitude, so it is formed in int32 and only its sum with
 * C needs 64 bits. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void int_tile_avx2(unsigned M, unsigned N, unsigned K, const int32_t *ia,
                                                         const int32_t *ib, const int32_t *c, int32_t *d)
{
    for (unsigned i = 0; i < M; i++)
        for (unsigned j0 = 0; j0 < N; j0 += 8) {
            __m256i acc = _mm256_loadu_si256((const __m256i *)(c + i * N + j0));
            for (unsigned k = 0; k < K; k++)
                acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_set1_epi32(ia[i * K + k]),
                                                               _mm256_loadu_si256((const __m256i *)(ib + k * N + j0))));
            _mm256_storeu_si256((__m256i *)(d + i * N + j0), acc); /* wraps, as the sum to 32 bits does */
        }
}
#endif

static void int_tile(unsigned M, unsigned N, unsigned K, const int32_t *ia, const int32_t *ib, const int32_t *c,
                     int satfinite, int32_t *d)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (!satfinite && N % 8 == 0 && tensor_use_avx2()) {
        int_tile_avx2(M, N, K, ia, ib, c, d);
        return;
    }
#endif
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++) {
            int32_t dot = 0;
            for (unsigned k = 0; k < K; k++)
                dot += ia[i * K + k] * ib[k * N + j];
            int64_t acc = (int64_t)c[i * N + j] + dot;
            if (satfinite)
                acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
            d[i * N + j] = (int32_t)(uint32_t)acc;
        }
}

static void multiply_int8(unsigned M, unsigned N, unsigned K, int atype, int btype, const uint64_t *a,
                          const uint64_t *b, const uint64_t *c, int satfinite, uint64_t *d)
{
    int32_t ia[MATRIX_MAX_ELEMENTS], ib[MATRIX_MAX_ELEMENTS], ic[MATRIX_MAX_ELEMENTS], id[MATRIX_MAX_ELEMENTS];
    for (unsigned x = 0; x < M * K; x++)
        ia[x] = (int32_t)element_to_int(atype, a[x]);
    for (unsigned x = 0; x < K * N; x++)
        ib[x] = (int32_t)element_to_int(btype, b[x]);
    for (unsigned x = 0; x < M * N; x++)
        ic[x] = (int32_t)(uint32_t)c[x];
    int_tile(M, N, K, ia, ib, ic, satfinite, id);
    for (unsigned x = 0; x < M * N; x++)
        d[x] = (uint32_t)id[x];
}

/* D (M x N) = A (M x K) * B (K x N, k-major) + C as an f32 FMA chain in k
 * order per element; with AVX2 and FMA 8 columns at a time (the same
 * correctly rounded fmaf). */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void fma_tile_avx2(unsigned M, unsigned N, unsigned K, const float *a,
                                                             const float *b, const float *c, float *d)
{
    for (unsigned i = 0; i < M; i++)
        for (unsigned j0 = 0; j0 < N; j0 += 8) {
            __m256 acc = _mm256_loadu_ps(c + i * N + j0);
            for (unsigned k = 0; k < K; k++)
                acc = _mm256_fmadd_ps(_mm256_set1_ps(a[i * K + k]), _mm256_loadu_ps(b + k * N + j0), acc);
            _mm256_storeu_ps(d + i * N + j0, acc);
        }
}
#endif

static void fma_tile(unsigned M, unsigned N, unsigned K, const float *a, const float *b, const float *c, float *d)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int has_fma = -1;
    if (has_fma < 0)
        has_fma = __builtin_cpu_supports("fma");
    if (N % 8 == 0 && has_fma && tensor_use_avx2()) {
        fma_tile_avx2(M, N, K, a, b, c, d);
        return;
    }
#endif
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++) {
            float acc = c[i * N + j];
            for (unsigned k = 0; k < K; k++)
                acc = fmaf(a[i * K + k], b[k * N + j], acc);
            d[i * N + j] = acc;
        }
}

/* The low 32 bits of n 64-bit elements (n a multiple of 8: every operand
 * and accumulator size; the fixed inner count lets the loop vectorize). */
static void low_words(const uint64_t *from, unsigned n, uint32_t *to)
{
    for (unsigned x = 0; x < n; x += 8)
        for (unsigned t = 0; t < 8; t++)
            to[x + t] = (uint32_t)from[x + t];
}

static void multiply_float(unsigned M, unsigned N, unsigned K, int atype, int btype, int ctype, int dtype,
                           const uint64_t *a, const uint64_t *b, const uint64_t *c, int satfinite, uint64_t *d)
{
    float fc[MATRIX_MAX_ELEMENTS], fd[MATRIX_MAX_ELEMENTS];
    uint16_t hd[MATRIX_MAX_ELEMENTS];
    if (ctype == PTX_T_F32 && M * N % 8 == 0) {
        uint32_t bits[MATRIX_MAX_ELEMENTS];
        low_words(c, M * N, bits);
        memcpy(fc, bits, M * N * sizeof fc[0]);
    } else
        for (unsigned x = 0; x < M * N; x++)
            fc[x] = element_to_f32(ctype, c[x]);
    unsigned G = tensor_group(atype, K);
    if (G) {
        /* B: at most 16 x 32 (K is 16 or less where G is not 0), N rounded up to 8 */
        uint32_t ra[MATRIX_MAX_ELEMENTS], rb[16 * 32 + 16 * 8];
        int32_t ma[MATRIX_MAX_ELEMENTS], xa[MATRIX_MAX_ELEMENTS], mb[16 * 32 + 16 * 8], xb[16 * 32 + 16 * 8];
        if (M * K % 8 == 0)
            low_words(a, M * K, ra);
        else
            for (unsigned x = 0; x < M * K; x++)
                ra[x] = (uint32_t)a[x];
        if (N % 8) {
            memset(rb, 0, TENSOR_B_SIZE(K, N) * sizeof rb[0]);
            for (unsigned k = 0; k < K; k++)
                for (unsigned j = 0; j < N; j++)
                    rb[tensor_b_at(k, j, K)] = (uint32_t)b[k * N + j];
        } else
            for (unsigned k = 0; k < K; k++)
                for (unsigned j0 = 0; j0 < N; j0 += 8)
                    low_words(b + k * N + j0, 8, rb + tensor_b_at(k, j0, K));
        tensor_operand A = {ra, 0, atype, ma, xa, 0}, B = {rb, 0, btype, mb, xb, 0};
        tensor_decode_all(&A, M * K);
        tensor_decode_all(&B, TENSOR_B_SIZE(K, N));
        tensor_tile(&A, &B, M, N, K, G, fc, dtype == PTX_T_F16, fd, hd);
    } else {
        /* an f32 FMA chain in k order (fp8; a NaN stays a NaN: canonical below) */
        float fa[MATRIX_MAX_ELEMENTS], fb[MATRIX_MAX_ELEMENTS];
        for (unsigned x = 0; x < M * K; x++)
            fa[x] = element_to_f32(atype, a[x]);
        for (unsigned x = 0; x < K * N; x++)
            fb[x] = element_to_f32(btype, b[x]);
        fma_tile(M, N, K, fa, fb, fc, fd);
        if (dtype == PTX_T_F16)
            for (unsigned x = 0; x < M * N; x++)
                hd[x] = vm_f32_to_f16_flags(fd[x], VM_RN, 0);
    }
    if (dtype == PTX_T_F16)
        for (unsigned x = 0; x < M * N; x++) {
            uint16_t h = hd[x];
            if (satfinite && (h & 0x7fff) == 0x7c00)
                h = (uint16_t)((h & 0x8000) | 0x7bff);
            d[x] = h;
        }
    else if (!satfinite)
        for (unsigned x = 0; x < M * N; x += 8) /* M * N: a multiple of 8 */
            for (unsigned t = 0; t < 8; t++)
                d[x + t] = vm_f32_bits(vm_canon_f32(fd[x + t]));
    else
        for (unsigned x = 0; x < M * N; x++) {
            float acc = fd[x];
            if (acc == INFINITY || acc == -INFINITY)
                acc = acc > 0 ? FLT_MAX : -FLT_MAX;
            d[x] = vm_f32_bits(vm_canon_f32(acc));
        }
}

/* D = A*B + C for wmma.mma and mma.sync. */
static int multiply(vm_frame *f, const bc_op *op, uint32_t m)
{
    int is_wmma = (op->mode & 15) == MATRIX_WMMA_MMA;
    unsigned M = matrix_shape_m(op), N = matrix_shape_n(op), K = matrix_shape_k(op);
    uint64_t packed = (uint64_t)op->imm;
    int dtype = (int)(packed & 0xff), ctype = (int)((packed >> 8) & 0xff);
    unsigned nd = (packed >> 16) & 0xff, na = (packed >> 24) & 0xff, nb = (packed >> 32) & 0xff,
             nc = (packed >> 40) & 0xff;
    int atype = op->type, btype = op->type2;
    const uint32_t *list = f->fn->lists + op->list;
    fragment_shape sd, sa, sb, sc;
    fragment_init(&sd, MATRIX_D, M, N, dtype, nd, !is_wmma);
    fragment_init(&sa, MATRIX_A, M, K, atype, na, !is_wmma);
    fragment_init(&sb, MATRIX_B, K, N, btype, nb, !is_wmma);
    fragment_init(&sc, MATRIX_C, M, N, ctype, nc, !is_wmma);
    uint64_t a[MATRIX_MAX_ELEMENTS], bm[MATRIX_MAX_ELEMENTS], c[MATRIX_MAX_ELEMENTS],
        d[MATRIX_MAX_ELEMENTS];
    uint64_t *R = f->regs;
    gather(&sa, R, list + nd, a);
    gather(&sb, R, list + nd + na, bm);
    gather(&sc, R, list + nd + na + nb, c);
    int satfinite = (op->flags & BC_F_SATFINITE) != 0;
    if (atype == PTX_T_F64)
        multiply_f64(M, N, K, a, bm, c, vm_rnd(op->mode2), d);
    else if (atype == PTX_T_S8 || atype == PTX_T_U8)
        multiply_int8(M, N, K, atype, btype, a, bm, c, satfinite, d);
    else
        multiply_float(M, N, K, atype, btype, ctype, dtype, a, bm, c, satfinite, d);
    scatter(&sd, R, list, d, m);
    return 0;
}

/* ldmatrix / stmatrix .m8n8.b16: lane 8i+r supplies the address of row r
 * of matrix i; register i of lane l holds row l/4, columns 2(l%4) and
 * 2(l%4)+1 of matrix i (with .trans: rows 2(l%4) and 2(l%4)+1 of column
 * l/4), the first element in the low half. */
static int load_store_matrix(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    int is_store = (op->mode & 15) == MATRIX_STMATRIX;
    int transpose = (op->mode & MATRIX_TRANSPOSE) != 0;
    unsigned count = (op->mode >> 12) & 7;
    const uint32_t *list = f->fn->lists + op->list;
    uint64_t *R = f->regs;
    const uint64_t *base = SLOT(R, op->a);
    uint8_t *rows[4][8];
    uint16_t tile[4][8][8];
    uint8_t *ptrs[VM_WARP];
    for (unsigned i = 0; i < count; i++)
        for (unsigned r = 0; r < 8; r++) {
            unsigned lane = 8 * i + r;
            if (!(m & (1u << lane)))
                return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719,
                                   "%s: lane %u must supply the address of row %u of matrix %u, but it is not active",
                                   is_store ? "stmatrix" : "ldmatrix", lane, r, i);
            if (vm_resolve_operand(b, w, f, pc, op, op->mode2, 1u << lane, base, op->imm, 16, is_store, ptrs))
                return -1;
            rows[i][r] = ptrs[lane];
        }
    if (!is_store) {
        for (unsigned i = 0; i < count; i++)
            for (unsigned r = 0; r < 8; r++)
                memcpy(tile[i][r], rows[i][r], 16);
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            unsigned l = (unsigned)__builtin_ctz(mm), g = l / 4, q = l % 4;
            for (unsigned i = 0; i < count; i++) {
                uint16_t lo = transpose ? tile[i][2 * q][g] : tile[i][g][2 * q];
                uint16_t hi = transpose ? tile[i][2 * q + 1][g] : tile[i][g][2 * q + 1];
                SLOT(R, list[i])[l] = (uint32_t)lo | (uint32_t)hi << 16;
            }
        }
        return 0;
    }
    for (unsigned l = 0; l < VM_WARP; l++) {
        unsigned g = l / 4, q = l % 4;
        for (unsigned i = 0; i < count; i++) {
            uint32_t v = (uint32_t)SLOT(R, list[i])[l];
            if (transpose) {
                tile[i][2 * q][g] = (uint16_t)v;
                tile[i][2 * q + 1][g] = (uint16_t)(v >> 16);
            } else {
                tile[i][g][2 * q] = (uint16_t)v;
                tile[i][g][2 * q + 1] = (uint16_t)(v >> 16);
            }
        }
    }
    for (unsigned i = 0; i < count; i++)
        for (unsigned r = 0; r < 8; r++)
            memcpy(rows[i][r], tile[i][r], 16);
    return 0;
}


/* ---- wgmma.mma_async ------------------------------------------------------
 * A warpgroup (four consecutive warps, the first a multiple of 4) computes
 * D (64 x N) = A (64 x K) * B (K x N) + D. Warp r of the group holds rows
 * 16r .. 16r+15 of D and, when A is in registers, the same rows of A, so
 * kemu runs the instruction warp by warp: each warp reads its 16 rows of A
 * and all of B and updates its own D registers. Shared memory is read when
 * the instruction is issued (the wgmma.fence/commit/wait that a correct
 * kernel brackets it with are no-ops).
 *
 * Fragments (PTX ISA "wgmma register fragments"), lane l, g = l / 4,
 * q = l % 4, rows relative to the warp's 16:
 *   D element e (register e of f32/s32, half e % 2 of register e / 2 for
 *   f16): row g + 8 * ((e / 2) % 2), column 8 * (e / 4) + 2q + e % 2;
 *   A register j, element h (p elements per register: 2 for 16-bit types,
 *   4 for 8-bit, 1 for tf32): row g + 8 * (j % 2), k = p*q + h + 4p * (j / 2).
 *
 * Matrix descriptors (64 bits): start address bits 0-13, leading-dimension
 * byte offset (LBO) bits 16-29, stride-dimension byte offset (SBO) bits
 * 32-45, all in units of 16 bytes; base offset bits 49-51; swizzle bits
 * 62-63 (0 none, 1 128 B, 2 64 B, 3 32 B). An operand is K-major (A's rows
 * or B's columns contiguous along K) unless its imm-trans bit says
 * MN-major. With W the swizzle width in bytes and s the element size, the
 * byte address of element (mn, k) before swizzling is
 *   K-major, no swizzle:  start + (mn%8)*16 + (mn/8)*SBO + (k*s)%16 + (k*s/16)*LBO
 *   K-major, W:           start + (mn%8)*W  + (mn/8)*SBO + k*s
 *   MN-major, no swizzle: start + (mn*s)%16 + (mn*s/16)*SBO + (k%8)*16 + (k/8)*LBO
 *   MN-major, W:          start + (mn*s)%W + (mn*s/W)*LBO + (k%8)*W + (k/8)*SBO
 * and swizzling XORs the 16-byte chunk bits 4.. of the address with its
 * bits 7.. (1, 2 or 3 bits for W = 32, 64, 128), as in the TMA swizzle
 * modes: the pattern follows absolute shared-memory addresses, so a
 * swizzled tile is aligned to 8*W bytes.
 *
 * Arithmetic as for mma.sync: per element, acc = D (or 0 when scale-d is
 * false), then acc = fma(a_k, b_k, acc) in k order in f32 (e4m3/e5m2 and
 * f16/bf16/tf32 products are exact in f32); an f16 D is rounded once at the
 * end; s8/u8 sum exactly and wrap (or saturate with .satfinite). */

typedef struct wgmma_desc {
    uint32_t start, lbo, sbo;
    unsigned swizzle;     /* W in bytes, 0 none */
    unsigned base_offset; /* bits 49-51 */
} wgmma_desc;

static void wgmma_desc_decode(uint64_t d, wgmma_desc *o)
{
    static const unsigned widths[4] = {0, 128, 64, 32};
    o->start = (uint32_t)(d & 0x3fff) << 4;
    o->lbo = (uint32_t)((d >> 16) & 0x3fff) << 4;
    o->sbo = (uint32_t)((d >> 32) & 0x3fff) << 4;
    o->swizzle = widths[(d >> 62) & 3];
    o->base_offset = (unsigned)(d >> 49) & 7;
}

/* The shared-memory byte address of element (mn, k) of an operand (W is
 * 32, 64 or 128: masks and shifts, no division). */
static uint32_t wgmma_address(const wgmma_desc *d, int mn_major, unsigned s, unsigned mn, unsigned k)
{
    unsigned W = d->swizzle, ws = W ? (unsigned)__builtin_ctz(W) : 0;
    uint32_t a;
    if (!mn_major)
        a = W ? d->start + (mn % 8) * W + (mn / 8) * d->sbo + k * s
              : d->start + (mn % 8) * 16 + (mn / 8) * d->sbo + (k * s) % 16 + (k * s / 16) * d->lbo;
    else
        a = W ? d->start + ((mn * s) & (W - 1)) + ((mn * s) >> ws) * d->lbo + (k % 8) * W + (k / 8) * d->sbo
              : d->start + (mn * s) % 16 + (mn * s / 16) * d->sbo + (k % 8) * 16 + (k / 8) * d->lbo;
    if (W)
        a ^= ((a >> 7) & (W / 16 - 1)) << 4;
    return a;
}

/* Reads a rows x cols operand (element (i, j) at rows-index i, cols-index
 * j; `mn_is_row` says which index is the M/N one) from shared memory. Along
 * the contiguous index (K for a K-major operand, M/N for an MN-major one)
 * 16/s elements share a 16-byte chunk that swizzling moves as a whole: the
 * address is worked out and resolved once per chunk. */
static int wgmma_read(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const wgmma_desc *d, int mn_major,
                      unsigned s, unsigned rows, unsigned cols, unsigned mn_offset, int mn_is_row, uint32_t *out)
{
    if (d->base_offset)
        return vm_fault_at(b, w, f, pc, 0, 719,
                           "wgmma.mma_async: a matrix descriptor with base offset %u (bits 49-51) is not "
                           "implemented; kemu runs descriptors whose swizzled tiles start at an address aligned to "
                           "the swizzle pattern (base offset 0)", d->base_offset);
    unsigned n_mn = mn_is_row ? rows : cols, n_k = mn_is_row ? cols : rows;
    unsigned n_outer = mn_major ? n_k : n_mn, n_inner = mn_major ? n_mn : n_k;
    uint64_t addr[VM_WARP] = {0};
    uint8_t *ptrs[VM_WARP];
    for (unsigned o = 0; o < n_outer; o++)
        for (unsigned in0 = 0, run; in0 < n_inner; in0 += run) {
            unsigned mn = mn_major ? in0 : o, k = mn_major ? o : in0;
            uint32_t a = wgmma_address(d, mn_major, s, mn + mn_offset, k);
            if (a & (s - 1)) /* not reached: the layouts keep elements aligned; a run must not leave its chunk */
                return vm_fault_at(b, w, f, pc, 0, 716,
                                   "misaligned address: wgmma.mma_async operand element at shared address 0x%x "
                                   "(%u-byte elements)", a, s);
            addr[0] = a & ~15u;
            uintptr_t base;
            if (vm_resolve_span(b, BC_SPACE_SHARED, addr[0], 16, 16, &base)) /* no checker watches */
                ptrs[0] = (uint8_t *)(base + (uintptr_t)addr[0]);
            else if (vm_resolve(b, w, f, pc, BC_SPACE_SHARED, 1u, addr, 0, 16, VM_ACCESS_LOAD, ptrs))
                return -1;
            const uint8_t *host = ptrs[0] + (a & 15u);
            run = (16 - (a & 15u)) >> __builtin_ctz(s); /* a chunk starts at a multiple of 16 bytes; s is 1, 2 or 4 */
            if (run > n_inner - in0)
                run = n_inner - in0;
            /* out index of element t of the run: x0 + t * step */
            unsigned mn_step = mn_major ? 1 : 0, k_step = mn_major ? 0 : 1;
            unsigned x0 = mn_is_row ? mn * cols + k : k * cols + mn;
            unsigned step = mn_is_row ? mn_step * cols + k_step : k_step * cols + mn_step;
            if (s == 2 && run == 8) { /* f16/bf16: a whole chunk */
                uint16_t v16[8];
                memcpy(v16, host, sizeof v16);
                if (step == 1) /* along the output's rows */
                    for (unsigned t = 0; t < 8; t++)
                        out[x0 + t] = v16[t];
                else
                    for (unsigned t = 0; t < 8; t++)
                        out[x0 + t * step] = v16[t];
                continue;
            }
            for (unsigned t = 0; t < run; t++) {
                uint32_t v;
                if (s == 2) {
                    uint16_t v16;
                    memcpy(&v16, host + 2 * t, 2);
                    v = v16;
                } else if (s == 4)
                    memcpy(&v, host + 4 * t, 4);
                else
                    v = host[t];
                out[x0 + t * step] = v;
            }
        }
    return 0;
}



/* Where element e of a D fragment lies in the warp's 16 x N tile, less
 * lane l's offset (l / 4) * N + 2 * (l % 4). */
static inline unsigned wgmma_element_at(unsigned e, unsigned N)
{
    return 8 * ((e >> 1) & 1) * N + 8 * (e >> 2) + (e & 1);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* An f32 D's registers (nd of them, N/2) as the 16 x N tile c, and back
 * (every lane; NaNs canonical): registers 2i and 2i+1 of lanes 4g .. 4g+3
 * hold 8 consecutive elements of row g (+ 8 for registers 4i+2, 4i+3),
 * interleaved. */
__attribute__((target("avx2"))) static void wgmma_gather_f32(uint64_t *R, const uint32_t *list, unsigned nd,
                                                            unsigned N, float *c)
{
    for (unsigned r = 0; r + 1 < nd; r += 2) {
        const uint64_t *v0 = SLOT(R, list[r]), *v1 = SLOT(R, list[r + 1]);
        float *row = c + wgmma_element_at(r, N);
        for (unsigned g = 0; g < 8; g++) {
            __m256i lo = _mm256_loadu_si256((const __m256i *)(v0 + 4 * g));
            __m256i hi = _mm256_slli_epi64(_mm256_loadu_si256((const __m256i *)(v1 + 4 * g)), 32);
            _mm256_storeu_si256((__m256i *)(row + g * N), _mm256_blend_epi32(lo, hi, 0xaa));
        }
    }
}

__attribute__((target("avx2"))) static void wgmma_scatter_f32(uint64_t *R, const uint32_t *list, unsigned nd,
                                                             unsigned N, const float *d)
{
    const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32((int)VM_F32_CANONICAL_NAN));
    const __m256i low = _mm256_set1_epi64x(0xffffffffll);
    for (unsigned r = 0; r + 1 < nd; r += 2) {
        uint64_t *v0 = SLOT(R, list[r]), *v1 = SLOT(R, list[r + 1]);
        const float *row = d + wgmma_element_at(r, N);
        for (unsigned g = 0; g < 8; g++) {
            __m256 x = _mm256_loadu_ps(row + g * N);
            x = _mm256_blendv_ps(x, canon, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
            __m256i bits = _mm256_castps_si256(x);
            _mm256_storeu_si256((__m256i *)(v0 + 4 * g), _mm256_and_si256(bits, low));
            _mm256_storeu_si256((__m256i *)(v1 + 4 * g), _mm256_srli_epi64(bits, 32));
        }
    }
}
#endif


static int wgmma(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    uint64_t packed = (uint64_t)op->imm;
    int dtype = (int)(packed & 0xff);
    unsigned nd = (packed >> 16) & 0xff, na = (packed >> 24) & 0xff, N = (unsigned)(packed >> 32) & 0x1ff;
    unsigned K = matrix_shape_k(op), rank = (unsigned)w->index & 3;
    int atype = op->type, btype = op->type2;
    unsigned as = element_size_of(atype), bs = element_size_of(btype);
    if (atype == PTX_T_E4M3 || atype == PTX_T_E5M2)
        as = 1;
    if (btype == PTX_T_E4M3 || btype == PTX_T_E5M2)
        bs = 1;
    const uint32_t *list = f->fn->lists + op->list;
    uint64_t *R = f->regs;
    uint32_t a[16 * 32], bm[32 * 256];
    /* A: this warp's 16 rows */
    if (op->mode & WGMMA_A_REGISTERS) {
        unsigned p = 4 / as;
        for (unsigned l = 0; l < VM_WARP; l++) {
            unsigned g = l >> 2, q = l & 3;
            for (unsigned j = 0; j < na; j++) {
                uint64_t v = SLOT(R, list[nd + j])[l];
                for (unsigned h = 0; h < p; h++) {
                    unsigned row = g + 8 * (j & 1), k = p * q + h + 4 * p * (j >> 1);
                    a[row * K + k] = (uint32_t)((v >> (h * as * 8)) & ((1ull << (as * 8)) - 1));
                }
            }
        }
    } else {
        wgmma_desc da;
        wgmma_desc_decode(SLOT(R, list[nd])[0], &da);
        if (wgmma_read(b, w, f, pc, &da, (op->mode & WGMMA_TRANS_A) != 0, as, 16, K, 16 * rank, 1, a))
            return -1;
    }
    wgmma_desc db;
    wgmma_desc_decode(SLOT(R, list[nd + na])[0], &db);
    if (wgmma_read(b, w, f, pc, &db, (op->mode & WGMMA_TRANS_B) != 0, bs, K, N, 0, 0, bm))
        return -1;
    int scale_d;
    if (op->mode & WGMMA_SCALE_D_IMM)
        scale_d = (op->mode & WGMMA_SCALE_D_ONE) != 0;
    else {
        /* a uniform predicate: lane 0's (the instruction is .aligned) */
        scale_d = (int)(f->preds[op->mode2] & 1u);
        if (op->mode & WGMMA_SCALE_D_NOT)
            scale_d = !scale_d;
    }
    int satfinite = (op->flags & BC_F_SATFINITE) != 0;
    if (atype == PTX_T_S8 || atype == PTX_T_U8) {
        int32_t ia[16 * 32], ib[256 * 32], ic[16 * 256], id[16 * 256];
        for (unsigned x = 0; x < 16 * K; x++)
            ia[x] = (int32_t)element_to_int(atype, a[x]);
        for (unsigned x = 0; x < K * N; x++)
            ib[x] = (int32_t)element_to_int(btype, bm[x]);
        for (unsigned l = 0; l < VM_WARP; l++) {
            unsigned g = l >> 2, q = l & 3;
            for (unsigned e = 0; e < nd; e++) {
                unsigned row = g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * q + (e & 1);
                ic[row * N + col] = scale_d ? (int32_t)(uint32_t)SLOT(R, list[e])[l] : 0;
            }
        }
        int_tile(16, N, K, ia, ib, ic, satfinite, id);
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            unsigned l = (unsigned)__builtin_ctz(mm), g = l >> 2, q = l & 3;
            for (unsigned e = 0; e < nd; e++) {
                unsigned row = g + 8 * ((e >> 1) & 1), col = 8 * (e >> 2) + 2 * q + (e & 1);
                SLOT(R, list[e])[l] = (uint32_t)id[row * N + col];
            }
        }
        return 0;
    }
    /* D's old values as C */
    float fc[16 * 256], fd[16 * 256];
    uint16_t hd[16 * 256];
    /* element e of lane l: row g + 8 * ((e / 2) % 2), column 8 * (e / 4) +
     * 2q + e % 2, at index lane_at[l] + element_at(e) of the 16 x N tile */
    unsigned lane_at[VM_WARP];
    for (unsigned l = 0; l < VM_WARP; l++)
        lane_at[l] = (l >> 2) * N + 2 * (l & 3);
#define WGMMA_ELEMENT_AT(e) wgmma_element_at(e, N)
    if (!scale_d)
        memset(fc, 0, 16 * N * sizeof fc[0]);
    else if (dtype == PTX_T_F16)
        for (unsigned r = 0; r < nd; r++) {
            const uint64_t *v = SLOT(R, list[r]);
            unsigned lo = WGMMA_ELEMENT_AT(2 * r), hi = WGMMA_ELEMENT_AT(2 * r + 1);
            for (unsigned l = 0; l < VM_WARP; l++) {
                fc[lane_at[l] + lo] = vm_f16_to_f32((uint16_t)v[l]);
                fc[lane_at[l] + hi] = vm_f16_to_f32((uint16_t)(v[l] >> 16));
            }
        }
#if defined(__x86_64__) && defined(__GNUC__)
    else if (tensor_use_avx2())
        wgmma_gather_f32(R, list, nd, N, fc);
#endif
    else
        for (unsigned r = 0; r < nd; r++) {
            const uint64_t *v = SLOT(R, list[r]);
            unsigned at = WGMMA_ELEMENT_AT(r);
            for (unsigned l = 0; l < VM_WARP; l++)
                fc[lane_at[l] + at] = vm_f32_from_bits((uint32_t)v[l]);
        }
    unsigned G = tensor_group(atype, K);
    if (G) {
        /* the operands' signs flipped by imm-scale-a/b = -1 */
        uint32_t sign = atype == PTX_T_TF32 ? 0x80000000u : 0x8000u;
        /* K is 16 (f16, bf16) or 8 (tf32); N a multiple of 8 */
        uint32_t bp[16 * 256];
        int32_t ma[16 * 32], xa[16 * 32], mb[16 * 256], xb[16 * 256];
        for (unsigned k = 0; k < K; k++)
            for (unsigned j = 0; j < N; j += 8)
                memcpy(bp + tensor_b_at(k, j, K), bm + k * N + j, 8 * sizeof bp[0]);
        tensor_operand A = {a, (op->mode & WGMMA_NEG_A) ? sign : 0, atype, ma, xa, 0},
                       B = {bp, (op->mode & WGMMA_NEG_B) ? sign : 0, btype, mb, xb, 0};
        tensor_decode_all(&A, 16 * K);
        tensor_decode_all(&B, K * N);
        tensor_tile(&A, &B, 16, N, K, G, fc, dtype == PTX_T_F16, fd, hd);
    } else { /* fp8: an FMA chain in k order */
        float fa[16 * 32], fb[32 * 256], value_a[256], value_b[256];
        float sa = (op->mode & WGMMA_NEG_A) ? -1.0f : 1.0f, sb = (op->mode & WGMMA_NEG_B) ? -1.0f : 1.0f;
        for (unsigned v = 0; v < 256; v++) { /* every 8-bit value once */
            value_a[v] = sa * element_to_f32(atype, v);
            value_b[v] = sb * element_to_f32(btype, v);
        }
        for (unsigned x = 0; x < 16 * K; x++)
            fa[x] = value_a[a[x] & 255];
        for (unsigned x = 0; x < K * N; x++)
            fb[x] = value_b[bm[x] & 255];
        fma_tile(16, N, K, fa, fb, fc, fd);
        for (unsigned x = 0; x < 16 * N; x++)
            hd[x] = vm_f32_to_f16_flags(fd[x], VM_RN, 0);
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (dtype != PTX_T_F16 && m == VM_FULL && tensor_use_avx2()) {
        wgmma_scatter_f32(R, list, nd, N, fd);
        return 0;
    }
#endif
    for (unsigned r = 0; r < nd; r++) {
        uint64_t *v = SLOT(R, list[r]);
        if (dtype == PTX_T_F16) {
            unsigned lo = WGMMA_ELEMENT_AT(2 * r), hi = WGMMA_ELEMENT_AT(2 * r + 1);
            LANES(m, v[l] = (uint64_t)hd[lane_at[l] + lo] | (uint64_t)hd[lane_at[l] + hi] << 16);
        } else {
            unsigned at = WGMMA_ELEMENT_AT(r);
            LANES(m, v[l] = vm_f32_bits(vm_canon_f32(fd[lane_at[l] + at])));
        }
    }
#undef WGMMA_ELEMENT_AT
    return 0;
}

int vm_matrix_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    switch (op->mode & 15) {
    case MATRIX_WMMA_LOAD:
    case MATRIX_WMMA_STORE:
        return wmma_memory(b, w, f, pc, op, m);
    case MATRIX_WMMA_MMA:
    case MATRIX_MMA_SYNC:
        return multiply(f, op, m);
    case MATRIX_LDMATRIX:
    case MATRIX_STMATRIX:
        return load_store_matrix(b, w, f, pc, op, m);
    case MATRIX_WGMMA:
        return wgmma(b, w, f, pc, op, m);
    default:
        return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "malformed matrix instruction (mode %u)",
                           op->mode);
    }
}

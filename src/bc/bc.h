/* Kernel bytecode: the lowered form of a PTX module that the interpreter
 * executes. Opcodes come from opcodes.def. Every operand is a register
 * slot resolved at load time (immediates live in constant slots that each
 * frame starts with), so the interpreter never decodes text. This room
 * lowers and disassembles; it does not allocate device memory itself (the
 * module loader passes it the addresses of module variables). */
#ifndef KEMU_BC_H
#define KEMU_BC_H

#include <stdint.h>
#include "ptx/ptx.h"
#include "util.h"
#include "util_map.h"

typedef enum bc_opcode {
#define BC_OP(name, shape, meaning) BC_##name,
#include "bc/opcodes.def"
#undef BC_OP
    BC_OPCODE_COUNT
} bc_opcode;

extern const char *const bc_opcode_names[BC_OPCODE_COUNT];
extern const char *const bc_opcode_shapes[BC_OPCODE_COUNT];

#define BC_NONE 0xffffffffu

/* op->flags */
enum {
    BC_F_GUARD_NEG = 1u << 0,  /* @!p */
    BC_F_FTZ = 1u << 1,
    BC_F_SAT = 1u << 2,
    BC_F_NAN = 1u << 3,        /* .NaN on min/max */
    BC_F_RELU = 1u << 4,
    BC_F_SATFINITE = 1u << 5,
    BC_F_SIGNED = 1u << 6,     /* loads: sign-extend */
    BC_F_CC_OUT = 1u << 7,     /* writes the carry flag */
    BC_F_UNI = 1u << 8,        /* .uni branch/call */
    BC_F_APPROX = 1u << 9,
    BC_F_XORSIGN = 1u << 10,
    BC_F_VOLATILE = 1u << 11,
    BC_F_HAS_COUNT = 1u << 12, /* bar with thread count */
    BC_F_NEG_C = 1u << 13,     /* setp/set boolop with !c */
    BC_F_ABS = 1u << 14,
    BC_F_PRED_OUT = 1u << 15,  /* shfl with predicate output in op->e */
    BC_F_ALIGNED = 1u << 16,
    BC_F_A_IMM = 1u << 17,     /* operand a is a constant slot */
    BC_F_ADDR32 = 1u << 18,    /* memory ops: the address a + imm is a 32-bit register plus an offset,
                                  summed modulo 2^32 (vm_resolve_operand) */
    BC_F_D_DEAD = 1u << 19     /* a fused pair's first op (xcode): nothing but the second op reads its d */
};

/* Rounding modes (op->mode for float ops, cvt). */
enum { BC_RND_NONE = 0, BC_RND_RN, BC_RND_RZ, BC_RND_RM, BC_RND_RP, BC_RND_RNA,
       BC_RND_RNI, BC_RND_RZI, BC_RND_RMI, BC_RND_RPI, BC_RND_APPROX, BC_RND_FULL };

/* Memory spaces of ld/st/atom/cvta (op->mode). */
enum { BC_SPACE_GENERIC = 0, BC_SPACE_GLOBAL, BC_SPACE_SHARED, BC_SPACE_SHARED_CLUSTER,
       BC_SPACE_LOCAL, BC_SPACE_CONST, BC_SPACE_PARAM_KERNEL, BC_SPACE_PARAM_FUNC };

/* Comparisons (setp/set mode). */
enum { BC_CMP_EQ = 0, BC_CMP_NE, BC_CMP_LT, BC_CMP_LE, BC_CMP_GT, BC_CMP_GE,
       BC_CMP_LO, BC_CMP_LS, BC_CMP_HI, BC_CMP_HS,
       BC_CMP_EQU, BC_CMP_NEU, BC_CMP_LTU, BC_CMP_LEU, BC_CMP_GTU, BC_CMP_GEU,
       BC_CMP_NUM, BC_CMP_NAN };
/* Boolean combination (setp mode2, psetp). */
enum { BC_BOOL_NONE = 0, BC_BOOL_AND, BC_BOOL_OR, BC_BOOL_XOR };

/* Atomic operations (op->mode2 of ATOM). */
enum { BC_ATOM_ADD = 0, BC_ATOM_MIN, BC_ATOM_MAX, BC_ATOM_INC, BC_ATOM_DEC, BC_ATOM_CAS,
       BC_ATOM_EXCH, BC_ATOM_AND, BC_ATOM_OR, BC_ATOM_XOR, BC_ATOM_LD };

/* FUNARY sub-ops (op->mode). */
enum { BC_FN_RCP = 0, BC_FN_SQRT, BC_FN_RSQRT, BC_FN_EX2, BC_FN_LG2, BC_FN_SIN, BC_FN_COS,
       BC_FN_TANH };

/* Warp ops. */
enum { BC_SHFL_UP = 0, BC_SHFL_DOWN, BC_SHFL_BFLY, BC_SHFL_IDX };
enum { BC_VOTE_ALL = 0, BC_VOTE_ANY, BC_VOTE_UNI, BC_VOTE_BALLOT, BC_VOTE_ELECT };
enum { BC_REDUX_ADD = 0, BC_REDUX_MIN, BC_REDUX_MAX, BC_REDUX_AND, BC_REDUX_OR, BC_REDUX_XOR };

/* MATRIX ops (src/bc/lower_matrix.c encodes them, src/vm/matrix.c runs
 * them): the sub-op in mode bits 0-3, the wmma.load/store matrix in bits
 * 4-5, layout bits, and wgmma's flags in bits 8-15. */
enum { MATRIX_WMMA_LOAD = 1, MATRIX_WMMA_STORE, MATRIX_WMMA_MMA, MATRIX_MMA_SYNC,
       MATRIX_LDMATRIX, MATRIX_STMATRIX, MATRIX_WGMMA };
enum { MATRIX_A = 0, MATRIX_B, MATRIX_C, MATRIX_D };
#define MATRIX_COLUMN_MAJOR (1u << 8)
#define MATRIX_B_COLUMN_MAJOR (1u << 9)
#define MATRIX_TRANSPOSE (1u << 10)
#define WGMMA_A_REGISTERS (1u << 8)
#define WGMMA_TRANS_A (1u << 9)
#define WGMMA_TRANS_B (1u << 10)
#define WGMMA_NEG_A (1u << 11)
#define WGMMA_NEG_B (1u << 12)
#define WGMMA_SCALE_D_IMM (1u << 13)
#define WGMMA_SCALE_D_ONE (1u << 14)
#define WGMMA_SCALE_D_NOT (1u << 15)

/* mbarrier operations (MBARRIER mode2). */
enum { BC_MB_INIT = 0, BC_MB_INVAL, BC_MB_ARRIVE, BC_MB_ARRIVE_DROP, BC_MB_TEST_WAIT, BC_MB_TRY_WAIT,
       BC_MB_TEST_PARITY, BC_MB_TRY_PARITY, BC_MB_PENDING, BC_MB_ARRIVE_EXPECT_TX, BC_MB_EXPECT_TX,
       BC_MB_COMPLETE_TX };

/* Texture ops (TEXTURE mode2) and geometries (mode). */
enum { BC_TEX_TEX = 0, BC_TEX_TLD4, BC_TEX_TXQ, BC_TEX_SULD, BC_TEX_SUST };
enum { BC_GEOM_1D = 1, BC_GEOM_2D = 2, BC_GEOM_3D = 3, BC_GEOM_A1D, BC_GEOM_A2D, BC_GEOM_CUBE, BC_GEOM_ACUBE };
/* A TEXTURE op's imm: the low byte is the tld4 component, the surface
 * out-of-range mode or the txq query; then the coordinate count, the
 * gradient vector length (tex.grad: the list holds dPdx then dPdy after
 * the coordinates) and whether an explicit level of detail follows the
 * coordinates in the list (tex.level; txq.level reads it from b). */
#define BC_TEX_SUB(imm) ((int)((imm) & 0xff))
#define BC_TEX_NCOORD(imm) ((int)(((imm) >> 8) & 0xff))
#define BC_TEX_NGRAD(imm) ((int)(((imm) >> 16) & 0xff))
#define BC_TEX_HAS_LOD(imm) ((int)(((imm) >> 24) & 1))

/* Builtin host functions (CALL_BUILTIN mode). */
enum { BC_BUILTIN_VPRINTF = 0, BC_BUILTIN_ASSERTFAIL, BC_BUILTIN_MALLOC, BC_BUILTIN_FREE, BC_BUILTIN_NATIVE,
       BC_BUILTIN_DEVRT /* a CUDA device runtime function (dynamic parallelism): bc_function.devrt */ };

/* The device runtime functions (cuda_device_runtime_api.h) by what they
 * do: CDP2's `__cudaCDP2Xxx`, CDP1's plain `cudaXxx` and their `_ptsz`
 * forms map to the same one. BC_DEVRT_UNSUPPORTED: known by name, refused
 * by name when called. */
enum { BC_DEVRT_NONE = 0, BC_DEVRT_GET_PARAMETER_BUFFER, BC_DEVRT_GET_PARAMETER_BUFFER_V2, BC_DEVRT_LAUNCH_DEVICE,
       BC_DEVRT_LAUNCH_DEVICE_V2, BC_DEVRT_GET_LAST_ERROR, BC_DEVRT_PEEK_AT_LAST_ERROR, BC_DEVRT_GET_DEVICE,
       BC_DEVRT_GET_DEVICE_COUNT, BC_DEVRT_DEVICE_GET_ATTRIBUTE, BC_DEVRT_DEVICE_GET_LIMIT,
       BC_DEVRT_DEVICE_GET_CACHE_CONFIG, BC_DEVRT_RUNTIME_GET_VERSION, BC_DEVRT_STREAM_CREATE_WITH_FLAGS,
       BC_DEVRT_STREAM_DESTROY, BC_DEVRT_STREAM_WAIT_EVENT, BC_DEVRT_EVENT_CREATE_WITH_FLAGS, BC_DEVRT_EVENT_RECORD,
       BC_DEVRT_EVENT_RECORD_WITH_FLAGS, BC_DEVRT_EVENT_DESTROY, BC_DEVRT_MALLOC, BC_DEVRT_FREE,
       BC_DEVRT_DEVICE_SYNCHRONIZE, BC_DEVRT_MEMCPY_ASYNC, BC_DEVRT_MEMCPY_2D_ASYNC, BC_DEVRT_MEMSET_ASYNC,
       BC_DEVRT_MEMSET_2D_ASYNC, BC_DEVRT_GRAPH_SET_CONDITIONAL, BC_DEVRT_MEMCPY_3D_ASYNC,
       BC_DEVRT_MEMSET_3D_ASYNC, BC_DEVRT_FUNC_GET_ATTRIBUTES, BC_DEVRT_OCCUPANCY,
       BC_DEVRT_OCCUPANCY_WITH_FLAGS, BC_DEVRT_GET_ERROR_STRING, BC_DEVRT_GET_ERROR_NAME, BC_DEVRT_UNSUPPORTED };

/* Special registers (S2R mode). */
enum { BC_SR_TID = 0, BC_SR_NTID, BC_SR_LANEID, BC_SR_WARPID, BC_SR_NWARPID, BC_SR_CTAID,
       BC_SR_NCTAID, BC_SR_SMID, BC_SR_NSMID, BC_SR_GRIDID, BC_SR_LANEMASK_EQ,
       BC_SR_LANEMASK_LE, BC_SR_LANEMASK_LT, BC_SR_LANEMASK_GE, BC_SR_LANEMASK_GT,
       BC_SR_CLOCK, BC_SR_CLOCK_HI, BC_SR_CLOCK64, BC_SR_GLOBALTIMER, BC_SR_GLOBALTIMER_LO,
       BC_SR_GLOBALTIMER_HI, BC_SR_DYNAMIC_SMEM, BC_SR_TOTAL_SMEM, BC_SR_AGGR_SMEM,
       BC_SR_CLUSTERID, BC_SR_NCLUSTERID, BC_SR_CLUSTER_CTAID, BC_SR_CLUSTER_NCTAID,
       BC_SR_CLUSTER_CTARANK, BC_SR_CLUSTER_NCTARANK, BC_SR_IS_EXPLICIT_CLUSTER,
       BC_SR_ENVREG, BC_SR_PM, BC_SR_ZERO };

typedef struct bc_op {
    uint16_t code;       /* bc_opcode */
    uint8_t type;        /* ptx_type of the operation (destination for cvt) */
    uint8_t type2;       /* source type (cvt), second type (mul.wide result...) */
    uint32_t guard;      /* predicate slot or BC_NONE */
    uint32_t d, a, b, c, e;
    uint32_t flags;
    uint16_t mode, mode2;
    uint16_t n;          /* vector length, list length, special component */
    uint16_t src_size;   /* bytes per element (memory ops) */
    uint32_t list;       /* index into bc_function.lists */
    int64_t imm;         /* address offset, branch target, lop3 table ... */
    uint32_t src;        /* index into bc_function.srcs */
} bc_op;

/* Where an op came from: PTX line and column, and the CUDA source from .loc. */
typedef struct bc_src {
    int line, col;
    int loc_file, loc_line;
} bc_src;

/* A label of a function's body and the pc of the op it stands before
 * (the function's op count for a label at its end). */
typedef struct bc_label { const char *name; uint32_t pc; } bc_label;
/* A call site: argument and return-value copies between frames. */
typedef struct bc_copy { uint32_t from, to, size; } bc_copy;
typedef struct bc_call {
    int callee;                   /* function index */
    bc_copy *args; int nargs;     /* caller local offset -> callee local offset */
    bc_copy *rets; int nrets;     /* callee local offset -> caller local offset */
} bc_call;

typedef struct bc_param {
    const char *name;
    ptx_type type;
    uint64_t size, align, offset; /* offset: param buffer (entries) or frame local (funcs) */
    int is_array;
} bc_param;

typedef struct bc_function {
    const char *name;
    int index;
    int is_entry, is_extern, builtin; /* builtin: BC_BUILTIN_* + 1 for known externs */
    int devrt;                    /* BC_BUILTIN_DEVRT: BC_DEVRT_* */
    bc_op *code; uint32_t ncode, capcode;
    bc_op *xcode;                 /* NULL, or code with fused pairs (optimize.c): same length and pcs, each
                                     pair's first op replaced by a fused opcode that runs both; the
                                     interpreter runs it when no checker watches. code stays what the
                                     PTX says, for checkers, the debugger and reports */
    uint32_t nslots;              /* 64-bit register slots incl. constants and temps */
    uint32_t npreds;              /* predicate slots */
    uint32_t *const_slots; uint64_t *const_values; uint32_t nconsts, capconsts;
    uint32_t *lists; uint32_t nlists, caplists;
    bc_src *srcs; uint32_t nsrcs, capsrcs;
    bc_call *calls; uint32_t ncalls, capcalls;
    bc_param *params; int nparams;
    bc_param *rets; int nrets;
    uint64_t param_size;          /* entries: bytes of the parameter buffer */
    uint64_t local_size;          /* bytes of this function's local frame */
    uint64_t shared_static_size;  /* entries: static shared memory of a launch */
    uint64_t shared_local_base;   /* where this function's own .shared variables start */
    uint64_t *shared_addr;        /* by symbol index: the address of a shared variable in this
                                     function's layout, UINT64_MAX if unused; NULL: module layout */
    uint32_t nregs_declared;
    uint32_t *reg_slots;          /* by index in ptx->regs: its register slot (predicate slot for .pred) */
    bc_label *labels; uint32_t nlabels; /* in body order (pcs non-decreasing); names live in the PTX
                                     module's arena. Debug info (DWARF ranges) maps labels to pcs */
    int uses_calls;               /* calls other functions (needs a stack) */
    unsigned maxntid[3], reqntid[3], reqnctapercluster[3];
    unsigned minnctapersm, maxnreg, maxclusterrank;
    int explicitcluster;
    const ptx_function *ptx;
} bc_function;

/* Where module variables live, for lowering `mov r, var` and [var]. */
typedef struct bc_symbol {
    const char *name;
    int space;                    /* BC_SPACE_* */
    uint64_t address;             /* address within that space */
    uint64_t size;
    const ptx_var *var;
} bc_symbol;

typedef struct bc_module {
    ptx_module *ptx;
    bc_function **functions; int nfunctions;
    bc_symbol *symbols; int nsymbols;
    uint64_t shared_static_size;  /* module .shared variables */
    uint64_t shared_align;
    uint64_t const_size;          /* .const bank */
    unsigned char *const_init;    /* initial const bank */
    uint64_t global_size;         /* module .global variables, laid out in one block */
    unsigned char *global_init;
    int has_dynamic_shared;
    int arch_sm;                  /* from .target */
    util_map function_index;      /* name -> function index + 1 */
    util_map symbol_index;        /* name -> symbol index + 1 */
} bc_module;

/* Lowers a parsed module. Module .global variables are laid out at
 * `global_base` (the device address of a block of mod->global_size bytes
 * that the caller allocates after a first call with global_base = 0...);
 * see bc_module_layout. Returns KEMU_ERR_PARSE with file:line:col on
 * semantic errors (undeclared symbols, operand mismatches, unsupported
 * instructions). */
/* is_native (may be NULL) tells whether an .extern .func name is bound to a
 * host function; calls to it lower to CALL_BUILTIN with BC_BUILTIN_NATIVE. */
typedef int (*bc_native_query)(void *ctx, const char *name);
kemu_status bc_module_layout(ptx_module *ptx, bc_native_query is_native, void *native_ctx, bc_module **out,
                             kemu_error *err);
kemu_status bc_module_lower(bc_module *m, uint64_t global_base, kemu_error *err);
void bc_module_free(bc_module *m);

/* The BC_DEVRT_* function an .extern .func name stands for, or BC_DEVRT_NONE. */
int bc_devrt_of(const char *name);

/* Copy propagation and removal of the copies it makes dead, then fused op
 * pairs into fn->xcode (optimize.c), run by bc_module_lower on each kernel
 * unless turned off: by
 * bc_optimize_set(0) (the debugger), KEMU_OPTIMIZE=0 or KEMU_DEBUG (read
 * at the first load unless bc_optimize_set came first). */
void bc_optimize_function(bc_function *f);
void bc_optimize_set(int on);
int bc_optimize_enabled(void);

/* Finds a function by name, or NULL. */
bc_function *bc_module_find(const bc_module *m, const char *name);

/* The pc a label of fn stands before: 0, or -1 when fn has no such label. */
int bc_function_label_pc(const bc_function *fn, const char *label, uint32_t *pc);
/* Writes a disassembly of fn to b. */
void bc_disassemble(const bc_module *m, const bc_function *fn, util_buffer *b);

#endif

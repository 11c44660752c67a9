/* The PTX front end: a lexer and parser that turn PTX text into a module
 * AST with a line and column on every node. Name resolution across scopes
 * is done here for registers and function-local variables; module symbols,
 * labels and functions are resolved by the lowering (src/bc/). This room
 * knows nothing about execution. */
#ifndef KEMU_PTX_H
#define KEMU_PTX_H

#include <stdint.h>
#include <stddef.h>
#include "util.h"

typedef struct ptx_pos { int line, col; } ptx_pos;

/* State spaces of variables and memory instructions. */
typedef enum ptx_space {
    PTX_SPACE_NONE = 0, PTX_SPACE_REG, PTX_SPACE_GLOBAL, PTX_SPACE_SHARED,
    PTX_SPACE_SHARED_CLUSTER, PTX_SPACE_LOCAL, PTX_SPACE_CONST,
    PTX_SPACE_PARAM, PTX_SPACE_GENERIC, PTX_SPACE_TEX
} ptx_space;

/* Scalar types of declarations and instructions. */
typedef enum ptx_type {
    PTX_T_NONE = 0,
    PTX_T_B8, PTX_T_B16, PTX_T_B32, PTX_T_B64, PTX_T_B128,
    PTX_T_U8, PTX_T_U16, PTX_T_U32, PTX_T_U64,
    PTX_T_S8, PTX_T_S16, PTX_T_S32, PTX_T_S64,
    PTX_T_F16, PTX_T_F16X2, PTX_T_BF16, PTX_T_BF16X2, PTX_T_TF32,
    PTX_T_F32, PTX_T_F64, PTX_T_PRED,
    PTX_T_E4M3, PTX_T_E5M2, PTX_T_E4M3X2, PTX_T_E5M2X2,
    PTX_T_U16X2, PTX_T_S16X2, PTX_T_U8X4, PTX_T_S8X4, PTX_T_U4, PTX_T_S4,
    PTX_T_TEXREF, PTX_T_SURFREF, PTX_T_SAMPLERREF,
    PTX_T_COUNT
} ptx_type;

ptx_type ptx_type_from_name(const char *dotname); /* ".f32" -> PTX_T_F32 */
const char *ptx_type_name(ptx_type t);            /* PTX_T_F32 -> ".f32" */
unsigned ptx_type_size(ptx_type t);               /* bytes; pred: 0 */
int ptx_type_is_float(ptx_type t);
int ptx_type_is_signed(ptx_type t);

/* A variable: a register, or a variable in a state space. */
typedef struct ptx_var {
    const char *name;
    ptx_space space;
    ptx_type type;
    unsigned align;
    unsigned vec;            /* .v2/.v4 declarations: 2 or 4; else 1 */
    uint64_t array_count;    /* product of array dims; 0 for scalars */
    int is_array, is_unsized;/* `x[]` (extern .shared) */
    int is_extern, is_visible, is_weak, is_ptr;
    int is_entry_param;      /* a kernel parameter */
    int is_func_param;       /* a .func parameter or return value */
    unsigned char *init;     /* initializer bytes (size bytes) or NULL */
    struct ptx_init_reloc *relocs; int nrelocs; /* address initializers */
    uint64_t size;           /* total bytes */
    ptx_pos pos;
    int index;               /* per-kind index assigned by the parser */
    int scope;               /* scope id inside a function; 0: function level */
} ptx_var;

/* `generic(var)+off` and `var+off` in an initializer: the address of var is
 * stored at byte `at` (8 bytes) when the module is loaded. */
typedef struct ptx_init_reloc {
    uint64_t at;
    const char *symbol;
    int64_t addend;
    int generic;
    ptx_pos pos;
} ptx_init_reloc;

typedef enum ptx_operand_kind {
    PTX_OP_REG,      /* a declared register: var */
    PTX_OP_SPECIAL,  /* a special register: name + component */
    PTX_OP_IMM_INT,  /* integer literal: imm */
    PTX_OP_IMM_FLOAT,/* float literal: fbits (as f64 bits) / is_f32 */
    PTX_OP_SYMBOL,   /* a name: variable, label or function (+ imm offset) */
    PTX_OP_ADDRESS,  /* [base + imm] ; base may be a REG, SYMBOL or absent */
    PTX_OP_VECTOR,   /* {a, b, ...} */
    PTX_OP_SINK      /* _ */
} ptx_operand_kind;

typedef struct ptx_operand {
    ptx_operand_kind kind;
    int negate;                /* !%p */
    const char *name;          /* SPECIAL / SYMBOL name */
    char component;            /* .x .y .z .w on special registers, or 0 */
    ptx_var *var;              /* REG, or a resolved function-local variable */
    int64_t imm;               /* IMM_INT; offset for SYMBOL and ADDRESS */
    uint64_t fbits;            /* IMM_FLOAT: f64 bit pattern, or f32 bits if is_f32 */
    int is_f32;                /* 0f literal */
    struct ptx_operand *base;  /* ADDRESS: base operand (REG/SYMBOL), or NULL */
    struct ptx_operand *elems; /* VECTOR */
    int nelems;
    ptx_pos pos;
} ptx_operand;

#define PTX_MAX_MODS 16
typedef struct ptx_insn {
    const char *opcode;               /* "ld", "mma", ... */
    const char *mods[PTX_MAX_MODS];   /* ".global", ".v4", ".f32", ".shared::cta" ... */
    int nmods;
    ptx_operand *guard;               /* @p / @!p, or NULL */
    ptx_operand *ops;
    int nops;
    ptx_pos pos;
    int loc_file, loc_line, loc_col;  /* from the latest .loc, or 0 */
    /* call: */
    ptx_operand *call_rets; int ncall_rets;
    ptx_operand *call_args; int ncall_args;
    const char *call_prototype;
} ptx_insn;

typedef enum ptx_stmt_kind { PTX_STMT_INSN, PTX_STMT_LABEL } ptx_stmt_kind;
typedef struct ptx_stmt {
    ptx_stmt_kind kind;
    int scoped;           /* LABEL declared in a nested { } block: renamed "NAME$N" (N the block) */
    const char *label;    /* LABEL */
    ptx_insn insn;        /* INSN */
    ptx_pos pos;
} ptx_stmt;

typedef struct ptx_function {
    const char *name;
    int is_entry, is_extern, is_visible, is_weak, has_body, is_noreturn;
    ptx_var **params; int nparams;
    ptx_var **rets; int nrets;
    ptx_var **regs; int nregs;          /* every register declared, in order */
    ptx_var **locals; int nlocals;      /* .local/.shared/.param declared inside */
    ptx_stmt *body; int nbody;
    unsigned maxntid[3], reqntid[3], reqnctapercluster[3];
    unsigned minnctapersm, maxnreg, maxclusterrank;
    int explicitcluster;
    int is_prototype;                   /* a .callprototype */
    ptx_pos pos;
} ptx_function;

typedef struct ptx_file_entry { int id; const char *path; } ptx_file_entry;

/* A name inside a .section's data whose value fills `width` bytes at `at`
 * (the bytes there are zero): a label or symbol (`$L__tmp2`,
 * `k_param_0`: an address) or a section (`.debug_loc+133`: an offset
 * into it), plus an addend. */
enum { PTX_REF_NAME = 0, PTX_REF_SECTION };
typedef struct ptx_section_ref {
    uint32_t at;
    uint8_t width, kind;      /* bytes; PTX_REF_* */
    const char *name;
    int64_t addend;
} ptx_section_ref;

/* A label defined inside a section (`$L__info_string0:`) at byte `at`. */
typedef struct ptx_section_label { const char *name; uint32_t at; } ptx_section_label;

/* A `.section NAME { .b8 1, 2  .b32 $L__tmp0  .b64 sym+8 ... }` block, as
 * nvcc -G writes DWARF into PTX: its items as little-endian bytes of their
 * width (.b8/.b16/.b32/.b64), numbers in place, names as refs. Blocks of
 * the same name are concatenated. Kept only for readers such as the
 * debugger's DWARF reader (src/debug/dwarf.c); execution ignores them. */
typedef struct ptx_section {
    const char *name;         /* ".debug_info" */
    unsigned char *data; size_t size;
    ptx_section_ref *refs; int nrefs;       /* in increasing `at` order */
    ptx_section_label *labels; int nlabels;
    ptx_pos pos;
} ptx_section;

typedef struct ptx_module {
    util_arena arena;
    const char *filename;
    int version_major, version_minor;
    char target[64];        /* "sm_80" */
    int address_size;
    ptx_var **globals; int nglobals;       /* module-scope variables */
    ptx_function **functions; int nfunctions;
    ptx_file_entry *files; int nfiles;
    ptx_section *sections; int nsections;  /* .section blocks (DWARF), often none */
    const char *text; size_t textlen;   /* a copy of the source, for diagnostics */
} ptx_module;

/* Appends "  <source line>\n  <caret>\n" for line:col of m's text to b. */
void ptx_append_caret(const ptx_module *m, int line, int col, util_buffer *b);

/* Parses PTX text. On success *out is a new module (free with
 * ptx_module_free). On failure returns KEMU_ERR_PARSE and writes the
 * diagnostics ("file:line:col: error: ...", a source line and a caret, up
 * to a limit of errors) into err->message, and the first position into
 * err->file/line/column. */
kemu_status ptx_parse(const char *text, size_t len, const char *filename,
                      ptx_module **out, kemu_error *err);
void ptx_module_free(ptx_module *m);

/* The section named name (".debug_info"), or NULL. */
const ptx_section *ptx_module_section(const ptx_module *m, const char *name);

/* Helpers for lowering: look an instruction modifier up. */
int ptx_insn_has_mod(const ptx_insn *in, const char *mod);

#endif

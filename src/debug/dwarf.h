/* Source-level variables from the DWARF that `nvcc -G` writes into PTX
 * (`.section .debug_info { .b8 ... }`, .debug_abbrev, .debug_loc; see
 * ptx_section). The reader understands the DWARF 2-4 forms nvcc uses:
 * compile units, subprograms and lexical blocks with label ranges,
 * parameters and variables with their types (base types, pointers,
 * arrays, structs, typedefs and qualifiers) and locations (a PTX register
 * packed into DW_OP_regx, DW_OP_addr of a symbol such as __local_depot0 or
 * a kernel parameter, DW_OP_bregx/fbreg, and .debug_loc lists of label
 * ranges). Labels become (function, pc) through a resolver, so a range is
 * a range of bytecode pcs. Malformed or truncated sections never crash
 * the reader: a bad .debug_info or .debug_abbrev means no variables at
 * all; a bad location list means that variable is optimized out. The
 * reader knows nothing about running kernels: the debugger's expressions
 * (expr.c) read the registers and memory a location names. */
#ifndef KEMU_DEBUG_DWARF_H
#define KEMU_DEBUG_DWARF_H

#include <stddef.h>
#include <stdint.h>

#include "bc/bc.h"
#include "ptx/ptx.h"

typedef struct dwarf_info dwarf_info;

/* Types, after typedefs and qualifiers (DWARF_T_ALIAS: follow target). */
enum { DWARF_T_BASE = 1, DWARF_T_POINTER, DWARF_T_ARRAY, DWARF_T_STRUCT, DWARF_T_ALIAS, DWARF_T_OTHER };

/* DW_ATE_* encodings of base types kemu tells apart. */
enum { DWARF_ATE_BOOLEAN = 2, DWARF_ATE_FLOAT = 4, DWARF_ATE_SIGNED = 5, DWARF_ATE_SIGNED_CHAR = 6,
       DWARF_ATE_UNSIGNED = 7, DWARF_ATE_UNSIGNED_CHAR = 8 };

/* NVIDIA's DW_AT_address_class values (the state space of a variable or
 * of what a pointer points to). */
enum { DWARF_ADDR_REG = 2, DWARF_ADDR_CONST = 4, DWARF_ADDR_GLOBAL = 5, DWARF_ADDR_LOCAL = 6,
       DWARF_ADDR_PARAM = 7, DWARF_ADDR_SHARED = 8, DWARF_ADDR_GENERIC = 12 };

typedef struct dwarf_type {
    int kind;             /* DWARF_T_* */
    const char *name;     /* "int", "Pair", a typedef's name, or NULL */
    int encoding;         /* base types: DW_ATE_* */
    uint64_t size;        /* bytes (0: unknown) */
    int target;           /* pointer: pointee, array: element, alias: aliased (-1: void/unknown) */
    uint64_t count;       /* arrays: elements over all dimensions (0: unknown) */
    int addr_class;       /* pointers: DWARF_ADDR_* of the pointee (0: not said) */
    int qualifier;        /* aliases: 0 typedef, 'c' const, 'v' volatile, 'r' restrict */
    int first_member, nmembers; /* structs, classes, unions: into dwarf_members */
} dwarf_type;

typedef struct dwarf_member {
    const char *name;
    int type;
    uint64_t offset;      /* bytes from the start of the struct */
} dwarf_member;

/* Where a variable lives over some pcs. */
enum { DWARF_LOC_UNSUPPORTED = 0, DWARF_LOC_REG, DWARF_LOC_ADDR, DWARF_LOC_BREG };
typedef struct dwarf_loc {
    int kind;
    char reg[16];         /* REG, BREG: the PTX register ("%r1") */
    const char *symbol;   /* ADDR: a PTX symbol (NULL: offset is the address) */
    int64_t offset;       /* ADDR: bytes past the symbol; BREG: bytes past the register's value */
} dwarf_loc;

/* A location over [lo, hi) of function fn (fn -1: the variable's whole scope). */
typedef struct dwarf_range_loc {
    int fn;
    uint32_t lo, hi;
    dwarf_loc loc;
} dwarf_range_loc;

typedef struct dwarf_var {
    const char *name;
    int is_param;
    int type;             /* -1: unknown */
    int scope;            /* dwarf_scope index, -1: the compile unit (a module variable) */
    int decl_line;
    int addr_class;       /* DWARF_ADDR_* of the variable itself (0: not said) */
    int first_loc, nlocs; /* into the location table; none: optimized out everywhere */
} dwarf_var;

typedef struct dwarf_scope {
    int parent;           /* -1: a subprogram */
    int fn;               /* bc function index, -1 when its labels are unknown */
    uint32_t lo, hi;      /* pcs [lo, hi) */
    const char *name;     /* subprograms: source name ("scale") */
    const char *linkage;  /* subprograms: linkage name ("_Z5scalePfPKfif") or NULL */
} dwarf_scope;

/* Turns a label (or a name that may be one) into a function and pc: 0, or -1. */
typedef int (*dwarf_label_resolver)(void *ctx, const char *label, int *fn, uint32_t *pc);

/* Reads the DWARF of a set of sections (.debug_info, .debug_abbrev, and
 * .debug_loc/.debug_str when present). Returns NULL when there is none or
 * it is malformed (msg, if not NULL, says why); free with dwarf_free. */
dwarf_info *dwarf_load(const ptx_section *sections, int nsections, dwarf_label_resolver resolve, void *ctx,
                       char *msg, size_t n);
/* dwarf_load over a lowered module's sections, labels resolved through
 * its functions' label tables. */
dwarf_info *dwarf_load_module(const bc_module *m, char *msg, size_t n);
void dwarf_free(dwarf_info *info);

/* The tables. */
const dwarf_type *dwarf_type_at(const dwarf_info *info, int index);
const dwarf_member *dwarf_members(const dwarf_info *info);
const dwarf_var *dwarf_vars(const dwarf_info *info, int *n);
const dwarf_scope *dwarf_scopes(const dwarf_info *info, int *n);
/* The type with typedefs and qualifiers followed (-1 when unknown). */
int dwarf_type_strip(const dwarf_info *info, int index);
/* A C spelling of a type ("float *", "int [4]", "Pair"). */
void dwarf_type_name(const dwarf_info *info, int index, char *buf, size_t n);

/* The variables visible at pc of function fn, innermost scope first, a
 * name shadowed by an inner one left out; parameters and locals both.
 * Fills up to max, returns how many there are. */
int dwarf_visible(const dwarf_info *info, int fn, uint32_t pc, const dwarf_var **out, int max);
/* The visible variable named name, or NULL (module variables included). */
const dwarf_var *dwarf_lookup(const dwarf_info *info, int fn, uint32_t pc, const char *name);
/* Where var is at pc of fn, or NULL when it is not live there (optimized out). */
const dwarf_loc *dwarf_location(const dwarf_info *info, const dwarf_var *var, int fn, uint32_t pc);
/* The innermost subprogram scope around pc of fn, or -1. */
int dwarf_subprogram_at(const dwarf_info *info, int fn, uint32_t pc);

#endif

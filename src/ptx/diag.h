/* Diagnostics of PTX text: "file:line:col: error: message" records, each
 * with its source line and a caret, collected into one report that fits a
 * kemu_error's message. Bytes that would reach a terminal as control codes
 * (C0/C1 controls, DEL, invalid UTF-8, bidirectional overrides) are shown
 * escaped (\xNN, \uNNNN), so random bytes give readable errors. Errors are
 * kept whole: once the next one would not fit, or after PTX_DIAG_MAX_ERRORS,
 * the report ends with a "too many errors, stopping" line and the parser
 * stops. Internal to src/ptx/ and src/bc/. */
#ifndef KEMU_PTX_DIAG_H
#define KEMU_PTX_DIAG_H

#include <stddef.h>
#include "util.h"

#define PTX_DIAG_MAX_ERRORS 20

typedef struct ptx_diag {
    util_buffer text;        /* the report so far */
    const char *filename;    /* as given (escaped when printed) */
    const char *src;         /* the source, for the quoted lines */
    size_t srclen;
    int nerrors;             /* errors reported, shown or not */
    int nshown;              /* errors written into text */
    int full;                /* no more fit: the caller should stop */
    int first_line, first_col;
} ptx_diag;

void ptx_diag_init(ptx_diag *d, const char *filename, const char *src, size_t srclen);
/* Records an error at line:col (1-based; line 0: no position, no source
 * line). Returns 1 when it was written, 0 when the report is full. */
int ptx_diag_error(ptx_diag *d, int line, int col, const char *msg);
/* Ends the report (the "too many errors" line when errors were left out)
 * and returns its text (owned by d), or NULL when nothing was reported. */
const char *ptx_diag_finish(ptx_diag *d);
void ptx_diag_free(ptx_diag *d);

/* Appends s[0..n) to b with control bytes, invalid UTF-8 and invisible
 * or reordering code points escaped; tabs are kept when keep_tabs is set.
 * Returns the number of display columns appended. */
size_t ptx_escape(util_buffer *b, const char *s, size_t n, int keep_tabs);

/* Appends "  <source line>\n  <caret>\n" for line:col of the text to b, the
 * line escaped and, when long, shown as a window around col. */
void ptx_diag_source(util_buffer *b, const char *src, size_t srclen, int line, int col);

#endif

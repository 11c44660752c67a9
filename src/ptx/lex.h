/* The PTX lexer: turns text into tokens with line and column. Internal to
 * src/ptx/. */
#ifndef KEMU_PTX_LEX_H
#define KEMU_PTX_LEX_H
#include <stdint.h>
#include <stddef.h>

typedef enum lex_kind {
    LEX_EOF = 0, LEX_IDENT, LEX_DOTIDENT, LEX_INT, LEX_FLOAT, LEX_STRING,
    LEX_PUNCT, LEX_ERROR
} lex_kind;

typedef struct lex_token {
    lex_kind kind;
    const char *start;   /* points into the source text */
    int len;
    int line, col;
    uint64_t ival;       /* LEX_INT */
    uint64_t fbits;      /* LEX_FLOAT: f64 bits, or f32 bits when is_f32 */
    int is_f32;
    int is_unsigned;     /* INT with U suffix */
    char punct;          /* LEX_PUNCT */
    const char *error;   /* LEX_ERROR: what is wrong */
} lex_token;

typedef struct lex_state {
    const char *text, *end, *p;
    int line;
    const char *line_start;
    int open_comment_line, open_comment_col; /* a block comment the text ends inside (line 0: none) */
} lex_state;

void lex_init(lex_state *s, const char *text, size_t len);
/* Scans the next token. */
lex_token lex_next(lex_state *s);

#endif

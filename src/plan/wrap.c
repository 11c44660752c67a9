/* plan_wrap_shared: the PTX a GPU runs for a launch plan with SHARED
 * operands (a call's smem scratch).
 *
 * kemu's call ABI passes each smem scratch operand as a shared-space
 * address in a parameter, and the emulator knows where it put the launch's
 * dynamic shared memory. A host cannot know that address on a GPU (it
 * depends on the kernel's static shared memory, the reserved system area
 * and ptxas), so the GPU runs a rewritten module instead: the entry K
 * becomes `.func K__kemu_call_body` with the same parameter names, and a
 * new `.entry K` with K's parameters and performance directives computes
 * each smem scratch address from a module-scope `.extern .shared .align
 * 128` array (the dynamic shared memory, where every extern array starts),
 * loads the other parameters, and calls the body. The host passes the very
 * same arguments; the smem ones are ignored. */
#include "plan/plan_internal.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRAP_BODY_SUFFIX "__kemu_call_body"
#define WRAP_SMEM_ARRAY "__kemu_call_smem"

/* Appending to the output; `failed` remembers an allocation failure. */
typedef struct wrap_out {
    util_buffer b;
    int failed;
} wrap_out;

static void wb_add(wrap_out *o, const char *s, size_t n) { o->failed |= util_buffer_append(&o->b, s, n) != 0; }
static void wb_str(wrap_out *o, const char *s) { wb_add(o, s, strlen(s)); }
#define wb_printf(o, ...) ((o)->failed |= util_buffer_printf(&(o)->b, __VA_ARGS__) != 0)

static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '%' || c == '.'; }

/* The end of the comment starting at p, or p when none starts there. */
static size_t skip_comment(const char *t, size_t len, size_t p)
{
    if (p + 1 < len && t[p] == '/' && t[p + 1] == '/') {
        while (p < len && t[p] != '\n')
            p++;
    } else if (p + 1 < len && t[p] == '/' && t[p + 1] == '*') {
        p += 2;
        while (p + 1 < len && !(t[p] == '*' && t[p + 1] == '/'))
            p++;
        p = p + 2 <= len ? p + 2 : len;
    }
    return p;
}

static size_t skip_space(const char *t, size_t len, size_t p)
{
    for (;;) {
        while (p < len && isspace((unsigned char)t[p]))
            p++;
        size_t q = skip_comment(t, len, p);
        if (q == p)
            return p;
        p = q;
    }
}

/* Finds the definition (with a body) of `.entry kernel`: *header is where
 * its linkage (`.visible`, `.weak`) or `.entry` starts, *close the `)` of
 * its parameter list and *brace its `{`. Returns 0 when found. */
static int find_entry(const char *t, size_t len, const char *kernel, size_t *header, size_t *close, size_t *brace)
{
    size_t klen = strlen(kernel);
    size_t p = 0;
    while (p < len) {
        size_t q = skip_comment(t, len, p);
        if (q != p) {
            p = q;
            continue;
        }
        if (t[p] == '"') { /* strings (in .pragma) */
            p++;
            while (p < len && t[p] != '"')
                p++;
            p++;
            continue;
        }
        if (!(t[p] == '.' && p + 6 <= len && !memcmp(t + p, ".entry", 6) && (p == 0 || !ident_char(t[p - 1])) &&
              (p + 6 == len || !ident_char(t[p + 6])))) {
            p++;
            continue;
        }
        size_t at = p;
        p = skip_space(t, len, p + 6);
        if (!(p + klen <= len && !memcmp(t + p, kernel, klen) && (p + klen == len || !ident_char(t[p + klen]))))
            continue;
        p = skip_space(t, len, p + klen);
        if (p >= len || t[p] != '(')
            continue;
        size_t c = p;
        while (c < len && t[c] != ')') {
            size_t q2 = skip_comment(t, len, c);
            c = q2 != c ? q2 : c + 1;
        }
        if (c >= len)
            return -1;
        size_t b = c + 1;
        while (b < len && t[b] != '{' && t[b] != ';') {
            size_t q2 = skip_comment(t, len, b);
            b = q2 != b ? q2 : b + 1;
        }
        if (b >= len)
            return -1;
        if (t[b] == ';') { /* a declaration; the definition comes later */
            p = b + 1;
            continue;
        }
        /* linkage directives right before .entry */
        size_t h = at;
        for (;;) {
            size_t w = h;
            while (w > 0 && isspace((unsigned char)t[w - 1]))
                w--;
            size_t s = w;
            while (s > 0 && ident_char(t[s - 1]))
                s--;
            if ((w - s == 8 && !memcmp(t + s, ".visible", 8)) || (w - s == 5 && !memcmp(t + s, ".weak", 5)))
                h = s;
            else
                break;
        }
        *header = h;
        *close = c;
        *brace = b;
        return 0;
    }
    return -1;
}

int plan_wrap_shared(const char *text, size_t len, const char *kernel, int nparams,
                           const plan_wrap_param *params, char **out, size_t *out_len, char *msg, size_t msg_len)
{
    *out = NULL;
    *out_len = 0;
    size_t header, close, brace;
    if (find_entry(text, len, kernel, &header, &close, &brace)) {
        snprintf(msg, msg_len, "cannot find the definition of .entry %s in the PTX text", kernel);
        return -1;
    }
    for (int i = 0; i < nparams; i++)
        if (params[i].size != 4 && params[i].size != 8) {
            snprintf(msg, msg_len, "parameter %d '%s' is %zu bytes; the call ABI has 4- and 8-byte parameters", i,
                     params[i].name, params[i].size);
            return -1;
        }
    wrap_out b = {{0}, 0};
    /* the module up to the entry, the entry as a function, the rest */
    wb_add(&b, text, header);
    wb_printf(&b, ".func %s" WRAP_BODY_SUFFIX "(", kernel);
    for (int i = 0; i < nparams; i++)
        wb_printf(&b, "%s\n\t.param .align %zu .b8 %s[%zu]", i ? "," : "", params[i].size, params[i].name,
                  params[i].size);
    wb_str(&b, "\n)\n");
    wb_add(&b, text + brace, len - brace);
    /* the wrapper entry: K's parameters and directives */
    wb_printf(&b, "\n\n// kemu call: smem scratch operands come from the dynamic shared memory\n"
                  ".extern .shared .align 128 .b8 " WRAP_SMEM_ARRAY "[];\n"
                  ".visible .entry %s(",
              kernel);
    for (int i = 0; i < nparams; i++)
        wb_printf(&b, "%s\n\t.param %s %s", i ? "," : "", params[i].size == 8 ? ".u64" : ".u32", params[i].name);
    wb_str(&b, "\n)");
    wb_add(&b, text + close + 1, brace - close - 1);
    wb_printf(&b, "{\n\t.reg .b64 %%kemu_a<%d>;\n\t.reg .b32 %%kemu_w<%d>;\n", nparams + 1, nparams + 1);
    for (int i = 0; i < nparams; i++) {
        const plan_wrap_param *p = &params[i];
        const char *r = p->size == 8 ? "%kemu_a" : "%kemu_w", *ty = p->size == 8 ? "u64" : "u32";
        if (p->smem)
            wb_printf(&b, "\tmov.%s %s%d, " WRAP_SMEM_ARRAY ";\n\tadd.%s %s%d, %s%d, %llu;\n", ty, r, i, ty, r, i,
                      r, i, (unsigned long long)p->smem_offset);
        else
            wb_printf(&b, "\tld.param.%s %s%d, [%s];\n", ty, r, i, p->name);
    }
    wb_str(&b, "\t{\n");
    for (int i = 0; i < nparams; i++) {
        const plan_wrap_param *p = &params[i];
        wb_printf(&b, "\t.param .align %zu .b8 kemu_arg%d[%zu];\n\tst.param.b%d [kemu_arg%d], %s%d;\n", p->size, i,
                  p->size, p->size == 8 ? 64 : 32, i, p->size == 8 ? "%kemu_a" : "%kemu_w", i);
    }
    wb_printf(&b, "\tcall.uni %s" WRAP_BODY_SUFFIX ", (", kernel);
    for (int i = 0; i < nparams; i++)
        wb_printf(&b, "%skemu_arg%d", i ? ", " : "", i);
    wb_str(&b, ");\n\t}\n\tret;\n}\n");
    if (b.failed) {
        util_buffer_free(&b.b);
        snprintf(msg, msg_len, "out of memory");
        return -1;
    }
    *out = b.b.data;
    *out_len = b.b.len;
    return 0;
}

/* Unit tests of the PTX front end (src/ptx/): lexing of every literal
 * form, module directives, declarations, operands, and the exact error
 * messages with positions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/ptx.h"
#include "ptx/lex.h"

static ptx_module *parse_ok(const char *src)
{
    ptx_module *m = NULL;
    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_status st = ptx_parse(src, strlen(src), "t.ptx", &m, &err);
    ck_assert_msg(st == KEMU_OK, "parse failed: %s", err.message);
    return m;
}

static void parse_fail(const char *src, int line, int col, const char *needle)
{
    ptx_module *m = NULL;
    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_status st = ptx_parse(src, strlen(src), "t.ptx", &m, &err);
    ck_assert_int_eq(st, KEMU_ERR_PARSE);
    ck_assert_int_eq(err.line, line);
    ck_assert_int_eq(err.column, col);
    ck_assert_msg(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
}

START_TEST(lex_literals)
{
    const char *src = "0x1F 017 0b101 42U 0f3F800000 0d3FF0000000000000 1.5e3 -";
    lex_state s;
    lex_init(&s, src, strlen(src));
    lex_token t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_INT);
    ck_assert_uint_eq(t.ival, 31);
    t = lex_next(&s);
    ck_assert_uint_eq(t.ival, 15);
    t = lex_next(&s);
    ck_assert_uint_eq(t.ival, 5);
    t = lex_next(&s);
    ck_assert_uint_eq(t.ival, 42);
    ck_assert_int_eq(t.is_unsigned, 1);
    t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_FLOAT);
    ck_assert_int_eq(t.is_f32, 1);
    ck_assert_uint_eq(t.fbits, 0x3F800000u);
    t = lex_next(&s);
    ck_assert_int_eq(t.is_f32, 0);
    ck_assert_uint_eq(t.fbits, 0x3FF0000000000000ull);
    t = lex_next(&s);
    double d;
    memcpy(&d, &t.fbits, 8);
    ck_assert(d == 1500.0);
    t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_PUNCT);
    ck_assert_int_eq(t.punct, '-');
    ck_assert_int_eq(t.col, 56);
}
END_TEST

START_TEST(lex_dotted_and_comments)
{
    const char *src = "// c\nld.shared::cluster.u32 /* x\n y */ %r1";
    lex_state s;
    lex_init(&s, src, strlen(src));
    lex_token t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_IDENT);
    ck_assert_int_eq(t.line, 2);
    t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_DOTIDENT);
    ck_assert_int_eq(t.len, (int)strlen(".shared::cluster"));
    t = lex_next(&s);
    ck_assert_int_eq(t.len, 4);
    t = lex_next(&s);
    ck_assert_int_eq(t.kind, LEX_IDENT);
    ck_assert_int_eq(t.line, 3);
}
END_TEST

START_TEST(module_directives_and_params)
{
    ptx_module *m = parse_ok(
        ".version 8.8\n.target sm_80\n.address_size 64\n"
        ".global .align 4 .b8 tbl[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
        ".const .align 8 .u64 ptrs[1] = {generic(tbl)+4};\n"
        ".extern .shared .align 16 .b8 dyn[];\n"
        ".visible .entry k(.param .u64 k_p0, .param .align 8 .b8 k_p1[24], .param .f32 k_p2)\n"
        ".maxntid 128, 1, 1\n{\n .reg .b32 %r<3>;\n .reg .pred %p;\n ret;\n}\n");
    ck_assert_int_eq(m->version_major, 8);
    ck_assert_int_eq(m->version_minor, 8);
    ck_assert_str_eq(m->target, "sm_80");
    ck_assert_int_eq(m->nglobals, 3);
    ck_assert_int_eq(m->globals[0]->init[7], 8);
    ck_assert_int_eq(m->globals[1]->nrelocs, 1);
    ck_assert_int_eq(m->globals[1]->relocs[0].addend, 4);
    ck_assert_int_eq(m->globals[2]->is_unsized, 1);
    ck_assert_int_eq(m->nfunctions, 1);
    ptx_function *f = m->functions[0];
    ck_assert_int_eq(f->is_entry, 1);
    ck_assert_int_eq(f->nparams, 3);
    ck_assert_uint_eq(f->params[1]->size, 24);
    ck_assert_uint_eq(f->params[1]->align, 8);
    ck_assert_uint_eq(f->maxntid[0], 128);
    ck_assert_int_eq(f->nregs, 4);
    ptx_module_free(m);
}
END_TEST

START_TEST(operands)
{
    ptx_module *m = parse_ok(
        ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n .reg .pred %p<2>;\n"
        " mov.u32 %r1, %tid.x;\n"
        " @!%p1 ld.global.v2.u32 {%r1, %r2}, [%rd1+-8];\n"
        " setp.lt.and.s32 %p0|%p1, %r1, -3, !%p0;\n"
        " ld.param.u64 %rd0, [p];\n"
        "$L1:\n bra.uni $L1;\n}\n");
    ptx_function *f = m->functions[0];
    ck_assert_int_eq(f->nbody, 6);
    ptx_insn *in = &f->body[0].insn;
    ck_assert_int_eq(in->ops[1].kind, PTX_OP_SPECIAL);
    ck_assert_int_eq(in->ops[1].component, 'x');
    in = &f->body[1].insn;
    ck_assert_ptr_nonnull(in->guard);
    ck_assert_int_eq(in->guard->negate, 1);
    ck_assert_int_eq(in->ops[0].kind, PTX_OP_VECTOR);
    ck_assert_int_eq(in->ops[0].nelems, 2);
    ck_assert_int_eq(in->ops[1].kind, PTX_OP_ADDRESS);
    ck_assert_int_eq(in->ops[1].imm, -8);
    in = &f->body[2].insn;
    ck_assert_int_eq(in->ops[0].kind, PTX_OP_VECTOR);
    ck_assert_int_eq(in->ops[0].negate, 2);
    ck_assert_int_eq(in->ops[2].imm, -3);
    ck_assert_int_eq(in->ops[3].negate, 1);
    ck_assert_int_eq(f->body[4].kind, PTX_STMT_LABEL);
    ptx_module_free(m);
}
END_TEST

/* ".align N" after ".ptr" is the alignment of the memory the parameter
 * points to (PTX ISA 5.1.6.3; Triton writes it), not the parameter's own;
 * before ".ptr" or without it, it is the parameter's. */
START_TEST(ptr_param_align)
{
    ptx_module *m = parse_ok(
        ".version 8.8\n.target sm_80\n.address_size 64\n"
        ".visible .entry k(.param .u64 .ptr .global .align 1 a, .param .u32 n,\n"
        " .param .u64 .ptr .align 16 b, .param .align 16 .b8 s[8])\n{\n ret;\n}\n");
    ptx_function *f = m->functions[0];
    ck_assert_int_eq(f->nparams, 4);
    ck_assert_uint_eq(f->params[0]->align, 8);
    ck_assert_uint_eq(f->params[1]->align, 4);
    ck_assert_uint_eq(f->params[2]->align, 8);
    ck_assert_uint_eq(f->params[3]->align, 16);
    ptx_module_free(m);
}
END_TEST

/* Vector operands up to 128 elements (wgmma's widest accumulator list);
 * one more is an error at the brace. */
START_TEST(wide_vector_operands)
{
    char src[8192];
    int n = snprintf(src, sizeof src, ".version 8.0\n.target sm_90\n.address_size 64\n"
                                      ".visible .entry k()\n{\n .reg .b32 %%r<130>;\n mov.b32 {");
    for (int i = 0; i < 128; i++)
        n += snprintf(src + n, sizeof src - (size_t)n, "%s%%r%d", i ? ", " : "", i);
    snprintf(src + n, sizeof src - (size_t)n, "}, 0;\n ret;\n}\n");
    ptx_module *m = parse_ok(src);
    ck_assert_int_eq(m->functions[0]->body[0].insn.ops[0].nelems, 128);
    ptx_module_free(m);
    n = snprintf(src, sizeof src, ".version 8.0\n.target sm_90\n.address_size 64\n"
                                  ".visible .entry k()\n{\n .reg .b32 %%r<130>;\n mov.b32 {");
    for (int i = 0; i < 129; i++)
        n += snprintf(src + n, sizeof src - (size_t)n, "%s%%r%d", i ? ", " : "", i);
    snprintf(src + n, sizeof src - (size_t)n, "}, 0;\n ret;\n}\n");
    parse_fail(src, 7, 10, "vector operand has too many elements");
}
END_TEST

START_TEST(scoped_call_params)
{
    ptx_module *m = parse_ok(
        ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r;\n ld.param.b32 %r, [a];\n st.param.b32 [r], %r;\n ret;\n}\n"
        ".visible .entry k()\n{\n .reg .b32 %r;\n"
        " {\n .param .b32 param0;\n st.param.b32 [param0], 1;\n .param .b32 retval0;\n"
        " call.uni (retval0), f, (param0);\n ld.param.b32 %r, [retval0];\n }\n"
        " {\n .param .b32 param0;\n st.param.b32 [param0], 2;\n }\n ret;\n}\n");
    ptx_function *k = m->functions[1];
    ck_assert_int_eq(k->nlocals, 3);
    ptx_insn *call = &k->body[1].insn;
    ck_assert_str_eq(call->opcode, "call");
    ck_assert_int_eq(call->ncall_rets, 1);
    ck_assert_int_eq(call->ncall_args, 1);
    ck_assert_ptr_eq(call->call_args[0].var, k->locals[0]);
    ptx_module_free(m);
}
END_TEST

START_TEST(errors_have_positions)
{
    parse_fail(".version 8.0\n.target sm_80\n.visible .entry k()\n{\n mov.u32 %r9, 1;\n}\n", 5, 10,
               "undeclared register '%r9'");
    parse_fail(".version 8.0\n.target sm_80\n.visible .entry k()\n{\n .reg .b32 %r;\n mov.u32 %r 1;\n}\n", 6, 13,
               "expected ';' after instruction but found '1'");
    parse_fail(".target sm_80\n", 1, 1, "must start with a .version");
    parse_fail(".version 8.0\n.bogus 1;\n", 2, 1, "unknown directive '.bogus'");
    parse_fail(".version 8.0\n.global .f32 x = 0f3F80;\n", 2, 18, "exactly 8 hex digits");
    parse_fail(".version 8.0\n.visible .entry k()\n{\n", 4, 1, "unexpected end of file");
}
END_TEST

START_TEST(error_caret_line)
{
    const char *src = ".version 8.0\n.visible .entry k()\n{\n  bogus;;\n  @%q ret;\n}\n";
    ptx_module *m = NULL;
    kemu_error err;
    ck_assert_int_eq(ptx_parse(src, strlen(src), "c.ptx", &m, &err), KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, "c.ptx:5:4: error: undeclared register '%q'\n    @%q ret;\n     ^\n"),
                  "got: %s", err.message);
}
END_TEST

/* Random bytes: every record whole (the report ends at a line end), no
 * control byte or invalid UTF-8 reaches the report, and it ends with the
 * "too many errors" line when errors were left out. */
START_TEST(errors_escaped_and_whole)
{
    char src[4096];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof src; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        src[i] = (char)(x >> 24);
    }
    ptx_module *m = NULL;
    kemu_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(ptx_parse(src, sizeof src, "r.ptx", &m, &err), KEMU_ERR_PARSE);
    size_t n = strlen(err.message);
    ck_assert_uint_lt(n, sizeof err.message - 1);
    ck_assert_msg(n > 0 && err.message[n - 1] == '\n', "cut mid-line: %s", err.message);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err.message[i];
        ck_assert_msg(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80, "raw byte 0x%02x at %zu", c, i);
    }
    ck_assert_msg(strstr(err.message, "r.ptx: too many errors, stopping ("), "%s", err.message);
}
END_TEST

/* Control bytes, NUL, DEL, invalid UTF-8 and a bidirectional override are
 * escaped in the message and the quoted line, valid UTF-8 is kept, and the
 * caret counts the escapes' width. */
START_TEST(error_bytes_escaped)
{
    static const char src[] = ".version 8.0\n\x1b[31m\n";
    ptx_module *m = NULL;
    kemu_error err;
    ck_assert_int_eq(ptx_parse(src, sizeof src - 1, "e.ptx", &m, &err), KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, "e.ptx:2:1: error: unexpected character '\\x1b'\n  \\x1b[31m\n  ^\n"),
                  "got: %s", err.message);
    static const char src2[] = ".version 8.0\n\xc3\xa9\x7f\xff\xe2\x80\xae;\n";
    ck_assert_int_eq(ptx_parse(src2, sizeof src2 - 1, "e.ptx", &m, &err), KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, "e.ptx:2:1: error: unexpected character '\xc3\xa9'\n"), "got: %s", err.message);
    ck_assert_msg(strstr(err.message, "  \xc3\xa9\\x7f\\xff\\u202E;\n"), "got: %s", err.message);
    ck_assert_msg(strstr(err.message, "e.ptx:2:3: error: unexpected character '\\x7f'\n"), "got: %s", err.message);
    /* the caret under \xff: after é (1 column) and \x7f (4 columns) */
    ck_assert_msg(strstr(err.message, "e.ptx:2:4: error: unexpected character '\\xff'\n  \xc3\xa9\\x7f\\xff\\u202E;\n       ^\n"),
                  "got: %s", err.message);
    /* a NUL byte is an unexpected character too, not punctuation */
    static const char src3[] = ".version 8.0\n.target sm_80\n.visible .entry k()\n{\n ret;\x00\n}\n";
    ck_assert_int_eq(ptx_parse(src3, sizeof src3 - 1, "e.ptx", &m, &err), KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, "e.ptx:5:6: error: unexpected character '\\x00'"), "got: %s", err.message);
}
END_TEST

/* A long line is quoted as a window around the column, the caret under it. */
START_TEST(error_long_line_window)
{
    char src[2048];
    int n = snprintf(src, sizeof src, ".version 8.0\n.target sm_80\n.visible .entry k()\n{\n");
    for (int i = 0; i < 100; i++)
        n += snprintf(src + n, sizeof src - (size_t)n, " ret;");
    n += snprintf(src + n, sizeof src - (size_t)n, " bad!; ret;\n}\n");
    ptx_module *m = NULL;
    kemu_error err;
    ck_assert_int_eq(ptx_parse(src, (size_t)n, "w.ptx", &m, &err), KEMU_ERR_PARSE);
    const char *e = strstr(err.message, "w.ptx:5:506: error:");
    ck_assert_msg(e, "got: %s", err.message);
    const char *l1 = strchr(e, '\n') + 1, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n');
    ck_assert_msg(!strncmp(l1, "  ...", 5), "got: %s", err.message);
    /* the caret sits under the column's character */
    int caret = (int)(strchr(l2, '^') - l2);
    ck_assert_int_eq(l1[caret], ';');
    ck_assert_int_eq(l1[caret - 1], '!');
    ck_assert_int_lt((int)(l3 - l2), 130);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ptx");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, lex_literals);
    tcase_add_test(tc, lex_dotted_and_comments);
    tcase_add_test(tc, module_directives_and_params);
    tcase_add_test(tc, operands);
    tcase_add_test(tc, ptr_param_align);
    tcase_add_test(tc, wide_vector_operands);
    tcase_add_test(tc, scoped_call_params);
    tcase_add_test(tc, errors_have_positions);
    tcase_add_test(tc, error_caret_line);
    tcase_add_test(tc, errors_escaped_and_whole);
    tcase_add_test(tc, error_bytes_escaped);
    tcase_add_test(tc, error_long_line_window);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Unit tests of source-level debug info: the parser keeping `.section`
 * items (bytes, refs, labels), the lowering's label -> pc table, and the
 * DWARF reader (src/debug/dwarf.c) on nvcc -G's PTX (tests/debug/dwarf.ptx)
 * and on truncated and garbled copies of its sections, which must give
 * no variables and never crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bc/bc.h"
#include "debug/dwarf.h"
#include "util.h"

#define H ".version 8.0\n.target sm_80\n.address_size 64\n"

static bc_module *lower(const char *src, size_t len)
{
    ptx_module *p;
    bc_module *m;
    kemu_error err;
    memset(&err, 0, sizeof err);
    ck_assert_msg(ptx_parse(src, len, "t.ptx", &p, &err) == KEMU_OK, "%s", err.message);
    ck_assert_msg(bc_module_layout(p, NULL, NULL, &m, &err) == KEMU_OK, "%s", err.message);
    ck_assert_msg(bc_module_lower(m, 0x1000, &err) == KEMU_OK, "%s", err.message);
    return m;
}

static void release(bc_module *m)
{
    ptx_module *p = m->ptx;
    bc_module_free(m);
    ptx_module_free(p);
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return s;
}

START_TEST(sections_keep_items)
{
    const char *src = H ".visible .entry k()\n{\n$L__a:\n ret;\n$L__b:\n}\n"
                        ".section .debug_foo\n{\n.b8 1,2\n.b16 0x304\n.b32 $L__b+4\n.b64 .debug_bar+8\n"
                        "$L__s0:\n.b8 -1\n}\n"
                        ".section .debug_odd\n{\n.b8 \"text\"\n}\n"
                        ".section .debug_foo\n{\n.b8 9\n}\n";
    bc_module *m = lower(src, strlen(src));
    const ptx_section *s = ptx_module_section(m->ptx, ".debug_foo");
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->size, 1 + 1 + 2 + 4 + 8 + 1 + 1); /* the second block is appended */
    ck_assert_uint_eq(s->data[0], 1);
    ck_assert_uint_eq(s->data[2], 4);
    ck_assert_uint_eq(s->data[3], 3);
    ck_assert_int_eq(s->nrefs, 2);
    ck_assert_uint_eq(s->refs[0].at, 4);
    ck_assert_uint_eq(s->refs[0].width, 4);
    ck_assert_str_eq(s->refs[0].name, "$L__b");
    ck_assert_int_eq(s->refs[0].addend, 4);
    ck_assert_int_eq(s->refs[0].kind, PTX_REF_NAME);
    ck_assert_uint_eq(s->refs[1].at, 8);
    ck_assert_int_eq(s->refs[1].kind, PTX_REF_SECTION);
    ck_assert_int_eq(s->refs[1].addend, 8);
    ck_assert_int_eq(s->nlabels, 1);
    ck_assert_uint_eq(s->labels[0].at, 16);
    ck_assert_uint_eq(s->data[16], 0xff);
    ck_assert_uint_eq(s->data[17], 9);
    /* a block in a form not kept is skipped, as before, without an error */
    const ptx_section *odd = ptx_module_section(m->ptx, ".debug_odd");
    ck_assert(odd == NULL || odd->size == 0);
    /* the lowering's labels: the pc each stands before */
    bc_function *k = bc_module_find(m, "k");
    uint32_t pc = 99;
    ck_assert_int_eq(bc_function_label_pc(k, "$L__a", &pc), 0);
    ck_assert_uint_eq(pc, 0);
    ck_assert_int_eq(bc_function_label_pc(k, "$L__b", &pc), 0);
    ck_assert_uint_eq(pc, 1);
    ck_assert_int_eq(bc_function_label_pc(k, "$L__none", &pc), -1);
    release(m);
}
END_TEST

static const dwarf_var *var_named(const dwarf_info *di, const char *name)
{
    int n;
    const dwarf_var *v = dwarf_vars(di, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

START_TEST(reads_nvcc_g)
{
    size_t len;
    char *text = read_text(DEBUG_DIR "/dwarf.ptx", &len);
    bc_module *m = lower(text, len);
    char msg[256];
    dwarf_info *di = dwarf_load_module(m, msg, sizeof msg);
    ck_assert_msg(di != NULL, "%s", msg);
    bc_function *k = bc_module_find(m, "accumulate");
    bc_function *twice = bc_module_find(m, "_Z5twicei");
    ck_assert_ptr_nonnull(k);
    ck_assert_ptr_nonnull(twice);
    /* i lives in %r1 over its whole scope */
    const dwarf_var *i = var_named(di, "i");
    ck_assert_ptr_nonnull(i);
    const dwarf_loc *loc = dwarf_location(di, i, k->index, k->ncode - 1);
    ck_assert_ptr_nonnull(loc);
    ck_assert_int_eq(loc->kind, DWARF_LOC_REG);
    ck_assert_str_eq(loc->reg, "%r1");
    char tn[64];
    dwarf_type_name(di, i->type, tn, sizeof tn);
    ck_assert_str_eq(tn, "int");
    /* hist is in the local depot; p is a pointer; pr a struct */
    const dwarf_var *hist = var_named(di, "hist");
    loc = dwarf_location(di, hist, k->index, 40);
    ck_assert_ptr_nonnull(loc);
    ck_assert_int_eq(loc->kind, DWARF_LOC_ADDR);
    ck_assert_str_eq(loc->symbol, "__local_depot1");
    dwarf_type_name(di, hist->type, tn, sizeof tn);
    ck_assert_str_eq(tn, "int [4]");
    dwarf_type_name(di, var_named(di, "p")->type, tn, sizeof tn);
    ck_assert_str_eq(tn, "const float *");
    const dwarf_type *pair = dwarf_type_at(di, dwarf_type_strip(di, var_named(di, "pr")->type));
    ck_assert_int_eq(pair->kind, DWARF_T_STRUCT);
    ck_assert_int_eq(pair->nmembers, 2);
    ck_assert_str_eq(dwarf_members(di)[pair->first_member + 1].name, "b");
    ck_assert_uint_eq(dwarf_members(di)[pair->first_member + 1].offset, 4);
    /* the kernel's parameters are in parameter space */
    const dwarf_var *out = var_named(di, "out");
    ck_assert(out->is_param);
    loc = dwarf_location(di, out, k->index, 0);
    ck_assert_str_eq(loc->symbol, "accumulate_param_0");
    /* j has a location list: live in the loop only */
    const dwarf_var *j = var_named(di, "j");
    ck_assert_int_gt(j->nlocs, 1);
    ck_assert_ptr_null(dwarf_location(di, j, k->index, 0));
    /* scopes: at the last op of the kernel i, acc ... are visible, x is not */
    const dwarf_var *vis[32];
    int n = dwarf_visible(di, k->index, 40, vis, 32);
    ck_assert_int_ge(n, 8);
    ck_assert_ptr_null(dwarf_lookup(di, k->index, 40, "x"));
    ck_assert_ptr_nonnull(dwarf_lookup(di, twice->index, 0, "x"));
    release(m);
    free(text);
    dwarf_free(di);
}
END_TEST

/* Every nvcc -G kernel of tests/kernels reads, with variables. */
START_TEST(reads_every_g_kernel)
{
    static const char *const names[] = {"atomics.sm_80", "divergence.sm_80", "elementwise.sm_80",
                                        "hopper.sm_90a", "cluster.sm_90", "sync.sm_80"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.G.ptx", KERNELS_DIR, names[i]);
        size_t len;
        char *text = read_text(path, &len);
        bc_module *m = lower(text, len);
        char msg[256];
        dwarf_info *di = dwarf_load_module(m, msg, sizeof msg);
        ck_assert_msg(di != NULL, "%s: %s", path, msg);
        int nv, ns;
        dwarf_vars(di, &nv);
        dwarf_scopes(di, &ns);
        ck_assert_msg(nv > 0 && ns > 0, "%s: %d variables, %d scopes", path, nv, ns);
        dwarf_free(di);
        release(m);
        free(text);
    }
}
END_TEST

/* Labels "$L__tmpN" at pc N of function 0, "$L__func_*" at 0 and 100. */
static int fake_labels(void *ctx, const char *label, int *fn, uint32_t *pc)
{
    (void)ctx;
    *fn = 0;
    if (!strncmp(label, "$L__tmp", 7)) {
        *pc = (uint32_t)atoi(label + 7);
        return 0;
    }
    if (!strncmp(label, "$L__func_", 9)) {
        *pc = strstr(label, "end") ? 100 : 0;
        return 0;
    }
    return -1;
}

/* Runs every query over what loaded (none may crash). */
static void exercise(const dwarf_info *di)
{
    int nv, ns;
    const dwarf_var *v = dwarf_vars(di, &nv);
    dwarf_scopes(di, &ns);
    char tn[128];
    for (int i = 0; i < nv; i++) {
        dwarf_type_name(di, v[i].type, tn, sizeof tn);
        for (uint32_t pc = 0; pc < 110; pc += 7)
            dwarf_location(di, &v[i], 0, pc);
        dwarf_lookup(di, 0, 5, v[i].name);
    }
    const dwarf_var *vis[64];
    for (uint32_t pc = 0; pc < 110; pc += 3)
        dwarf_visible(di, 0, pc, vis, 64);
}

/* The test PTX's sections with one of them (named) replaced by a copy
 * changed by fn. */
typedef struct copy {
    ptx_section s[8];
    int n;
    unsigned char *data;
} copy;

static void copy_sections(const ptx_module *p, copy *c, const char *which)
{
    c->n = p->nsections < 8 ? p->nsections : 8;
    memcpy(c->s, p->sections, (size_t)c->n * sizeof *c->s);
    c->data = NULL;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->s[i].name, which)) {
            c->data = malloc(c->s[i].size + 1);
            memcpy(c->data, c->s[i].data, c->s[i].size);
            c->s[i].data = c->data;
        }
}

static ptx_section *section_in(copy *c, const char *which)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->s[i].name, which))
            return &c->s[i];
    return NULL;
}

START_TEST(truncated_sections_give_no_variables)
{
    size_t len;
    char *text = read_text(DEBUG_DIR "/dwarf.ptx", &len);
    ptx_module *p;
    kemu_error err;
    memset(&err, 0, sizeof err);
    ck_assert(ptx_parse(text, len, "dwarf.ptx", &p, &err) == KEMU_OK);
    static const char *const names[] = {".debug_info", ".debug_abbrev"};
    for (int w = 0; w < 2; w++) {
        copy c;
        copy_sections(p, &c, names[w]);
        ptx_section *s = section_in(&c, names[w]);
        ck_assert_ptr_nonnull(s);
        size_t full = s->size;
        for (size_t k = 0; k < full; k++) {
            s->size = k;
            while (s->nrefs && s->refs[s->nrefs - 1].at + s->refs[s->nrefs - 1].width > k)
                s->nrefs--;
            char msg[128];
            dwarf_info *di = dwarf_load(c.s, c.n, fake_labels, NULL, msg, sizeof msg);
            ck_assert_msg(di == NULL, "%s cut at %zu of %zu bytes still loaded", names[w], k, full);
        }
        free(c.data);
    }
    /* .debug_loc cut short: the variables stay, the listed ones optimized out */
    copy c;
    copy_sections(p, &c, ".debug_loc");
    ptx_section *loc = section_in(&c, ".debug_loc");
    loc->size /= 2;
    while (loc->nrefs && loc->refs[loc->nrefs - 1].at + loc->refs[loc->nrefs - 1].width > loc->size)
        loc->nrefs--;
    dwarf_info *di = dwarf_load(c.s, c.n, fake_labels, NULL, NULL, 0);
    ck_assert_ptr_nonnull(di);
    exercise(di);
    dwarf_free(di);
    free(c.data);
    ptx_module_free(p);
    free(text);
}
END_TEST

START_TEST(garbled_sections_never_crash)
{
    size_t len;
    char *text = read_text(DEBUG_DIR "/dwarf.ptx", &len);
    ptx_module *p;
    kemu_error err;
    memset(&err, 0, sizeof err);
    ck_assert(ptx_parse(text, len, "dwarf.ptx", &p, &err) == KEMU_OK);
    static const char *const names[] = {".debug_info", ".debug_abbrev", ".debug_loc"};
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    for (int round = 0; round < 600; round++) {
        const char *which = names[round % 3];
        copy c;
        copy_sections(p, &c, which);
        ptx_section *s = section_in(&c, which);
        ck_assert_ptr_nonnull(s);
        int flips = 1 + round % 5;
        for (int f = 0; f < flips && s->size; f++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(seed >> 33) % s->size;
            c.data[at] = (unsigned char)(seed >> 13);
        }
        dwarf_info *di = dwarf_load(c.s, c.n, fake_labels, NULL, NULL, 0);
        exercise(di);
        dwarf_free(di);
        free(c.data);
    }
    /* a DWARF version kemu does not read, and a section of 0xff: nothing */
    copy c;
    copy_sections(p, &c, ".debug_info");
    c.data[4] = 7;
    ck_assert_ptr_null(dwarf_load(c.s, c.n, fake_labels, NULL, NULL, 0));
    ptx_section *s = section_in(&c, ".debug_info");
    memset(c.data, 0xff, s->size);
    s->nrefs = 0;
    ck_assert_ptr_null(dwarf_load(c.s, c.n, fake_labels, NULL, NULL, 0));
    free(c.data);
    /* no sections at all */
    char msg[128];
    ck_assert_ptr_null(dwarf_load(NULL, 0, fake_labels, NULL, msg, sizeof msg));
    ck_assert(strstr(msg, "-G") != NULL);
    ptx_module_free(p);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dwarf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sections_keep_items);
    tcase_add_test(tc, reads_nvcc_g);
    tcase_add_test(tc, reads_every_g_kernel);
    tcase_add_test(tc, truncated_sections_give_no_variables);
    tcase_add_test(tc, garbled_sections_never_crash);
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

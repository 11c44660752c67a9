/* Finding groups: the checkers count each kind of finding once per launch
 * (a group named by a tool-defined id, e.g. the pair of ops of a race) and
 * collapse its instances, keeping the smallest instance as the one shown.
 * Every host thread collects its own groups; merging them is commutative
 * (set union, minimum), so the report does not depend on how blocks were
 * spread over threads. This file holds no tool logic. */
#include "check/check_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdull;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ull;
    z ^= z >> 33;
    return z;
}

/* ---- sets ------------------------------------------------------------------ */

static int set_grow(check_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        uint64_t v = s->slots[i];
        if (!v)
            continue;
        size_t j = (size_t)mix64(v) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = v;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

int check_set_add(check_set *s, uint64_t v)
{
    if (v == 0) {
        int added = !s->has_zero;
        s->has_zero = 1;
        return added;
    }
    if ((s->count + 1) * 2 > s->cap && set_grow(s))
        return -1;
    size_t j = (size_t)mix64(v) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == v)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = v;
    s->count++;
    return 1;
}

int check_set_has(const check_set *s, uint64_t v)
{
    if (v == 0)
        return s->has_zero;
    if (!s->cap)
        return 0;
    size_t j = (size_t)mix64(v) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == v)
            return 1;
        j = (j + 1) & (s->cap - 1);
    }
    return 0;
}

size_t check_set_size(const check_set *s)
{
    return s->count + (s->has_zero ? 1 : 0);
}

void check_set_free(check_set *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- groups ---------------------------------------------------------------- */

static uint64_t group_hash(int tool, const uint64_t id[3])
{
    return mix64(id[0] ^ mix64(id[1] ^ mix64(id[2] ^ (uint64_t)tool)));
}

static int index_rebuild(check_groups *g, size_t cap)
{
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index)
        return -1;
    for (size_t i = 0; i < g->n; i++) {
        size_t j = (size_t)group_hash(g->v[i].tool, g->v[i].id) & (cap - 1);
        while (index[j])
            j = (j + 1) & (cap - 1);
        index[j] = (uint32_t)(i + 1);
    }
    free(g->index);
    g->index = index;
    g->index_cap = cap;
    return 0;
}

static _Thread_local uint64_t new_groups;
static _Thread_local int new_group_tool, new_group_severity;

uint64_t check_new_findings(int *tool, int *severity)
{
    *tool = new_group_tool;
    *severity = new_group_severity;
    return new_groups;
}

check_group *check_groups_get(check_groups *g, int tool, int severity, const uint64_t id[3])
{
    if (g->index_cap) {
        size_t j = (size_t)group_hash(tool, id) & (g->index_cap - 1);
        while (g->index[j]) {
            check_group *gr = &g->v[g->index[j] - 1];
            if (gr->tool == tool && !memcmp(gr->id, id, sizeof gr->id))
                return gr;
            j = (j + 1) & (g->index_cap - 1);
        }
    }
    if ((g->n + 1) * 2 > g->index_cap && index_rebuild(g, g->index_cap ? g->index_cap * 2 : 64))
        return NULL;
    if (util_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v))
        return NULL;
    check_group *gr = &g->v[g->n];
    memset(gr, 0, sizeof *gr);
    gr->tool = tool;
    gr->severity = severity;
    memcpy(gr->id, id, sizeof gr->id);
    for (int i = 0; i < 4; i++)
        gr->rep.order[i] = UINT64_MAX;
    size_t j = (size_t)group_hash(tool, id) & (g->index_cap - 1);
    while (g->index[j])
        j = (j + 1) & (g->index_cap - 1);
    g->index[j] = (uint32_t)(g->n + 1);
    g->n++;
    new_groups++;
    new_group_tool = tool;
    new_group_severity = severity;
    return gr;
}

static int rep_less(const check_rep *a, const check_rep *b)
{
    for (int i = 0; i < 4; i++)
        if (a->order[i] != b->order[i])
            return a->order[i] < b->order[i];
    return 0;
}

void check_group_note(check_group *gr, uint64_t instance, const check_rep *rep)
{
    check_set_add(&gr->instances, instance);
    if (rep && rep_less(rep, &gr->rep))
        gr->rep = *rep;
}

void check_group_offer(check_group *gr, const check_rep *rep)
{
    if (rep_less(rep, &gr->rep))
        gr->rep = *rep;
}

void check_groups_merge(check_groups *dst, check_groups *src)
{
    for (size_t i = 0; i < src->n; i++) {
        check_group *s = &src->v[i];
        check_group *d = check_groups_get(dst, s->tool, s->severity, s->id);
        if (!d) {
            check_set_free(&s->instances);
            free(s->detail);
            continue;
        }
        for (size_t k = 0; k < s->instances.cap; k++)
            if (s->instances.slots[k])
                check_set_add(&d->instances, s->instances.slots[k]);
        if (s->instances.has_zero)
            check_set_add(&d->instances, 0);
        d->extra += s->extra;
        if (rep_less(&s->rep, &d->rep))
            d->rep = s->rep;
        if (s->detail && (!d->detail || strcmp(s->detail, d->detail) < 0)) {
            free(d->detail);
            d->detail = s->detail;
            s->detail = NULL;
        }
        free(s->detail);
        check_set_free(&s->instances);
    }
    free(src->v);
    free(src->index);
    memset(src, 0, sizeof *src);
}

void check_groups_free(check_groups *g)
{
    for (size_t i = 0; i < g->n; i++) {
        check_set_free(&g->v[i].instances);
        free(g->v[i].detail);
    }
    free(g->v);
    free(g->index);
    memset(g, 0, sizeof *g);
}

uint64_t check_group_count(const check_group *g)
{
    return (uint64_t)check_set_size(&g->instances) + g->extra;
}

/* String-keyed open-addressing hash map (see util_map.h). */
#include "util_map.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void *util_map_get(const util_map *m, const char *key, size_t len)
{
    if (!m->cap)
        return NULL;
    size_t i = hash_bytes(key, len) & (m->cap - 1);
    for (;;) {
        const util_map_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->keylen == len && memcmp(s->key, key, len) == 0)
            return s->value;
        i = (i + 1) & (m->cap - 1);
    }
}

static int map_resize(util_map *m, size_t cap)
{
    util_map_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t j = 0; j < m->cap; j++) {
        util_map_slot *s = &m->slots[j];
        if (!s->key)
            continue;
        size_t i = hash_bytes(s->key, s->keylen) & (cap - 1);
        while (slots[i].key)
            i = (i + 1) & (cap - 1);
        slots[i] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

void *util_map_put(util_map *m, const char *key, size_t len, void *value, int *failed)
{
    if ((m->count + 1) * 2 > m->cap && map_resize(m, m->cap ? m->cap * 2 : 64)) {
        *failed = 1;
        return NULL;
    }
    size_t i = hash_bytes(key, len) & (m->cap - 1);
    for (;;) {
        util_map_slot *s = &m->slots[i];
        if (!s->key) {
            s->key = key;
            s->keylen = len;
            s->value = value;
            m->count++;
            return NULL;
        }
        if (s->keylen == len && memcmp(s->key, key, len) == 0) {
            void *old = s->value;
            s->value = value;
            return old;
        }
        i = (i + 1) & (m->cap - 1);
    }
}

void util_map_free(util_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

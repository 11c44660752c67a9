/* A string-keyed hash map (open addressing) used for symbol tables. Keys
 * are not copied: they must outlive the map (they live in an arena). */
#ifndef KEMU_UTIL_MAP_H
#define KEMU_UTIL_MAP_H
#include <stddef.h>

typedef struct util_map_slot { const char *key; size_t keylen; void *value; } util_map_slot;
typedef struct util_map { util_map_slot *slots; size_t cap, count; } util_map;

/* Returns the value stored under key[0..len), or NULL. */
void *util_map_get(const util_map *m, const char *key, size_t len);
/* Stores value under key (replacing). Returns the previous value (or NULL);
 * *failed is set to 1 when out of memory. */
void *util_map_put(util_map *m, const char *key, size_t len, void *value, int *failed);
void util_map_free(util_map *m);

#endif

/* Reading a call spec (JSON, docs/call-spec.md) into a kemu_call_spec.
 * Part of the kemu program (it needs jansson); the library's C API takes
 * the struct. */
#ifndef KEMU_CALL_SPEC_H
#define KEMU_CALL_SPEC_H

#include <stddef.h>
#include "kemu/call.h"

/* A parsed spec and everything its pointers point into. */
typedef struct call_spec_doc {
    kemu_call_spec spec;
    void *json;                 /* the jansson document (strings point into it) */
    kemu_call_mesh mesh;
    kemu_call_array *inputs, *outputs;
    kemu_call_scratch *scratch;
    int (*aliases)[2];
    kemu_call_scalar *scalars;
    kemu_call_pair *mpmd;
    kemu_call_mesh *external_meshes;
    char **paths;               /* resolved file paths (owned) */
    size_t npaths;
} call_spec_doc;

/* Reads and parses the spec at path. Relative file names in it are taken
 * relative to the spec's directory; relative output files relative to
 * out_dir instead when out_dir is not NULL. Returns 0, or -1 with one line
 * in err: "FILE:LINE:COLUMN: ..." for JSON syntax, "PATH: ..." naming the
 * field otherwise (doc is then freed). Free a parsed doc with
 * call_spec_free. */
int call_spec_load(const char *path, const char *out_dir, call_spec_doc *doc, char *err, size_t errlen);

/* Frees what call_spec_load allocated (the JSON document, arrays and
 * resolved paths) and zeroes doc; a zeroed doc is fine. */
void call_spec_free(call_spec_doc *doc);

#endif

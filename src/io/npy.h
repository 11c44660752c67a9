/* NumPy .npy files <-> io_array.
 *
 * Read: format versions 1.0, 2.0 and 3.0; descr '<' '>' '|' '=' or no byte
 * order with b1, i1/i2/i4/i8, u1/u2/u4/u8, f2/f4/f8, and V2 for bfloat16;
 * fortran_order True or False; any shape up to IO_MAX_DIMS dimensions,
 * including () for 0-d arrays and zero-size dimensions.
 * Write: version 1.0 (2.0 only if the header would not fit), little-endian,
 * C order.
 *
 * bfloat16: NumPy has no bfloat16. The ml_dtypes package (checked with
 * ml_dtypes 0.6.0, NumPy 2.4) saves its bfloat16 arrays with descr '<V2', a
 * 2-byte opaque "void" type; np.load returns them as V2 and
 * `np.load(p).view(ml_dtypes.bfloat16)` gets the values back. kemu reads
 * '<V2' and '|V2' (and '>V2' as big-endian) as bf16 and writes bf16 as '<V2'.
 */
#ifndef KEMU_IO_NPY_H
#define KEMU_IO_NPY_H

#include <stddef.h>

#include "io/array.h"

/* Reads the .npy file at path into *out (overwriting it; out->data is newly
 * malloc'd and owned by the caller, free with io_array_free). Data comes back
 * C order, host endianness; bool bytes are normalized to 0/1; trailing bytes
 * after the data are ignored. Returns 0, or -1 with a one-line message
 * "PATH: problem" in err (out->data is then NULL). */
int io_npy_read(const char *path, io_array *out, char *err, size_t errlen);

/* Writes a as a .npy file at path. The file is written to a temporary file
 * in the same directory and renamed over path, so a failed write leaves any
 * existing file untouched (an existing file's permission bits are kept; a
 * symlink at path is replaced, not followed). Returns 0, or -1 with
 * "PATH: problem" in err. */
int io_npy_write(const char *path, const io_array *a, char *err, size_t errlen);

/* io_npy_write in two steps, so that several files are written all or
 * none: io_npy_stage writes a's file to a temporary file beside path and
 * returns its name in *staged (0, or -1 with "PATH: problem" in err and
 * nothing left behind); io_npy_commit renames it over path (0, or -1 with
 * the problem in err; the temporary file is removed) and
 * io_npy_discard removes it. Both free *staged. */
int io_npy_stage(const char *path, const io_array *a, char **staged, char *err, size_t errlen);
int io_npy_commit(char *staged, const char *path, char *err, size_t errlen);
void io_npy_discard(char *staged);

/* Writes a's .npy bytes into the existing file at path as it is (opened for
 * writing, neither created, truncated nor replaced): for a character device
 * such as /dev/null or /dev/stdout. Returns 0, or -1 with "PATH: problem"
 * in err. */
int io_npy_write_in_place(const char *path, const io_array *a, char *err, size_t errlen);

/* Same as io_npy_read for a .npy image held in memory (buf, len bytes);
 * messages start with "<memory>:". Never reads outside [buf, buf+len). */
int io_npy_read_mem(const void *buf, size_t len, io_array *out, char *err, size_t errlen);

#endif

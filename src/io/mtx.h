/* Matrix Market internals shared by the sparse reader, the dense reader and
 * the parallel entry parser. */
#ifndef SPX_IO_MTX_H
#define SPX_IO_MTX_H

#include "io/io.h"

typedef enum { SPX__MTX_REAL, SPX__MTX_INTEGER, SPX__MTX_COMPLEX, SPX__MTX_PATTERN } spx__mtx_field;
typedef enum {
    SPX__MTX_GENERAL,
    SPX__MTX_SYMMETRIC,
    SPX__MTX_SKEW,
    SPX__MTX_HERMITIAN
} spx__mtx_symmetry;

typedef struct spx__mtx_header {
    bool array;                 /* array (dense) rather than coordinate */
    spx__mtx_field field;
    spx__mtx_symmetry symmetry;
    spx_dtype graphblas_type;   /* from a %%GraphBLAS type line; DEFAULT if none */
    int64_t rows, cols;
    int64_t entries;            /* stored entries the data section must hold */
    int64_t size_line;          /* line number of the size line */
    size_t data_start;          /* byte offset of the line after it */
} spx__mtx_header;

/* Parse the banner, comments, an optional %%GraphBLAS type line and the size line. */
spx_status spx__mtx_header_parse(spx_ctx *ctx, const spx__input *in, spx__mtx_header *h);
/* The value type to read into when the caller asked for `want` (may be
 * DEFAULT: the %%GraphBLAS type, else f64, i64, c128 or pattern by field).
 * SPX_ERR_UNSUPPORTED for complex values into a real type. */
spx_status spx__mtx_value_type(spx_ctx *ctx, const spx__input *in, const spx__mtx_header *h,
                               spx_dtype want, spx_dtype *out);
/* Parse the data section into a new unsorted COO holding every stored entry
 * (array files: every stored position, zeros included) with the other
 * triangle of symmetric, skew-symmetric and hermitian files added. itype
 * DEFAULT: int32 when the shape and entry count allow. */
spx_status spx__mtx_parse_entries(spx_ctx *ctx, const spx__input *in, const spx__mtx_header *h,
                                  spx_dtype dtype, spx_index_type itype, spx_matrix **coo);

/* ---- writing (mtx_write.c) ---- */

/* The banner, an optional %%GraphBLAS type line and the "written by" comment
 * of a file holding values of type t (array: a dense file). */
spx_status spx__mtx_write_header(spx_ctx *ctx, spx__outfile *o, bool array, spx_dtype t);
/* Longest text spx__mtx_format_value writes. */
#define SPX__MTX_VALUE_MAX 64
/* " value" (complex: " re im") of value k, printed to round-trip exactly;
 * nothing for pattern. Returns the length written. */
size_t spx__mtx_format_value(char *buf, const void *vals, spx_dtype t, int64_t k);
/* Decimal text of v; returns the length (at most 20). */
size_t spx__format_u64(char *buf, uint64_t v);

#endif

/* spx_matrix_read for Matrix Market files: header, value type, parallel
 * entry parsing, then the COO becomes the requested format. Array files
 * give the sparse matrix of their nonzero values. */
#include "io/mtx.h"



#include <string.h>

bool spx__coo_is_canonical(const spx_matrix *A)
{
    for (int64_t k = 1; k < A->nnz; k++) {
        int64_t r0 = spx__idx_get(A->row_indices, A->itype, k - 1);
        int64_t r1 = spx__idx_get(A->row_indices, A->itype, k);
        if (r1 < r0 || (r1 == r0 && spx__idx_get(A->indices, A->itype, k) <=
                                        spx__idx_get(A->indices, A->itype, k - 1)))
            return false;
    }
    return true;
}

spx_status spx__io_finish_coo(spx_ctx *ctx, spx_matrix *coo, spx_format format,
                              spx_dup_policy dup, spx_matrix **out)
{
    if (format == SPX_FORMAT_DEFAULT)
        format = SPX_CSR;
    /* skipping the conversion keeps hypersparse shapes (no rows+1 arrays) cheap */
    if (format == SPX_COO && spx__coo_is_canonical(coo)) {
        coo->checked_version = coo->version;
        *out = coo;
        return SPX_OK;
    }
    spx_format_params p = {.dup = dup};
    spx_status s = spx_matrix_convert(ctx, coo, format, &p, out);
    spx_matrix_destroy(coo);
    return s;
}

static bool value_is_zero(const void *vals, spx_dtype t, int64_t k)
{
    switch (t) {
    case SPX_C64: return ((const float *)vals)[2 * k] == 0 && ((const float *)vals)[2 * k + 1] == 0;
    case SPX_C128: return ((const double *)vals)[2 * k] == 0 && ((const double *)vals)[2 * k + 1] == 0;
    case SPX_I64: return ((const int64_t *)vals)[k] == 0;
    default: return spx__val_get(vals, t, k) == 0.0;
    }
}

/* Keep the entries whose value is nonzero (array files read as sparse). */
static void drop_zeros(spx_matrix *A)
{
    size_t isz = spx__index_size(A->itype), vsz = spx_dtype_size(A->dtype);
    int64_t n = 0;
    for (int64_t k = 0; k < A->nnz; k++) {
        if (value_is_zero(A->values, A->dtype, k))
            continue;
        if (n != k) {
            memcpy((char *)A->row_indices + n * (int64_t)isz, (char *)A->row_indices + k * (int64_t)isz, isz);
            memcpy((char *)A->indices + n * (int64_t)isz, (char *)A->indices + k * (int64_t)isz, isz);
            memcpy((char *)A->values + n * (int64_t)vsz, (char *)A->values + k * (int64_t)vsz, vsz);
        }
        n++;
    }
    A->nnz = n;
}

spx_status spx__mtx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                         spx_matrix **out)
{
    spx__mtx_header h;
    spx_dtype dtype;
    spx_status s = spx__mtx_header_parse(ctx, in, &h);
    if (s || (s = spx__mtx_value_type(ctx, in, &h, opts->dtype, &dtype)))
        return s;
    /* an array read as pattern still needs its values to find the nonzeros */
    spx_dtype parse_type = dtype;
    if (h.array && dtype == SPX_PATTERN)
        parse_type = h.field == SPX__MTX_COMPLEX ? SPX_C128 : SPX_F64;
    spx_matrix *coo = NULL;
    if ((s = spx__mtx_parse_entries(ctx, in, &h, parse_type, opts->index_type, &coo)))
        return s;
    if (h.array) {
        drop_zeros(coo);
        if (parse_type != dtype) {
            spx__free(coo->values);
            coo->values = NULL;
            coo->dtype = SPX_PATTERN;
        }
    }
    return spx__io_finish_coo(ctx, coo, opts->format, opts->dup, out);
}

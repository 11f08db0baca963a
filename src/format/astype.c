/* spx_matrix_astype: the same matrix with another value and/or index type. */
#include "format/matrix.h"
#include "format/values.h"

#include <string.h>

#define LL(x) ((long long)(x))

/* Copy n indices between index types; narrowing checks every value. */
static spx_status copy_indices(spx_ctx *ctx, const void *src, spx_index_type from, void *dst,
                               spx_index_type to, int64_t n, const char *name)
{
    if (!n)
        return SPX_OK;
    if (from == to) {
        memcpy(dst, src, (size_t)n * spx__index_size(to));
        return SPX_OK;
    }
    for (int64_t p = 0; p < n; p++) {
        int64_t v = spx__idx_get(src, from, p);
        if (to == SPX_INDEX_I32 && (v > INT32_MAX || v < INT32_MIN))
            return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s[%lld] = %lld does not fit int32 indices",
                             name, LL(p), LL(v));
        spx__idx_set(dst, to, p, v);
    }
    return SPX_OK;
}

/* Pattern BSR/SELL to a value type: stored entries become 1, padding 0
 * (BSR slots outside the matrix, SELL slots past a row's length). */
static void fill_pattern_ones(const spx_matrix *A, spx_matrix *B)
{
    spx_index_type t = A->itype;
    int64_t nval = spx__matrix_values_len(B);
    memset(B->values, 0, (size_t)nval * spx_dtype_size(B->dtype));
    if (A->format == SPX_BSR) {
        for (int64_t bi = 0; bi < spx__bsr_block_rows(A); bi++)
            for (int64_t q = spx__idx_get(A->offsets, t, bi); q < spx__idx_get(A->offsets, t, bi + 1); q++)
                for (int64_t r = 0; r < A->br && bi * A->br + r < A->rows; r++)
                    for (int64_t c = 0; c < A->bc && spx__idx_get(A->indices, t, q) * A->bc + c < A->cols; c++)
                        spx__value_convert(NULL, SPX_PATTERN, 0, B->values, B->dtype, (q * A->br + r) * A->bc + c);
        return;
    }
    if (A->format != SPX_SELL) {
        for (int64_t p = 0; p < nval; p++)
            spx__value_convert(NULL, SPX_PATTERN, 0, B->values, B->dtype, p);
        return;
    }
    for (int64_t pos = 0; pos < A->nslices * A->sell_c; pos++) {
        int64_t base = spx__idx_get(A->offsets, t, pos / A->sell_c);
        for (int64_t k = 0; k < spx__idx_get(A->row_lengths, t, pos); k++)
            spx__value_convert(NULL, SPX_PATTERN, 0, B->values, B->dtype,
                               base + k * A->sell_c + pos % A->sell_c);
    }
}

spx_status spx_matrix_astype(spx_ctx *ctx, const spx_matrix *A, spx_dtype dtype,
                             spx_index_type itype, spx_matrix **out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (dtype == SPX_DTYPE_DEFAULT)
        dtype = A->dtype;
    if (itype == SPX_INDEX_DEFAULT)
        itype = A->itype;
    if (!spx__dtype_valid(dtype))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid value type %d", (int)dtype);
    if (itype != SPX_INDEX_I32 && itype != SPX_INDEX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid index type %d", (int)itype);
    if (A->format != SPX_COO && (s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    int64_t nval = spx__matrix_values_len(A);
    if ((s = spx__values_check(ctx, A->values, A->dtype, dtype, nval)))
        return s;

    spx_matrix *B = NULL;
    if ((s = spx__matrix_new_like(ctx, A, itype, dtype, &B)))
        return s;
    if ((s = spx__matrix_alloc(ctx, B)))
        goto done;
    spx_index_type t = A->itype;
    int64_t npos = A->nslices * A->sell_c;
    if ((s = copy_indices(ctx, A->offsets, t, B->offsets, itype, spx__matrix_offsets_len(A), "offsets")) ||
        (s = copy_indices(ctx, A->indices, t, B->indices, itype, spx__matrix_indices_len(A), "indices")) ||
        (s = copy_indices(ctx, A->row_indices, t, B->row_indices, itype,
                          A->format == SPX_COO ? A->nnz : 0, "row_indices")) ||
        (s = copy_indices(ctx, A->perm, t, B->perm, itype, A->format == SPX_SELL ? npos : 0, "perm")) ||
        (s = copy_indices(ctx, A->row_lengths, t, B->row_lengths, itype,
                          A->format == SPX_SELL ? npos : 0, "row_lengths")))
        goto done;
    if (dtype == A->dtype) {
        if (B->values && nval)
            memcpy(B->values, A->values, (size_t)nval * spx_dtype_size(dtype));
    } else if (A->dtype == SPX_PATTERN) {
        fill_pattern_ones(A, B);
    } else if (dtype != SPX_PATTERN) {
        for (int64_t p = 0; p < nval; p++)
            spx__value_convert(A->values, A->dtype, p, B->values, dtype, p);
    }
    if (A->checked_version == A->version)
        B->checked_version = B->version;
done:
    if (s) {
        spx_matrix_destroy(B);
        return s;
    }
    *out = B;
    return SPX_OK;
}

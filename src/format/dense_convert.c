/* Sparse <-> dense: spx_matrix_from_dense and spx_matrix_to_dense (host memory). */
#include "format/convert.h"
#include "format/dense.h"
#include "format/values.h"

#include <math.h>
#include <string.h>

#define LL(x) ((long long)(x))

static spx_status check_host_dense(spx_ctx *ctx, const spx_dense *D, const char *name)
{
    spx_status s = spx__check_dense(ctx, D, name);
    if (!s && D->memory != SPX_MEM_HOST)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "dense %s is in device memory; this conversion needs host memory", name);
    return s;
}

/* Element (i, j) is kept if its magnitude exceeds tol; NaN is always kept. */
static bool keep(const spx_dense *D, int64_t i, int64_t j, double tol)
{
    int64_t o = spx__dense_offset(D, i, j);
    switch (D->dtype) {
    case SPX_C64:
    case SPX_C128: {
        double re = D->dtype == SPX_C64 ? ((const float *)D->data)[2 * o] : ((const double *)D->data)[2 * o];
        double im = D->dtype == SPX_C64 ? ((const float *)D->data)[2 * o + 1]
                                        : ((const double *)D->data)[2 * o + 1];
        return isnan(re) || isnan(im) || hypot(re, im) > tol;
    }
    case SPX_I64: { /* exact for every int64, unlike a double */
        int64_t v = ((const int64_t *)D->data)[o];
        return v != 0 && (v < 0 ? -(double)v : (double)v) > tol;
    }
    default: {
        double v = spx__val_get(D->data, D->dtype, o);
        return isnan(v) || fabs(v) > tol;
    }
    }
}

spx_status spx_matrix_from_dense(spx_ctx *ctx, const spx_dense *D, double drop_tol,
                                 spx_format format, const spx_format_params *params,
                                 spx_index_type itype, spx_matrix **out)
{
    spx_status s = check_host_dense(ctx, D, "D");
    if (s)
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (!(drop_tol >= 0))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "drop_tol %g must be >= 0", drop_tol);
    if (format == SPX_FORMAT_DEFAULT)
        format = SPX_CSR;
    if (format < SPX_COO || format > SPX_SELL)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid format %d", (int)format);
    if (itype != SPX_INDEX_DEFAULT && itype != SPX_INDEX_I32 && itype != SPX_INDEX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid index type %d", (int)itype);
    int64_t rows = D->rows, cols = D->cols, nnz = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            nnz += keep(D, i, j, drop_tol);
    if (itype == SPX_INDEX_DEFAULT) {
        int64_t largest = rows > cols ? rows : cols;
        itype = spx__index_type_for(nnz > largest ? nnz : largest);
    }
    spx_matrix *C = NULL;
    if ((s = spx__matrix_create(ctx, SPX_CSR, rows, cols, nnz, itype, D->dtype, &C)))
        return s;
    size_t vsz = spx_dtype_size(D->dtype);
    int64_t k = 0;
    spx__idx_set(C->offsets, itype, 0, 0);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            if (!keep(D, i, j, drop_tol))
                continue;
            spx__idx_set(C->indices, itype, k, j);
            memcpy((char *)C->values + k * vsz,
                   (const char *)D->data + spx__dense_offset(D, i, j) * vsz, vsz);
            k++;
        }
        spx__idx_set(C->offsets, itype, i + 1, k);
    }
    C->checked_version = C->version;
    if (format == SPX_CSR) {
        *out = C;
        return SPX_OK;
    }
    s = spx_matrix_convert(ctx, C, format, params, out);
    spx_matrix_destroy(C);
    return s;
}

/* Scatter the entries of a CSR, CSC or BSR matrix into D (zeroed already). */
static void scatter(const spx_matrix *A, spx_dense *D)
{
    spx_index_type t = A->itype;
    if (A->format == SPX_BSR) {
        for (int64_t bi = 0; bi < spx__bsr_block_rows(A); bi++)
            for (int64_t q = spx__idx_get(A->offsets, t, bi); q < spx__idx_get(A->offsets, t, bi + 1); q++)
                for (int64_t r = 0; r < A->br && bi * A->br + r < A->rows; r++) {
                    int64_t j0 = spx__idx_get(A->indices, t, q) * A->bc;
                    for (int64_t c = 0; c < A->bc && j0 + c < A->cols; c++)
                        spx__value_convert(A->values, A->dtype, (q * A->br + r) * A->bc + c,
                                           D->data, D->dtype,
                                           spx__dense_offset(D, bi * A->br + r, j0 + c));
                }
        return;
    }
    bool csr = A->format == SPX_CSR;
    for (int64_t m = 0; m < (csr ? A->rows : A->cols); m++)
        for (int64_t p = spx__idx_get(A->offsets, t, m); p < spx__idx_get(A->offsets, t, m + 1); p++) {
            int64_t k = spx__idx_get(A->indices, t, p);
            spx__value_convert(A->values, A->dtype, p, D->data, D->dtype,
                               csr ? spx__dense_offset(D, m, k) : spx__dense_offset(D, k, m));
        }
}

spx_status spx_matrix_to_dense(spx_ctx *ctx, const spx_matrix *A, spx_dense *D)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")) || (s = check_host_dense(ctx, D, "D")))
        return s;
    if (A->rows != D->rows || A->cols != D->cols)
        return spx__fail(ctx, SPX_ERR_SHAPE, "matrix A is %lld x %lld but dense D is %lld x %lld",
                         LL(A->rows), LL(A->cols), LL(D->rows), LL(D->cols));
    if (A->format != SPX_COO && (s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    /* COO duplicates are summed and SELL rows gathered through CSR first */
    spx_matrix *tmp = NULL;
    if (A->format == SPX_COO)
        s = spx__coo_compress(ctx, A, SPX_CSR, SPX_DUP_SUM, &tmp);
    else if (A->format == SPX_SELL)
        s = spx__sell_to_csr(ctx, A, &tmp);
    const spx_matrix *src = tmp ? tmp : A;
    if (!s)
        s = spx__values_check(ctx, src->values, src->dtype, D->dtype, spx__matrix_values_len(src));
    if (!s) {
        size_t vsz = spx_dtype_size(D->dtype);
        int64_t inner = D->layout == SPX_ROW_MAJOR ? D->cols : D->rows;
        int64_t outer = D->layout == SPX_ROW_MAJOR ? D->rows : D->cols;
        for (int64_t o = 0; o < outer && inner > 0; o++)
            memset((char *)D->data + o * D->ld * (int64_t)vsz, 0, (size_t)inner * vsz);
        scatter(src, D);
    }
    spx_matrix_destroy(tmp);
    return s;
}

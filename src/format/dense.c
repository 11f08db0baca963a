/* Dense operands: allocation and validation. */
#include "format/dense.h"

spx_status spx__check_dense(spx_ctx *ctx, const spx_dense *D, const char *name)
{
    if (!D)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense operand %s is NULL", name);
    if (D->rows < 0 || D->cols < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense %s has negative shape %lld x %lld",
                         name, (long long)D->rows, (long long)D->cols);
    if (D->layout != SPX_ROW_MAJOR && D->layout != SPX_COL_MAJOR)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense %s has invalid layout %d", name,
                         (int)D->layout);
    if (D->memory != SPX_MEM_HOST && D->memory != SPX_MEM_DEVICE)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense %s has invalid memory kind %d",
                         name, (int)D->memory);
    if (!spx__dtype_valid(D->dtype) || D->dtype == SPX_PATTERN)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense %s has invalid value type %d", name,
                         (int)D->dtype);
    int64_t inner = D->layout == SPX_ROW_MAJOR ? D->cols : D->rows;
    int64_t outer = D->layout == SPX_ROW_MAJOR ? D->rows : D->cols;
    if (D->ld < (inner > 1 ? inner : 1))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "dense %s (%lld x %lld, %s-major) has leading dimension %lld < %lld", name,
                         (long long)D->rows, (long long)D->cols,
                         D->layout == SPX_ROW_MAJOR ? "row" : "column", (long long)D->ld,
                         (long long)(inner > 1 ? inner : 1));
    int64_t span;
    if (outer > 0 && (spx__mul_overflows(outer - 1, D->ld, &span) ||
                      spx__add_overflows(span, inner, &span) ||
                      spx__mul_overflows(span, (int64_t)spx_dtype_size(D->dtype), &span)))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "dense %s: size overflows", name);
    if (!D->data && D->rows > 0 && D->cols > 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "dense %s has NULL data", name);
    return SPX_OK;
}

spx_status spx_dense_alloc(spx_ctx *ctx, int64_t rows, int64_t cols, spx_dtype dtype,
                           spx_layout layout, spx_dense *out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (rows < 0 || cols < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative shape %lld x %lld",
                         (long long)rows, (long long)cols);
    if (!spx__dtype_valid(dtype) || dtype == SPX_PATTERN)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid dense value type %s",
                         spx_dtype_name(dtype));
    if (layout != SPX_ROW_MAJOR && layout != SPX_COL_MAJOR)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid layout %d", (int)layout);
    int64_t n;
    if (spx__mul_overflows(rows, cols, &n))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "dense %lld x %lld overflows", (long long)rows,
                         (long long)cols);
    void *data;
    spx_status s = spx__alloc_zero(ctx, &data, n, spx_dtype_size(dtype), "dense matrix");
    if (s)
        return s;
    int64_t inner = layout == SPX_ROW_MAJOR ? cols : rows;
    *out = spx_dense_make(data, rows, cols, inner > 1 ? inner : 1, dtype, layout, SPX_MEM_HOST);
    return SPX_OK;
}

void spx_dense_free(spx_dense *d)
{
    if (!d)
        return;
    spx__free(d->data);
    d->data = NULL;
}

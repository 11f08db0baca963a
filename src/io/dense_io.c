/* Dense Matrix Market files: spx_dense_read and spx_dense_write. Reading
 * accepts array files (symmetric kinds filled on both sides) and, by
 * scattering, coordinate files (duplicates summed, missing entries zero). */
#include "io/mtx.h"

#include "format/dense.h"

#include <string.h>

#define LL(x) ((long long)(x))

spx_status spx_dense_read(spx_ctx *ctx, const char *path, spx_dtype dtype, spx_layout layout,
                          spx_dense *out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!path || !out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s is NULL", path ? "out" : "path");
    if (dtype != SPX_DTYPE_DEFAULT && (!spx__dtype_valid(dtype) || dtype == SPX_PATTERN))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid dense value type %s",
                         spx_dtype_name(dtype));
    if (layout != SPX_ROW_MAJOR && layout != SPX_COL_MAJOR)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid layout %d", (int)layout);
    char *data = NULL;
    size_t size = 0;
    spx_status s = spx__file_load(ctx, path, &data, &size);
    if (s)
        return s;
    spx__input in = {data, size, path};
    spx__mtx_header h;
    spx_matrix *coo = NULL;
    spx_dense D = {0};
    if ((s = spx__mtx_header_parse(ctx, &in, &h)))
        goto done;
    if (dtype == SPX_DTYPE_DEFAULT) /* the %%GraphBLAS type is not used here: dense reads f64 */
        dtype = h.field == SPX__MTX_COMPLEX ? SPX_C128 : SPX_F64;
    if ((s = spx__mtx_value_type(ctx, &in, &h, dtype, &dtype)) ||
        (s = spx__mtx_parse_entries(ctx, &in, &h, dtype, SPX_INDEX_DEFAULT, &coo)))
        goto done;
    if (!h.array) { /* sorted, duplicates summed */
        spx_matrix *sum = NULL;
        s = spx__io_finish_coo(ctx, coo, SPX_COO, SPX_DUP_SUM, &sum);
        coo = sum;
        if (s)
            goto done;
    }
    if ((s = spx_dense_alloc(ctx, h.rows, h.cols, dtype, layout, &D)))
        goto done;
    size_t vsz = spx_dtype_size(dtype);
    for (int64_t k = 0; k < coo->nnz; k++) {
        int64_t i = spx__idx_get(coo->row_indices, coo->itype, k);
        int64_t j = spx__idx_get(coo->indices, coo->itype, k);
        memcpy((char *)D.data + spx__dense_offset(&D, i, j) * (int64_t)vsz,
               (const char *)coo->values + k * (int64_t)vsz, vsz);
    }
done:
    spx_matrix_destroy(coo);
    spx__free(data);
    if (s) {
        spx_dense_free(&D);
        return s;
    }
    *out = D;
    return SPX_OK;
}

spx_status spx_dense_write(spx_ctx *ctx, const spx_dense *D, const char *path)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_status s = spx__check_dense(ctx, D, "D");
    if (s)
        return s;
    if (!path)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "path is NULL");
    if (D->memory != SPX_MEM_HOST)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "dense D is in device memory; writing needs host memory");
    spx__outfile o;
    if ((s = spx__out_open(ctx, path, &o)))
        return s;
    char head[64];
    int n = snprintf(head, sizeof head, "%lld %lld\n", LL(D->rows), LL(D->cols));
    if (!(s = spx__mtx_write_header(ctx, &o, true, D->dtype)))
        s = spx__out_write(ctx, &o, head, (size_t)n);
    for (int64_t j = 0; j < D->cols && !s; j++)
        for (int64_t i = 0; i < D->rows && !s; i++) {
            char *b;
            if ((s = spx__out_reserve(ctx, &o, SPX__MTX_VALUE_MAX + 1, &b)))
                break;
            /* the value text starts with a separating space, not wanted here */
            size_t len = spx__mtx_format_value(b, D->data, D->dtype, spx__dense_offset(D, i, j));
            memmove(b, b + 1, len - 1);
            b[len - 1] = '\n';
            spx__out_advance(&o, len);
        }
    if (s) {
        spx__out_abort(&o);
        return s;
    }
    return spx__out_commit(ctx, &o);
}

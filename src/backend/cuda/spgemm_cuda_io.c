/* CUDA SpGEMM operands and results.
 *
 * Operands: kernels read int64 offsets and int32 columns. Device operands
 * are used in place when their widths match (else converted on the device);
 * host operands are uploaded (indices converted on the host when their width
 * differs). An operand that shares its arrays with one already staged (A*A,
 * the closure's accum) is not staged twice.
 *
 * Results. Device result: the numeric kernels write C's arrays directly
 * (persistent device memory, as spx_matrix_to_device makes). With
 * drop_identity the rows are first written at their counted places and then
 * moved down through the staging buffer, a chunk of rows at a time. Host
 * result: the numeric kernels write chunks of rows into the staging buffer,
 * which is copied into the host matrix after each chunk; drop_identity then
 * closes the gaps on the host. */
#include "backend/cuda/spgemm_cuda_host.h"

#include <limits.h>
#include <string.h>

static int64_t round256(int64_t b) { return (b + 255) & ~(int64_t)255; }

/* ---- operands ---- */

/* n indices of type t from the host to dst as int64 (to64) or int32. */
static spx_status upload_indices(spx_ctx *ctx, void *dst, const void *src, spx_index_type t,
                                 int64_t n, int to64)
{
    if ((t == SPX_INDEX_I64) == (to64 != 0))
        return spx__cuda_upload(ctx, dst, src, (size_t)n * (to64 ? 8 : 4));
    void *tmp = NULL;
    spx_status s = spx__alloc(ctx, &tmp, n, to64 ? 8 : 4, "converted indices");
    if (s)
        return s;
    for (int64_t x = 0; x < n; x++) {
        if (to64)
            ((int64_t *)tmp)[x] = ((const int32_t *)src)[x];
        else
            ((int32_t *)tmp)[x] = (int32_t)((const int64_t *)src)[x];
    }
    /* a pageable source is copied out before cudaMemcpyAsync returns */
    s = spx__cuda_upload(ctx, dst, tmp, (size_t)n * (to64 ? 8 : 4));
    spx__free(tmp);
    return s;
}

static spx_status stage_csr(spx_gemm *g, const spx_matrix *X, int values, spx_gemm_csr *out)
{
    spx_ctx *ctx = g->ctx;
    const int64_t rows = X->rows, nnz = X->nnz;
    const int wide = X->itype == SPX_INDEX_I64;
    const int64_t vbytes = values && X->values ? nnz * (int64_t)spx_dtype_size(X->dtype) : 0;
    void *ptr = NULL, *col = NULL, *val = NULL;
    spx_status s;
    if (X->memory == SPX_MEM_DEVICE) {
        if (!wide && (s = spx__gemm_alloc(g, &ptr, 8 * (rows + 1), "SpGEMM operand offsets")))
            return s;
        if (wide && (s = spx__gemm_alloc(g, &col, 4 * nnz, "SpGEMM operand columns")))
            return s;
        if (!wide)
            SPX_CUDA_TRY(ctx, spx__cuda_widen_i32(X->offsets, ptr, rows + 1, g->stream),
                         "widening offsets");
        else
            SPX_CUDA_TRY(ctx, spx__cuda_narrow_i64(X->indices, col, nnz, g->stream),
                         "narrowing column indices");
        out->ptr = wide ? X->offsets : ptr;
        out->col = wide ? col : X->indices;
        out->val = vbytes ? X->values : NULL;
        return SPX_OK;
    }
    if ((s = spx__gemm_alloc(g, &ptr, 8 * (rows + 1), "SpGEMM operand offsets")) ||
        (s = spx__gemm_alloc(g, &col, 4 * nnz, "SpGEMM operand columns")) ||
        (vbytes && (s = spx__gemm_alloc(g, &val, vbytes, "SpGEMM operand values"))) ||
        (s = upload_indices(ctx, ptr, X->offsets, X->itype, rows + 1, 1)) ||
        (s = upload_indices(ctx, col, X->indices, X->itype, nnz, 0)) ||
        (vbytes && (s = spx__cuda_upload(ctx, val, X->values, (size_t)vbytes))))
        return s;
    out->ptr = ptr;
    out->col = col;
    out->val = val;
    return SPX_OK;
}

static int same_pattern(const spx_matrix *X, const spx_matrix *Y)
{
    return X->offsets == Y->offsets && X->indices == Y->indices && X->rows == Y->rows &&
           X->nnz == Y->nnz && X->itype == Y->itype && X->memory == Y->memory;
}

spx_status spx__gemm_stage_operands(spx_gemm *g)
{
    const spx_spgemm_args *a = g->a;
    spx_gemm_dev *d = &g->d;
    spx_status s = stage_csr(g, a->A, 1, &d->A);
    if (s)
        return s;
    if (same_pattern(a->B, a->A) && a->B->values == a->A->values)
        d->B = d->A;
    else if ((s = stage_csr(g, a->B, 1, &d->B)))
        return s;
    if (a->M) {
        if (same_pattern(a->M, a->A))
            d->M = d->A;
        else if (same_pattern(a->M, a->B))
            d->M = d->B;
        else if ((s = stage_csr(g, a->M, 0, &d->M)))
            return s;
        d->M.val = NULL;
    }
    if (a->accum) {
        if (same_pattern(a->accum, a->A) && a->accum->values == a->A->values)
            d->acc = d->A;
        else if (same_pattern(a->accum, a->B) && a->accum->values == a->B->values)
            d->acc = d->B;
        else if ((s = stage_csr(g, a->accum, 1, &d->acc)))
            return s;
    }
    return SPX_OK;
}

/* ---- flags ---- */

spx_status spx__gemm_check_status(spx_gemm *g, int *changed)
{
    spx_gemm_status h;
    spx_status s = spx__cuda_download(g->ctx, &h, g->d.status, sizeof h);
    if (s || (s = spx__cuda_sync(g->ctx)))
        return s;
    if (h.internal)
        return spx__fail(g->ctx, SPX_ERR_INTERNAL,
                         "a SpGEMM row table filled up: its symbolic count was wrong");
    if (h.bad_row != LLONG_MAX) {
        int64_t j = -1;
        if ((s = spx__gemm_overflow_column(g, h.bad_row, &j)))
            return s;
        return spx__spgemm_overflow(g->ctx, g->a, h.bad_row, j);
    }
    if (changed)
        *changed = h.changed != 0;
    return SPX_OK;
}

/* ---- chunks ---- */

/* The largest r1 > r0 whose rows [r0, r1) hold at most cap entries (row r0
 * alone always fits: cap covers the largest row). */
static int64_t chunk_end(const int64_t *off, int64_t m, int64_t r0, int64_t cap)
{
    int64_t lo = r0 + 1, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (off[mid] - off[r0] <= cap)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static spx_status alloc_staging(spx_gemm *g, int64_t col_bytes)
{
    unsigned char *p = NULL;
    spx_status s = spx__gemm_alloc(g, (void **)&p, round256(g->cap * col_bytes) + g->cap * g->vsz,
                                   "SpGEMM output staging");
    if (s)
        return s;
    g->stage_col = p;
    g->stage_val = p + round256(g->cap * col_bytes);
    return SPX_OK;
}

/* ---- host result ---- */

/* Rows written at their counted places lose the entries drop_identity
 * removed: move them down, as the cpu backend does. */
static int64_t close_gaps(spx_matrix *C, const int64_t *off, const int64_t *act, int64_t vsz)
{
    const size_t isz = spx__index_size(C->itype);
    int64_t cursor = 0;
    for (int64_t i = 0; i < C->rows; i++) {
        if (cursor != off[i] && act[i] > 0) {
            memmove((char *)C->indices + cursor * (int64_t)isz,
                    (char *)C->indices + off[i] * (int64_t)isz, (size_t)act[i] * isz);
            memmove((char *)C->values + cursor * vsz, (char *)C->values + off[i] * vsz,
                    (size_t)(act[i] * vsz));
        }
        cursor += act[i];
        spx__idx_set(C->offsets, C->itype, i + 1, cursor);
    }
    return cursor;
}

static spx_status host_output(spx_gemm *g)
{
    spx_ctx *ctx = g->ctx;
    const spx_spgemm_args *a = g->a;
    const int64_t m = g->m, total = g->total;
    spx_matrix *C = NULL;
    int64_t *act = NULL;
    spx_status s = spx__matrix_create(ctx, SPX_CSR, m, g->n, total,
                                      spx__spgemm_out_itype(a, total), a->type, &C);
    if (s)
        return s;
    const int wide = C->itype == SPX_INDEX_I64;
    if ((s = spx__alloc(ctx, (void **)&g->hoff, m + 1, sizeof(int64_t), "SpGEMM row offsets")) ||
        (s = spx__cuda_download(ctx, g->hoff, g->d.off, sizeof(int64_t) * (size_t)(m + 1))) ||
        (s = spx__cuda_sync(ctx)))
        goto done;
    if (total > 0) {
        if ((s = alloc_staging(g, 4)))
            goto done;
        g->d.out_col = g->stage_col;
        g->d.out_val = g->stage_val;
        g->d.out_wide = 0;
        for (int64_t r0 = 0, r1; r0 < m; r0 = r1) {
            r1 = chunk_end(g->hoff, m, r0, g->cap);
            const int64_t base = g->hoff[r0], cnt = g->hoff[r1] - base;
            g->d.base = base;
            /* int32 columns land in place, or in the front half of their
             * int64 slots and are widened from the back */
            int32_t *cols = wide ? (int32_t *)((int64_t *)C->indices + base)
                                 : (int32_t *)C->indices + base;
            if ((s = spx__gemm_numeric_rows(g, r0, r1)) ||
                (s = spx__cuda_download(ctx, cols, g->stage_col, 4 * (size_t)cnt)) ||
                (s = spx__cuda_download(ctx, (char *)C->values + base * g->vsz, g->stage_val,
                                        (size_t)(cnt * g->vsz))) ||
                (s = spx__gemm_check_status(g, NULL)))
                goto done;
            for (int64_t p = wide ? cnt - 1 : -1; p >= 0; p--)
                ((int64_t *)C->indices)[base + p] = cols[p];
        }
    }
    for (int64_t i = 0; i <= m; i++)
        spx__idx_set(C->offsets, C->itype, i, g->hoff[i]);
    if (a->drop_identity && total > 0) {
        if ((s = spx__alloc(ctx, (void **)&act, m, sizeof(int64_t), "SpGEMM row counts")) ||
            (s = spx__cuda_download(ctx, act, g->d.act, sizeof(int64_t) * (size_t)m)) ||
            (s = spx__cuda_sync(ctx)))
            goto done;
        const int64_t nnz = close_gaps(C, g->hoff, act, g->vsz);
        const size_t keep = nnz > 0 ? (size_t)nnz : 1;
        void *p = spx__realloc(C->indices, keep * spx__index_size(C->itype));
        if (p)
            C->indices = p;
        if ((p = spx__realloc(C->values, keep * (size_t)g->vsz)))
            C->values = p;
        C->nnz = nnz;
    }
    C->checked_version = C->version;
    *a->C = C;
    C = NULL;
done:
    spx__free(act);
    spx_matrix_destroy(C);
    return s;
}

/* ---- device result ---- */

/* After drop_identity: noff = the scan of the written counts; each chunk of
 * rows is copied to the staging buffer and written back at noff. A row
 * only moves down, so a chunk's destination overlaps nothing not yet read. */
static spx_status close_gaps_device(spx_gemm *g, spx_matrix *C, int64_t isz,
                                     const int64_t **offsets)
{
    spx_ctx *ctx = g->ctx;
    const int64_t m = g->m, vsz = g->vsz;
    int64_t *noff = g->d.tot; /* the counts are no longer needed */
    spx_status s;
    SPX_CUDA_TRY(ctx,
                 spx__cuda_gemm_scan(g->d.act, noff, m + 1, g->scan_tmp, &g->scan_bytes, g->stream),
                 "scanning row counts");
    const int one_chunk = g->cap >= g->total;
    if ((s = alloc_staging(g, isz)))
        return s;
    if (!one_chunk &&
        ((s = spx__alloc(ctx, (void **)&g->hoff, m + 1, sizeof(int64_t), "SpGEMM row offsets")) ||
         (s = spx__cuda_download(ctx, g->hoff, g->d.off, sizeof(int64_t) * (size_t)(m + 1))) ||
         (s = spx__cuda_sync(ctx))))
        return s;
    for (int64_t r0 = 0, r1; r0 < m; r0 = r1) {
        r1 = one_chunk ? m : chunk_end(g->hoff, m, r0, g->cap);
        const int64_t base = one_chunk ? 0 : g->hoff[r0];
        const int64_t cnt = one_chunk ? g->total : g->hoff[r1] - base;
        SPX_CUDA_TRY(ctx,
                     cudaMemcpyAsync(g->stage_col, (char *)C->indices + base * isz,
                                     (size_t)(cnt * isz), cudaMemcpyDeviceToDevice, g->stream),
                     "copying a chunk of C");
        SPX_CUDA_TRY(ctx,
                     cudaMemcpyAsync(g->stage_val, (char *)C->values + base * vsz,
                                     (size_t)(cnt * vsz), cudaMemcpyDeviceToDevice, g->stream),
                     "copying a chunk of C");
        SPX_CUDA_TRY(ctx,
                     spx__cuda_gemm_compact(g->d.off, noff, g->d.act, r0, r1, g->stage_col,
                                            g->stage_val, C->indices, C->values, isz == 8, vsz,
                                            g->stream),
                     "closing the gaps of dropped entries");
    }
    if ((s = spx__cuda_launch_check(ctx, "closing the gaps of dropped entries")) ||
        (s = spx__cuda_download(ctx, &C->nnz, noff + m, sizeof C->nnz)) ||
        (s = spx__cuda_sync(ctx)))
        return s;
    *offsets = noff;
    return SPX_OK;
}

static spx_status device_output(spx_gemm *g)
{
    spx_ctx *ctx = g->ctx;
    const spx_spgemm_args *a = g->a;
    const int64_t m = g->m, total = g->total, keep = total > 0 ? total : 1;
    const spx_index_type it = spx__spgemm_out_itype(a, total);
    const int64_t isz = (int64_t)spx__index_size(it);
    spx_matrix *C = NULL;
    spx_status s = spx__matrix_new(ctx, SPX_CSR, m, g->n, it, a->type, &C);
    if (s)
        return s;
    C->nnz = total;
    C->memory = SPX_MEM_DEVICE;
    const int64_t *offsets = g->d.off;
    int changed = 0;
    void **arrays[] = {&C->offsets, &C->indices, &C->values};
    const size_t bytes[] = {(size_t)((m + 1) * isz), (size_t)(keep * isz), (size_t)(keep * g->vsz)};
    if ((s = spx__cuda_result_alloc(ctx, C, arrays, bytes, 3, "allocating C")))
        goto done;
    if (total > 0) {
        g->d.base = 0;
        g->d.out_col = C->indices;
        g->d.out_val = C->values;
        g->d.out_wide = isz == 8;
        if ((s = spx__gemm_numeric_rows(g, 0, m)) ||
            (a->drop_identity && (s = close_gaps_device(g, C, isz, &offsets))))
            goto done;
    }
    if (isz == 8)
        s = spx__cuda_check(ctx,
                            cudaMemcpyAsync(C->offsets, offsets, (size_t)(8 * (m + 1)),
                                            cudaMemcpyDeviceToDevice, g->stream),
                            "copying C's offsets");
    else
        s = spx__cuda_check(ctx, spx__cuda_narrow_i64(offsets, C->offsets, m + 1, g->stream),
                            "narrowing C's offsets");
    /* integer operators may have overflowed; the closure asks what changed */
    if (!s && (spx__dtype_is_int(a->type) || a->changed))
        s = spx__gemm_check_status(g, &changed);
    if (s)
        goto done;
    if (a->changed)
        *a->changed = changed || !a->accum;
    C->checked_version = C->version;
    *a->C = C;
    C = NULL;
done:
    spx_matrix_destroy(C);
    return s;
}

spx_status spx__gemm_output(spx_gemm *g)
{
    return g->a->out_memory == SPX_MEM_DEVICE ? device_output(g) : host_output(g);
}

/* Matrix objects: creation, wrapping, destruction, introspection, copies and
 * attachments. */
#include "format/matrix.h"

#include <string.h>

int64_t spx__matrix_offsets_len(const spx_matrix *A)
{
    switch (A->format) {
    case SPX_CSR: return A->rows + 1;
    case SPX_CSC: return A->cols + 1;
    case SPX_BSR: return spx__bsr_block_rows(A) + 1;
    case SPX_SELL: return A->nslices + 1;
    default: return 0;
    }
}

int64_t spx__matrix_indices_len(const spx_matrix *A)
{
    switch (A->format) {
    case SPX_BSR: return A->nblocks;
    case SPX_SELL: return A->sell_slots;
    default: return A->nnz;
    }
}

int64_t spx__matrix_values_len(const spx_matrix *A)
{
    switch (A->format) {
    case SPX_BSR: return A->nblocks * A->br * A->bc;
    case SPX_SELL: return A->sell_slots;
    default: return A->nnz;
    }
}

static spx_status check_header(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols,
                               spx_index_type itype, spx_dtype dtype)
{
    if (f < SPX_COO || f > SPX_SELL)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid format %d", (int)f);
    if (rows < 0 || cols < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative shape %lld x %lld",
                         (long long)rows, (long long)cols);
    if (itype != SPX_INDEX_I32 && itype != SPX_INDEX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid index type %d", (int)itype);
    if (!spx__dtype_valid(dtype))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid value type %d", (int)dtype);
    if (itype == SPX_INDEX_I32 && (rows > INT32_MAX || cols > INT32_MAX))
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "shape %lld x %lld does not fit int32 indices; use SPX_INDEX_I64",
                         (long long)rows, (long long)cols);
    return SPX_OK;
}

spx_status spx__matrix_new(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols,
                           spx_index_type itype, spx_dtype dtype, spx_matrix **out)
{
    spx_status s = check_header(ctx, f, rows, cols, itype, dtype);
    if (s)
        return s;
    spx_matrix *A = spx__calloc(1, sizeof *A);
    if (!A)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory allocating a matrix");
    A->format = f;
    A->rows = rows;
    A->cols = cols;
    A->itype = itype;
    A->dtype = dtype;
    A->memory = SPX_MEM_HOST;
    A->owns = true;
    A->version = 1;
    *out = A;
    return SPX_OK;
}

spx_status spx__matrix_new_like(spx_ctx *ctx, const spx_matrix *A, spx_index_type itype, spx_dtype dtype,
                                spx_matrix **out)
{
    spx_matrix *B = NULL;
    spx_status s = spx__matrix_new(ctx, A->format, A->rows, A->cols, itype ? itype : A->itype,
                                   dtype ? dtype : A->dtype, &B);
    if (s)
        return s;
    B->nnz = A->nnz;
    B->br = A->br;
    B->bc = A->bc;
    B->nblocks = A->nblocks;
    B->sell_c = A->sell_c;
    B->sell_sigma = A->sell_sigma;
    B->nslices = A->nslices;
    B->sell_slots = A->sell_slots;
    *out = B;
    return SPX_OK;
}

spx_status spx__matrix_alloc(spx_ctx *ctx, spx_matrix *A)
{
    size_t isz = spx__index_size(A->itype), vsz = spx_dtype_size(A->dtype);
    int64_t nidx = spx__matrix_indices_len(A), nval = spx__matrix_values_len(A);
    int64_t noff = spx__matrix_offsets_len(A);
    if (A->itype == SPX_INDEX_I32 && (nidx > INT32_MAX || nval > INT32_MAX || A->nnz > INT32_MAX))
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "%lld stored entries do not fit int32 indices; use SPX_INDEX_I64",
                         (long long)(nval > nidx ? nval : nidx));
    spx_status s = SPX_OK;
    if (noff > 0)
        s = spx__alloc(ctx, &A->offsets, noff, isz, "matrix offsets");
    if (!s)
        s = spx__alloc(ctx, &A->indices, nidx, isz, "matrix indices");
    if (!s && A->format == SPX_COO)
        s = spx__alloc(ctx, &A->row_indices, nidx, isz, "matrix row indices");
    if (!s && vsz)
        s = spx__alloc(ctx, &A->values, nval, vsz, "matrix values");
    if (!s && A->format == SPX_SELL) {
        s = spx__alloc(ctx, &A->perm, A->nslices * A->sell_c, isz, "SELL permutation");
        if (!s)
            s = spx__alloc(ctx, &A->row_lengths, A->nslices * A->sell_c, isz, "SELL row lengths");
    }
    return s; /* on failure the arrays allocated so far go with spx_matrix_destroy */
}

spx_status spx__matrix_create(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols, int64_t nnz,
                              spx_index_type itype, spx_dtype dtype, spx_matrix **out)
{
    if (f != SPX_COO && f != SPX_CSR && f != SPX_CSC)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "spx__matrix_create: format %s needs its own parameters",
                         spx_format_name(f));
    if (nnz < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative nnz %lld", (long long)nnz);
    if (itype == SPX_INDEX_DEFAULT) {
        int64_t mx = rows > cols ? rows : cols;
        itype = spx__index_type_for(nnz > mx ? nnz : mx);
    }
    spx_matrix *A = NULL;
    spx_status s = spx__matrix_new(ctx, f, rows, cols, itype, dtype, &A);
    if (s)
        return s;
    A->nnz = nnz;
    s = spx__matrix_alloc(ctx, A);
    if (s) {
        spx_matrix_destroy(A);
        return s;
    }
    *out = A;
    return SPX_OK;
}

spx_status spx_matrix_create_coo(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                 spx_index_type itype, spx_dtype dtype, spx_matrix **out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    return spx__matrix_create(ctx, SPX_COO, rows, cols, nnz, itype, dtype, out);
}

spx_status spx_matrix_create_csr(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                 spx_index_type itype, spx_dtype dtype, spx_matrix **out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    return spx__matrix_create(ctx, SPX_CSR, rows, cols, nnz, itype, dtype, out);
}

spx_status spx_matrix_create_csc(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                 spx_index_type itype, spx_dtype dtype, spx_matrix **out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    return spx__matrix_create(ctx, SPX_CSC, rows, cols, nnz, itype, dtype, out);
}

void spx_matrix_destroy(spx_matrix *A)
{
    if (!A)
        return;
    spx__matrix_drop_attachments(A);
    if (A->owns) {
        void (*rel)(void *) = A->release_array ? A->release_array : spx__free;
        void *arrays[] = {A->offsets, A->indices, A->row_indices, A->values, A->perm, A->row_lengths};
        if (A->block)
            rel(A->block);
        else
            for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
                if (arrays[i])
                    rel(arrays[i]);
    }
    spx__free(A);
}

spx_status spx_matrix_info_get(const spx_matrix *A, spx_matrix_info *out)
{
    if (!A || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->format = A->format;
    out->index_type = A->itype;
    out->dtype = A->dtype;
    out->memory = A->memory;
    out->rows = A->rows;
    out->cols = A->cols;
    out->nnz = A->nnz;
    out->block_rows = A->br;
    out->block_cols = A->bc;
    out->nblocks = A->nblocks;
    out->sell_c = A->sell_c;
    out->sell_sigma = A->sell_sigma;
    out->nslices = A->nslices;
    out->sell_slots = A->sell_slots;
    out->owns_data = A->owns;
    return SPX_OK;
}

spx_status spx_matrix_arrays_get(const spx_matrix *A, spx_matrix_arrays *out)
{
    if (!A || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    out->offsets = A->offsets;
    out->indices = A->indices;
    out->row_indices = A->row_indices;
    out->values = A->values;
    out->perm = A->perm;
    out->row_lengths = A->row_lengths;
    return SPX_OK;
}

void spx_matrix_touch(spx_matrix *A)
{
    if (!A)
        return;
    spx__matrix_drop_attachments(A);
    A->version++;
}

/* ---- wrappers ---- */

static spx_status wrap_common(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols,
                              spx_index_type itype, spx_dtype dtype, spx_memory mem,
                              spx_matrix **out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (itype == SPX_INDEX_DEFAULT)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "wrapped buffers need an explicit index type (SPX_INDEX_I32 or SPX_INDEX_I64)");
    if (mem != SPX_MEM_HOST && mem != SPX_MEM_DEVICE)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid memory kind %d", (int)mem);
    spx_status s = spx__matrix_new(ctx, f, rows, cols, itype, dtype, out);
    if (s)
        return s;
    (*out)->owns = false;
    (*out)->memory = mem;
    return SPX_OK;
}

/* Buffers must be present when their length is nonzero; values may be NULL only for pattern. */
static spx_status need(spx_ctx *ctx, const void *p, int64_t len, const char *name)
{
    if (!p && len > 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s is NULL but must hold %lld elements",
                         name, (long long)len);
    return SPX_OK;
}

static spx_status finish_wrap(spx_ctx *ctx, spx_matrix *A)
{
    if (A->itype == SPX_INDEX_I32 && (A->nnz > INT32_MAX || spx__matrix_values_len(A) > INT32_MAX)) {
        spx_matrix_destroy(A);
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%lld entries do not fit int32 indices",
                         (long long)spx__matrix_values_len(A));
    }
    spx_status s = need(ctx, A->offsets, spx__matrix_offsets_len(A), "offsets");
    if (!s)
        s = need(ctx, A->indices, spx__matrix_indices_len(A), "indices");
    if (!s && A->format == SPX_COO)
        s = need(ctx, A->row_indices, A->nnz, "row_indices");
    if (!s && A->dtype != SPX_PATTERN)
        s = need(ctx, A->values, spx__matrix_values_len(A), "values");
    if (!s && A->format == SPX_SELL) {
        s = need(ctx, A->perm, A->nslices * A->sell_c, "perm");
        if (!s)
            s = need(ctx, A->row_lengths, A->nslices * A->sell_c, "row_lengths");
    }
    if (s)
        spx_matrix_destroy(A);
    return s;
}

static spx_status check_nnz(spx_ctx *ctx, int64_t nnz)
{
    if (nnz < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative nnz %lld", (long long)nnz);
    return SPX_OK;
}

spx_status spx_matrix_wrap_coo(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                               void *row_indices, void *col_indices, void *values,
                               spx_index_type itype, spx_dtype dtype, spx_memory mem,
                               spx_matrix **out)
{
    spx_matrix *A = NULL;
    spx_status s = check_nnz(ctx, nnz);
    if (s || (s = wrap_common(ctx, SPX_COO, rows, cols, itype, dtype, mem, &A)))
        return s;
    A->nnz = nnz;
    A->row_indices = row_indices;
    A->indices = col_indices;
    A->values = values;
    if ((s = finish_wrap(ctx, A)))
        return s;
    *out = A;
    return SPX_OK;
}

static spx_status wrap_compressed(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols,
                                  int64_t nnz, void *offsets, void *indices, void *values,
                                  spx_index_type itype, spx_dtype dtype, spx_memory mem,
                                  spx_matrix **out)
{
    spx_matrix *A = NULL;
    spx_status s = check_nnz(ctx, nnz);
    if (s || (s = wrap_common(ctx, f, rows, cols, itype, dtype, mem, &A)))
        return s;
    A->nnz = nnz;
    A->offsets = offsets;
    A->indices = indices;
    A->values = values;
    if ((s = finish_wrap(ctx, A)))
        return s;
    *out = A;
    return SPX_OK;
}

spx_status spx_matrix_wrap_csr(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                               void *row_offsets, void *col_indices, void *values,
                               spx_index_type itype, spx_dtype dtype, spx_memory mem,
                               spx_matrix **out)
{
    return wrap_compressed(ctx, SPX_CSR, rows, cols, nnz, row_offsets, col_indices, values,
                           itype, dtype, mem, out);
}

spx_status spx_matrix_wrap_csc(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                               void *col_offsets, void *row_indices, void *values,
                               spx_index_type itype, spx_dtype dtype, spx_memory mem,
                               spx_matrix **out)
{
    return wrap_compressed(ctx, SPX_CSC, rows, cols, nnz, col_offsets, row_indices, values,
                           itype, dtype, mem, out);
}

spx_status spx_matrix_wrap_bsr(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t block_rows,
                               int64_t block_cols, int64_t nblocks, void *block_row_offsets,
                               void *block_col_indices, void *values, spx_index_type itype,
                               spx_dtype dtype, spx_memory mem, spx_matrix **out)
{
    if (block_rows < 1 || block_cols < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid BSR block shape %lld x %lld",
                         (long long)block_rows, (long long)block_cols);
    if (nblocks < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative block count %lld", (long long)nblocks);
    int64_t per_block, total;
    if (spx__mul_overflows(block_rows, block_cols, &per_block) ||
        spx__mul_overflows(per_block, nblocks, &total))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "BSR storage %lld blocks of %lld x %lld overflows",
                         (long long)nblocks, (long long)block_rows, (long long)block_cols);
    spx_matrix *A = NULL;
    spx_status s = wrap_common(ctx, SPX_BSR, rows, cols, itype, dtype, mem, &A);
    if (s)
        return s;
    A->br = block_rows;
    A->bc = block_cols;
    A->nblocks = nblocks;
    A->nnz = total;
    A->offsets = block_row_offsets;
    A->indices = block_col_indices;
    A->values = values;
    if ((s = finish_wrap(ctx, A)))
        return s;
    *out = A;
    return SPX_OK;
}

spx_status spx_matrix_wrap_sell(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t slice_c,
                                int64_t sigma, int64_t nslices, void *slice_offsets,
                                void *col_indices, void *values, void *perm, void *row_lengths,
                                spx_index_type itype, spx_dtype dtype, spx_memory mem,
                                spx_matrix **out)
{
    if (slice_c < 1 || sigma < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid SELL parameters C=%lld sigma=%lld",
                         (long long)slice_c, (long long)sigma);
    if (rows >= 0 && nslices != spx__ceil_div(rows, slice_c))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "SELL with %lld rows and C=%lld has %lld slices, not %lld",
                         (long long)rows, (long long)slice_c, (long long)spx__ceil_div(rows, slice_c),
                         (long long)nslices);
    if (!slice_offsets)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "slice_offsets is NULL");
    spx_matrix *A = NULL;
    spx_status s = wrap_common(ctx, SPX_SELL, rows, cols, itype, dtype, mem, &A);
    if (s)
        return s;
    A->sell_c = slice_c;
    A->sell_sigma = sigma;
    A->nslices = nslices;
    A->offsets = slice_offsets;
    A->indices = col_indices;
    A->values = values;
    A->perm = perm;
    A->row_lengths = row_lengths;
    if (mem == SPX_MEM_HOST) {
        /* slots and real entries are read from the arrays; the check validates them */
        A->sell_slots = spx__idx_get(slice_offsets, itype, nslices);
        int64_t nnz = 0;
        for (int64_t p = 0; row_lengths && p < nslices * slice_c; p++)
            nnz += spx__idx_get(row_lengths, itype, p);
        A->nnz = nnz;
    }
    if ((s = finish_wrap(ctx, A)))
        return s;
    *out = A;
    return SPX_OK;
}

/* ---- copies ---- */

spx_status spx_matrix_copy(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    spx_matrix *B = NULL;
    if ((s = spx__matrix_new_like(ctx, A, SPX_INDEX_DEFAULT, SPX_DTYPE_DEFAULT, &B)))
        return s;
    if ((s = spx__matrix_alloc(ctx, B))) {
        spx_matrix_destroy(B);
        return s;
    }
    size_t isz = spx__index_size(A->itype), vsz = spx_dtype_size(A->dtype);
    int64_t noff = spx__matrix_offsets_len(A), nidx = spx__matrix_indices_len(A);
    if (noff)
        memcpy(B->offsets, A->offsets, (size_t)noff * isz);
    if (nidx)
        memcpy(B->indices, A->indices, (size_t)nidx * isz);
    if (A->row_indices && nidx)
        memcpy(B->row_indices, A->row_indices, (size_t)nidx * isz);
    if (vsz && spx__matrix_values_len(A))
        memcpy(B->values, A->values, (size_t)spx__matrix_values_len(A) * vsz);
    if (A->format == SPX_SELL) {
        memcpy(B->perm, A->perm, (size_t)(A->nslices * A->sell_c) * isz);
        memcpy(B->row_lengths, A->row_lengths, (size_t)(A->nslices * A->sell_c) * isz);
    }
    if (A->checked_version == A->version)
        B->checked_version = B->version;
    *out = B;
    return SPX_OK;
}

/* ---- attachments ---- */

void *spx__matrix_attachment(const spx_matrix *A, const void *key)
{
    for (spx_attachment *a = A->attachments; a; a = a->next)
        if (a->key == key)
            return a->data;
    return NULL;
}

spx_status spx__matrix_attach(spx_ctx *ctx, const spx_matrix *A, const void *key, void *data,
                              void (*release)(void *data))
{
    spx_attachment *a = spx__malloc(sizeof *a);
    if (!a)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory caching derived data");
    a->key = key;
    a->data = data;
    a->release = release;
    spx_matrix *M = (spx_matrix *)A; /* attachments are a cache: logically const */
    a->next = M->attachments;
    M->attachments = a;
    return SPX_OK;
}

void spx__matrix_drop_attachments(spx_matrix *A)
{
    spx_attachment *a = A->attachments;
    while (a) {
        spx_attachment *next = a->next;
        if (a->release)
            a->release(a->data);
        spx__free(a);
        a = next;
    }
    A->attachments = NULL;
}

/* ---- argument checks ---- */

spx_status spx__check_matrix_arg(spx_ctx *ctx, const spx_matrix *A, const char *name)
{
    if (!A)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "matrix %s is NULL", name);
    return SPX_OK;
}

spx_status spx__check_host(spx_ctx *ctx, const spx_matrix *A, const char *name)
{
    if (A->memory != SPX_MEM_HOST)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "matrix %s is in device memory; this operation needs host memory", name);
    return SPX_OK;
}

spx_status spx__matrix_ensure_valid(spx_ctx *ctx, const spx_matrix *A)
{
    /* device matrices are validated by the backend that owns the device */
    if ((ctx && !ctx->validate) || A->checked_version == A->version || A->memory != SPX_MEM_HOST)
        return SPX_OK;
    return spx_matrix_check(ctx, A);
}

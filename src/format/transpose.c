/* spx_matrix_transpose: A^T in A's format. */
#include "format/convert.h"

#include <string.h>

/* Shape of A^T on a matrix that holds A's transposed arrays. */
static void swap_shape(spx_matrix *T)
{
    int64_t r = T->rows;
    T->rows = T->cols;
    T->cols = r;
}

/* The CSC arrays of A are the CSR arrays of A^T (and the other way round). */
static spx_status transpose_compressed(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_matrix *T = NULL;
    spx_status s = spx__compressed_flip(ctx, A, &T);
    if (s)
        return s;
    T->format = A->format;
    swap_shape(T);
    *out = T;
    return SPX_OK;
}

/* Block (bi, bj) of A becomes block (bj, bi) of A^T, itself transposed
 * (bc x br); padding outside A stays outside A^T. */
static spx_status transpose_bsr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_index_type t = A->itype;
    int64_t brows = spx__bsr_block_rows(A), bcols = spx__bsr_block_cols(A);
    int64_t br = A->br, bc = A->bc;
    spx_matrix *T = NULL;
    int64_t *next = NULL;
    spx_status s = spx__matrix_new(ctx, SPX_BSR, A->cols, A->rows, t, A->dtype, &T);
    if (s)
        return s;
    T->br = bc;
    T->bc = br;
    T->nblocks = A->nblocks;
    T->nnz = A->nnz;
    if ((s = spx__matrix_alloc(ctx, T)) ||
        (s = spx__alloc_zero(ctx, (void **)&next, bcols + 1, sizeof(int64_t), "BSR transpose counts")))
        goto done;
    for (int64_t q = 0; q < A->nblocks; q++)
        next[spx__idx_get(A->indices, t, q) + 1]++;
    for (int64_t bj = 0; bj < bcols; bj++)
        next[bj + 1] += next[bj];
    for (int64_t bj = 0; bj <= bcols; bj++)
        spx__idx_set(T->offsets, t, bj, next[bj]);
    size_t vsz = spx_dtype_size(A->dtype);
    for (int64_t bi = 0; bi < brows; bi++) /* block rows in order keep T's block columns sorted */
        for (int64_t q = spx__idx_get(A->offsets, t, bi); q < spx__idx_get(A->offsets, t, bi + 1); q++) {
            int64_t d = next[spx__idx_get(A->indices, t, q)]++;
            spx__idx_set(T->indices, t, d, bi);
            for (int64_t r = 0; vsz && r < br; r++)
                for (int64_t c = 0; c < bc; c++)
                    memcpy((char *)T->values + ((d * bc + c) * br + r) * vsz,
                           (const char *)A->values + ((q * br + r) * bc + c) * vsz, vsz);
        }
    T->checked_version = T->version;
done:
    spx__free(next);
    if (s) {
        spx_matrix_destroy(T);
        return s;
    }
    *out = T;
    return SPX_OK;
}

/* SELL is rebuilt from the transposed CSR with the same C and sigma. */
static spx_status transpose_sell(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_matrix *csr = NULL, *csr_t = NULL;
    spx_status s = spx__sell_to_csr(ctx, A, &csr);
    if (!s)
        s = transpose_compressed(ctx, csr, &csr_t);
    if (!s)
        s = spx__csr_to_sell(ctx, csr_t, A->sell_c, A->sell_sigma, out);
    spx_matrix_destroy(csr);
    spx_matrix_destroy(csr_t);
    return s;
}

spx_status spx_matrix_transpose(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (A->format != SPX_COO && (s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    switch (A->format) {
    case SPX_COO: { /* entries keep their storage order (and their duplicates) */
        spx_matrix *T = NULL;
        if ((s = spx_matrix_copy(ctx, A, &T)))
            return s;
        void *rows = T->row_indices;
        T->row_indices = T->indices;
        T->indices = rows;
        swap_shape(T);
        *out = T;
        return SPX_OK;
    }
    case SPX_CSR:
    case SPX_CSC: return transpose_compressed(ctx, A, out);
    case SPX_BSR: return transpose_bsr(ctx, A, out);
    case SPX_SELL: return transpose_sell(ctx, A, out);
    default: return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "unknown format %d", (int)A->format);
    }
}

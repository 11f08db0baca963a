/* spx_matrix_canonicalize: a sorted, duplicate-free copy in A's format, even
 * of CSR/CSC/SELL arrays wrapped unsorted or with repeated indices. */
#include "format/convert.h"

#include <string.h>

/* CSR/CSC: expand the offsets into a major index per entry (they must be
 * well formed) and compress the (major, minor) pairs as COO. */
static spx_status canonical_compressed(spx_ctx *ctx, const spx_matrix *A, spx_dup_policy dup,
                                       spx_matrix **out)
{
    spx_index_type t = A->itype;
    bool csr = A->format == SPX_CSR;
    int64_t nmajor = csr ? A->rows : A->cols;
    spx_status s = spx__check_offsets(ctx, A, nmajor, A->nnz, csr ? "CSR" : "CSC");
    void *major = NULL;
    if (s || (s = spx__alloc(ctx, &major, A->nnz, spx__index_size(t), "major indices")))
        return s;
    for (int64_t m = 0; m < nmajor; m++)
        for (int64_t p = spx__idx_get(A->offsets, t, m); p < spx__idx_get(A->offsets, t, m + 1); p++)
            spx__idx_set(major, t, p, m);
    spx_matrix view = *A; /* A's entries seen as COO; nothing of it is freed */
    view.format = SPX_COO;
    view.offsets = NULL;
    view.attachments = NULL;
    view.owns = false;
    view.row_indices = csr ? major : A->indices;
    view.indices = csr ? A->indices : major;
    s = spx__coo_compress(ctx, &view, A->format, dup, out);
    spx__free(major);
    return s;
}

/* SELL: gather the real slots into COO (rows through perm), combine, rebuild. */
static spx_status canonical_sell(spx_ctx *ctx, const spx_matrix *A, spx_dup_policy dup,
                                 spx_matrix **out)
{
    spx_index_type t = A->itype;
    spx_matrix *coo = NULL, *csr = NULL;
    spx_status s = spx__matrix_create(ctx, SPX_COO, A->rows, A->cols, A->nnz, t, A->dtype, &coo);
    if (s)
        return s;
    size_t vsz = spx_dtype_size(A->dtype);
    int64_t e = 0, c = A->sell_c;
    for (int64_t pos = 0; pos < A->rows; pos++) {
        int64_t base = spx__idx_get(A->offsets, t, pos / c), i = spx__idx_get(A->perm, t, pos);
        for (int64_t k = 0; k < spx__idx_get(A->row_lengths, t, pos); k++, e++) {
            int64_t slot = base + k * c + pos % c;
            spx__idx_set(coo->row_indices, t, e, i);
            spx__idx_set(coo->indices, t, e, spx__idx_get(A->indices, t, slot));
            if (vsz)
                memcpy((char *)coo->values + e * vsz, (const char *)A->values + slot * vsz, vsz);
        }
    }
    s = spx__coo_compress(ctx, coo, SPX_CSR, dup, &csr);
    if (!s)
        s = spx__csr_to_sell(ctx, csr, A->sell_c, A->sell_sigma, out);
    spx_matrix_destroy(coo);
    spx_matrix_destroy(csr);
    return s;
}

spx_status spx_matrix_canonicalize(spx_ctx *ctx, const spx_matrix *A, spx_dup_policy dup,
                                   spx_matrix **out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if ((s = spx__check_dup_policy(ctx, dup)))
        return s;
    switch (A->format) {
    case SPX_COO: return spx_matrix_convert(ctx, A, SPX_COO, &(spx_format_params){.dup = dup}, out);
    case SPX_CSR:
    case SPX_CSC: return canonical_compressed(ctx, A, dup, out);
    case SPX_BSR:
    case SPX_SELL: break;
    default: return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "unknown format %d", (int)A->format);
    }
    /* BSR and SELL need their structure intact (SELL rows may still be
     * unsorted or repeat columns), whatever the context's validation says */
    if (A->checked_version != A->version && (s = spx_matrix_check(ctx, A)))
        return s;
    if (A->format == SPX_SELL)
        return canonical_sell(ctx, A, dup, out);
    spx_matrix *csr = NULL; /* valid BSR is already sorted: this rebuilds the same blocks */
    if ((s = spx__bsr_to_csr(ctx, A, &csr)))
        return s;
    s = spx__csr_to_bsr(ctx, csr, A->br, A->bc, out);
    spx_matrix_destroy(csr);
    return s;
}

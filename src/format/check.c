/* spx_matrix_check: structural validation with messages that name the first
 * violation. */
#include "format/matrix.h"

#include <stdlib.h>

#define LL(x) ((long long)(x))

spx_status spx__check_offsets(spx_ctx *ctx, const spx_matrix *A, int64_t n, int64_t total,
                              const char *fmt_name)
{
    spx_index_type t = A->itype;
    int64_t first = spx__idx_get(A->offsets, t, 0);
    if (first != 0)
        return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "%s: offsets[0] is %lld, must be 0",
                         fmt_name, LL(first));
    for (int64_t i = 0; i < n; i++) {
        int64_t a = spx__idx_get(A->offsets, t, i), b = spx__idx_get(A->offsets, t, i + 1);
        if (b < a)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                             "%s: offsets decrease at %lld (offsets[%lld] = %lld > offsets[%lld] = %lld)",
                             fmt_name, LL(i), LL(i), LL(a), LL(i + 1), LL(b));
        if (b > total)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                             "%s: offsets[%lld] = %lld exceeds the %lld stored entries", fmt_name,
                             LL(i + 1), LL(b), LL(total));
    }
    int64_t last = spx__idx_get(A->offsets, t, n);
    if (last != total)
        return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                         "%s: offsets[%lld] is %lld, must equal the entry count %lld", fmt_name,
                         LL(n), LL(last), LL(total));
    return SPX_OK;
}

/* Compressed formats: indices in [0, bound), strictly increasing in each segment. */
static spx_status check_compressed(spx_ctx *ctx, const spx_matrix *A, int64_t nseg, int64_t bound,
                                   const char *seg, const char *idx)
{
    spx_index_type t = A->itype;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t b = spx__idx_get(A->offsets, t, s), e = spx__idx_get(A->offsets, t, s + 1);
        int64_t prev = -1;
        for (int64_t p = b; p < e; p++) {
            int64_t j = spx__idx_get(A->indices, t, p);
            if (j < 0 || j >= bound)
                return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                                 "%s %lld: %s index %lld out of range [0, %lld) at entry %lld", seg,
                                 LL(s), idx, LL(j), LL(bound), LL(p));
            if (j == prev)
                return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                                 "%s %lld: duplicate %s index %lld at entry %lld", seg, LL(s), idx,
                                 LL(j), LL(p));
            if (j < prev)
                return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                                 "%s %lld: %s indices not sorted (%lld after %lld at entry %lld)",
                                 seg, LL(s), idx, LL(j), LL(prev), LL(p));
            prev = j;
        }
    }
    return SPX_OK;
}

static spx_status check_coo(spx_ctx *ctx, const spx_matrix *A)
{
    for (int64_t p = 0; p < A->nnz; p++) {
        int64_t i = spx__idx_get(A->row_indices, A->itype, p), j = spx__idx_get(A->indices, A->itype, p);
        if (i < 0 || i >= A->rows)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "COO: row index %lld out of range [0, %lld) at entry %lld", LL(i),
                       LL(A->rows), LL(p));
        if (j < 0 || j >= A->cols)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "COO: column index %lld out of range [0, %lld) at entry %lld",
                       LL(j), LL(A->cols), LL(p));
    }
    return SPX_OK;
}

/* Any part nonzero (the imaginary part counts for complex values). */
static bool value_nonzero(const void *vals, spx_dtype t, int64_t i)
{
    if (t == SPX_C64)
        return ((const float *)vals)[2 * i] != 0.0f || ((const float *)vals)[2 * i + 1] != 0.0f;
    if (t == SPX_C128)
        return ((const double *)vals)[2 * i] != 0.0 || ((const double *)vals)[2 * i + 1] != 0.0;
    return spx__val_get(vals, t, i) != 0.0;
}

static spx_status check_bsr(spx_ctx *ctx, const spx_matrix *A)
{
    int64_t brows = spx__bsr_block_rows(A), bcols = spx__bsr_block_cols(A);
    spx_status s = spx__check_offsets(ctx, A, brows, A->nblocks, "BSR");
    if (s || (s = check_compressed(ctx, A, brows, bcols, "BSR block row", "block column")))
        return s;
    if (!A->values || (A->rows % A->br == 0 && A->cols % A->bc == 0))
        return SPX_OK;
    /* padding slots of edge blocks must hold zero */
    for (int64_t bi = 0; bi < brows; bi++) {
        int64_t b = spx__idx_get(A->offsets, A->itype, bi), e = spx__idx_get(A->offsets, A->itype, bi + 1);
        for (int64_t p = b; p < e; p++) {
            int64_t bj = spx__idx_get(A->indices, A->itype, p);
            for (int64_t r = 0; r < A->br; r++)
                for (int64_t c = 0; c < A->bc; c++) {
                    int64_t i = bi * A->br + r, j = bj * A->bc + c;
                    if ((i >= A->rows || j >= A->cols) &&
                        value_nonzero(A->values, A->dtype, (p * A->br + r) * A->bc + c))
                        return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                                         "BSR: block %lld holds a nonzero at (%lld, %lld), outside "
                                         "the %lld x %lld matrix (padding must be zero)",
                                         LL(p), LL(i), LL(j), LL(A->rows), LL(A->cols));
                }
        }
    }
    return SPX_OK;
}

static spx_status check_sell(spx_ctx *ctx, const spx_matrix *A)
{
    spx_index_type t = A->itype;
    int64_t C = A->sell_c;
    int64_t want = spx__ceil_div(A->rows, C);
    if (A->nslices != want)
        return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: %lld slices for %lld rows with C=%lld (expected %lld)",
                   LL(A->nslices), LL(A->rows), LL(C), LL(want));
    spx_status s = spx__check_offsets(ctx, A, A->nslices, A->sell_slots, "SELL");
    if (s)
        return s;
    bool *seen = NULL;
    if ((s = spx__alloc_zero(ctx, (void **)&seen, A->rows, 1, "SELL check")))
        return s;
    int64_t nnz = 0;
    for (int64_t sl = 0; sl < A->nslices && !s; sl++) {
        int64_t base = spx__idx_get(A->offsets, t, sl), width_slots = spx__idx_get(A->offsets, t, sl + 1) - base;
        if (width_slots % C) {
            s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: slice %lld has %lld slots, not a multiple of C=%lld", LL(sl),
                    LL(width_slots), LL(C));
            break;
        }
        int64_t w = width_slots / C;
        for (int64_t r = 0; r < C && !s; r++) {
            int64_t p = sl * C + r;
            int64_t orig = spx__idx_get(A->perm, t, p), len = spx__idx_get(A->row_lengths, t, p);
            if (p >= A->rows) {
                if (orig != -1 || len != 0)
                    s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: position %lld is past the last row but has perm %lld and length %lld",
                            LL(p), LL(orig), LL(len));
            } else if (orig < 0 || orig >= A->rows)
                s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: perm[%lld] = %lld out of range [0, %lld)", LL(p), LL(orig),
                        LL(A->rows));
            else if (seen[orig])
                s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: perm is not a permutation: row %lld appears twice (position %lld)",
                        LL(orig), LL(p));
            else if (orig / A->sell_sigma != p / A->sell_sigma)
                s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: row %lld stored at position %lld, outside its sigma=%lld window",
                        LL(orig), LL(p), LL(A->sell_sigma));
            else if (len < 0 || len > w)
                s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: row length %lld at position %lld outside [0, %lld] (slice width)",
                        LL(len), LL(p), LL(w));
            if (s)
                break;
            if (p < A->rows)
                seen[orig] = true;
            nnz += len;
            for (int64_t k = 0; k < w; k++) {
                int64_t j = spx__idx_get(A->indices, t, base + k * C + r);
                if (k < len && (j < 0 || j >= A->cols)) {
                    s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: column index %lld out of range [0, %lld) in row %lld (slot %lld)",
                            LL(j), LL(A->cols), LL(orig), LL(k));
                    break;
                }
                if (k >= len && j != -1) {
                    s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: padding slot %lld at position %lld holds column %lld, must be -1",
                            LL(k), LL(p), LL(j));
                    break;
                }
            }
        }
    }
    if (!s && nnz != A->nnz)
        s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: row lengths sum to %lld, header says %lld entries", LL(nnz),
                LL(A->nnz));
    spx__free(seen);
    return s;
}

spx_status spx_matrix_check(spx_ctx *ctx, const spx_matrix *A)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    switch (A->format) {
    case SPX_COO: s = check_coo(ctx, A); break;
    case SPX_CSR:
        s = spx__check_offsets(ctx, A, A->rows, A->nnz, "CSR");
        if (!s)
            s = check_compressed(ctx, A, A->rows, A->cols, "CSR row", "column");
        break;
    case SPX_CSC:
        s = spx__check_offsets(ctx, A, A->cols, A->nnz, "CSC");
        if (!s)
            s = check_compressed(ctx, A, A->cols, A->rows, "CSC column", "row");
        break;
    case SPX_BSR: s = check_bsr(ctx, A); break;
    case SPX_SELL: s = check_sell(ctx, A); break;
    default: s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "unknown format %d", (int)A->format);
    }
    if (!s)
        ((spx_matrix *)A)->checked_version = A->version; /* a cache: logically const */
    return s;
}

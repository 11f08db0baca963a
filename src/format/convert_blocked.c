/* Conversions into and out of BSR and SELL-C-sigma. Inputs are valid matrices
 * (the dispatcher checks them). Every pass is linear in entries, blocks or
 * slots plus the grid dimensions; nothing scans a dense block grid. */
#include "format/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LL(x) ((long long)(x))

/* The value count of a BSR or SELL result must fit int64 and, for int32
 * indices, int32 (offsets hold it). */
static spx_status check_storage(spx_ctx *ctx, spx_index_type t, bool overflow, int64_t count,
                                const char *what)
{
    if (overflow)
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: the number of stored values overflows int64",
                         what);
    if (t == SPX_INDEX_I32 && count > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "%s: %lld stored values do not fit int32 indices; use SPX_INDEX_I64", what,
                         LL(count));
    return SPX_OK;
}

/* ---- CSR -> BSR ---- */

/* Rows of A in block row bi: [bi*br, end). */
static int64_t block_row_end(const spx_matrix *A, int64_t bi, int64_t br)
{
    return A->rows - bi * br < br ? A->rows : bi * br + br;
}

/* Visit each distinct block (bi, bj) of A once, block rows in order (mark[bj]
 * holds the last block row that saw bj). Without bucket: count the blocks
 * into col[bj + 1] and note where each block row starts in row_start. With
 * bucket: append bi to bucket[col[bj]++]. Returns the number of blocks. */
static int64_t walk_blocks(const spx_matrix *A, int64_t br, int64_t bc, int64_t *mark,
                           int64_t *col, int64_t *row_start, int64_t *bucket)
{
    spx_index_type t = A->itype;
    int64_t brows = spx__ceil_div(A->rows, br), bcols = spx__ceil_div(A->cols, bc), n = 0;
    for (int64_t bj = 0; bj < bcols; bj++)
        mark[bj] = -1;
    for (int64_t bi = 0; bi < brows; bi++) {
        if (row_start)
            row_start[bi] = n;
        int64_t b = spx__idx_get(A->offsets, t, bi * br);
        int64_t e = spx__idx_get(A->offsets, t, block_row_end(A, bi, br));
        for (int64_t p = b; p < e; p++) {
            int64_t bj = spx__idx_get(A->indices, t, p) / bc;
            if (mark[bj] == bi)
                continue;
            mark[bj] = bi;
            n++;
            if (bucket)
                bucket[col[bj]++] = bi;
            else
                col[bj + 1]++;
        }
    }
    return n;
}

spx_status spx__csr_to_bsr(spx_ctx *ctx, const spx_matrix *A, int64_t br, int64_t bc,
                           spx_matrix **out)
{
    if (br < 1 || bc < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid BSR block shape %lld x %lld",
                         LL(br), LL(bc));
    spx_index_type t = A->itype;
    int64_t brows = spx__ceil_div(A->rows, br), bcols = spx__ceil_div(A->cols, bc);
    int64_t *mark = NULL, *colptr = NULL, *bucket = NULL, *next = NULL;
    spx_matrix *B = NULL;
    spx_status s = spx__alloc(ctx, (void **)&mark, bcols, sizeof(int64_t), "BSR block marks");
    if (!s)
        s = spx__alloc_zero(ctx, (void **)&colptr, bcols + 1, sizeof(int64_t), "BSR block counts");
    if (!s)
        s = spx__alloc(ctx, (void **)&next, brows + 1, sizeof(int64_t), "BSR block row offsets");
    if (s)
        goto done;

    /* count the blocks of each block row and of each block column */
    int64_t nblocks = walk_blocks(A, br, bc, mark, colptr, next, NULL);
    next[brows] = nblocks;
    int64_t per_block, total = 0;
    bool ovf = spx__mul_overflows(br, bc, &per_block) && nblocks > 0;
    ovf = ovf || spx__mul_overflows(nblocks, per_block, &total);
    char what[96];
    snprintf(what, sizeof what, "BSR with %lld blocks of %lld x %lld", LL(nblocks), LL(br), LL(bc));
    if ((s = check_storage(ctx, t, ovf, total, what)))
        goto done;

    if ((s = spx__matrix_new(ctx, SPX_BSR, A->rows, A->cols, t, A->dtype, &B)))
        goto done;
    B->br = br;
    B->bc = bc;
    B->nblocks = nblocks;
    B->nnz = total;
    if ((s = spx__matrix_alloc(ctx, B)) ||
        (s = spx__alloc(ctx, (void **)&bucket, nblocks, sizeof(int64_t), "BSR block buckets")))
        goto done;
    for (int64_t bi = 0; bi <= brows; bi++)
        spx__idx_set(B->offsets, t, bi, next[bi]);
    /* sorted block columns: bucket the blocks by block column (block rows
     * ascending), then deal each bucket back to its block rows in bj order */
    for (int64_t bj = 0; bj < bcols; bj++)
        colptr[bj + 1] += colptr[bj];
    walk_blocks(A, br, bc, mark, colptr, NULL, bucket);
    for (int64_t q = 0, bj = 0; bj < bcols; bj++)
        for (; q < colptr[bj]; q++)
            spx__idx_set(B->indices, t, next[bucket[q]]++, bj);

    /* values: mark[bj] becomes the slot of block bj in the current block row */
    size_t vsz = spx_dtype_size(A->dtype);
    if (vsz) {
        memset(B->values, 0, (size_t)total * vsz);
        for (int64_t bi = 0; bi < brows; bi++) {
            int64_t bb = spx__idx_get(B->offsets, t, bi), be = spx__idx_get(B->offsets, t, bi + 1);
            for (int64_t q = bb; q < be; q++)
                mark[spx__idx_get(B->indices, t, q)] = q;
            for (int64_t i = bi * br; i < block_row_end(A, bi, br); i++) {
                int64_t b = spx__idx_get(A->offsets, t, i), e = spx__idx_get(A->offsets, t, i + 1);
                for (int64_t p = b; p < e; p++) {
                    int64_t j = spx__idx_get(A->indices, t, p), bj = j / bc;
                    int64_t slot = (mark[bj] * br + (i - bi * br)) * bc + (j - bj * bc);
                    memcpy((char *)B->values + slot * vsz, (const char *)A->values + p * vsz, vsz);
                }
            }
        }
    }
    B->checked_version = B->version;
done:
    spx__free(mark);
    spx__free(colptr);
    spx__free(bucket);
    spx__free(next);
    if (s) {
        spx_matrix_destroy(B);
        return s;
    }
    *out = B;
    return SPX_OK;
}

/* ---- BSR -> CSR ---- */

/* Columns that block column bj covers inside the matrix. */
static int64_t block_width(const spx_matrix *A, int64_t bj)
{
    int64_t w = A->cols - bj * A->bc;
    return w < A->bc ? w : A->bc;
}

spx_status spx__bsr_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_index_type t = A->itype;
    int64_t brows = spx__bsr_block_rows(A), br = A->br, bc = A->bc;
    int64_t nnz = 0;
    for (int64_t bi = 0; bi < brows; bi++) {
        int64_t rowlen = 0, nr = A->rows - bi * br < br ? A->rows - bi * br : br;
        for (int64_t q = spx__idx_get(A->offsets, t, bi); q < spx__idx_get(A->offsets, t, bi + 1); q++)
            rowlen += block_width(A, spx__idx_get(A->indices, t, q));
        nnz += nr * rowlen; /* at most nblocks*br*bc, which fits */
    }
    spx_matrix *C = NULL;
    spx_status s = spx__matrix_new(ctx, SPX_CSR, A->rows, A->cols, t, A->dtype, &C);
    if (s)
        return s;
    C->nnz = nnz;
    if ((s = spx__matrix_alloc(ctx, C))) {
        spx_matrix_destroy(C);
        return s;
    }
    size_t vsz = spx_dtype_size(A->dtype);
    int64_t k = 0; /* next CSR entry; rows are emitted in order */
    spx__idx_set(C->offsets, t, 0, 0);
    for (int64_t bi = 0; bi < brows; bi++) {
        int64_t qb = spx__idx_get(A->offsets, t, bi), qe = spx__idx_get(A->offsets, t, bi + 1);
        int64_t nr = A->rows - bi * br < br ? A->rows - bi * br : br;
        for (int64_t r = 0; r < nr; r++) {
            for (int64_t q = qb; q < qe; q++) { /* sorted block columns give sorted columns */
                int64_t bj = spx__idx_get(A->indices, t, q), w = block_width(A, bj);
                for (int64_t c = 0; c < w; c++, k++) {
                    spx__idx_set(C->indices, t, k, bj * bc + c);
                    if (vsz)
                        memcpy((char *)C->values + k * vsz,
                               (const char *)A->values + ((q * br + r) * bc + c) * vsz, vsz);
                }
            }
            spx__idx_set(C->offsets, t, bi * br + r + 1, k);
        }
    }
    C->checked_version = C->version;
    *out = C;
    return SPX_OK;
}

/* ---- CSR -> SELL ---- */

/* perm[p] for p < rows: rows in each window of sigma consecutive rows ordered
 * by length, longest first, ties in row order. Two stable counting passes:
 * by length (descending) over all rows, then dealt into their windows. */
static spx_status sell_order(spx_ctx *ctx, const spx_matrix *A, int64_t sigma, int64_t *perm)
{
    spx_index_type t = A->itype;
    int64_t rows = A->rows, maxlen = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t len = spx__idx_get(A->offsets, t, i + 1) - spx__idx_get(A->offsets, t, i);
        maxlen = len > maxlen ? len : maxlen;
    }
    int64_t nwin = spx__ceil_div(rows, sigma);
    int64_t *cnt = NULL, *by_len = NULL;
    spx_status s = spx__alloc_zero(ctx, (void **)&cnt, (maxlen > nwin ? maxlen : nwin) + 2,
                                   sizeof(int64_t), "SELL sort counts");
    if (!s)
        s = spx__alloc(ctx, (void **)&by_len, rows, sizeof(int64_t), "SELL sort buffer");
    if (s)
        goto done;
    for (int64_t i = 0; i < rows; i++) {
        int64_t len = spx__idx_get(A->offsets, t, i + 1) - spx__idx_get(A->offsets, t, i);
        cnt[maxlen - len + 1]++;
    }
    for (int64_t k = 0; k <= maxlen; k++)
        cnt[k + 1] += cnt[k];
    for (int64_t i = 0; i < rows; i++) {
        int64_t len = spx__idx_get(A->offsets, t, i + 1) - spx__idx_get(A->offsets, t, i);
        by_len[cnt[maxlen - len]++] = i;
    }
    /* window w fills positions [w*sigma, ...) in the order of by_len */
    for (int64_t w = 0; w < nwin; w++)
        cnt[w] = w * sigma;
    for (int64_t q = 0; q < rows; q++)
        perm[cnt[by_len[q] / sigma]++] = by_len[q];
done:
    spx__free(cnt);
    spx__free(by_len);
    return s;
}

spx_status spx__csr_to_sell(spx_ctx *ctx, const spx_matrix *A, int64_t c, int64_t sigma,
                            spx_matrix **out)
{
    if (c < 1 || sigma < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid SELL parameters C=%lld sigma=%lld",
                         LL(c), LL(sigma));
    spx_index_type t = A->itype;
    int64_t rows = A->rows, nslices = spx__ceil_div(rows, c), npos;
    if (spx__mul_overflows(nslices, c, &npos))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "SELL: %lld slices of C=%lld rows overflow",
                         LL(nslices), LL(c));
    int64_t *perm = NULL;
    spx_matrix *B = NULL;
    spx_status s = spx__alloc(ctx, (void **)&perm, rows, sizeof(int64_t), "SELL permutation");
    if (s || (s = sell_order(ctx, A, sigma, perm)))
        goto done;

    /* slice widths: the longest row of each slice */
    int64_t slots = 0;
    bool ovf = false;
    for (int64_t sl = 0; sl < nslices && !ovf; sl++) {
        int64_t w = 0;
        for (int64_t p = sl * c; p < rows && p < (sl + 1) * c; p++) {
            int64_t i = perm[p];
            int64_t len = spx__idx_get(A->offsets, t, i + 1) - spx__idx_get(A->offsets, t, i);
            w = len > w ? len : w;
        }
        int64_t ws;
        ovf = spx__mul_overflows(w, c, &ws) || spx__add_overflows(slots, ws, &slots);
    }
    char what[96];
    snprintf(what, sizeof what, "SELL with C=%lld of a %lld x %lld matrix", LL(c), LL(rows),
             LL(A->cols));
    if ((s = check_storage(ctx, t, ovf, slots, what)) ||
        (s = spx__matrix_new(ctx, SPX_SELL, rows, A->cols, t, A->dtype, &B)))
        goto done;
    B->sell_c = c;
    B->sell_sigma = sigma;
    B->nslices = nslices;
    B->sell_slots = slots;
    B->nnz = A->nnz;
    if ((s = spx__matrix_alloc(ctx, B)))
        goto done;

    size_t vsz = spx_dtype_size(A->dtype);
    if (vsz)
        memset(B->values, 0, (size_t)slots * vsz);
    int64_t base = 0;
    spx__idx_set(B->offsets, t, 0, 0);
    for (int64_t sl = 0; sl < nslices; sl++) {
        int64_t w = 0;
        for (int64_t r = 0; r < c; r++) {
            int64_t p = sl * c + r, i = p < rows ? perm[p] : -1;
            int64_t b = i >= 0 ? spx__idx_get(A->offsets, t, i) : 0;
            int64_t len = i >= 0 ? spx__idx_get(A->offsets, t, i + 1) - b : 0;
            spx__idx_set(B->perm, t, p, i);
            spx__idx_set(B->row_lengths, t, p, len);
            w = len > w ? len : w;
        }
        for (int64_t r = 0; r < c; r++) {
            int64_t p = sl * c + r, i = p < rows ? perm[p] : -1;
            int64_t b = i >= 0 ? spx__idx_get(A->offsets, t, i) : 0;
            int64_t len = spx__idx_get(B->row_lengths, t, p);
            for (int64_t k = 0; k < w; k++) {
                int64_t slot = base + k * c + r;
                spx__idx_set(B->indices, t, slot, k < len ? spx__idx_get(A->indices, t, b + k) : -1);
                if (k < len && vsz)
                    memcpy((char *)B->values + slot * vsz, (const char *)A->values + (b + k) * vsz,
                           vsz);
            }
        }
        base += w * c;
        spx__idx_set(B->offsets, t, sl + 1, base);
    }
    B->checked_version = B->version;
done:
    spx__free(perm);
    if (s) {
        spx_matrix_destroy(B);
        return s;
    }
    *out = B;
    return SPX_OK;
}

/* ---- SELL -> CSR ---- */

typedef struct {
    int64_t col, src; /* column and CSR position before sorting */
} col_entry;

static int col_entry_cmp(const void *a, const void *b)
{
    const col_entry *x = a, *y = b;
    return x->col < y->col ? -1 : x->col > y->col;
}

/* Sort the columns of CSR row i (entries [b, e)) with their values; a
 * repeated column is an error. ent and vbuf hold at least e - b items. */
static spx_status sort_row(spx_ctx *ctx, spx_matrix *C, int64_t i, int64_t b, int64_t e,
                           col_entry *ent, char *vbuf)
{
    spx_index_type t = C->itype;
    size_t vsz = spx_dtype_size(C->dtype);
    int64_t n = e - b;
    for (int64_t k = 0; k < n; k++)
        ent[k] = (col_entry){spx__idx_get(C->indices, t, b + k), b + k};
    qsort(ent, (size_t)n, sizeof *ent, col_entry_cmp);
    for (int64_t k = 1; k < n; k++)
        if (ent[k].col == ent[k - 1].col)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "SELL: row %lld holds column %lld twice",
                             LL(i), LL(ent[k].col));
    if (vsz) {
        for (int64_t k = 0; k < n; k++)
            memcpy(vbuf + k * vsz, (const char *)C->values + ent[k].src * vsz, vsz);
        memcpy((char *)C->values + b * vsz, vbuf, (size_t)n * vsz);
    }
    for (int64_t k = 0; k < n; k++)
        spx__idx_set(C->indices, t, b + k, ent[k].col);
    return SPX_OK;
}

spx_status spx__sell_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_index_type t = A->itype;
    int64_t rows = A->rows, c = A->sell_c;
    spx_matrix *C = NULL;
    col_entry *ent = NULL;
    char *vbuf = NULL;
    spx_status s = spx__matrix_new(ctx, SPX_CSR, rows, A->cols, t, A->dtype, &C);
    if (s)
        return s;
    C->nnz = A->nnz;
    if ((s = spx__matrix_alloc(ctx, C)))
        goto done;
    /* row lengths into offsets[i + 1], then prefix sums */
    int64_t maxlen = 0;
    spx__idx_set(C->offsets, t, 0, 0);
    for (int64_t p = 0; p < rows; p++) {
        int64_t len = spx__idx_get(A->row_lengths, t, p);
        spx__idx_set(C->offsets, t, spx__idx_get(A->perm, t, p) + 1, len);
        maxlen = len > maxlen ? len : maxlen;
    }
    for (int64_t i = 0; i < rows; i++)
        spx__idx_set(C->offsets, t, i + 1,
                     spx__idx_get(C->offsets, t, i) + spx__idx_get(C->offsets, t, i + 1));
    size_t vsz = spx_dtype_size(A->dtype);
    for (int64_t p = 0; p < rows; p++) {
        int64_t base = spx__idx_get(A->offsets, t, p / c), r = p % c;
        int64_t i = spx__idx_get(A->perm, t, p), len = spx__idx_get(A->row_lengths, t, p);
        int64_t q = spx__idx_get(C->offsets, t, i);
        for (int64_t k = 0; k < len; k++) {
            int64_t slot = base + k * c + r;
            spx__idx_set(C->indices, t, q + k, spx__idx_get(A->indices, t, slot));
            if (vsz)
                memcpy((char *)C->values + (q + k) * vsz, (const char *)A->values + slot * vsz, vsz);
        }
    }
    /* SELL does not promise sorted rows: sort the rows that need it */
    for (int64_t i = 0; i < rows; i++) {
        int64_t b = spx__idx_get(C->offsets, t, i), e = spx__idx_get(C->offsets, t, i + 1);
        bool sorted = true;
        for (int64_t q = b + 1; q < e && sorted; q++)
            sorted = spx__idx_get(C->indices, t, q - 1) < spx__idx_get(C->indices, t, q);
        if (sorted)
            continue;
        if (!ent && ((s = spx__alloc(ctx, (void **)&ent, maxlen, sizeof *ent, "SELL row sort")) ||
                     (s = spx__alloc(ctx, (void **)&vbuf, maxlen, vsz ? vsz : 1, "SELL row sort"))))
            goto done;
        if ((s = sort_row(ctx, C, i, b, e, ent, vbuf)))
            goto done;
    }
    C->checked_version = C->version;
done:
    spx__free(ent);
    spx__free(vbuf);
    if (s) {
        spx_matrix_destroy(C);
        return s;
    }
    *out = C;
    return SPX_OK;
}

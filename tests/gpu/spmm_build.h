/* Matrices the GPU SpMM test builds itself (random rows, a dense row among
 * sparse ones) and small helpers around the test's random stream. */
#ifndef SPX_TEST_GPU_BUILD_H
#define SPX_TEST_GPU_BUILD_H

#include "spmm_harness.h"

static uint64_t next_seed(void) { return spx__splitmix64(&g_rng); }

static int64_t pick(int64_t full, int64_t quick) { return g_quick ? quick : full; }

static void idx_put(void *p, spx_index_type t, int64_t i, int64_t v)
{
    if (t == SPX_INDEX_I64)
        ((int64_t *)p)[i] = v;
    else
        ((int32_t *)p)[i] = (int32_t)v;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A host CSR f32 matrix with lens[i] distinct random columns in row i and
 * values uniform in [-1, 1). */
static spx_matrix *build_csr(int64_t rows, int64_t cols, const int64_t *lens, spx_index_type itype)
{
    int64_t nnz = 0, maxlen = 0;
    for (int64_t i = 0; i < rows; i++) {
        nnz += lens[i];
        maxlen = lens[i] > maxlen ? lens[i] : maxlen;
    }
    spx_matrix *A = NULL;
    spx_matrix_arrays ar;
    CHECK_OK(g_ctx, spx_matrix_create_csr(g_ctx, rows, cols, nnz, itype, SPX_F32, &A));
    if (!A)
        return NULL;
    CHECK_OK(g_ctx, spx_matrix_arrays_get(A, &ar));
    unsigned char *mark = calloc((size_t)(cols > 0 ? cols : 1), 1);
    int64_t *pick_cols = malloc(sizeof(int64_t) * (size_t)(maxlen > 0 ? maxlen : 1));
    if (!mark || !pick_cols) {
        TFAIL("out of host memory building a %lld x %lld matrix", (long long)rows, (long long)cols);
        spx_matrix_destroy(A);
        A = NULL;
        goto done;
    }
    int64_t p = 0;
    for (int64_t i = 0; i < rows; i++) {
        idx_put(ar.offsets, itype, i, p);
        int64_t len = lens[i], got = 0;
        if (4 * len >= cols) { /* selection sampling: sorted by construction */
            for (int64_t j = 0; j < cols && got < len; j++)
                if ((double)(cols - j) * spx__rand_unit(&g_rng) < (double)(len - got))
                    pick_cols[got++] = j;
        } else {
            while (got < len) {
                int64_t j = (int64_t)spx__rand_below(&g_rng, (uint64_t)cols);
                if (!mark[j]) {
                    mark[j] = 1;
                    pick_cols[got++] = j;
                }
            }
            for (int64_t q = 0; q < len; q++)
                mark[pick_cols[q]] = 0;
            qsort(pick_cols, (size_t)len, sizeof *pick_cols, cmp_i64);
        }
        for (int64_t q = 0; q < len; q++, p++) {
            idx_put(ar.indices, itype, p, pick_cols[q]);
            ((float *)ar.values)[p] = (float)(2.0 * spx__rand_unit(&g_rng) - 1.0);
        }
    }
    idx_put(ar.offsets, itype, rows, p);
done:
    free(mark);
    free(pick_cols);
    return A;
}

/* rows x cols, each row i with i % every == 0 holding a random number of
 * entries in [lo, hi]; the other rows empty (every == 1: none). */
static spx_matrix *build_random_rows(int64_t rows, int64_t cols, int64_t lo, int64_t hi,
                                     int64_t every, spx_index_type itype)
{
    int64_t *lens = calloc((size_t)(rows > 0 ? rows : 1), sizeof *lens);
    if (!lens)
        return NULL;
    for (int64_t i = 0; i < rows; i++)
        if (i % every == 0)
            lens[i] = lo + (int64_t)spx__rand_below(&g_rng, (uint64_t)(hi - lo + 1));
    spx_matrix *A = build_csr(rows, cols, lens, itype);
    free(lens);
    return A;
}

/* n x n with row `dense` full and n more entries scattered over the other
 * rows: one row holds half the nonzeros. */
static spx_matrix *build_dense_row(int64_t n, int64_t dense)
{
    int64_t *lens = calloc((size_t)n, sizeof *lens);
    if (!lens)
        return NULL;
    for (int64_t e = 0; e < n; e++) {
        int64_t i = (int64_t)spx__rand_below(&g_rng, (uint64_t)n);
        if (i != dense && lens[i] < n)
            lens[i]++;
    }
    lens[dense] = n;
    spx_matrix *A = build_csr(n, n, lens, SPX_INDEX_I32);
    free(lens);
    return A;
}

static spx_matrix *astype(spx_matrix *A, spx_dtype t, spx_index_type it)
{
    spx_matrix *B = NULL;
    if (A)
        CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, t, it, &B));
    spx_matrix_destroy(A);
    return B;
}

#endif

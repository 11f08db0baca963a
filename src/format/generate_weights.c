/* Pruned neural-network weights: global magnitude pruning (as in DLMC) and
 * N:M structured sparsity, both over the same dense Gaussian-like weights.
 *
 * Weight (i, j) is the j-th draw of row i's stream: an Irwin-Hall sum of 12
 * uniform 32-bit integers minus its mean, g = sum - 6 * 2^32, with value
 * g / 2^32 (mean 0, variance 1, within [-6, 6]). It is computed in integers,
 * so every platform gives the same bits (no libm), and its magnitude |g| is
 * an exact integer key for selection. Ties in magnitude are broken by the
 * position: the lower (row-major) index is kept. */
#include "format/generate.h"

#include <stdlib.h>
#include <string.h>

#define LL(x) ((long long)(x))

static inline int64_t gauss_next(uint64_t *st)
{
    uint64_t sum = 0;
    for (int q = 0; q < 6; q++) {
        uint64_t x = spx__splitmix64(st);
        sum += (x >> 32) + (x & 0xffffffffu);
    }
    return (int64_t)sum - (INT64_C(6) << 32);
}
static inline uint64_t gauss_key(int64_t g) { return g < 0 ? (uint64_t)-g : (uint64_t)g; }
static inline double gauss_value(int64_t g) { return (double)g * 0x1p-32; }

/* A weight by magnitude key and position, ordered largest key first, then lowest position. */
typedef struct {
    uint64_t key;
    int64_t pos;
} ranked;

static int ranked_cmp(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* ---- global magnitude pruning ---- */

/* Selection histogram over key >> KEY_SHIFT: keys are at most 6 * 2^32. */
#define KEY_SHIFT 20
#define KEY_BINS ((INT64_C(6) << (32 - KEY_SHIFT)) + 1)

typedef struct {
    int64_t rows, cols;
    uint64_t seed;
    int64_t *hist;     /* selection: KEY_BINS per thread */
    int64_t bin;       /* the bin holding the boundary */
    ranked *cands;     /* the weights of that bin */
    int64_t ncands;
    int64_t *counts;   /* kept entries per row */
    uint64_t tkey;     /* kept: key > tkey, or key == tkey and position <= tpos */
    int64_t tpos;
} pruned_params;

static void pruned_histogram(void *arg, int64_t i0, int64_t i1, int tid)
{
    pruned_params *P = arg;
    int64_t *h = P->hist + (size_t)tid * KEY_BINS;
    for (int64_t i = i0; i < i1; i++) {
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        for (int64_t j = 0; j < P->cols; j++)
            h[gauss_key(gauss_next(&st)) >> KEY_SHIFT]++;
    }
}

/* Count the weights above the boundary bin per row and collect those in it. */
static void pruned_collect(void *arg, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    pruned_params *P = arg;
    for (int64_t i = i0; i < i1; i++) {
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        int64_t above = 0;
        for (int64_t j = 0; j < P->cols; j++) {
            uint64_t key = gauss_key(gauss_next(&st));
            int64_t bin = (int64_t)(key >> KEY_SHIFT);
            if (bin > P->bin)
                above++;
            else if (bin == P->bin) {
                int64_t q;
#pragma omp atomic capture
                q = P->ncands++;
                P->cands[q] = (ranked){key, i * P->cols + j};
            }
        }
        P->counts[i] = above;
    }
}

/* Find the k-th largest weight (k in [1, N)) as (tkey, tpos) and the kept
 * count of every row: a histogram pass, then a pass collecting the boundary
 * bin (about 2e-4 of the weights at most), sorted exactly. */
static spx_status pruned_select(spx_ctx *ctx, pruned_params *P, int64_t k)
{
    const int nt = spx__num_threads(ctx);
    const int64_t grain = P->cols >= 65536 ? 1 : 65536 / P->cols;
    spx_status s = spx__alloc_zero(ctx, (void **)&P->hist, (int64_t)nt * KEY_BINS, sizeof(int64_t),
                                   "selection histogram");
    if (s)
        return s;
    spx__gen_parallel(ctx, P->rows * P->cols >= (INT64_C(1) << 22) ? "ranking weights" : NULL,
                      P->rows, grain, pruned_histogram, P);
    for (int t = 1; t < nt; t++)
        for (int64_t b = 0; b < KEY_BINS; b++)
            P->hist[b] += P->hist[(size_t)t * KEY_BINS + b];
    int64_t above = 0, bin = KEY_BINS - 1;
    while (above + P->hist[bin] < k)
        above += P->hist[bin--];
    P->bin = bin;
    s = spx__alloc(ctx, (void **)&P->cands, P->hist[bin], sizeof(ranked), "selection candidates");
    spx__free(P->hist);
    P->hist = NULL;
    if (s)
        return s;
    spx__gen_parallel(ctx, NULL, P->rows, grain, pruned_collect, P);
    qsort(P->cands, (size_t)P->ncands, sizeof(ranked), ranked_cmp);
    int64_t need = k - above; /* 1 <= need <= ncands */
    P->tkey = P->cands[need - 1].key;
    P->tpos = P->cands[need - 1].pos;
    for (int64_t q = 0; q < need; q++)
        P->counts[P->cands[q].pos / P->cols]++;
    return SPX_OK;
}

static void pruned_count(const spx__gen_job *job, int64_t u0, int64_t u1, int64_t *counts)
{
    const pruned_params *P = job->params;
    memcpy(counts + u0, P->counts + u0, (size_t)(u1 - u0) * sizeof *counts);
}

static void pruned_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1,
                        void *scratch)
{
    (void)scratch;
    const pruned_params *P = job->params;
    for (int64_t i = u0; i < u1; i++) {
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        int64_t p = spx__gen_row_start(A, i), end = spx__gen_row_start(A, i + 1);
        for (int64_t j = 0; j < P->cols && p < end; j++) {
            int64_t g = gauss_next(&st);
            uint64_t key = gauss_key(g);
            if (key > P->tkey || (key == P->tkey && i * P->cols + j <= P->tpos)) {
                spx__idx_set(A->indices, A->itype, p, j);
                spx__gen_store(A->values, A->dtype, p++, gauss_value(g));
            }
        }
    }
}

spx_status spx_gen_pruned(spx_ctx *ctx, int64_t rows, int64_t cols, double sparsity,
                          uint64_t seed, spx_dtype dtype, spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_pruned";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "rows", rows)) || (s = spx__gen_nonneg(ctx, fn, "cols", cols)) ||
        (s = spx__gen_fraction(ctx, fn, "sparsity", sparsity)))
        return s;
    int64_t total;
    if (spx__mul_overflows(rows, cols, &total))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: %lld x %lld weights overflow", fn, LL(rows),
                         LL(cols));
    double want = (1.0 - sparsity) * (double)total + 0.5;
    int64_t k = want >= (double)total ? total : (int64_t)want;

    pruned_params P = {.rows = rows, .cols = cols, .seed = seed};
    spx__gen_job job = {
        .fn = fn, .what = "generating pruned", .rows = rows, .cols = cols, .dtype = dtype,
        .itype = itype, .unit_rows = 1, .row_nnz = k == total ? cols : 0,
        .fill = pruned_fill, .params = &P,
    };
    P.tkey = k == total ? 0 : UINT64_MAX; /* all, or nothing */
    P.tpos = k == total ? INT64_MAX : -1;
    if (k > 0 && k < total) {
        /* fail early on an impossible int32 request rather than after the passes */
        spx_index_type it;
        if ((s = spx__gen_itype(ctx, fn, itype, rows > cols ? rows : cols, &it)) ||
            (s = spx__gen_itype(ctx, fn, itype, k, &it)) ||
            (s = spx__alloc_zero(ctx, (void **)&P.counts, rows, sizeof(int64_t), "row counts")))
            return s;
        if (!(s = pruned_select(ctx, &P, k))) {
            job.row_nnz = -1;
            job.count = pruned_count;
            s = spx__gen_build(ctx, &job, out);
        }
        spx__free(P.counts);
        spx__free(P.cands);
        return s;
    }
    return spx__gen_build(ctx, &job, out);
}

/* ---- N:M ---- */

#define RANK_BY_COUNTING_MAX 64

typedef struct {
    int n, m;
    uint64_t seed;
} nm_params;

/* Per thread: g[w] weights of the group, order[w] for wide groups, keep[w] flags. */
static size_t nm_scratch_bytes(int64_t w) { return (size_t)w * (sizeof(int64_t) + sizeof(ranked) + 1); }

/* keep[e] = 1 for the `keep` largest of the w weights g (ties: lower e). */
static void nm_choose(const int64_t *g, int64_t w, int64_t keep, ranked *order, uint8_t *flags)
{
    if (w <= RANK_BY_COUNTING_MAX) {
        for (int64_t e = 0; e < w; e++) {
            uint64_t ke = gauss_key(g[e]);
            int64_t rank = 0;
            for (int64_t f = 0; f < w; f++) {
                uint64_t kf = gauss_key(g[f]);
                rank += kf > ke || (kf == ke && f < e);
            }
            flags[e] = rank < keep;
        }
        return;
    }
    for (int64_t e = 0; e < w; e++)
        order[e] = (ranked){gauss_key(g[e]), e};
    qsort(order, (size_t)w, sizeof *order, ranked_cmp);
    memset(flags, 0, (size_t)w);
    for (int64_t q = 0; q < keep; q++)
        flags[order[q].pos] = 1;
}

static void nm_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1, void *scratch)
{
    const nm_params *P = job->params;
    const int64_t cols = job->cols, wmax = P->m < cols ? P->m : cols;
    int64_t *g = scratch;
    ranked *order = (ranked *)(g + wmax);
    uint8_t *flags = (uint8_t *)(order + wmax);
    for (int64_t i = u0; i < u1; i++) {
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        int64_t p = spx__gen_row_start(A, i);
        for (int64_t j0 = 0; j0 < cols; j0 += wmax) {
            int64_t w = cols - j0 < wmax ? cols - j0 : wmax, keep = P->n < w ? P->n : w;
            for (int64_t e = 0; e < w; e++)
                g[e] = gauss_next(&st);
            if (keep < w)
                nm_choose(g, w, keep, order, flags);
            for (int64_t e = 0; e < w; e++)
                if (keep == w || flags[e]) {
                    spx__idx_set(A->indices, A->itype, p, j0 + e);
                    spx__gen_store(A->values, A->dtype, p++, gauss_value(g[e]));
                }
        }
    }
}

spx_status spx_gen_nm(spx_ctx *ctx, int64_t rows, int64_t cols, int n, int m, uint64_t seed,
                      spx_dtype dtype, spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_nm";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "rows", rows)) || (s = spx__gen_nonneg(ctx, fn, "cols", cols)) ||
        (s = spx__gen_nonneg(ctx, fn, "n", n)))
        return s;
    if (m < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: group size m = %d is not positive", fn, m);
    if (n > m)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: n = %d exceeds the group size m = %d",
                         fn, n, m);
    int64_t wmax = m < cols ? m : cols;
    nm_params P = {n, m, seed};
    spx__gen_job job = {
        .fn = fn, .what = "generating N:M", .rows = rows, .cols = cols, .dtype = dtype,
        .itype = itype, .unit_rows = 1,
        .row_nnz = cols / m * n + (cols % m < n ? cols % m : n),
        .fill = nm_fill, .scratch_bytes = nm_scratch_bytes(wmax), .params = &P,
    };
    return spx__gen_build(ctx, &job, out);
}

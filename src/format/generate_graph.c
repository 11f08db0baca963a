/* Graph-like generators: R-MAT power-law graphs and finite-difference
 * Laplacians. */
#include "format/generate.h"

#define LL(x) ((long long)(x))

/* ---- R-MAT ---- */

#define RMAT_EDGES_PER_CHUNK (INT64_C(1) << 16)
#define RMAT_SUM_TOLERANCE 1e-9

typedef struct {
    spx_matrix *coo;
    int scale;
    uint64_t seed;
    uint64_t t[3]; /* a, a + b, a + b + c scaled by 2^32 */
} rmat_params;

/* Each edge descends `scale` levels, choosing a quadrant per level with a
 * 32-bit draw (two levels per 64-bit draw) against the cumulative thresholds
 * t; then draws its value. Every chunk of edges has its own stream. */
#define RMAT_EDGES(T)                                                                         \
    do {                                                                                      \
        T *ri_ = (T *)coo->row_indices, *ci_ = (T *)coo->indices;                             \
        for (int64_t e = e0; e < e1; e++) {                                                   \
            uint64_t row = 0, col = 0, x = 0;                                                 \
            for (int l = P->scale - 1; l >= 0; l--) {                                         \
                if ((P->scale - 1 - l) % 2 == 0)                                              \
                    x = spx__splitmix64(&st);                                                 \
                uint64_t r = x & 0xffffffffu;                                                 \
                x >>= 32;                                                                     \
                /* branch-free quadrant: row bit r >= t1, column bit odd count of t's <= r */ \
                row |= (uint64_t)(r >= P->t[1]) << l;                                         \
                col |= (uint64_t)((r >= P->t[0]) ^ (r >= P->t[1]) ^ (r >= P->t[2])) << l;     \
            }                                                                                 \
            ri_[e] = (T)row;                                                                  \
            ci_[e] = (T)col;                                                                  \
            spx__gen_uniform_values(coo->values, coo->dtype, e, 1, &st);                      \
        }                                                                                     \
    } while (0)

static void rmat_chunks(void *arg, int64_t k0, int64_t k1, int tid)
{
    (void)tid;
    const rmat_params *P = arg;
    spx_matrix *coo = P->coo;
    for (int64_t k = k0; k < k1; k++) {
        int64_t e0 = k * RMAT_EDGES_PER_CHUNK;
        int64_t e1 = coo->nnz - e0 < RMAT_EDGES_PER_CHUNK ? coo->nnz : e0 + RMAT_EDGES_PER_CHUNK;
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)k);
        if (coo->itype == SPX_INDEX_I64)
            RMAT_EDGES(int64_t);
        else
            RMAT_EDGES(int32_t);
    }
}

spx_status spx_gen_rmat(spx_ctx *ctx, int scale, int64_t edge_factor, double a, double b, double c,
                        uint64_t seed, spx_dtype dtype, spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_rmat";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "edge_factor", edge_factor)) ||
        (s = spx__gen_fraction(ctx, fn, "a", a)) || (s = spx__gen_fraction(ctx, fn, "b", b)) ||
        (s = spx__gen_fraction(ctx, fn, "c", c)))
        return s;
    if (scale < 1 || scale > 40)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: scale %d is outside 1..40", fn, scale);
    if (a + b + c > 1.0 + RMAT_SUM_TOLERANCE)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: probabilities a + b + c = %g + %g + %g = %.17g exceed 1", fn, a, b, c,
                         a + b + c);
    if (a == 0 && b == 0 && c == 0) {
        a = 0.57;
        b = 0.19;
        c = 0.19;
    }
    int64_t n = INT64_C(1) << scale, edges;
    if (spx__mul_overflows(edge_factor, n, &edges))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: edge_factor %lld * 2^%d edges overflow", fn,
                         LL(edge_factor), scale);
    if ((s = spx__gen_itype(ctx, fn, itype, edges > n ? edges : n, &itype)))
        return s;

    spx_matrix *coo = NULL;
    if ((s = spx__matrix_create(ctx, SPX_COO, n, n, edges, itype, dtype, &coo)))
        return s;
    rmat_params P = {coo, scale, seed, {0}};
    double cum[3] = {a, a + b, a + b + c};
    for (int q = 0; q < 3; q++)
        P.t[q] = cum[q] >= 1.0 ? UINT64_C(1) << 32 : (uint64_t)(cum[q] * 4294967296.0);
    int64_t nchunks = (edges + RMAT_EDGES_PER_CHUNK - 1) / RMAT_EDGES_PER_CHUNK;
    spx__gen_parallel(ctx, edges >= RMAT_EDGES_PER_CHUNK * 64 ? "generating R-MAT edges" : NULL,
                      nchunks, 1, rmat_chunks, &P);
    spx_format_params fp = {.dup = SPX_DUP_SUM};
    s = spx_matrix_convert(ctx, coo, SPX_CSR, &fp, out);
    spx_matrix_destroy(coo);
    if (s)
        spx__error_prefix(ctx, "%s", fn);
    return s;
}

/* ---- Laplacian ---- */

typedef struct {
    int dims;
    int64_t n, plane; /* plane = n * n */
} laplacian_params;

/* The columns of row p in increasing order: -plane, -n, -1, 0, +1, +n, +plane
 * where the neighbour exists (no wrap-around); returns the count. */
static int laplacian_row(const laplacian_params *P, int64_t p, int64_t *cols)
{
    int64_t n = P->n, x = p % n, y = P->dims >= 2 ? p / n % n : 0, z = P->dims == 3 ? p / P->plane : 0;
    int k = 0;
    if (z > 0)
        cols[k++] = p - P->plane;
    if (y > 0)
        cols[k++] = p - n;
    if (x > 0)
        cols[k++] = p - 1;
    cols[k++] = p;
    if (x < n - 1)
        cols[k++] = p + 1;
    if (P->dims >= 2 && y < n - 1)
        cols[k++] = p + n;
    if (P->dims == 3 && z < n - 1)
        cols[k++] = p + P->plane;
    return k;
}

static void laplacian_count(const spx__gen_job *job, int64_t u0, int64_t u1, int64_t *counts)
{
    int64_t cols[7];
    for (int64_t p = u0; p < u1; p++)
        counts[p] = laplacian_row(job->params, p, cols);
}

static void laplacian_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1,
                           void *scratch)
{
    (void)scratch;
    const laplacian_params *P = job->params;
    int64_t cols[7];
    for (int64_t p = u0; p < u1; p++) {
        int k = laplacian_row(P, p, cols);
        int64_t q = spx__gen_row_start(A, p);
        spx__gen_put_cols(A, q, cols, k);
        for (int e = 0; e < k; e++)
            spx__val_set(A->values, A->dtype, q + e, cols[e] == p ? 2.0 * P->dims : -1.0);
    }
}

spx_status spx_gen_laplacian(spx_ctx *ctx, int dims, int64_t n, spx_dtype dtype,
                             spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_laplacian";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "n", n)))
        return s;
    if (dims < 1 || dims > 3)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: dims %d is not 1, 2 or 3", fn, dims);
    int64_t points = 1, plane = 0;
    for (int d = 0; d < dims; d++)
        if (spx__mul_overflows(points, n, &points))
            return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: %lld^%d grid points overflow", fn, LL(n),
                             dims);
    if (dims == 3)
        plane = n * n;
    laplacian_params P = {dims, n, plane};
    spx__gen_job job = {
        .fn = fn, .what = "generating Laplacian", .rows = points, .cols = points, .dtype = dtype,
        .itype = itype, .unit_rows = 1, .row_nnz = -1, .count = laplacian_count,
        .fill = laplacian_fill, .params = &P,
    };
    return spx__gen_build(ctx, &job, out);
}

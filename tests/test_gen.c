/* Matrix generators: structure of every family checked against its rule,
 * values per dtype, reproducibility (seeds, thread counts), argument errors
 * and allocation failures. */
#include "core/core.h"
#include "format/generate.h"
#include "testutil.h"

#define LL(x) ((long long)(x))

static spx_ctx *ctx;

/* ---- reading a result ---- */

typedef struct {
    int64_t rows, cols, nnz;
    spx_index_type itype;
    spx_dtype dtype;
    int64_t *off, *col; /* int64 copies */
    const void *vals;
} csr;

static int64_t ix(const void *p, spx_index_type t, int64_t i)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* Copy A's structure; checks that it is a valid CSR matrix of the given shape. */
static csr load(const spx_matrix *A, int64_t rows, int64_t cols)
{
    csr m = {0};
    spx_matrix_info info;
    spx_matrix_arrays arr;
    spx_matrix_info_get(A, &info);
    spx_matrix_arrays_get(A, &arr);
    CHECK(info.format == SPX_CSR, "format %s", spx_format_name(info.format));
    CHECK(info.rows == rows && info.cols == cols, "shape %lld x %lld, expected %lld x %lld",
          LL(info.rows), LL(info.cols), LL(rows), LL(cols));
    CHECK_OK(ctx, spx_matrix_check(ctx, A));
    m.rows = info.rows;
    m.cols = info.cols;
    m.nnz = info.nnz;
    m.itype = info.index_type;
    m.dtype = info.dtype;
    m.vals = arr.values;
    m.off = malloc((size_t)(m.rows + 1) * sizeof *m.off);
    m.col = malloc((size_t)(m.nnz + 1) * sizeof *m.col);
    for (int64_t i = 0; i <= m.rows; i++)
        m.off[i] = ix(arr.offsets, m.itype, i);
    for (int64_t p = 0; p < m.nnz; p++)
        m.col[p] = ix(arr.indices, m.itype, p);
    /* an independent look at the invariants */
    CHECK(m.off[0] == 0 && m.off[m.rows] == m.nnz, "offsets 0..%lld vs nnz %lld", LL(m.off[m.rows]),
          LL(m.nnz));
    for (int64_t i = 0; i < m.rows; i++)
        for (int64_t p = m.off[i]; p < m.off[i + 1]; p++)
            if (m.col[p] < 0 || m.col[p] >= m.cols || (p > m.off[i] && m.col[p] <= m.col[p - 1])) {
                CHECK(0, "row %lld: bad column %lld at %lld", LL(i), LL(m.col[p]), LL(p));
                return m;
            }
    return m;
}

static void unload(csr *m)
{
    free(m->off);
    free(m->col);
}

static double val(const csr *m, int64_t p)
{
    return spx__val_get(m->vals, m->dtype, p);
}

/* Position of (i, j) or -1. */
static int64_t find(const csr *m, int64_t i, int64_t j)
{
    for (int64_t p = m->off[i]; p < m->off[i + 1]; p++)
        if (m->col[p] == j)
            return p;
    return -1;
}

/* Identical header and bytes. */
static bool same_matrix(const spx_matrix *A, const spx_matrix *B)
{
    spx_matrix_info a, b;
    spx_matrix_arrays x, y;
    spx_matrix_info_get(A, &a);
    spx_matrix_info_get(B, &b);
    spx_matrix_arrays_get(A, &x);
    spx_matrix_arrays_get(B, &y);
    if (a.rows != b.rows || a.cols != b.cols || a.nnz != b.nnz || a.index_type != b.index_type ||
        a.dtype != b.dtype)
        return false;
    size_t isz = a.index_type == SPX_INDEX_I64 ? 8 : 4, vsz = spx_dtype_size(a.dtype);
    return memcmp(x.offsets, y.offsets, (size_t)(a.rows + 1) * isz) == 0 &&
           (a.nnz == 0 || memcmp(x.indices, y.indices, (size_t)a.nnz * isz) == 0) &&
           (a.nnz == 0 || vsz == 0 || memcmp(x.values, y.values, (size_t)a.nnz * vsz) == 0);
}

/* Values of a uniform-valued result per the documented dtype mapping. */
static void check_uniform_values(const csr *m, const char *what)
{
    if (m->dtype == SPX_PATTERN) {
        CHECK(m->vals == NULL, "%s: pattern has values", what);
        return;
    }
    for (int64_t p = 0; p < m->nnz; p++) {
        double v = val(m, p);
        bool ok;
        if (m->dtype == SPX_BOOL)
            ok = v == 1.0;
        else if (m->dtype == SPX_I32 || m->dtype == SPX_I64)
            ok = v != 0 && v >= -8 && v <= 8 && v == floor(v);
        else
            ok = v >= -1.0 && v < 1.0;
        if (!ok) {
            CHECK(0, "%s (%s): value %.17g at %lld", what, spx_dtype_name(m->dtype), v, LL(p));
            return;
        }
    }
}

/* ---- uniform ---- */

static void test_uniform_shapes(void)
{
    static const int64_t cases[][3] = {
        {100, 1000, 10}, {50, 100, 90}, {50, 64, 64},    {30, 40, 0},    {0, 10, 5},
        {7, 0, 0},       {1, 1, 1},     {20, 3200, 100}, {20, 3200, 99}, {40, 100000, 3000},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t rows = cases[c][0], cols = cases[c][1], k = cases[c][2];
        for (int it = SPX_INDEX_I32; it <= SPX_INDEX_I64; it++) {
            spx_matrix *A = NULL;
            CHECK_OK(ctx, spx_gen_uniform(ctx, rows, cols, k, test_seed + c, SPX_DTYPE_DEFAULT,
                                          (spx_index_type)it, &A));
            if (!A)
                continue;
            csr m = load(A, rows, cols);
            CHECK(m.dtype == SPX_F32 && m.itype == (spx_index_type)it, "types");
            CHECK(m.nnz == rows * k, "uniform %lld x %lld k %lld: nnz %lld", LL(rows), LL(cols),
                  LL(k), LL(m.nnz));
            for (int64_t i = 0; i < rows; i++)
                CHECK(m.off[i + 1] - m.off[i] == k, "row %lld has %lld", LL(i),
                      LL(m.off[i + 1] - m.off[i]));
            check_uniform_values(&m, "uniform");
            unload(&m);
            spx_matrix_destroy(A);
        }
    }
}

/* Column frequencies in both sampling regimes and value halves near even. */
static void test_uniform_distribution(void)
{
    /* k < cols/32 draws and sorts; denser rows use Floyd's algorithm */
    static const int64_t cases[][3] = {{20000, 1000, 5}, {4000, 50, 40}};
    for (int c = 0; c < 2; c++) {
        int64_t rows = cases[c][0], cols = cases[c][1], k = cases[c][2];
        spx_matrix *A = NULL;
        CHECK_OK(ctx,
                 spx_gen_uniform(ctx, rows, cols, k, test_seed, SPX_F64, SPX_INDEX_DEFAULT, &A));
        if (!A)
            return;
        csr m = load(A, rows, cols);
        int64_t freq[1000] = {0}, neg = 0;
        for (int64_t p = 0; p < m.nnz; p++) {
            freq[m.col[p]]++;
            neg += val(&m, p) < 0;
        }
        double expect = (double)rows * (double)k / (double)cols;
        double sd = sqrt(expect * (1.0 - (double)k / (double)cols));
        for (int64_t j = 0; j < cols; j++)
            CHECK(fabs((double)freq[j] - expect) < 6 * sd,
                  "k=%lld column %lld chosen %lld times, expected %.0f", LL(k), LL(j), LL(freq[j]),
                  expect);
        CHECK(fabs((double)neg - (double)m.nnz / 2) < 6 * sqrt((double)m.nnz / 4),
              "%lld of %lld negative", LL(neg), LL(m.nnz));
        unload(&m);
        spx_matrix_destroy(A);
    }
}

/* Floyd's algorithm (k >= cols/32) gives every k-subset the same chance. */
static void test_uniform_subsets(void)
{
    for (int64_t k = 2; k <= 4; k += 2) {
        const int64_t rows = 20000, cols = 5, nsub = k == 2 ? 10 : 5;
        spx_matrix *A = NULL;
        CHECK_OK(ctx, spx_gen_uniform(ctx, rows, cols, k, test_seed, SPX_PATTERN, SPX_INDEX_DEFAULT,
                                      &A));
        if (!A)
            return;
        csr m = load(A, rows, cols);
        int64_t freq[32] = {0};
        for (int64_t i = 0; i < rows; i++) {
            int mask = 0;
            for (int64_t p = m.off[i]; p < m.off[i + 1]; p++)
                mask |= 1 << m.col[p];
            freq[mask]++;
        }
        double expect = (double)rows / (double)nsub, sd = sqrt(expect * (1 - 1.0 / (double)nsub));
        for (int mask = 0; mask < 32; mask++)
            if (__builtin_popcount((unsigned)mask) == k)
                CHECK(fabs((double)freq[mask] - expect) < 6 * sd,
                      "subset 0x%x of %lld drawn %lld times, expected %.0f", mask, LL(k),
                      LL(freq[mask]), expect);
        unload(&m);
        spx_matrix_destroy(A);
    }
}

/* Every dtype: the same structure, values per the mapping. */
static void test_uniform_dtypes(void)
{
    static const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_F16,  SPX_BF16,
                                      SPX_I32, SPX_I64, SPX_BOOL, SPX_PATTERN};
    spx_matrix *ref = NULL;
    CHECK_OK(ctx, spx_gen_uniform(ctx, 300, 500, 40, test_seed, SPX_PATTERN, SPX_INDEX_I32, &ref));
    if (!ref)
        return;
    csr r = load(ref, 300, 500);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        spx_matrix *A = NULL;
        CHECK_OK(ctx, spx_gen_uniform(ctx, 300, 500, 40, test_seed, types[t], SPX_INDEX_I32, &A));
        if (!A)
            continue;
        csr m = load(A, 300, 500);
        CHECK(m.dtype == types[t], "dtype");
        CHECK(memcmp(m.col, r.col, (size_t)m.nnz * sizeof *m.col) == 0, "%s structure differs",
              spx_dtype_name(types[t]));
        check_uniform_values(&m, "dtypes");
        if (types[t] == SPX_I32) { /* all 16 integers show up */
            int seen[17] = {0};
            for (int64_t p = 0; p < m.nnz; p++)
                seen[(int)val(&m, p) + 8] = 1;
            for (int v = -8; v <= 8; v++)
                CHECK(seen[v + 8] == (v != 0), "integer value %d seen %d", v, seen[v + 8]);
        }
        unload(&m);
        spx_matrix_destroy(A);
    }
    unload(&r);
    spx_matrix_destroy(ref);
}

/* ---- Laplacian ---- */

static void test_laplacian(void)
{
    static const spx_dtype types[] = {SPX_F64, SPX_F32, SPX_I32, SPX_BOOL, SPX_PATTERN};
    for (int dims = 1; dims <= 3; dims++)
        for (int64_t n = 0; n <= 5; n++) {
            spx_dtype dt = types[(dims + n) % 5];
            int64_t N = 1;
            for (int d = 0; d < dims; d++)
                N *= n;
            spx_matrix *A = NULL;
            CHECK_OK(ctx, spx_gen_laplacian(ctx, dims, n, dt, SPX_INDEX_DEFAULT, &A));
            if (!A)
                continue;
            csr m = load(A, N, N);
            int64_t pw = 1; /* n^(dims-1) */
            for (int d = 1; d < dims; d++)
                pw *= n;
            CHECK(m.nnz == N + (n > 0 ? 2 * dims * pw * (n - 1) : 0), "dims %d n %lld: nnz %lld",
                  dims, LL(n), LL(m.nnz));
            for (int64_t p = 0; p < N; p++)
                for (int64_t q = 0; q < N; q++) {
                    /* closed-form rule: same point, or one coordinate differs by one */
                    int64_t a = p, b = q, diff = 0, ones = 0;
                    for (int d = 0; d < dims; d++) {
                        int64_t da = a % n - b % n;
                        diff += da != 0;
                        ones += da == 1 || da == -1;
                        a /= n;
                        b /= n;
                    }
                    bool want = diff == 0 || (diff == 1 && ones == 1);
                    int64_t at = find(&m, p, q), back = find(&m, q, p);
                    CHECK((at >= 0) == want, "dims %d n %lld: entry (%lld, %lld) %s", dims, LL(n),
                          LL(p), LL(q), at >= 0 ? "present" : "missing");
                    CHECK((at >= 0) == (back >= 0), "not symmetric at (%lld, %lld)", LL(p), LL(q));
                    if (at < 0 || dt == SPX_PATTERN)
                        continue;
                    double expect = dt == SPX_BOOL ? 1.0 : p == q ? 2.0 * dims : -1.0;
                    CHECK(val(&m, at) == expect && val(&m, at) == val(&m, back),
                          "value %g at (%lld, %lld), expected %g", val(&m, at), LL(p), LL(q),
                          expect);
                }
            unload(&m);
            spx_matrix_destroy(A);
        }
    /* a larger grid: count only */
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_gen_laplacian(ctx, 3, 30, SPX_F32, SPX_INDEX_I64, &A));
    spx_matrix_info info;
    spx_matrix_info_get(A, &info);
    CHECK(info.nnz == 27000 + 6 * 900 * 29 && info.index_type == SPX_INDEX_I64, "3D 30: nnz %lld",
          LL(info.nnz));
    spx_matrix_destroy(A);
}

/* ---- banded ---- */

/* Entries of a rows x cols band, counted per diagonal d = j - i. */
static int64_t band_count(int64_t rows, int64_t cols, int64_t lower, int64_t upper)
{
    int64_t total = 0;
    for (int64_t d = -(lower < rows ? lower : rows); d <= (upper < cols ? upper : cols); d++) {
        int64_t len =
            d >= 0 ? (rows < cols - d ? rows : cols - d) : (rows + d < cols ? rows + d : cols);
        total += len > 0 ? len : 0;
    }
    return total;
}

static void test_banded(void)
{
    static const int64_t cases[][4] = {
        {10, 10, 2, 3}, {10, 20, 0, 5},   {20, 10, 3, 0},
        {5, 5, 10, 10}, {7, 3, 100, 0},   {0, 5, 1, 1},
        {5, 0, 1, 1},   {100, 100, 0, 0}, {3, 4, INT64_MAX, INT64_MAX},
        {1, 1, 0, 0},   {40, 17, 5, 30},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t rows = cases[c][0], cols = cases[c][1], lo = cases[c][2], up = cases[c][3];
        spx_matrix *A = NULL;
        CHECK_OK(ctx, spx_gen_banded(ctx, rows, cols, lo, up, test_seed, SPX_F32, SPX_INDEX_DEFAULT,
                                     &A));
        if (!A)
            continue;
        csr m = load(A, rows, cols);
        CHECK(m.nnz == band_count(rows, cols, lo, up),
              "band %lld x %lld [-%lld, %lld]: nnz %lld, expected %lld", LL(rows), LL(cols), LL(lo),
              LL(up), LL(m.nnz), LL(band_count(rows, cols, lo, up)));
        for (int64_t i = 0; i < rows; i++) {
            int64_t want = 0;
            for (int64_t j = 0; j < cols; j++)
                want += j - i >= -lo && (j - i <= up || up == INT64_MAX);
            CHECK(m.off[i + 1] - m.off[i] == want, "row %lld: %lld entries, expected %lld", LL(i),
                  LL(m.off[i + 1] - m.off[i]), LL(want));
            for (int64_t p = m.off[i]; p < m.off[i + 1]; p++)
                CHECK(m.col[p] - i >= -lo && (m.col[p] - i <= up),
                      "entry (%lld, %lld) outside the band", LL(i), LL(m.col[p]));
        }
        check_uniform_values(&m, "banded");
        unload(&m);
        spx_matrix_destroy(A);
    }
}

/* ---- block-sparse ---- */

static void check_blocks(int64_t rows, int64_t cols, int64_t br, int64_t bc, double p,
                         int64_t *present, int64_t *grid)
{
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_gen_block_sparse(ctx, rows, cols, br, bc, p, test_seed, SPX_F64,
                                       SPX_INDEX_DEFAULT, &A));
    *present = *grid = 0;
    if (!A)
        return;
    csr m = load(A, rows, cols);
    int64_t nbr = (rows + br - 1) / br, nbc = (cols + bc - 1) / bc;
    int64_t *cnt = calloc((size_t)(nbr * nbc + 1), sizeof *cnt);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t q = m.off[i]; q < m.off[i + 1]; q++)
            cnt[(i / br) * nbc + m.col[q] / bc]++;
    for (int64_t I = 0; I < nbr; I++)
        for (int64_t J = 0; J < nbc; J++) {
            int64_t h = (I + 1) * br < rows ? br : rows - I * br;
            int64_t w = (J + 1) * bc < cols ? bc : cols - J * bc;
            int64_t c = cnt[I * nbc + J];
            CHECK(c == 0 || c == h * w, "block (%lld, %lld) of %lld x %lld holds %lld entries",
                  LL(I), LL(J), LL(h), LL(w), LL(c));
            *present += c > 0;
        }
    *grid = nbr * nbc;
    check_uniform_values(&m, "block-sparse");
    free(cnt);
    unload(&m);
    spx_matrix_destroy(A);
}

static void test_block_sparse(void)
{
    int64_t present, grid;
    check_blocks(103, 77, 8, 5, 0.3, &present, &grid);
    check_blocks(10, 10, 16, 16, 1.0, &present, &grid);
    CHECK(present == 1 && grid == 1, "one clipped block");
    check_blocks(50, 60, 4, 4, 0.0, &present, &grid);
    CHECK(present == 0, "density 0 gives %lld blocks", LL(present));
    check_blocks(50, 60, 4, 7, 1.0, &present, &grid);
    CHECK(present == grid, "density 1 gives %lld of %lld", LL(present), LL(grid));
    check_blocks(0, 60, 4, 7, 0.5, &present, &grid);
    check_blocks(801, 799, 2, 2, 0.3, &present, &grid);
    double frac = (double)present / (double)grid;
    CHECK(fabs(frac - 0.3) < 6 * sqrt(0.21 / (double)grid), "present fraction %.4f of %lld blocks",
          frac, LL(grid));
}

/* ---- pruned and N:M ---- */

typedef struct {
    double mag;
    int64_t pos;
} weight;

static int weight_cmp(const void *x, const void *y)
{
    const weight *a = x, *b = y;
    if (a->mag != b->mag)
        return a->mag > b->mag ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* All weights of a seed, row-major, from the unpruned matrix (every entry kept). */
static double *all_weights(int64_t rows, int64_t cols, uint64_t seed)
{
    spx_matrix *W = NULL;
    CHECK_OK(ctx, spx_gen_pruned(ctx, rows, cols, 0.0, seed, SPX_F64, SPX_INDEX_DEFAULT, &W));
    if (!W)
        return NULL;
    csr m = load(W, rows, cols);
    CHECK(m.nnz == rows * cols, "sparsity 0 keeps %lld of %lld", LL(m.nnz), LL(rows * cols));
    double *w = malloc((size_t)(rows * cols + 1) * sizeof *w);
    for (int64_t p = 0; p < m.nnz; p++)
        w[p] = val(&m, p);
    unload(&m);
    spx_matrix_destroy(W);
    return w;
}

static void test_pruned(void)
{
    static const int64_t shapes[][2] = {{37, 53}, {300, 400}, {1, 1}, {64, 1}};
    static const double sparsities[] = {0.0, 0.5, 0.9, 0.999, 1.0, 0.25};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        int64_t rows = shapes[sh][0], cols = shapes[sh][1], N = rows * cols;
        double *w = all_weights(rows, cols, test_seed);
        if (!w)
            return;
        if (N > 10000) { /* Gaussian-like: mean 0, variance 1 */
            double s1 = 0, s2 = 0;
            for (int64_t p = 0; p < N; p++) {
                s1 += w[p];
                s2 += w[p] * w[p];
            }
            CHECK(fabs(s1 / N) < 0.02 && fabs(s2 / N - 1) < 0.03, "mean %g variance %g", s1 / N,
                  s2 / N);
        }
        weight *order = malloc((size_t)N * sizeof *order);
        for (int64_t p = 0; p < N; p++)
            order[p] = (weight){fabs(w[p]), p};
        qsort(order, (size_t)N, sizeof *order, weight_cmp);
        char *keep = malloc((size_t)N);
        for (size_t s = 0; s < sizeof sparsities / sizeof sparsities[0]; s++) {
            int64_t K = (int64_t)floor((1.0 - sparsities[s]) * (double)N + 0.5);
            memset(keep, 0, (size_t)N);
            for (int64_t q = 0; q < K; q++)
                keep[order[q].pos] = 1;
            spx_matrix *A = NULL;
            CHECK_OK(ctx, spx_gen_pruned(ctx, rows, cols, sparsities[s], test_seed, SPX_F64,
                                         SPX_INDEX_DEFAULT, &A));
            if (!A)
                continue;
            csr m = load(A, rows, cols);
            CHECK(m.nnz == K, "%lld x %lld at sparsity %g keeps %lld, expected %lld", LL(rows),
                  LL(cols), sparsities[s], LL(m.nnz), LL(K));
            double min_kept = INFINITY, max_dropped = 0;
            int64_t wrong = 0;
            for (int64_t i = 0; i < rows; i++)
                for (int64_t p = m.off[i]; p < m.off[i + 1]; p++) {
                    int64_t pos = i * cols + m.col[p];
                    wrong += !keep[pos] || val(&m, p) != w[pos];
                    min_kept = fmin(min_kept, fabs(val(&m, p)));
                }
            for (int64_t q = K; q < N; q++)
                max_dropped = fmax(max_dropped, order[q].mag);
            CHECK(wrong == 0, "sparsity %g: %lld entries are not the top weights", sparsities[s],
                  LL(wrong));
            CHECK(K == 0 || K == N || min_kept >= max_dropped, "kept %g < dropped %g", min_kept,
                  max_dropped);
            unload(&m);
            spx_matrix_destroy(A);
        }
        free(keep);
        free(order);
        free(w);
    }
    /* narrow types hold the rounded weights */
    spx_matrix *A = NULL, *B = NULL;
    CHECK_OK(ctx, spx_gen_pruned(ctx, 20, 30, 0.7, test_seed, SPX_F64, SPX_INDEX_DEFAULT, &A));
    CHECK_OK(ctx, spx_gen_pruned(ctx, 20, 30, 0.7, test_seed, SPX_BF16, SPX_INDEX_DEFAULT, &B));
    if (A && B) {
        csr a = load(A, 20, 30), b = load(B, 20, 30);
        CHECK(a.nnz == b.nnz && memcmp(a.col, b.col, (size_t)a.nnz * sizeof *a.col) == 0,
              "bf16 structure");
        for (int64_t p = 0; p < a.nnz && p < b.nnz; p++)
            CHECK(val(&b, p) == spx__bf16_to_float(spx__float_to_bf16((float)val(&a, p))),
                  "bf16 value %lld", LL(p));
        unload(&a);
        unload(&b);
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
}

static void test_nm(void)
{
    static const int cases[][2] = {{2, 4}, {1, 4},  {3, 8},    {0, 4}, {4, 4},
                                   {2, 3}, {3, 16}, {37, 100}, {1, 1}};
    static const int64_t widths[] = {10, 250, 16};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        int64_t rows = 13, cols = widths[wi];
        double *w = all_weights(rows, cols, test_seed);
        if (!w)
            return;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int n = cases[c][0], mm = cases[c][1];
            spx_matrix *A = NULL;
            CHECK_OK(ctx,
                     spx_gen_nm(ctx, rows, cols, n, mm, test_seed, SPX_F64, SPX_INDEX_DEFAULT, &A));
            if (!A)
                continue;
            csr m = load(A, rows, cols);
            int64_t wrong = 0;
            weight grp[128];
            for (int64_t i = 0; i < rows; i++)
                for (int64_t g0 = 0; g0 < cols; g0 += mm) {
                    int64_t gw = cols - g0 < mm ? cols - g0 : mm, keep = n < gw ? n : gw, have = 0;
                    for (int64_t e = 0; e < gw; e++)
                        grp[e] = (weight){fabs(w[i * cols + g0 + e]), g0 + e};
                    qsort(grp, (size_t)gw, sizeof *grp, weight_cmp);
                    for (int64_t p = m.off[i]; p < m.off[i + 1]; p++) {
                        if (m.col[p] < g0 || m.col[p] >= g0 + gw)
                            continue;
                        have++;
                        bool top = false;
                        for (int64_t q = 0; q < keep; q++)
                            top |= grp[q].pos == m.col[p];
                        wrong += !top || val(&m, p) != w[i * cols + m.col[p]];
                    }
                    CHECK(have == keep, "%d:%d row %lld group at %lld keeps %lld, expected %lld", n,
                          mm, LL(i), LL(g0), LL(have), LL(keep));
                }
            CHECK(wrong == 0, "%d:%d with %lld columns: %lld entries are not the group's top", n,
                  mm, LL(cols), LL(wrong));
            unload(&m);
            spx_matrix_destroy(A);
        }
        free(w);
    }
}

/* ---- R-MAT ---- */

static void test_rmat(void)
{
    const int scale = 12;
    const int64_t n = 1 << scale, edges = 8 * n;
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_gen_rmat(ctx, scale, 8, 0, 0, 0, test_seed, SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A) {
        csr m = load(A, n, n);
        CHECK(m.nnz <= edges && m.nnz > edges / 2, "nnz %lld of %lld edges", LL(m.nnz), LL(edges));
        int64_t maxlen = 0, quad[2][2] = {{0, 0}, {0, 0}};
        for (int64_t i = 0; i < n; i++) {
            maxlen = m.off[i + 1] - m.off[i] > maxlen ? m.off[i + 1] - m.off[i] : maxlen;
            for (int64_t p = m.off[i]; p < m.off[i + 1]; p++)
                quad[i >= n / 2][m.col[p] >= n / 2]++;
        }
        double mean = (double)m.nnz / (double)n;
        CHECK((double)maxlen > 10 * mean, "max row length %lld, mean %.2f: not skewed", LL(maxlen),
              mean);
        CHECK(quad[0][0] > 0.45 * (double)m.nnz && quad[0][0] > 2 * quad[0][1] &&
                  quad[0][0] > 2 * quad[1][0] && quad[1][1] < quad[0][1] && quad[1][1] < quad[1][0],
              "quadrants %lld %lld / %lld %lld", LL(quad[0][0]), LL(quad[0][1]), LL(quad[1][0]),
              LL(quad[1][1]));
        unload(&m);
    }
    spx_matrix_destroy(A);

    /* b = c = 0: row and column bits agree at every level, so only the diagonal */
    A = NULL;
    CHECK_OK(ctx,
             spx_gen_rmat(ctx, 8, 4, 0.5, 0, 0, test_seed, SPX_PATTERN, SPX_INDEX_DEFAULT, &A));
    if (A) {
        csr m = load(A, 256, 256);
        for (int64_t i = 0; i < 256; i++)
            for (int64_t p = m.off[i]; p < m.off[i + 1]; p++)
                CHECK(m.col[p] == i, "a + d = 1: entry (%lld, %lld) off the diagonal", LL(i),
                      LL(m.col[p]));
        CHECK(m.nnz > 100, "diagonal entries %lld", LL(m.nnz));
        unload(&m);
    }
    spx_matrix_destroy(A);

    /* b = 1: every edge lands in the top-right corner, duplicates combined */
    A = NULL;
    CHECK_OK(ctx, spx_gen_rmat(ctx, 5, 3, 0, 1, 0, test_seed, SPX_BOOL, SPX_INDEX_I64, &A));
    if (A) {
        csr m = load(A, 32, 32);
        CHECK(m.nnz == 1 && m.col[0] == 31 && m.off[1] == 1 && val(&m, 0) == 1.0, "b = 1: nnz %lld",
              LL(m.nnz));
        unload(&m);
    }
    spx_matrix_destroy(A);

    /* edge_factor 0: an empty graph */
    A = NULL;
    CHECK_OK(ctx, spx_gen_rmat(ctx, 3, 0, 0, 0, 0, test_seed, SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A) {
        csr m = load(A, 8, 8);
        CHECK(m.nnz == 0, "empty graph");
        unload(&m);
    }
    spx_matrix_destroy(A);
}

/* ---- dense ---- */

static void test_dense_fill(void)
{
    const int64_t rows = 37, cols = 23, ldr = 30, ldc = 40;
    double *r = malloc((size_t)(rows * ldr) * sizeof *r),
           *c = malloc((size_t)(cols * ldc) * sizeof *c);
    for (int64_t q = 0; q < rows * ldr; q++)
        r[q] = 42.0;
    for (int64_t q = 0; q < cols * ldc; q++)
        c[q] = 42.0;
    spx_dense R = spx_dense_make(r, rows, cols, ldr, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense C = spx_dense_make(c, rows, cols, ldc, SPX_F64, SPX_COL_MAJOR, SPX_MEM_HOST);
    spx_ctx_set_num_threads(ctx, 1);
    CHECK_OK(ctx, spx_dense_fill_random(ctx, &R, test_seed));
    spx_ctx_set_num_threads(ctx, 2);
    CHECK_OK(ctx, spx_dense_fill_random(ctx, &C, test_seed));
    spx_ctx_set_num_threads(ctx, 0);
    int64_t neg = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < ldr; j++) {
            double v = r[i * ldr + j];
            if (j >= cols) {
                CHECK(v == 42.0, "row-major padding (%lld, %lld) written", LL(i), LL(j));
                continue;
            }
            CHECK(v >= -1 && v < 1, "value %g", v);
            CHECK(v == c[j * ldc + i], "(%lld, %lld): %g row-major, %g column-major", LL(i), LL(j),
                  v, c[j * ldc + i]);
            neg += v < 0;
        }
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = rows; i < ldc; i++)
            CHECK(c[j * ldc + i] == 42.0, "column-major padding (%lld, %lld) written", LL(i),
                  LL(j));
    CHECK(neg > rows * cols / 4 && neg < 3 * rows * cols / 4, "%lld negative", LL(neg));
    double first = r[0];
    CHECK_OK(ctx, spx_dense_fill_random(ctx, &R, test_seed + 1));
    CHECK(r[0] != first || r[1] != c[ldc], "another seed gives other values");

    /* narrow and integer types */
    static const spx_dtype types[] = {SPX_F32, SPX_F16, SPX_BF16, SPX_I32, SPX_I64, SPX_BOOL};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        spx_dense D;
        CHECK_OK(ctx, spx_dense_alloc(ctx, 64, 50, types[t], SPX_ROW_MAJOR, &D));
        CHECK_OK(ctx, spx_dense_fill_random(ctx, &D, test_seed));
        for (int64_t q = 0; q < 64 * 50; q++) {
            double v = spx__val_get(D.data, types[t], q);
            bool ok = types[t] == SPX_BOOL          ? v == 1
                      : spx__dtype_is_int(types[t]) ? v != 0 && fabs(v) <= 8 && v == floor(v)
                                                    : v >= -1 && v < 1;
            if (!ok) {
                CHECK(0, "%s dense value %g", spx_dtype_name(types[t]), v);
                break;
            }
        }
        spx_dense_free(&D);
    }
    /* values close to 1 never round up to it */
    CHECK(spx__gen_f32_below_one(1.0 - 0x1p-40) < 1.0f, "f32 clamp");
    CHECK(spx__half_to_float(spx__gen_f16_below_one(1.0 - 0x1p-13)) < 1.0f, "f16 clamp");
    CHECK(spx__bf16_to_float(spx__gen_bf16_below_one(1.0 - 0x1p-10)) < 1.0f, "bf16 clamp");

    spx_dense dev = spx_dense_make(r, rows, cols, ldr, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_DEVICE);
    CHECK_FAILS(ctx, spx_dense_fill_random(ctx, &dev, 1), SPX_ERR_UNSUPPORTED, "device");
    spx_dense cx = spx_dense_make(r, 2, 2, 2, SPX_C64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    CHECK_FAILS(ctx, spx_dense_fill_random(ctx, &cx, 1), SPX_ERR_UNSUPPORTED, "c64");
    CHECK_FAILS(ctx, spx_dense_fill_random(ctx, NULL, 1), SPX_ERR_INVALID_ARGUMENT, "NULL");
    spx_dense bad = spx_dense_make(r, 5, 5, 3, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    CHECK_FAILS(ctx, spx_dense_fill_random(ctx, &bad, 1), SPX_ERR_INVALID_ARGUMENT,
                "leading dimension");
    free(r);
    free(c);
}

/* ---- every generator: reproducibility and allocation failures ---- */

/* One small instance of each generator (and each path inside one). */
static const struct {
    const char *name;
    bool seeded;
} gens[] = {
    {"uniform", true}, {"uniform-dense", true}, {"rmat", true},
    {"banded", true},  {"block", true},         {"pruned", true},
    {"nm", true},      {"nm-wide", true},       {"laplacian", false},
};

static spx_status gen(size_t g, uint64_t s, spx_matrix **o)
{
    const spx_index_type D = SPX_INDEX_DEFAULT;
    switch (g) {
    case 0: return spx_gen_uniform(ctx, 500, 700, 20, s, SPX_F32, D, o);
    case 1: return spx_gen_uniform(ctx, 300, 70, 60, s, SPX_F16, SPX_INDEX_I64, o);
    case 2: return spx_gen_rmat(ctx, 11, 5, 0, 0, 0, s, SPX_F64, D, o);
    case 3: return spx_gen_banded(ctx, 600, 500, 7, 3, s, SPX_BF16, D, o);
    case 4: return spx_gen_block_sparse(ctx, 500, 450, 4, 8, 0.2, s, SPX_I32, D, o);
    case 5: return spx_gen_pruned(ctx, 200, 300, 0.8, s, SPX_F32, D, o);
    case 6: return spx_gen_nm(ctx, 200, 301, 2, 4, s, SPX_F32, D, o);
    case 7: return spx_gen_nm(ctx, 20, 301, 30, 100, s, SPX_F64, D, o);
    default: return spx_gen_laplacian(ctx, 2, 40, SPX_F32, D, o);
    }
}

static void test_reproducible(void)
{
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        spx_matrix *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        spx_ctx_set_num_threads(ctx, 1);
        CHECK_OK(ctx, gen(g, test_seed, &a));
        spx_ctx_set_num_threads(ctx, 2);
        CHECK_OK(ctx, gen(g, test_seed, &b));
        spx_ctx_set_num_threads(ctx, 3);
        CHECK_OK(ctx, gen(g, test_seed, &c));
        spx_ctx_set_num_threads(ctx, 0);
        CHECK_OK(ctx, gen(g, test_seed + 1, &d));
        if (a && b && c && d) {
            CHECK(same_matrix(a, b) && same_matrix(a, c),
                  "%s: thread counts give different results", gens[g].name);
            CHECK(same_matrix(a, d) != gens[g].seeded, "%s: seeds %s", gens[g].name,
                  gens[g].seeded ? "do not matter" : "matter");
            CHECK_OK(ctx, spx_matrix_check(ctx, a));
        }
        spx_matrix_destroy(a);
        spx_matrix_destroy(b);
        spx_matrix_destroy(c);
        spx_matrix_destroy(d);
    }
}

static void test_alloc_failures(void)
{
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        long live = spx__debug_live_allocations();
        for (long n = 1; n < 100; n++) {
            spx_matrix *A = (spx_matrix *)&live; /* untouched on failure */
            spx__debug_fail_alloc_after(n);
            spx_status s = gen(g, test_seed, &A);
            spx__debug_fail_alloc_after(0);
            if (s == SPX_OK) {
                spx_matrix_destroy(A);
                break;
            }
            CHECK(s == SPX_ERR_OUT_OF_MEMORY && A == (spx_matrix *)&live,
                  "%s: allocation %ld failing gives %s", gens[g].name, n, spx_status_name(s));
            CHECK(spx__debug_live_allocations() == live, "%s: allocation %ld failing leaks %ld",
                  gens[g].name, n, spx__debug_live_allocations() - live);
        }
    }
}

/* ---- argument errors ---- */

static void test_errors(void)
{
    spx_matrix *A = (spx_matrix *)&ctx, *const keep = A;
    long live = spx__debug_live_allocations();
    const spx_dtype F = SPX_F32;
    const spx_index_type D = SPX_INDEX_DEFAULT, I32 = SPX_INDEX_I32;
#define FAILS(call, status, needle) CHECK_FAILS(ctx, call, status, needle)
#define BAD_ARG SPX_ERR_INVALID_ARGUMENT
#define TOO_BIG SPX_ERR_OVERFLOW
    FAILS(spx_gen_uniform(ctx, -1, 5, 1, 0, F, D, &A), BAD_ARG, "rows is negative (-1)");
    FAILS(spx_gen_uniform(ctx, 5, -2, 1, 0, F, D, &A), BAD_ARG, "cols is negative (-2)");
    FAILS(spx_gen_uniform(ctx, 5, 5, -3, 0, F, D, &A), BAD_ARG, "nnz_per_row is negative (-3)");
    FAILS(spx_gen_uniform(ctx, 5, 10, 11, 0, F, D, &A), BAD_ARG,
          "nnz_per_row 11 exceeds the 10 columns");
    FAILS(spx_gen_uniform(ctx, 5, 10, 1, 0, SPX_C64, D, &A), SPX_ERR_UNSUPPORTED, "c64");
    FAILS(spx_gen_uniform(ctx, 5, 10, 1, 0, (spx_dtype)99, D, &A), BAD_ARG, "value type 99");
    FAILS(spx_gen_uniform(ctx, 5, 10, 1, 0, F, (spx_index_type)7, &A), BAD_ARG, "index type 7");
    FAILS(spx_gen_uniform(ctx, 5, 10, 1, 0, F, D, NULL), BAD_ARG, "out is NULL");
    FAILS(spx_gen_uniform(ctx, INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 30, 0, F, D, &A),
          TOO_BIG, "overflow");
    FAILS(spx_gen_uniform(ctx, INT64_C(3000000000), 10, 0, 0, F, I32, &A), TOO_BIG, "3000000000");
    FAILS(spx_gen_uniform(ctx, 65536, 65536, 32768, 0, F, I32, &A), TOO_BIG, "2147483648");

    FAILS(spx_gen_rmat(ctx, 0, 8, 0, 0, 0, 0, F, D, &A), BAD_ARG, "scale 0");
    FAILS(spx_gen_rmat(ctx, 41, 8, 0, 0, 0, 0, F, D, &A), BAD_ARG, "scale 41");
    FAILS(spx_gen_rmat(ctx, 4, -1, 0, 0, 0, 0, F, D, &A), BAD_ARG, "edge_factor is negative (-1)");
    FAILS(spx_gen_rmat(ctx, 4, 8, -0.1, 0, 0, 0, F, D, &A), BAD_ARG, "a -0.1");
    FAILS(spx_gen_rmat(ctx, 4, 8, 0.1, 1.5, 0, 0, F, D, &A), BAD_ARG, "b 1.5");
    FAILS(spx_gen_rmat(ctx, 4, 8, 0.1, 0.1, NAN, 0, F, D, &A), BAD_ARG, "c nan");
    FAILS(spx_gen_rmat(ctx, 4, 8, 0.5, 0.4, 0.3, 0, F, D, &A), BAD_ARG, "exceed 1");
    FAILS(spx_gen_rmat(ctx, 40, INT64_C(1) << 30, 0, 0, 0, 0, F, D, &A), TOO_BIG, "overflow");
    FAILS(spx_gen_rmat(ctx, 31, 1, 0, 0, 0, 0, F, I32, &A), TOO_BIG, "int32");

    FAILS(spx_gen_laplacian(ctx, 0, 5, F, D, &A), BAD_ARG, "dims 0");
    FAILS(spx_gen_laplacian(ctx, 4, 5, F, D, &A), BAD_ARG, "dims 4");
    FAILS(spx_gen_laplacian(ctx, 2, -5, F, D, &A), BAD_ARG, "n is negative (-5)");
    FAILS(spx_gen_laplacian(ctx, 3, 3000000, F, D, &A), TOO_BIG, "3000000^3");
    FAILS(spx_gen_laplacian(ctx, 1, INT64_C(3000000000), F, I32, &A), TOO_BIG, "int32");

    FAILS(spx_gen_banded(ctx, 5, 5, -1, 0, 0, F, D, &A), BAD_ARG, "lower is negative (-1)");
    FAILS(spx_gen_banded(ctx, 5, 5, 0, -2, 0, F, D, &A), BAD_ARG, "upper is negative (-2)");
    FAILS(spx_gen_banded(ctx, 50000, 50000, 50000, 50000, 0, F, I32, &A), TOO_BIG, "2500000000");

    FAILS(spx_gen_block_sparse(ctx, 5, 5, 0, 4, 0.5, 0, F, D, &A), BAD_ARG, "0 x 4");
    FAILS(spx_gen_block_sparse(ctx, 5, 5, 2, 2, 1.5, 0, F, D, &A), BAD_ARG, "block_density 1.5");
    FAILS(spx_gen_block_sparse(ctx, 5, 5, 2, 2, -0.5, 0, F, D, &A), BAD_ARG, "block_density -0.5");

    FAILS(spx_gen_pruned(ctx, 5, 5, -0.1, 0, F, D, &A), BAD_ARG, "sparsity -0.1");
    FAILS(spx_gen_pruned(ctx, 5, 5, 1.1, 0, F, D, &A), BAD_ARG, "sparsity 1.1");
    FAILS(spx_gen_pruned(ctx, 5, 5, NAN, 0, F, D, &A), BAD_ARG, "sparsity nan");
    FAILS(spx_gen_pruned(ctx, INT64_C(10000000000), INT64_C(10000000000), 0.5, 0, F, D, &A),
          TOO_BIG, "weights overflow");

    FAILS(spx_gen_nm(ctx, 5, 8, 5, 4, 0, F, D, &A), BAD_ARG, "n = 5 exceeds the group size m = 4");
    FAILS(spx_gen_nm(ctx, 5, 8, 0, 0, 0, F, D, &A), BAD_ARG, "m = 0");
    FAILS(spx_gen_nm(ctx, 5, 8, -1, 4, 0, F, D, &A), BAD_ARG, "n is negative (-1)");
    FAILS(spx_gen_nm(ctx, -5, 8, 1, 4, 0, F, D, &A), BAD_ARG, "rows is negative (-5)");

#undef FAILS
#undef BAD_ARG
#undef TOO_BIG
    CHECK(A == keep, "output written on error");
    CHECK(spx__debug_live_allocations() == live, "errors leak %ld allocations",
          spx__debug_live_allocations() - live);
}

/* Defaults: f32 values, int32 indices; int64 when asked. */
static void test_defaults(void)
{
    spx_matrix *A = NULL;
    spx_matrix_info info;
    CHECK_OK(ctx, spx_gen_nm(ctx, 3, 8, 2, 4, 1, SPX_DTYPE_DEFAULT, SPX_INDEX_DEFAULT, &A));
    spx_matrix_info_get(A, &info);
    CHECK(info.dtype == SPX_F32 && info.index_type == SPX_INDEX_I32 && info.nnz == 12, "defaults");
    spx_matrix_destroy(A);
    CHECK_OK(ctx, spx_gen_pruned(ctx, 3, 8, 0.5, 1, SPX_PATTERN, SPX_INDEX_I64, &A));
    spx_matrix_info_get(A, &info);
    CHECK(info.dtype == SPX_PATTERN && info.index_type == SPX_INDEX_I64 && info.nnz == 12,
          "pattern i64");
    spx_matrix_destroy(A);
}

/* Shapes with no rows or no columns give valid empty matrices. */
static void test_degenerate(void)
{
    spx_matrix *W = NULL; /* no rows: nothing is allocated for the huge row length */
    CHECK_OK(ctx, spx_gen_uniform(ctx, 0, INT64_C(1) << 50, INT64_C(1) << 49, 1, SPX_F32,
                                  SPX_INDEX_DEFAULT, &W));
    spx_matrix_destroy(W);
    static const int64_t shapes[][2] = {{0, 0}, {0, 7}, {4, 0}};
    for (int k = 0; k < 3; k++) {
        int64_t r = shapes[k][0], c = shapes[k][1];
        spx_matrix *M[6] = {NULL};
        CHECK_OK(ctx, spx_gen_uniform(ctx, r, c, 0, 1, SPX_F32, SPX_INDEX_DEFAULT, &M[0]));
        CHECK_OK(ctx, spx_gen_banded(ctx, r, c, 2, 2, 1, SPX_F32, SPX_INDEX_DEFAULT, &M[1]));
        CHECK_OK(ctx,
                 spx_gen_block_sparse(ctx, r, c, 3, 3, 1.0, 1, SPX_F32, SPX_INDEX_DEFAULT, &M[2]));
        CHECK_OK(ctx, spx_gen_pruned(ctx, r, c, 0.5, 1, SPX_F32, SPX_INDEX_DEFAULT, &M[3]));
        CHECK_OK(ctx, spx_gen_nm(ctx, r, c, 2, 4, 1, SPX_F32, SPX_INDEX_DEFAULT, &M[4]));
        CHECK_OK(ctx, spx_gen_pruned(ctx, r, c, 0.0, 1, SPX_I64, SPX_INDEX_I32, &M[5]));
        for (int g = 0; g < 6; g++) {
            if (!M[g])
                continue;
            csr m = load(M[g], r, c);
            CHECK(m.nnz == 0, "%lld x %lld generator %d: nnz %lld", LL(r), LL(c), g, LL(m.nnz));
            unload(&m);
            spx_matrix_destroy(M[g]);
        }
    }
}

int main(void)
{
    test_init();
    CHECK(spx_ctx_create(&ctx) == SPX_OK, "context");
    test_uniform_shapes();
    test_uniform_distribution();
    test_uniform_subsets();
    test_uniform_dtypes();
    test_laplacian();
    test_banded();
    test_block_sparse();
    test_pruned();
    test_nm();
    test_rmat();
    test_dense_fill();
    test_reproducible();
    test_alloc_failures();
    test_errors();
    test_defaults();
    test_degenerate();
    spx_ctx_destroy(ctx);
    return test_finish("test_gen");
}

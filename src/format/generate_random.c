/* Random structure generators (uniform rows, bands, block-sparse) and random
 * dense fills. Row i draws from its own stream spx__rand_stream(seed, i), so
 * the result does not depend on the thread count. */
#include "format/dense.h"
#include "format/generate.h"

#include <string.h>

#define LL(x) ((long long)(x))

/* ---- uniform ---- */

static void insertion_sort(int64_t *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        int64_t x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Sort k values of [0, n) drawn uniformly from v into out: a counting pass on
 * their top bits into at most 2k buckets (about one value each), then an
 * insertion sort of the nearly sorted result; O(k) expected. */
static void bucket_sort(const int64_t *v, int64_t k, int64_t n, int64_t *out, int64_t *counts)
{
    int lb = 64 - __builtin_clzll((unsigned long long)k);
    int bits = n > 1 ? 64 - __builtin_clzll((unsigned long long)(n - 1)) : 0;
    int shift = bits > lb ? bits - lb : 0;
    int64_t nb = INT64_C(1) << lb; /* v >> shift < nb */
    memset(counts, 0, (size_t)(nb + 1) * sizeof *counts);
    for (int64_t q = 0; q < k; q++)
        counts[(v[q] >> shift) + 1]++;
    for (int64_t b = 0; b < nb; b++)
        counts[b + 1] += counts[b];
    for (int64_t q = 0; q < k; q++)
        out[counts[v[q] >> shift]++] = v[q];
    insertion_sort(out, k);
}

typedef struct {
    int64_t k;
    uint64_t seed;
} uniform_params;

/* k distinct sorted columns of [0, n) in row p of A. Dense rows (k >= n/32)
 * use Floyd's algorithm on a bitmap and read it out in order; sparse rows
 * draw k columns, sort, drop repeats and draw again for the missing ones
 * (the first k distinct values of an i.i.d. sequence: a uniform k-subset).
 * scratch holds 4k + 1 int64 (the bitmap needs at most ceil(k/2) words). */
#define UNIFORM_SCRATCH(k) ((size_t)(k) * 4 + 1)
static void uniform_row(spx_matrix *A, int64_t p, int64_t n, int64_t k, uint64_t *st,
                        int64_t *scratch)
{
    if (k >= (n + 31) / 32) {
        uint64_t *bits = (uint64_t *)scratch;
        int64_t words = (n + 63) / 64;
        memset(bits, 0, (size_t)words * sizeof *bits);
        for (int64_t j = n - k; j < n; j++) {
            uint64_t t = spx__rand_below(st, (uint64_t)j + 1);
            uint64_t *w = &bits[t / 64], b = UINT64_C(1) << (t % 64);
            if (*w & b)
                bits[j / 64] |= UINT64_C(1) << (j % 64);
            else
                *w |= b;
        }
#define READ_BITS(T)                                                                          \
    do {                                                                                      \
        T *d_ = (T *)A->indices + p;                                                          \
        for (int64_t w_ = 0; w_ < words; w_++)                                                \
            for (uint64_t x_ = bits[w_]; x_; x_ &= x_ - 1)                                    \
                *d_++ = (T)(w_ * 64 + __builtin_ctzll(x_));                                   \
    } while (0)
        if (A->itype == SPX_INDEX_I64)
            READ_BITS(int64_t);
        else
            READ_BITS(int32_t);
#undef READ_BITS
        return;
    }
    int64_t have = 0, *v = scratch, *sorted = scratch + k, *counts = scratch + 2 * k;
    while (have < k) {
        for (int64_t q = have; q < k; q++)
            v[q] = (int64_t)spx__rand_below(st, (uint64_t)n);
        bucket_sort(v, k, n, sorted, counts);
        v[0] = sorted[0];
        have = 1;
        for (int64_t q = 1; q < k; q++)
            if (sorted[q] != v[have - 1])
                v[have++] = sorted[q];
    }
    spx__gen_put_cols(A, p, v, k);
}

static void uniform_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1,
                         void *scratch)
{
    const uniform_params *P = job->params;
    if (P->k == 0)
        return;
    for (int64_t i = u0; i < u1; i++) {
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        uniform_row(A, i * P->k, job->cols, P->k, &st, scratch);
        spx__gen_uniform_values(A->values, A->dtype, i * P->k, P->k, &st);
    }
}

spx_status spx_gen_uniform(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz_per_row,
                           uint64_t seed, spx_dtype dtype, spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_uniform";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "rows", rows)) || (s = spx__gen_nonneg(ctx, fn, "cols", cols)) ||
        (s = spx__gen_nonneg(ctx, fn, "nnz_per_row", nnz_per_row)))
        return s;
    if (nnz_per_row > cols)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: nnz_per_row %lld exceeds the %lld columns", fn, LL(nnz_per_row),
                         LL(cols));
    uniform_params P = {nnz_per_row, seed};
    spx__gen_job job = {
        .fn = fn, .what = "generating uniform", .rows = rows, .cols = cols, .dtype = dtype,
        .itype = itype, .unit_rows = 1, .row_nnz = nnz_per_row, .fill = uniform_fill,
        .scratch_bytes = UNIFORM_SCRATCH(nnz_per_row) * sizeof(int64_t), .params = &P,
    };
    return spx__gen_build(ctx, &job, out);
}

/* ---- banded ---- */

typedef struct {
    int64_t lower, upper;
    uint64_t seed;
} banded_params;

/* Columns [*lo, *lo + count) of row i (written without overflow for huge bands). */
static int64_t band_of_row(const banded_params *P, int64_t cols, int64_t i, int64_t *lo)
{
    *lo = P->lower >= i ? 0 : i - P->lower;
    int64_t hi = P->upper >= cols - i ? cols - 1 : i + P->upper;
    return hi >= *lo ? hi - *lo + 1 : 0;
}

static void banded_count(const spx__gen_job *job, int64_t u0, int64_t u1, int64_t *counts)
{
    int64_t lo;
    for (int64_t i = u0; i < u1; i++)
        counts[i] = band_of_row(job->params, job->cols, i, &lo);
}

static void banded_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1,
                        void *scratch)
{
    (void)scratch;
    const banded_params *P = job->params;
    for (int64_t i = u0; i < u1; i++) {
        int64_t lo, n = band_of_row(P, job->cols, i, &lo), p = spx__gen_row_start(A, i);
        uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
        spx__gen_put_range(A, p, lo, n);
        spx__gen_uniform_values(A->values, A->dtype, p, n, &st);
    }
}

spx_status spx_gen_banded(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t lower, int64_t upper,
                          uint64_t seed, spx_dtype dtype, spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_banded";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "rows", rows)) || (s = spx__gen_nonneg(ctx, fn, "cols", cols)) ||
        (s = spx__gen_nonneg(ctx, fn, "lower", lower)) || (s = spx__gen_nonneg(ctx, fn, "upper", upper)))
        return s;
    banded_params P = {lower, upper, seed};
    spx__gen_job job = {
        .fn = fn, .what = "generating banded", .rows = rows, .cols = cols, .dtype = dtype,
        .itype = itype, .unit_rows = 1, .row_nnz = -1, .count = banded_count,
        .fill = banded_fill, .params = &P,
    };
    return spx__gen_build(ctx, &job, out);
}

/* ---- block-sparse ---- */

typedef struct {
    int64_t br, bc;
    double density;
    uint64_t seed;
} block_params;

/* Block row I draws the presence of its blocks, left to right, from its own
 * stream (apart from the per-row value streams); BODY runs for each present
 * block with its first column c0 and its width (clipped at the edge). */
#define FOR_PRESENT_BLOCKS(P, cols, I, BODY)                                                  \
    do {                                                                                      \
        uint64_t st_ = spx__rand_stream((P)->seed ^ SPX__GEN_SALT_BLOCKS, (uint64_t)(I));     \
        for (int64_t c0 = 0, width; c0 < (cols); c0 += width) {                               \
            width = (cols) - c0 < (P)->bc ? (cols) - c0 : (P)->bc;                            \
            if (spx__rand_unit(&st_) < (P)->density)                                          \
                BODY;                                                                         \
        }                                                                                     \
    } while (0)

static void block_count(const spx__gen_job *job, int64_t u0, int64_t u1, int64_t *counts)
{
    const block_params *P = job->params;
    for (int64_t I = u0; I < u1; I++) {
        int64_t total = 0, r0 = I * P->br;
        FOR_PRESENT_BLOCKS(P, job->cols, I, total += width);
        for (int64_t i = r0; i < job->rows && i - r0 < P->br; i++)
            counts[i] = total;
    }
}

static void block_fill(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1,
                       void *scratch)
{
    (void)scratch;
    const block_params *P = job->params;
    size_t isz = spx__index_size(A->itype);
    for (int64_t I = u0; I < u1; I++) {
        int64_t r0 = I * P->br, r1 = job->rows - r0 < P->br ? job->rows : r0 + P->br;
        int64_t p0 = spx__gen_row_start(A, r0), n = 0;
        FOR_PRESENT_BLOCKS(P, job->cols, I, (spx__gen_put_range(A, p0 + n, c0, width), n += width));
        /* the other rows of the block row repeat the first row's columns */
        for (int64_t i = r0; i < r1; i++) {
            int64_t p = p0 + (i - r0) * n;
            if (i > r0 && n > 0)
                memcpy((char *)A->indices + (size_t)p * isz, (char *)A->indices + (size_t)p0 * isz,
                       (size_t)n * isz);
            uint64_t st = spx__rand_stream(P->seed, (uint64_t)i);
            spx__gen_uniform_values(A->values, A->dtype, p, n, &st);
        }
    }
}

spx_status spx_gen_block_sparse(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t br, int64_t bc,
                                double block_density, uint64_t seed, spx_dtype dtype,
                                spx_index_type itype, spx_matrix **out)
{
    static const char fn[] = "spx_gen_block_sparse";
    spx_status s;
    if ((s = spx__gen_common(ctx, fn, itype, out)) || (s = spx__gen_dtype(ctx, fn, dtype, &dtype)) ||
        (s = spx__gen_nonneg(ctx, fn, "rows", rows)) || (s = spx__gen_nonneg(ctx, fn, "cols", cols)) ||
        (s = spx__gen_fraction(ctx, fn, "block_density", block_density)))
        return s;
    if (br < 1 || bc < 1)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: block shape %lld x %lld is not positive",
                         fn, LL(br), LL(bc));
    block_params P = {br, bc, block_density, seed};
    spx__gen_job job = {
        .fn = fn, .what = "generating block-sparse", .rows = rows, .cols = cols, .dtype = dtype,
        .itype = itype, .unit_rows = br, .row_nnz = -1, .count = block_count,
        .fill = block_fill, .params = &P,
    };
    return spx__gen_build(ctx, &job, out);
}

/* ---- dense ---- */

/* Element (i, j) draws from stream (stream(seed, i), j): the values do not
 * depend on the layout, the leading dimension or the thread count. */
#define DENSE_FILL(T, CONV)                                                                   \
    do {                                                                                      \
        T *d_ = (T *)D->data;                                                                 \
        if (D->layout == SPX_ROW_MAJOR) {                                                     \
            _Pragma("omp parallel for num_threads(nt) schedule(static)")                      \
            for (int64_t i = 0; i < D->rows; i++) {                                           \
                uint64_t rs = spx__rand_stream(seed, (uint64_t)i);                            \
                for (int64_t j = 0; j < D->cols; j++) {                                       \
                    uint64_t st = spx__rand_stream(rs, (uint64_t)j);                          \
                    d_[i * D->ld + j] = (T)CONV(spx__gen_sym_unit(&st));                      \
                }                                                                             \
            }                                                                                 \
        } else {                                                                              \
            _Pragma("omp parallel for num_threads(nt) schedule(static)")                      \
            for (int64_t j = 0; j < D->cols; j++)                                             \
                for (int64_t i = 0; i < D->rows; i++) {                                       \
                    uint64_t st = spx__rand_stream(spx__rand_stream(seed, (uint64_t)i), (uint64_t)j); \
                    d_[j * D->ld + i] = (T)CONV(spx__gen_sym_unit(&st));                      \
                }                                                                             \
        }                                                                                     \
    } while (0)
#define AS_IS(v) (v)
#define ONE(v) ((void)(v), 1)

spx_status spx_dense_fill_random(spx_ctx *ctx, spx_dense *D, uint64_t seed)
{
    spx_status s = spx__check_dense(ctx, D, "D");
    if (s)
        return s;
    if (D->memory != SPX_MEM_HOST)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "spx_dense_fill_random: D is in device memory; only host memory is filled");
    if (spx__dtype_is_complex(D->dtype))
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "spx_dense_fill_random: complex values (%s) are not generated",
                         spx_dtype_name(D->dtype));
    int nt = spx__num_threads(ctx);
    (void)nt; /* only read by OpenMP */
    switch (D->dtype) {
    case SPX_F32: DENSE_FILL(float, spx__gen_f32_below_one); break;
    case SPX_F64: DENSE_FILL(double, AS_IS); break;
    case SPX_F16: DENSE_FILL(uint16_t, spx__gen_f16_below_one); break;
    case SPX_BF16: DENSE_FILL(uint16_t, spx__gen_bf16_below_one); break;
    case SPX_I32: DENSE_FILL(int32_t, spx__gen_int); break;
    case SPX_I64: DENSE_FILL(int64_t, spx__gen_int); break;
    case SPX_BOOL: DENSE_FILL(uint8_t, ONE); break;
    default: break;
    }
    return SPX_OK;
}

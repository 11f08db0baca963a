/* Test fixture for tests/test_format.c: random COO triplets wrapped with
 * spx_matrix_wrap_coo, and dense images computed from them or read back from
 * any format's arrays, written independently of the library's conversions. */
#ifndef SPX_FORMAT_FIXTURE_H
#define SPX_FORMAT_FIXTURE_H

#include "core/core.h"
#include "testutil.h"

/* Random triplets and what the library must make of them. */
typedef struct {
    int64_t rows, cols, nnz;
    spx_dtype dtype;
    spx_index_type itype;
    void *ri, *ci, *vals;   /* the triplets (test-owned buffers) */
    spx_matrix *coo;        /* wraps them */
    double *re, *im;        /* expected dense image, row-major rows x cols */
    unsigned char *present; /* positions holding an entry after combining duplicates */
} fx_triplets;

static inline int64_t fx_ix(const void *p, spx_index_type t, int64_t i)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static inline void fx_set_ix(void *p, spx_index_type t, int64_t i, int64_t v)
{
    if (t == SPX_INDEX_I64)
        ((int64_t *)p)[i] = v;
    else
        ((int32_t *)p)[i] = (int32_t)v;
}

static inline double fx_half(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static inline double fx_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Exact encodings of dyadic values that fit (11 significant bits for f16, 8 for bf16). */
static inline uint16_t fx_to_half(double v)
{
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    int e;
    double m = frexp(fabs(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
    return (uint16_t)(sign | ((e - 1 + 15) << 10) | ((int)(m * 2048) - 1024));
}

static inline uint16_t fx_to_bf16(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* Value p as (re, im); pattern (vals NULL) reads as 1. */
static inline void fx_val(const void *v, spx_dtype t, int64_t p, double *re, double *im)
{
    *im = 0;
    switch (t) {
    case SPX_F32: *re = ((const float *)v)[p]; break;
    case SPX_F64: *re = ((const double *)v)[p]; break;
    case SPX_F16: *re = fx_half(((const uint16_t *)v)[p]); break;
    case SPX_BF16: *re = fx_bf16(((const uint16_t *)v)[p]); break;
    case SPX_I32: *re = ((const int32_t *)v)[p]; break;
    case SPX_I64: *re = (double)((const int64_t *)v)[p]; break;
    case SPX_BOOL: *re = ((const uint8_t *)v)[p]; break;
    case SPX_C64: *re = ((const float *)v)[2 * p]; *im = ((const float *)v)[2 * p + 1]; break;
    case SPX_C128: *re = ((const double *)v)[2 * p]; *im = ((const double *)v)[2 * p + 1]; break;
    default: *re = 1; break;
    }
}

static inline void fx_set_val(void *v, spx_dtype t, int64_t p, double re, double im)
{
    switch (t) {
    case SPX_F32: ((float *)v)[p] = (float)re; break;
    case SPX_F64: ((double *)v)[p] = re; break;
    case SPX_F16: ((uint16_t *)v)[p] = fx_to_half(re); break;
    case SPX_BF16: ((uint16_t *)v)[p] = fx_to_bf16(re); break;
    case SPX_I32: ((int32_t *)v)[p] = (int32_t)re; break;
    case SPX_I64: ((int64_t *)v)[p] = (int64_t)re; break;
    case SPX_BOOL: ((uint8_t *)v)[p] = re != 0; break;
    case SPX_C64: ((float *)v)[2 * p] = (float)re; ((float *)v)[2 * p + 1] = (float)im; break;
    case SPX_C128: ((double *)v)[2 * p] = re; ((double *)v)[2 * p + 1] = im; break;
    default: break;
    }
}

/* Shape of the random pattern. */
typedef enum { FX_RANDOM, FX_FEW_ROWS, FX_DENSE_ROW } fx_shape;

/* nnz triplets (about a quarter repeating an earlier position) of the given
 * shape; values k/8 (floats; k/2 for bf16), k (integers), 0/1 (bool), so that
 * every sum of duplicates is exact in every value type. */
static inline void fx_make(spx_ctx *ctx, fx_triplets *T, int64_t rows, int64_t cols, int64_t nnz,
                           fx_shape shape, spx_dtype dtype, spx_index_type itype, uint64_t seed)
{
    memset(T, 0, sizeof *T);
    T->rows = rows;
    T->cols = cols;
    T->dtype = dtype;
    T->itype = itype;
    if (rows == 0 || cols == 0)
        nnz = 0;
    int64_t dense_row = rows / 2;
    if (shape == FX_DENSE_ROW)
        nnz = cols;
    T->nnz = nnz;
    size_t isz = itype == SPX_INDEX_I64 ? 8 : 4;
    T->ri = malloc((size_t)(nnz ? nnz : 1) * isz);
    T->ci = malloc((size_t)(nnz ? nnz : 1) * isz);
    T->vals = dtype == SPX_PATTERN ? NULL : malloc((size_t)(nnz ? nnz : 1) * spx_dtype_size(dtype));
    size_t cells = rows * cols > 0 ? (size_t)(rows * cols) : 1;
    T->re = calloc(cells, sizeof(double));
    T->im = calloc(cells, sizeof(double));
    T->present = calloc(cells, 1);
    uint64_t st = seed;
    for (int64_t p = 0; p < nnz; p++) {
        int64_t i, j;
        if (shape == FX_DENSE_ROW) {
            i = dense_row;
            j = (int64_t)((uint64_t)(p * 7) % (uint64_t)cols); /* a permutation when 7 does not divide cols */
            if (cols % 7 == 0)
                j = cols - 1 - p;
        } else if (p > 0 && spx__rand_below(&st, 4) == 0) {
            int64_t q = (int64_t)spx__rand_below(&st, (uint64_t)p);
            i = fx_ix(T->ri, itype, q);
            j = fx_ix(T->ci, itype, q);
        } else {
            i = (int64_t)spx__rand_below(&st, (uint64_t)rows);
            if (shape == FX_FEW_ROWS) /* rows 0, 3 and the last only */
                i = (int64_t[]){0, rows > 3 ? 3 : 0, rows - 1}[spx__rand_below(&st, 3)];
            j = (int64_t)spx__rand_below(&st, (uint64_t)cols);
        }
        fx_set_ix(T->ri, itype, p, i);
        fx_set_ix(T->ci, itype, p, j);
        double re, im = 0;
        if (dtype == SPX_BOOL)
            re = (double)spx__rand_below(&st, 2);
        else if (spx__dtype_is_int(dtype))
            re = (double)((int64_t)spx__rand_below(&st, 101) - 50);
        else if (dtype == SPX_BF16) /* 8 significant bits: sums of k/2 stay exact */
            re = (double)((int64_t)spx__rand_below(&st, 17) - 8) / 2;
        else
            re = (double)((int64_t)spx__rand_below(&st, 129) - 64) / 8;
        if (spx__dtype_is_complex(dtype))
            im = (double)((int64_t)spx__rand_below(&st, 129) - 64) / 8;
        if (T->vals)
            fx_set_val(T->vals, dtype, p, re, im);
        size_t c = (size_t)(i * cols + j);
        T->present[c] = 1;
        if (dtype == SPX_PATTERN)
            T->re[c] = 1;
        else if (dtype == SPX_BOOL)
            T->re[c] = T->re[c] != 0 || re != 0;
        else {
            T->re[c] += re;
            T->im[c] += im;
        }
    }
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, rows, cols, nnz, T->ri, T->ci, T->vals, itype, dtype,
                                      SPX_MEM_HOST, &T->coo));
}

static inline void fx_free(fx_triplets *T)
{
    spx_matrix_destroy(T->coo);
    free(T->ri);
    free(T->ci);
    free(T->vals);
    free(T->re);
    free(T->im);
    free(T->present);
}

/* Dense image of any matrix read straight from its arrays (duplicates summed,
 * bool saturating), plus its stored pattern. re, im, pat: rows*cols. */
static inline void fx_image(const spx_matrix *M, double *re, double *im, unsigned char *pat)
{
    spx_matrix_info in;
    spx_matrix_arrays a;
    spx_matrix_info_get(M, &in);
    spx_matrix_arrays_get(M, &a);
    int64_t n = in.rows * in.cols;
    memset(re, 0, (size_t)n * sizeof *re);
    memset(im, 0, (size_t)n * sizeof *im);
    memset(pat, 0, (size_t)n);
    spx_index_type t = in.index_type;
#define FX_PUT(i, j, p)                                                                         \
    do {                                                                                        \
        double vr_, vi_;                                                                        \
        fx_val(a.values, in.dtype, (p), &vr_, &vi_);                                            \
        int64_t c_ = (i) * in.cols + (j);                                                       \
        re[c_] = in.dtype == SPX_BOOL ? (re[c_] != 0 || vr_ != 0) : re[c_] + vr_;               \
        im[c_] += vi_;                                                                          \
        pat[c_] = 1;                                                                            \
    } while (0)
    switch (in.format) {
    case SPX_COO:
        for (int64_t p = 0; p < in.nnz; p++)
            FX_PUT(fx_ix(a.row_indices, t, p), fx_ix(a.indices, t, p), p);
        break;
    case SPX_CSR:
    case SPX_CSC: {
        int64_t nmaj = in.format == SPX_CSR ? in.rows : in.cols;
        for (int64_t m = 0; m < nmaj; m++)
            for (int64_t p = fx_ix(a.offsets, t, m); p < fx_ix(a.offsets, t, m + 1); p++) {
                int64_t k = fx_ix(a.indices, t, p);
                if (in.format == SPX_CSR)
                    FX_PUT(m, k, p);
                else
                    FX_PUT(k, m, p);
            }
        break;
    }
    case SPX_BSR: {
        int64_t br = in.block_rows, bc = in.block_cols;
        for (int64_t bi = 0; bi * br < in.rows; bi++)
            for (int64_t q = fx_ix(a.offsets, t, bi); q < fx_ix(a.offsets, t, bi + 1); q++)
                for (int64_t r = 0; r < br; r++)
                    for (int64_t c = 0; c < bc; c++) {
                        int64_t i = bi * br + r, j = fx_ix(a.indices, t, q) * bc + c;
                        if (i < in.rows && j < in.cols)
                            FX_PUT(i, j, (q * br + r) * bc + c);
                    }
        break;
    }
    case SPX_SELL: {
        int64_t C = in.sell_c;
        for (int64_t s = 0; s < in.nslices; s++)
            for (int64_t r = 0; r < C; r++) {
                int64_t pos = s * C + r, i = fx_ix(a.perm, t, pos);
                for (int64_t k = 0; k < fx_ix(a.row_lengths, t, pos); k++) {
                    int64_t slot = fx_ix(a.offsets, t, s) + k * C + r;
                    FX_PUT(i, fx_ix(a.indices, t, slot), slot);
                }
            }
        break;
    }
    default: break;
    }
#undef FX_PUT
}

#endif

/* Test-side oracle for semiring products: dense matrices with a presence
 * bitmap (so a stored entry equal to the identity is still an entry), the
 * semiring operators and the masked, accumulated product written again from
 * docs/SEMIRINGS.md (independently of src/core/semiring.h), conversions to
 * and from spx matrices, random generators and the custom semiring of the
 * tests. */
#ifndef SPX_TEST_SEMIRING_ORACLE_H
#define SPX_TEST_SEMIRING_ORACLE_H

#include "testutil.h"

/* ---- random numbers (splitmix64) ---- */
static inline uint64_t t_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int64_t t_below(uint64_t *s, int64_t n) { return (int64_t)(t_rand(s) % (uint64_t)n); }
static inline double t_unit(uint64_t *s) { return (double)(t_rand(s) >> 11) * 0x1.0p-53; }

/* ---- values: integers in i, reals in f ---- */
typedef struct {
    int64_t i;
    double f;
} tval;

static inline int t_is_float(spx_dtype t) { return t == SPX_F32 || t == SPX_F64; }

/* ---- avos, from the definition ---- */
static inline int64_t t_avos_sum(int64_t x, int64_t y)
{
    if (x == 0 || y == 0)
        return x == 0 ? y : x;
    return x < y ? x : y;
}

/* 1 on overflow of a bits-wide signed value. */
static inline int t_avos_product(int64_t x, int64_t y, int bits, int64_t *z)
{
    if (x == 0 || y == 0) {
        *z = 0;
        return 0;
    }
    int x_self = x == 1 || x == -1, y_self = y == 1 || y == -1;
    if (x_self && y_self) { /* (-1,-1) -> -1, (1,1) -> 1, mixed -> 0 */
        *z = x == y ? x : 0;
        return 0;
    }
    if (y == -1) {
        *z = x % 2 == 0 ? x : 0;
        return 0;
    }
    if (y == 1) {
        *z = x % 2 == 1 ? x : 0;
        return 0;
    }
    if (x == -1) /* a -1 on the left acts as 1 */
        x = 1;
    int b = 62;
    while (!((y >> b) & 1))
        b--;
    __int128 r = ((__int128)x << b) | (y & ((INT64_C(1) << b) - 1));
    if (r > (bits == 32 ? (__int128)INT32_MAX : (__int128)INT64_MAX))
        return 1;
    *z = (int64_t)r;
    return 0;
}

/* ---- semiring operators over tagged values ---- */

/* Test-only kind: max-min over f64, the custom semiring of the tests. */
#define T_MAX_MIN ((spx_semiring_kind)100)

static inline int t_fits(spx_dtype t, __int128 v)
{
    return t == SPX_I32 ? v >= INT32_MIN && v <= INT32_MAX : v >= INT64_MIN && v <= INT64_MAX;
}

static inline double t_round(spx_dtype t, double v) { return t == SPX_F32 ? (double)(float)v : v; }

/* z = x (x) y; 1 on overflow. */
static inline int t_mul(spx_semiring_kind k, spx_dtype t, tval x, tval y, tval *z)
{
    tval r = {0, 0};
    switch (k) {
    case SPX_SEMIRING_PLUS_TIMES:
    case SPX_SEMIRING_MAX_TIMES:
    case SPX_SEMIRING_MIN_TIMES:
        if (t_is_float(t))
            r.f = t == SPX_F32 ? (double)((float)x.f * (float)y.f) : x.f * y.f;
        else if (!t_fits(t, (__int128)x.i * y.i))
            return 1;
        else
            r.i = x.i * y.i;
        break;
    case SPX_SEMIRING_MIN_PLUS:
    case SPX_SEMIRING_MAX_PLUS:
        if (t_is_float(t))
            r.f = t == SPX_F32 ? (double)((float)x.f + (float)y.f) : x.f + y.f;
        else if (!t_fits(t, (__int128)x.i + y.i))
            return 1;
        else
            r.i = x.i + y.i;
        break;
    case SPX_SEMIRING_OR_AND: r.i = x.i != 0 && y.i != 0; break;
    case SPX_SEMIRING_PLUS_PAIR: r.i = 1; r.f = 1; break;
    case SPX_SEMIRING_AVOS:
        if (t_avos_product(x.i, y.i, t == SPX_I32 ? 32 : 64, &r.i))
            return 1;
        break;
    default: r.f = x.f < y.f ? x.f : y.f; break; /* T_MAX_MIN */
    }
    *z = r;
    return 0;
}

/* z = x (+) y; 1 on overflow. */
static inline int t_add(spx_semiring_kind k, spx_dtype t, tval x, tval y, tval *z)
{
    tval r = {0, 0};
    switch (k) {
    case SPX_SEMIRING_PLUS_TIMES:
    case SPX_SEMIRING_PLUS_PAIR:
        if (t_is_float(t))
            r.f = t == SPX_F32 ? (double)((float)x.f + (float)y.f) : x.f + y.f;
        else if (!t_fits(t, (__int128)x.i + y.i))
            return 1;
        else
            r.i = x.i + y.i;
        break;
    case SPX_SEMIRING_MIN_PLUS:
    case SPX_SEMIRING_MIN_TIMES:
        r = t_is_float(t) ? (tval){0, x.f < y.f ? x.f : y.f} : (tval){x.i < y.i ? x.i : y.i, 0};
        break;
    case SPX_SEMIRING_MAX_PLUS:
    case SPX_SEMIRING_MAX_TIMES:
        r = t_is_float(t) ? (tval){0, x.f > y.f ? x.f : y.f} : (tval){x.i > y.i ? x.i : y.i, 0};
        break;
    case SPX_SEMIRING_OR_AND: r.i = x.i != 0 || y.i != 0; break;
    case SPX_SEMIRING_AVOS: r.i = t_avos_sum(x.i, y.i); break;
    default: r.f = x.f > y.f ? x.f : y.f; break; /* T_MAX_MIN */
    }
    *z = r;
    return 0;
}

static inline tval t_identity(spx_semiring_kind k, spx_dtype t)
{
    int64_t imax = t == SPX_I32 ? INT32_MAX : INT64_MAX, imin = t == SPX_I32 ? INT32_MIN : INT64_MIN;
    if (k == T_MAX_MIN)
        return (tval){0, -INFINITY};
    switch (k) {
    case SPX_SEMIRING_MIN_PLUS:
    case SPX_SEMIRING_MIN_TIMES: return (tval){imax, INFINITY};
    case SPX_SEMIRING_MAX_PLUS:
    case SPX_SEMIRING_MAX_TIMES: return (tval){imin, -INFINITY};
    default: return (tval){0, 0};
    }
}

static inline int t_equal(spx_dtype t, tval x, tval y)
{
    return t_is_float(t) ? x.f == y.f : x.i == y.i;
}

/* ---- dense matrices with a presence bitmap ---- */
typedef struct {
    int64_t rows, cols;
    spx_dtype dtype;
    tval *v;
    uint8_t *in;
} dmat;

static inline dmat dm_new(int64_t rows, int64_t cols, spx_dtype t)
{
    dmat D = {rows, cols, t, NULL, NULL};
    size_t n = (size_t)(rows * cols > 0 ? rows * cols : 1);
    if (t != SPX_PATTERN) /* a pattern has presence only */
        D.v = calloc(n, sizeof *D.v);
    D.in = calloc(n, 1);
    return D;
}
static inline void dm_free(dmat *D)
{
    free(D->v);
    free(D->in);
    D->v = NULL;
    D->in = NULL;
}
#define DM(D, i, j) ((D)->v[(i) * (D)->cols + (j)])
#define DIN(D, i, j) ((D)->in[(i) * (D)->cols + (j)])

/* Value distributions for random matrices. */
enum { VAL_SMALL_INT, VAL_WIDE_INT, VAL_UNIFORM, VAL_AVOS, VAL_BOOL };

static inline tval t_random_value(uint64_t *s, int dist)
{
    tval v = {0, 0};
    switch (dist) {
    case VAL_SMALL_INT: v.i = t_below(s, 7) - 3; break;
    case VAL_WIDE_INT: v.i = t_below(s, 101) - 50; break;
    case VAL_AVOS: v.i = t_below(s, 6) == 0 ? t_below(s, 3) - 1 : 2 + t_below(s, 30); break;
    case VAL_BOOL: v.i = t_below(s, 4) != 0; break;
    default: v.f = t_below(s, 8) == 0 ? 0.0 : 2 * t_unit(s) - 1; break;
    }
    v.f = v.f != 0 ? v.f : (double)v.i;
    return v;
}

static inline dmat dm_random(int64_t rows, int64_t cols, double density, spx_dtype t, int dist,
                             uint64_t *s)
{
    dmat D = dm_new(rows, cols, t);
    if (t == SPX_BOOL)
        dist = VAL_BOOL;
    else if ((t == SPX_I32 || t == SPX_I64) && dist == VAL_UNIFORM)
        dist = VAL_SMALL_INT;
    for (int64_t p = 0; p < rows * cols; p++) {
        if (t_unit(s) >= density)
            continue;
        D.in[p] = 1;
        tval v = t_random_value(s, dist);
        v.f = t_round(t, v.f);
        if (D.v)
            D.v[p] = v;
    }
    return D;
}

static inline dmat dm_transpose(const dmat *D)
{
    dmat T = dm_new(D->cols, D->rows, D->dtype);
    for (int64_t i = 0; i < D->rows; i++)
        for (int64_t j = 0; j < D->cols; j++) {
            if (T.v)
                DM(&T, j, i) = DM(D, i, j);
            DIN(&T, j, i) = DIN(D, i, j);
        }
    return T;
}

static inline void t_store(void *vals, spx_dtype t, int64_t p, tval v)
{
    switch (t) {
    case SPX_F32: ((float *)vals)[p] = (float)v.f; break;
    case SPX_F64: ((double *)vals)[p] = v.f; break;
    case SPX_I32: ((int32_t *)vals)[p] = (int32_t)v.i; break;
    case SPX_I64: ((int64_t *)vals)[p] = v.i; break;
    case SPX_BOOL: ((uint8_t *)vals)[p] = (uint8_t)v.i; break;
    default: break;
    }
}

static inline tval t_load(const void *vals, spx_dtype t, int64_t p)
{
    tval v = {1, 1};
    switch (t) {
    case SPX_F32: v.f = ((const float *)vals)[p]; v.i = 0; break;
    case SPX_F64: v.f = ((const double *)vals)[p]; v.i = 0; break;
    case SPX_I32: v.i = ((const int32_t *)vals)[p]; v.f = (double)v.i; break;
    case SPX_I64: v.i = ((const int64_t *)vals)[p]; v.f = (double)v.i; break;
    case SPX_BOOL: v.i = ((const uint8_t *)vals)[p]; v.f = (double)v.i; break;
    default: break;
    }
    return v;
}

static inline void t_idx_put(void *p, spx_index_type t, int64_t q, int64_t v)
{
    if (t == SPX_INDEX_I64)
        ((int64_t *)p)[q] = v;
    else
        ((int32_t *)p)[q] = (int32_t)v;
}
static inline int64_t t_idx(const void *p, spx_index_type t, int64_t q)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[q] : ((const int32_t *)p)[q];
}

/* D as an spx matrix in format f (CSR, CSC, or COO in shuffled order). */
static inline spx_matrix *dm_to_spx(spx_ctx *ctx, const dmat *D, spx_format f, spx_index_type it,
                                    uint64_t *s)
{
    int64_t nnz = 0;
    for (int64_t p = 0; p < D->rows * D->cols; p++)
        nnz += D->in[p];
    spx_matrix *X = NULL;
    spx_status st = f == SPX_COO ? spx_matrix_create_coo(ctx, D->rows, D->cols, nnz, it, D->dtype, &X)
                    : f == SPX_CSC ? spx_matrix_create_csc(ctx, D->rows, D->cols, nnz, it, D->dtype, &X)
                                   : spx_matrix_create_csr(ctx, D->rows, D->cols, nnz, it, D->dtype, &X);
    if (st != SPX_OK)
        return NULL;
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(X, &ar);
    int by_cols = f == SPX_CSC;
    int64_t nmaj = by_cols ? D->cols : D->rows, nmin = by_cols ? D->rows : D->cols, q = 0;
    for (int64_t a = 0; a < nmaj; a++) {
        if (f != SPX_COO)
            t_idx_put(ar.offsets, it, a, q);
        for (int64_t b = 0; b < nmin; b++) {
            int64_t i = by_cols ? b : a, j = by_cols ? a : b;
            if (!DIN(D, i, j))
                continue;
            if (f == SPX_COO)
                t_idx_put(ar.row_indices, it, q, i);
            t_idx_put(ar.indices, it, q, by_cols ? i : j);
            if (D->v)
                t_store(ar.values, D->dtype, q, DM(D, i, j));
            q++;
        }
    }
    if (f != SPX_COO)
        t_idx_put(ar.offsets, it, nmaj, q);
    size_t vsz = spx_dtype_size(D->dtype);
    for (int64_t p = nnz - 1; f == SPX_COO && p > 0; p--) { /* shuffle the entries */
        int64_t r = t_below(s, p + 1);
        int64_t ti = t_idx(ar.row_indices, it, p), tj = t_idx(ar.indices, it, p);
        t_idx_put(ar.row_indices, it, p, t_idx(ar.row_indices, it, r));
        t_idx_put(ar.indices, it, p, t_idx(ar.indices, it, r));
        t_idx_put(ar.row_indices, it, r, ti);
        t_idx_put(ar.indices, it, r, tj);
        if (vsz) {
            unsigned char tmp[16];
            memcpy(tmp, (char *)ar.values + p * vsz, vsz);
            memcpy((char *)ar.values + p * vsz, (char *)ar.values + r * vsz, vsz);
            memcpy((char *)ar.values + r * vsz, tmp, vsz);
        }
    }
    return X;
}

/* A result (CSR with sorted unique columns, checked here) as a dense matrix;
 * returns 0 if the structure is not a canonical CSR. */
static inline int spx_to_dm(spx_ctx *ctx, const spx_matrix *C, dmat *D)
{
    spx_matrix_info in;
    spx_matrix_arrays ar;
    spx_matrix_info_get(C, &in);
    spx_matrix_arrays_get(C, &ar);
    if (in.format != SPX_CSR || spx_matrix_check(ctx, C) != SPX_OK)
        return 0;
    *D = dm_new(in.rows, in.cols, in.dtype);
    for (int64_t i = 0; i < in.rows; i++)
        for (int64_t p = t_idx(ar.offsets, in.index_type, i);
             p < t_idx(ar.offsets, in.index_type, i + 1); p++) {
            int64_t j = t_idx(ar.indices, in.index_type, p);
            DIN(D, i, j) = 1;
            DM(D, i, j) = t_load(ar.values, in.dtype, p);
        }
    return 1;
}

/* Compare presence and values; print the first difference under `what`. */
static inline int dm_same(const dmat *X, const dmat *Y, const char *what)
{
    if (X->rows != Y->rows || X->cols != Y->cols || X->dtype != Y->dtype) {
        fprintf(stderr, "  %s: shape/type %lldx%lld %s vs %lldx%lld %s\n", what,
                (long long)X->rows, (long long)X->cols, spx_dtype_name(X->dtype),
                (long long)Y->rows, (long long)Y->cols, spx_dtype_name(Y->dtype));
        return 0;
    }
    for (int64_t i = 0; i < X->rows; i++)
        for (int64_t j = 0; j < X->cols; j++) {
            int a = DIN(X, i, j), b = DIN(Y, i, j);
            tval x = X->v ? DM(X, i, j) : (tval){1, 1}, y = Y->v ? DM(Y, i, j) : (tval){1, 1};
            if (a != b || (a && !t_equal(X->dtype, x, y))) {
                fprintf(stderr, "  %s: (%lld, %lld): %s %g/%lld vs %s %g/%lld\n", what,
                        (long long)i, (long long)j, a ? "entry" : "none", x.f, (long long)x.i,
                        b ? "entry" : "none", y.f, (long long)y.i);
                return 0;
            }
        }
    return 1;
}

/* ---- the oracle product ---- */

typedef struct {
    spx_semiring_kind kind; /* or T_MAX_MIN */
    spx_dtype type;         /* result type */
    spx_mask_kind mask;
    int complement;
    const dmat *M, *accum;
    int drop;
} oracle_args;

static inline int mask_allows(const oracle_args *o, int64_t i, int64_t j)
{
    int in = 1;
    switch (o->mask) {
    case SPX_MASK_MATRIX: in = DIN(o->M, i, j); break;
    case SPX_MASK_UPPER: in = j >= i; break;
    case SPX_MASK_STRICT_UPPER: in = j > i; break;
    case SPX_MASK_LOWER: in = j <= i; break;
    case SPX_MASK_STRICT_LOWER: in = j < i; break;
    default: break;
    }
    return in != o->complement;
}

/* An operand value as the semiring sees it. */
static inline tval operand_value(const oracle_args *o, const dmat *X, int64_t i, int64_t j)
{
    if (X->dtype == SPX_PATTERN)
        return (tval){1, 1};
    tval v = DM(X, i, j);
    if (o->kind == SPX_SEMIRING_OR_AND)
        return (tval){t_is_float(X->dtype) ? v.f != 0 : v.i != 0, 0};
    return v;
}

/* C = accum (+) A (+.x) B under the mask, products in (i, k, j) order as
 * the library promises; returns 1 with the first failing (i, j) on overflow. */
static inline int oracle(const oracle_args *o, const dmat *A, const dmat *B, dmat *C, int64_t *bi,
                  int64_t *bj)
{
    int64_t m = A->rows, K = A->cols, n = B->cols;
    *C = dm_new(m, n, o->type);
    tval *acc = calloc((size_t)(n + 1), sizeof *acc);
    uint8_t *has = calloc((size_t)(n + 1), 1);
    tval ident = t_identity(o->kind, o->type);
    int bad = 0;
    for (int64_t i = 0; i < m && !bad; i++) {
        memset(has, 0, (size_t)(n + 1));
        for (int64_t k = 0; k < K && !bad; k++) {
            if (!DIN(A, i, k))
                continue;
            tval a = operand_value(o, A, i, k);
            for (int64_t j = 0; j < n && !bad; j++) {
                if (!DIN(B, k, j) || !mask_allows(o, i, j))
                    continue;
                tval t;
                bad = t_mul(o->kind, o->type, a, operand_value(o, B, k, j), &t) ||
                      (has[j] && t_add(o->kind, o->type, acc[j], t, &t));
                acc[j] = t;
                has[j] = 1;
                *bj = j;
            }
        }
        for (int64_t j = 0; j < n && !bad; j++) {
            int t_in = has[j] && !(o->drop && t_equal(o->type, acc[j], ident));
            int a_in = o->accum && DIN(o->accum, i, j);
            tval v = t_in ? acc[j] : a_in ? DM(o->accum, i, j) : acc[j];
            if (t_in && a_in)
                bad = t_add(o->kind, o->type, DM(o->accum, i, j), acc[j], &v);
            *bj = j;
            DIN(C, i, j) = (uint8_t)(t_in || a_in);
            DM(C, i, j) = v;
        }
        *bi = i;
    }
    free(acc);
    free(has);
    return bad;
}

static inline spx_matrix *csr_from(spx_ctx *ctx, int64_t rows, int64_t cols, const char *pattern, const double *vals,
                            spx_dtype t)
{
    /* pattern: rows*cols chars, 'x' marks an entry, values taken in order */
    dmat D = dm_new(rows, cols, t);
    int q = 0;
    for (int64_t p = 0; p < rows * cols; p++)
        if (pattern[p] == 'x') {
            D.in[p] = 1;
            D.v[p] = (tval){(int64_t)vals[q], vals[q]};
            q++;
        }
    spx_matrix *X = dm_to_spx(ctx, &D, SPX_CSR, SPX_INDEX_I32, NULL);
    dm_free(&D);
    return X;
}

/* The custom semiring of the tests: max-min over f64. */
static inline int cu_max(void *z, const void *x, const void *y, void *u)
{
    (void)u;
    double a = *(const double *)x, b = *(const double *)y;
    *(double *)z = a > b ? a : b;
    return 0;
}
static inline int cu_min(void *z, const void *x, const void *y, void *u)
{
    (void)u;
    double a = *(const double *)x, b = *(const double *)y;
    *(double *)z = a < b ? a : b;
    return 0;
}

static inline spx_semiring max_min_semiring(void)
{
    static const double neg_inf = -INFINITY;
    spx_semiring s = spx_semiring_builtin(SPX_SEMIRING_CUSTOM);
    s.dtype = SPX_F64;
    s.add = cu_max;
    s.mul = cu_min;
    s.add_identity = &neg_inf;
    s.mul_annihilator = &neg_inf;
    return s;
}

#endif

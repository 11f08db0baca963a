/* Test fixture for the SpMM tests (test_spmm.c, test_spmm_data.c): random
 * triplets; matrices of every format built from them (by spx_matrix_convert,
 * or wrapped from arrays the test lays out itself); the entries of any matrix
 * read back from its arrays; dense operands with padded leading dimensions;
 * and check_case, which runs one SpMM on the ref and cpu backends and checks
 * cpu against ref and, optionally, ref against a dense triple loop.
 *
 * Error bound. For an output element summing L products in a type with unit
 * roundoff u, |computed - exact| <= (L + 3) u M (L products, then alpha * acc
 * + beta * C: three more roundings), where M = |alpha| |op(A)| |B| +
 * |beta| |C0| (Higham, recursive summation). The stored result is then
 * rounded to C's type (u_out). cpu and ref each satisfy this, so
 *     ||C_cpu - C_ref||_F <= (2 (L + 3) u_acc + 2 u_out) ||M||_F
 * with L the longest row of op(A) and u_acc 2^-24 (f32, f16, bf16: f32
 * accumulation) or 2^-53 (f64). For f32 with rows of 8 entries this is
 * 1.3e-6; for bf16 output it is dominated by 2 u_out = 7.8e-3. The ref
 * against the exact dense result uses u_acc = 2^-53. */
#ifndef SPX_SPMM_FIXTURE_H
#define SPX_SPMM_FIXTURE_H

#include "core/core.h"
#include "testutil.h"

static spx_ctx *ref_ctx, *cpu_ctx;
static int quick;

/* ---- random numbers (own stream, seeded from the test seed) ---- */

static uint64_t rng;
static inline uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int64_t irand(int64_t n) { return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0; }
static inline double urand_sym(void) { return (double)(rnd() >> 11) * 0x1p-52 - 1.0; }

/* ---- triplets: the entries of a matrix, as the test understands them ---- */

typedef struct {
    int64_t rows, cols, n, cap;
    int64_t *i, *j;
    double *v;
} trip;

static inline void trip_push(trip *t, int64_t i, int64_t j, double v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->i = realloc(t->i, (size_t)t->cap * sizeof *t->i);
        t->j = realloc(t->j, (size_t)t->cap * sizeof *t->j);
        t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
    }
    t->i[t->n] = i;
    t->j[t->n] = j;
    t->v[t->n++] = v;
}

static inline void trip_free(trip *t)
{
    free(t->i);
    free(t->j);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static inline int64_t ix(const void *p, spx_index_type t, int64_t k)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k];
}

/* Read the stored entries of any format from its arrays (pattern: 1). */
static inline trip matrix_triplets(const spx_matrix *A)
{
    spx_matrix_info f;
    spx_matrix_arrays a;
    spx_matrix_info_get(A, &f);
    spx_matrix_arrays_get(A, &a);
    trip t = {.rows = f.rows, .cols = f.cols};
    spx_index_type it = f.index_type;
#define VAL(p) (f.dtype == SPX_PATTERN ? 1.0 : spx__val_get(a.values, f.dtype, (p)))
    switch (f.format) {
    case SPX_COO:
        for (int64_t p = 0; p < f.nnz; p++)
            trip_push(&t, ix(a.row_indices, it, p), ix(a.indices, it, p), VAL(p));
        break;
    case SPX_CSR:
    case SPX_CSC:
        for (int64_t s = 0; s < (f.format == SPX_CSR ? f.rows : f.cols); s++)
            for (int64_t p = ix(a.offsets, it, s); p < ix(a.offsets, it, s + 1); p++) {
                int64_t x = ix(a.indices, it, p);
                trip_push(&t, f.format == SPX_CSR ? s : x, f.format == SPX_CSR ? x : s, VAL(p));
            }
        break;
    case SPX_BSR:
        for (int64_t bi = 0; bi * f.block_rows < f.rows; bi++)
            for (int64_t p = ix(a.offsets, it, bi); p < ix(a.offsets, it, bi + 1); p++)
                for (int64_t r = 0; r < f.block_rows; r++)
                    for (int64_t c = 0; c < f.block_cols; c++) {
                        int64_t i = bi * f.block_rows + r,
                                j = ix(a.indices, it, p) * f.block_cols + c;
                        if (i < f.rows && j < f.cols)
                            trip_push(&t, i, j, VAL((p * f.block_rows + r) * f.block_cols + c));
                    }
        break;
    case SPX_SELL:
        for (int64_t s = 0; s < f.nslices; s++)
            for (int64_t r = 0; r < f.sell_c; r++) {
                int64_t pos = s * f.sell_c + r, base = ix(a.offsets, it, s);
                for (int64_t q = 0; q < ix(a.row_lengths, it, pos); q++)
                    trip_push(&t, ix(a.perm, it, pos), ix(a.indices, it, base + q * f.sell_c + r),
                              VAL(base + q * f.sell_c + r));
            }
        break;
    default: break;
    }
#undef VAL
    return t;
}

/* Random triplets: each of m*k positions with probability density (no
 * duplicates), values uniform in [-1, 1). */
static inline trip random_triplets(int64_t m, int64_t k, double density)
{
    trip t = {.rows = m, .cols = k};
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++)
            if ((double)(rnd() >> 11) * 0x1p-53 < density)
                trip_push(&t, i, j, urand_sym());
    return t;
}

/* A COO matrix holding the triplets (values rounded to dtype), in shuffled order. */
static inline spx_matrix *coo_from(const trip *t, spx_dtype dt, spx_index_type it)
{
    spx_matrix *A = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_create_coo(cpu_ctx, t->rows, t->cols, t->n, it, dt, &A));
    if (!A)
        return NULL;
    spx_matrix_arrays a;
    spx_matrix_arrays_get(A, &a);
    int64_t *order = malloc((size_t)(t->n + 1) * sizeof *order);
    for (int64_t p = 0; p < t->n; p++)
        order[p] = p;
    for (int64_t p = t->n - 1; p > 0; p--) {
        int64_t q = irand(p + 1), x = order[p];
        order[p] = order[q];
        order[q] = x;
    }
    for (int64_t p = 0; p < t->n; p++) {
        spx__idx_set(a.row_indices, it, p, t->i[order[p]]);
        spx__idx_set(a.indices, it, p, t->j[order[p]]);
        if (dt != SPX_PATTERN)
            spx__val_set(a.values, dt, p, t->v[order[p]]);
    }
    free(order);
    return A;
}

/* ---- dense operands with padded leading dimension ---- */

typedef struct {
    spx_dense d;
    size_t bytes;
} tdense;

static inline int64_t off_of(const spx_dense *D, int64_t i, int64_t j)
{
    return D->layout == SPX_ROW_MAJOR ? i * D->ld + j : j * D->ld + i;
}

/* rows x cols with ld = minimal + extra; padding filled with 0xA5 bytes,
 * elements uniform in [-1, 1). */
static inline tdense tdense_new(int64_t rows, int64_t cols, spx_dtype dt, spx_layout lay,
                                int64_t extra)
{
    int64_t inner = lay == SPX_ROW_MAJOR ? cols : rows, outer = lay == SPX_ROW_MAJOR ? rows : cols;
    int64_t ld = (inner > 0 ? inner : 1) + extra;
    tdense t;
    t.bytes = (size_t)outer * (size_t)ld * spx_dtype_size(dt);
    void *p = malloc(t.bytes ? t.bytes : 1);
    memset(p, 0xA5, t.bytes);
    t.d = spx_dense_make(p, rows, cols, ld, dt, lay, SPX_MEM_HOST);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            spx__val_set(p, dt, off_of(&t.d, i, j), urand_sym());
    return t;
}

static inline tdense tdense_copy(const tdense *s)
{
    tdense t = *s;
    t.d.data = malloc(s->bytes ? s->bytes : 1);
    memcpy(t.d.data, s->d.data, s->bytes);
    return t;
}

static inline void tdense_fill(tdense *t, double v)
{
    for (int64_t i = 0; i < t->d.rows; i++)
        for (int64_t j = 0; j < t->d.cols; j++)
            spx__val_set(t->d.data, t->d.dtype, off_of(&t->d, i, j), v);
}

static inline double dget(const tdense *t, int64_t i, int64_t j)
{
    return spx__val_get(t->d.data, t->d.dtype, off_of(&t->d, i, j));
}

/* Padding bytes (between a line's last element and ld) equal those of orig. */
static inline bool padding_intact(const tdense *t, const tdense *orig)
{
    size_t es = spx_dtype_size(t->d.dtype), ld = (size_t)t->d.ld;
    size_t inner = (size_t)(t->d.layout == SPX_ROW_MAJOR ? t->d.cols : t->d.rows);
    for (size_t line = 0; line * ld * es < t->bytes; line++) {
        size_t at = (line * ld + inner) * es, len = (ld - inner) * es;
        if (memcmp((char *)t->d.data + at, (char *)orig->d.data + at, len))
            return false;
    }
    return true;
}

/* ---- the checks ---- */

/* Rounding to t: unit roundoff *u, and *eta the spacing of t's subnormals
 * (the absolute error of rounding a value that small, whatever its relative
 * error). */
static inline void rounding_of(spx_dtype t, double *u, double *eta)
{
    switch (t) {
    case SPX_F64: *u = 0x1p-53, *eta = 0x1p-1074; break;
    case SPX_F16: *u = 0x1p-11, *eta = 0x1p-24; break;
    case SPX_BF16: *u = 0x1p-8, *eta = 0x1p-133; break;
    default: *u = 0x1p-24, *eta = 0x1p-149;
    }
}

/* ||x - y||_F / ||M||_F, less eta per element (outputs rounded into the
 * subnormal range: eta of rounding_of the output type); INFINITY if
 * any value is not finite. */
static inline double scaled_err(const double *x, const double *y, const double *M, size_t len, double eta)
{
    double num = 0, den = 0;
    for (size_t q = 0; q < len; q++) {
        if (!isfinite(x[q]) || !isfinite(y[q]))
            return INFINITY;
        num += (x[q] - y[q]) * (x[q] - y[q]);
        den += M[q] * M[q];
    }
    const double over = sqrt(num) - eta * sqrt((double)len);
    return over <= 0 ? 0 : den > 0 ? over / sqrt(den) : INFINITY;
}

typedef struct {
    spx_op op;
    spx_layout lb, lc;
    int64_t n;
    double alpha, beta;
    bool exact; /* also check ref against the dense computation */
    bool spmv;  /* n == 1: also run spx_spmv and require the same bytes */
} spmm_case;

static inline const char *lay_name(spx_layout l) { return l == SPX_ROW_MAJOR ? "row" : "col"; }

/* Run one case on ref and cpu and check everything; label names the matrix. */
static inline void check_case(const spx_matrix *A, spx_dtype ddt, const spmm_case *cs,
                              const char *label)
{
    trip T = matrix_triplets(A);
    bool tr = cs->op == SPX_OP_TRANSPOSE;
    int64_t m = tr ? T.cols : T.rows, k = tr ? T.rows : T.cols, n = cs->n;
    char what[512];
    snprintf(what, sizeof what, "%s op=%s B=%s C=%s dtype=%s n=%lld alpha=%g beta=%g (%lldx%lld)",
             label, tr ? "T" : "N", lay_name(cs->lb), lay_name(cs->lc), spx_dtype_name(ddt),
             (long long)n, cs->alpha, cs->beta, (long long)m, (long long)k);
    tdense B = tdense_new(k, n, ddt, cs->lb, 1 + irand(3));
    tdense C0 = tdense_new(m, n, ddt, cs->lc, 1 + irand(3));
    if (cs->beta == 0)
        tdense_fill(&C0, NAN); /* must be overwritten, never read */
    tdense Cr = tdense_copy(&C0), Cc = tdense_copy(&C0);
    CHECK_OK(ref_ctx, spx_spmm(ref_ctx, cs->op, cs->alpha, A, &B.d, cs->beta, &Cr.d));
    CHECK_OK(cpu_ctx, spx_spmm(cpu_ctx, cs->op, cs->alpha, A, &B.d, cs->beta, &Cc.d));
    CHECK(padding_intact(&Cr, &C0) && padding_intact(&Cc, &C0), "C padding written: %s", what);
    for (int b = 0; cs->spmv && b < 2; b++) { /* the same path: the same bytes */
        spx_ctx *ctx = b ? cpu_ctx : ref_ctx;
        tdense Cv = tdense_copy(&C0);
        CHECK_OK(ctx, spx_spmv(ctx, cs->op, cs->alpha, A, &B.d, cs->beta, &Cv.d));
        CHECK(memcmp(Cv.d.data, (b ? Cc : Cr).d.data, Cc.bytes) == 0,
              "%s spmv differs from spmm: %s", spx_backend_name(spx_ctx_backend(ctx)), what);
        free(Cv.d.data);
    }

    /* M, L and (optionally) the exact result, from the triplets */
    size_t mn = (size_t)(m * n);
    double *M = calloc(mn + 1, sizeof *M), *X = calloc(mn + 1, sizeof *X);
    double *cr = malloc((mn + 1) * sizeof *cr), *cc = malloc((mn + 1) * sizeof *cc);
    int64_t *len = calloc((size_t)m + 1, sizeof *len), L = 0;
    for (int64_t p = 0; p < T.n; p++) {
        int64_t i = tr ? T.j[p] : T.i[p], j = tr ? T.i[p] : T.j[p];
        L = ++len[i] > L ? len[i] : L;
        if (cs->alpha != 0)
            for (int64_t c = 0; c < n; c++)
                M[i * n + c] += fabs(cs->alpha * T.v[p] * dget(&B, j, c));
    }
    if (cs->exact && cs->alpha != 0) { /* dense op(A), then a triple loop */
        double *D = calloc((size_t)(m * k) + 1, sizeof *D);
        for (int64_t p = 0; p < T.n; p++)
            D[(tr ? T.j[p] : T.i[p]) * k + (tr ? T.i[p] : T.j[p])] += T.v[p];
        for (int64_t i = 0; i < m; i++)
            for (int64_t c = 0; c < n; c++) {
                double s = 0;
                for (int64_t j = 0; j < k; j++)
                    s += D[i * k + j] * dget(&B, j, c);
                X[i * n + c] = cs->alpha * s;
            }
        free(D);
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++) {
            size_t q = (size_t)(i * n + c);
            if (cs->beta != 0) {
                M[q] += fabs(cs->beta * dget(&C0, i, c));
                X[q] += cs->beta * dget(&C0, i, c);
            }
            cr[q] = dget(&Cr, i, c);
            cc[q] = dget(&Cc, i, c);
        }
    double ua = ddt == SPX_F64 ? 0x1p-53 : 0x1p-24, uo, eta;
    rounding_of(ddt, &uo, &eta);
    double tol = 2 * (double)(L + 3) * ua + 2 * uo;
    double err = scaled_err(cc, cr, M, mn, eta);
    CHECK(err <= tol, "cpu vs ref: error %.3g > bound %.3g (L=%lld): %s", err, tol, (long long)L,
          what);
    if (cs->exact) {
        double tol_ref = 2 * (double)(L + 3) * 0x1p-53 + 2 * uo;
        double e = scaled_err(cr, X, M, mn, eta);
        CHECK(e <= tol_ref, "ref vs dense: error %.3g > bound %.3g: %s", e, tol_ref, what);
    }
    free(M);
    free(X);
    free(cr);
    free(cc);
    free(len);
    free(B.d.data);
    free(C0.d.data);
    free(Cr.d.data);
    free(Cc.d.data);
    trip_free(&T);
}

/* ---- matrices in every format ---- */

typedef struct {
    const char *name;
    spx_format fmt;
    int64_t p1, p2; /* BSR block rows x cols, or SELL C and sigma */
    bool by_hand;   /* BSR/SELL built by the test and wrapped, not converted */
} variant;

static const variant variants[] = {
    {"coo", SPX_COO, 0, 0, false},
    {"csr", SPX_CSR, 0, 0, false},
    {"csc", SPX_CSC, 0, 0, false},
    {"bsr2x3", SPX_BSR, 2, 3, false},
    {"bsr4x4", SPX_BSR, 4, 4, false},
    {"bsr1x5", SPX_BSR, 1, 5, false},
    {"sell4/1", SPX_SELL, 4, 1, false},
    {"sell8/16", SPX_SELL, 8, 16, false},
    {"sell32/256", SPX_SELL, 32, 256, false},
    {"bsr3x2-hand", SPX_BSR, 3, 2, true},
    {"sell4/8-hand", SPX_SELL, 4, 8, true},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* An owning copy of a matrix wrapped over the test's buffers (then freed). */
static inline spx_matrix *owning_copy(spx_matrix *W, void **bufs, int nbufs)
{
    spx_matrix *A = NULL;
    if (W)
        CHECK_OK(cpu_ctx, spx_matrix_copy(cpu_ctx, W, &A));
    spx_matrix_destroy(W);
    for (int b = 0; b < nbufs; b++)
        free(bufs[b]);
    return A;
}

static inline void *index_array(int64_t len, spx_index_type it)
{
    return calloc((size_t)(len > 0 ? len : 1), it == SPX_INDEX_I64 ? 8 : 4);
}

/* BSR from duplicate-free triplets: blocks in row-major block order, absent
 * slots and edge padding zero. */
static inline spx_matrix *bsr_by_hand(const trip *t, int64_t br, int64_t bc, spx_dtype dt,
                                      spx_index_type it)
{
    int64_t brows = (t->rows + br - 1) / br, bcols = (t->cols + bc - 1) / bc, nb = 0;
    int64_t *id = malloc((size_t)(brows * bcols + 1) * sizeof *id);
    for (int64_t b = 0; b < brows * bcols; b++)
        id[b] = -1;
    for (int64_t p = 0; p < t->n; p++)
        id[t->i[p] / br * bcols + t->j[p] / bc] = 0;
    void *off = index_array(brows + 1, it);
    for (int64_t b = 0; b < brows * bcols; b++)
        if (id[b] == 0)
            nb++;
    void *idx = index_array(nb, it);
    size_t vsz = spx_dtype_size(dt);
    void *val = vsz ? calloc((size_t)(nb * br * bc + 1), vsz) : NULL;
    nb = 0;
    for (int64_t bi = 0; bi < brows; bi++) {
        for (int64_t bj = 0; bj < bcols; bj++)
            if (id[bi * bcols + bj] == 0) {
                id[bi * bcols + bj] = nb;
                spx__idx_set(idx, it, nb++, bj);
            }
        spx__idx_set(off, it, bi + 1, nb);
    }
    for (int64_t p = 0; val && p < t->n; p++)
        spx__val_set(val, dt,
                     (id[t->i[p] / br * bcols + t->j[p] / bc] * br + t->i[p] % br) * bc +
                         t->j[p] % bc,
                     t->v[p]);
    free(id);
    spx_matrix *W = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_wrap_bsr(cpu_ctx, t->rows, t->cols, br, bc, nb, off, idx, val, it,
                                          dt, SPX_MEM_HOST, &W));
    return owning_copy(W, (void *[]){off, idx, val}, 3);
}

/* SELL-C-sigma from duplicate-free triplets: rows sorted by decreasing length
 * (stably) within each sigma window. */
static inline spx_matrix *sell_by_hand(const trip *t, int64_t C, int64_t sigma, spx_dtype dt,
                                       spx_index_type it)
{
    int64_t m = t->rows, ns = (m + C - 1) / C;
    int64_t *len = calloc((size_t)m + 1, sizeof *len),
            *perm = malloc((size_t)(ns * C + 1) * sizeof *perm);
    int64_t *start = calloc((size_t)m + 2, sizeof *start),
            *pos = malloc(((size_t)m + 1) * sizeof *pos);
    for (int64_t p = 0; p < t->n; p++)
        len[t->i[p]]++;
    for (int64_t i = 0; i < ns * C; i++)
        perm[i] = i < m ? i : -1;
    for (int64_t w = 0; w < m; w += sigma) /* insertion sort: stable */
        for (int64_t a = w + 1; a < m && a < w + sigma; a++)
            for (int64_t b = a; b > w && len[perm[b]] > len[perm[b - 1]]; b--) {
                int64_t x = perm[b];
                perm[b] = perm[b - 1];
                perm[b - 1] = x;
            }
    void *off = index_array(ns + 1, it), *pm = index_array(ns * C, it),
         *rl = index_array(ns * C, it);
    int64_t slots = 0;
    for (int64_t s = 0; s < ns; s++) {
        int64_t w = 0;
        for (int64_t r = 0; r < C; r++) {
            int64_t i = perm[s * C + r];
            spx__idx_set(pm, it, s * C + r, i);
            spx__idx_set(rl, it, s * C + r, i >= 0 ? len[i] : 0);
            if (i >= 0 && len[i] > w)
                w = len[i];
            if (i >= 0)
                pos[i] = s * C + r;
        }
        start[s] = slots;
        slots += w * C;
        spx__idx_set(off, it, s + 1, slots);
    }
    void *idx = index_array(slots, it);
    size_t vsz = spx_dtype_size(dt);
    void *val = vsz ? calloc((size_t)slots + 1, vsz) : NULL;
    for (int64_t q = 0; q < slots; q++)
        spx__idx_set(idx, it, q, -1);
    int64_t *fill = calloc((size_t)m + 1, sizeof *fill);
    for (int64_t p = 0; p < t->n; p++) {
        int64_t i = t->i[p], s = pos[i] / C, r = pos[i] % C;
        int64_t slot = start[s] + fill[i]++ * C + r;
        spx__idx_set(idx, it, slot, t->j[p]);
        if (val)
            spx__val_set(val, dt, slot, t->v[p]);
    }
    free(fill);
    free(len);
    free(perm);
    free(start);
    free(pos);
    spx_matrix *W = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_wrap_sell(cpu_ctx, m, t->cols, C, sigma, ns, off, idx, val, pm, rl,
                                           it, dt, SPX_MEM_HOST, &W));
    return owning_copy(W, (void *[]){off, idx, val, pm, rl}, 5);
}

/* The triplets as a matrix of the variant's format (NULL on failure, reported). */
static inline spx_matrix *make_matrix(const trip *t, const variant *v, spx_dtype dt,
                                      spx_index_type it)
{
    if (v->by_hand)
        return v->fmt == SPX_BSR ? bsr_by_hand(t, v->p1, v->p2, dt, it)
                                 : sell_by_hand(t, v->p1, v->p2, dt, it);
    spx_matrix *coo = coo_from(t, dt, it), *A = NULL;
    if (!coo || v->fmt == SPX_COO)
        return coo;
    spx_format_params fp = {0};
    if (v->fmt == SPX_BSR) {
        fp.block_rows = v->p1;
        fp.block_cols = v->p2;
    } else if (v->fmt == SPX_SELL) {
        fp.sell_c = v->p1;
        fp.sell_sigma = v->p2;
    }
    spx_status s = spx_matrix_convert(cpu_ctx, coo, v->fmt, &fp, &A);
    CHECK(s == SPX_OK, "convert to %s: %s: %s", v->name, spx_status_name(s),
          spx_last_error(cpu_ctx));
    spx_matrix_destroy(coo);
    return A;
}

/* ---- every op x layout pair x n x (alpha, beta) on one matrix ---- */

static const double alpha_beta[][2] = {{1, 0}, {-0.5, 2}, {0, 1.5}};
static const spx_dtype dense_types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};

/* Every op, layout pair, n in ns and (alpha, beta) on A. */
static inline void check_all_cases(const spx_matrix *A, spx_dtype ddt, const int64_t *ns, int nn,
                                   bool exact, const char *label)
{
    for (int op = 0; op < 2; op++)
        for (int lb = 0; lb < 2; lb++)
            for (int lc = 0; lc < 2; lc++)
                for (int q = 0; q < nn; q++)
                    for (int ab = 0; ab < 3; ab++) {
                        spmm_case cs = {.op = (spx_op)op,
                                        .lb = (spx_layout)lb,
                                        .lc = (spx_layout)lc,
                                        .n = ns[q],
                                        .alpha = alpha_beta[ab][0],
                                        .beta = alpha_beta[ab][1],
                                        .exact = exact && ns[q] <= 7,
                                        .spmv = ns[q] == 1};
                        check_case(A, ddt, &cs, label);
                    }
}

/* The contexts: ref, and cpu with 2 threads; quick from SPX_TEST_QUICK. */
static inline int spmm_fixture_init(void)
{
    test_init();
    rng = test_seed;
    quick = getenv("SPX_TEST_QUICK") != NULL;
    if (spx_ctx_create(&ref_ctx) || spx_ctx_create(&cpu_ctx) ||
        spx_ctx_set_backend(ref_ctx, SPX_BACKEND_REF) ||
        spx_ctx_set_backend(cpu_ctx, SPX_BACKEND_CPU)) {
        fprintf(stderr, "cannot create contexts\n");
        return 0;
    }
    spx_ctx_set_num_threads(cpu_ctx, 2);
    return 1;
}

static inline void spmm_fixture_fini(void)
{
    spx_ctx_destroy(ref_ctx);
    spx_ctx_destroy(cpu_ctx);
}

#endif

/* SpMM and SpMV: the ref backend against an independent dense computation,
 * the cpu backend against ref over every format, op, layout, value and index
 * type, hard shapes, the shared real matrices, bad input, thread-count
 * independence and allocation failures.
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
#include "core/core.h"
#include "testutil.h"

#include <dirent.h>
#include <strings.h>

static spx_ctx *ref_ctx, *cpu_ctx;
static int quick;

/* ---- random numbers (own stream, seeded from the test seed) ---- */

static uint64_t rng;
static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int64_t irand(int64_t n) { return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0; }
static double urand_sym(void) { return (double)(rnd() >> 11) * 0x1p-52 - 1.0; }

/* ---- triplets: the entries of a matrix, as the test understands them ---- */

typedef struct {
    int64_t rows, cols, n, cap;
    int64_t *i, *j;
    double *v;
} trip;

static void trip_push(trip *t, int64_t i, int64_t j, double v)
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

static void trip_free(trip *t)
{
    free(t->i);
    free(t->j);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static int64_t ix(const void *p, spx_index_type t, int64_t k)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k];
}

/* Read the stored entries of any format from its arrays (pattern: 1). */
static trip matrix_triplets(const spx_matrix *A)
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
                        int64_t i = bi * f.block_rows + r, j = ix(a.indices, it, p) * f.block_cols + c;
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
static trip random_triplets(int64_t m, int64_t k, double density)
{
    trip t = {.rows = m, .cols = k};
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++)
            if ((double)(rnd() >> 11) * 0x1p-53 < density)
                trip_push(&t, i, j, urand_sym());
    return t;
}

/* A COO matrix holding the triplets (values rounded to dtype), in shuffled order. */
static spx_matrix *coo_from(const trip *t, spx_dtype dt, spx_index_type it)
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

static int64_t off_of(const spx_dense *D, int64_t i, int64_t j)
{
    return D->layout == SPX_ROW_MAJOR ? i * D->ld + j : j * D->ld + i;
}

/* rows x cols with ld = minimal + extra; padding filled with 0xA5 bytes,
 * elements uniform in [-1, 1). */
static tdense tdense_new(int64_t rows, int64_t cols, spx_dtype dt, spx_layout lay, int64_t extra)
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

static tdense tdense_copy(const tdense *s)
{
    tdense t = *s;
    t.d.data = malloc(s->bytes ? s->bytes : 1);
    memcpy(t.d.data, s->d.data, s->bytes);
    return t;
}

static void tdense_fill(tdense *t, double v)
{
    for (int64_t i = 0; i < t->d.rows; i++)
        for (int64_t j = 0; j < t->d.cols; j++)
            spx__val_set(t->d.data, t->d.dtype, off_of(&t->d, i, j), v);
}

static double dget(const tdense *t, int64_t i, int64_t j)
{
    return spx__val_get(t->d.data, t->d.dtype, off_of(&t->d, i, j));
}

/* Padding bytes (between a line's last element and ld) equal those of orig. */
static bool padding_intact(const tdense *t, const tdense *orig)
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

static double unit_roundoff(spx_dtype t)
{
    switch (t) {
    case SPX_F64: return 0x1p-53;
    case SPX_F16: return 0x1p-11;
    case SPX_BF16: return 0x1p-8;
    default: return 0x1p-24;
    }
}

/* ||x - y||_F / ||M||_F; INFINITY if any value is not finite. */
static double scaled_err(const double *x, const double *y, const double *M, size_t len)
{
    double num = 0, den = 0;
    for (size_t q = 0; q < len; q++) {
        if (!isfinite(x[q]) || !isfinite(y[q]))
            return INFINITY;
        num += (x[q] - y[q]) * (x[q] - y[q]);
        den += M[q] * M[q];
    }
    return den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
}

typedef struct {
    spx_op op;
    spx_layout lb, lc;
    int64_t n;
    double alpha, beta;
    bool exact; /* also check ref against the dense computation */
    bool spmv;  /* n == 1: also run spx_spmv and require the same bytes */
} spmm_case;

static const char *lay_name(spx_layout l) { return l == SPX_ROW_MAJOR ? "row" : "col"; }

/* Run one case on ref and cpu and check everything; label names the matrix. */
static void check_case(const spx_matrix *A, spx_dtype ddt, const spmm_case *cs, const char *label)
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
        CHECK(memcmp(Cv.d.data, (b ? Cc : Cr).d.data, Cc.bytes) == 0, "%s spmv differs from spmm: %s",
              spx_backend_name(spx_ctx_backend(ctx)), what);
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
    double ua = ddt == SPX_F64 ? 0x1p-53 : 0x1p-24, uo = unit_roundoff(ddt);
    double tol = 2 * (double)(L + 3) * ua + 2 * uo;
    double err = scaled_err(cc, cr, M, mn);
    CHECK(err <= tol, "cpu vs ref: error %.3g > bound %.3g (L=%lld): %s", err, tol, (long long)L, what);
    if (cs->exact) {
        double tol_ref = 2 * (double)(L + 3) * 0x1p-53 + 2 * uo;
        double e = scaled_err(cr, X, M, mn);
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
    {"coo", SPX_COO, 0, 0, false},         {"csr", SPX_CSR, 0, 0, false},
    {"csc", SPX_CSC, 0, 0, false},         {"bsr2x3", SPX_BSR, 2, 3, false},
    {"bsr4x4", SPX_BSR, 4, 4, false},      {"bsr1x5", SPX_BSR, 1, 5, false},
    {"sell4/1", SPX_SELL, 4, 1, false},    {"sell8/16", SPX_SELL, 8, 16, false},
    {"sell32/256", SPX_SELL, 32, 256, false}, {"bsr3x2-hand", SPX_BSR, 3, 2, true},
    {"sell4/8-hand", SPX_SELL, 4, 8, true},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* An owning copy of a matrix wrapped over the test's buffers (then freed). */
static spx_matrix *owning_copy(spx_matrix *W, void **bufs, int nbufs)
{
    spx_matrix *A = NULL;
    if (W)
        CHECK_OK(cpu_ctx, spx_matrix_copy(cpu_ctx, W, &A));
    spx_matrix_destroy(W);
    for (int b = 0; b < nbufs; b++)
        free(bufs[b]);
    return A;
}

static void *index_array(int64_t len, spx_index_type it)
{
    return calloc((size_t)(len > 0 ? len : 1), it == SPX_INDEX_I64 ? 8 : 4);
}

/* BSR from duplicate-free triplets: blocks in row-major block order, absent
 * slots and edge padding zero. */
static spx_matrix *bsr_by_hand(const trip *t, int64_t br, int64_t bc, spx_dtype dt, spx_index_type it)
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
        spx__val_set(val, dt, (id[t->i[p] / br * bcols + t->j[p] / bc] * br + t->i[p] % br) * bc + t->j[p] % bc,
                     t->v[p]);
    free(id);
    spx_matrix *W = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_wrap_bsr(cpu_ctx, t->rows, t->cols, br, bc, nb, off, idx, val, it, dt,
                                          SPX_MEM_HOST, &W));
    return owning_copy(W, (void *[]){off, idx, val}, 3);
}

/* SELL-C-sigma from duplicate-free triplets: rows sorted by decreasing length
 * (stably) within each sigma window. */
static spx_matrix *sell_by_hand(const trip *t, int64_t C, int64_t sigma, spx_dtype dt, spx_index_type it)
{
    int64_t m = t->rows, ns = (m + C - 1) / C;
    int64_t *len = calloc((size_t)m + 1, sizeof *len), *perm = malloc((size_t)(ns * C + 1) * sizeof *perm);
    int64_t *start = calloc((size_t)m + 2, sizeof *start), *pos = malloc(((size_t)m + 1) * sizeof *pos);
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
    void *off = index_array(ns + 1, it), *pm = index_array(ns * C, it), *rl = index_array(ns * C, it);
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
static spx_matrix *make_matrix(const trip *t, const variant *v, spx_dtype dt, spx_index_type it)
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
    CHECK(s == SPX_OK, "convert to %s: %s: %s", v->name, spx_status_name(s), spx_last_error(cpu_ctx));
    spx_matrix_destroy(coo);
    return A;
}

/* ---- the sweep: every format x op x layouts x value and index type x n x (alpha, beta) ---- */

static const double alpha_beta[][2] = {{1, 0}, {-0.5, 2}, {0, 1.5}};
static const spx_dtype dense_types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};

/* Every op, layout pair, n in ns and (alpha, beta) on A. */
static void check_all_cases(const spx_matrix *A, spx_dtype ddt, const int64_t *ns, int nn,
                            bool exact, const char *label)
{
    for (int op = 0; op < 2; op++)
        for (int lb = 0; lb < 2; lb++)
            for (int lc = 0; lc < 2; lc++)
                for (int q = 0; q < nn; q++)
                    for (int ab = 0; ab < 3; ab++) {
                        spmm_case cs = {(spx_op)op, (spx_layout)lb, (spx_layout)lc, ns[q],
                                        alpha_beta[ab][0], alpha_beta[ab][1],
                                        exact && ns[q] <= 7, ns[q] == 1};
                        check_case(A, ddt, &cs, label);
                    }
}

static void test_sweep(void)
{
    static const int64_t ns_full[] = {1, 7, 64, 130}, ns_quick[] = {1, 7, 64};
    const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16, SPX_PATTERN};
    int pattern_turn = 0;
    for (int v = 0; v < NVARIANTS; v++)
        for (int d = 0; d < 5; d++)
            for (int x = 0; x < 2; x++) {
                spx_index_type it = x ? SPX_INDEX_I64 : SPX_INDEX_I32;
                trip T = random_triplets(1 + irand(40), 1 + irand(40), 0.02 + 0.3 * urand_sym() * urand_sym());
                spx_matrix *A = make_matrix(&T, &variants[v], types[d], it);
                spx_dtype ddt = types[d] == SPX_PATTERN ? dense_types[pattern_turn++ % 4] : types[d];
                char label[128];
                snprintf(label, sizeof label, "sweep %s %s %s nnz=%lld", variants[v].name,
                         spx_dtype_name(types[d]), x ? "i64" : "i32", (long long)T.n);
                if (A)
                    check_all_cases(A, ddt, quick ? ns_quick : ns_full, quick ? 3 : 4, true, label);
                spx_matrix_destroy(A);
                trip_free(&T);
            }
}

/* ---- hard shapes ---- */

static trip shaped_triplets(int shape)
{
    trip t = {0};
    switch (shape) {
    case 0: t.rows = 6; t.cols = 9; break;  /* no entries */
    case 1: t.rows = 0; t.cols = 5; break;  /* 0 x k */
    case 2: t.rows = 5; t.cols = 0; break;  /* m x 0: C = beta C */
    case 3: t.rows = 0; t.cols = 0; break;
    case 4: /* empty rows and columns */
        t = random_triplets(40, 30, 0.3);
        for (int64_t p = 0; p < t.n; p++)
            if (t.i[p] % 3 || t.j[p] % 4 == 1)
                t.v[p] = NAN; /* marked for removal */
        {
            int64_t q = 0;
            for (int64_t p = 0; p < t.n; p++)
                if (!isnan(t.v[p])) {
                    t.i[q] = t.i[p];
                    t.j[q] = t.j[p];
                    t.v[q++] = t.v[p];
                }
            t.n = q;
        }
        break;
    case 5: /* power law: one dense row among empty ones, a few short rows */
        t.rows = 150;
        t.cols = 1200;
        for (int64_t j = 0; j < 1200; j++)
            if (j % 7)
                trip_push(&t, 17, j, urand_sym());
        for (int q = 0; q < 20; q++)
            trip_push(&t, 40 + q * 5, irand(1200), urand_sym());
        break;
    case 6: t.rows = 1; t.cols = 1; trip_push(&t, 0, 0, urand_sym()); break;
    case 7: /* one column, full */
        t.rows = 37;
        t.cols = 1;
        for (int64_t i = 0; i < 37; i++)
            trip_push(&t, i, 0, urand_sym());
        break;
    case 8: /* one row */
        t = random_triplets(1, 300, 0.5);
        break;
    }
    return t;
}
#define NSHAPES 9

static void test_hard_shapes(void)
{
    static const int64_t ns[] = {1, 7, 130};
    for (int shape = 0; shape < NSHAPES; shape++)
        for (int v = 0; v < NVARIANTS; v++) {
            trip T = shaped_triplets(shape);
            spx_dtype dt = dense_types[(shape + v) % 4];
            spx_index_type it = (shape + v) % 2 ? SPX_INDEX_I64 : SPX_INDEX_I32;
            spx_matrix *A = make_matrix(&T, &variants[v], dt, it);
            char label[128];
            snprintf(label, sizeof label, "shape %d %s %s", shape, variants[v].name,
                     it == SPX_INDEX_I64 ? "i64" : "i32");
            if (A)
                check_all_cases(A, dt, ns, quick ? 2 : 3, shape != 5, label);
            spx_matrix_destroy(A);
            trip_free(&T);
        }

    /* n == 0: nothing is done, C untouched */
    spx_matrix *A = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_create_csr(cpu_ctx, 3, 4, 0, SPX_INDEX_I32, SPX_F32, &A));
    spx_matrix_arrays a;
    spx_matrix_arrays_get(A, &a);
    memset(a.offsets, 0, 4 * sizeof(int32_t));
    float b[4], c[3] = {1, 2, 3};
    spx_dense B = spx_dense_make(b, 4, 0, 1, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense C = spx_dense_make(c, 3, 0, 1, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    CHECK_OK(cpu_ctx, spx_spmm(cpu_ctx, SPX_OP_NONE, 1, A, &B, 0, &C));
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3, "n == 0 touched C");
    spx_matrix_destroy(A);
}

/* Duplicate COO entries add their products (pattern: each counts 1). */
static void test_duplicates(void)
{
    const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_BF16, SPX_PATTERN};
    for (int d = 0; d < 4; d++)
        for (int x = 0; x < 2; x++) {
            trip T = random_triplets(25, 18, 0.2);
            int64_t n0 = T.n;
            for (int64_t p = 0; p < n0; p += 2) /* duplicate every other entry, some thrice */
                trip_push(&T, T.i[p], T.j[p], p % 3 ? urand_sym() : -T.v[p]);
            for (int64_t p = 0; p < n0; p += 5)
                trip_push(&T, T.i[p], T.j[p], urand_sym());
            spx_matrix *A = coo_from(&T, types[d], x ? SPX_INDEX_I64 : SPX_INDEX_I32);
            static const int64_t ns[] = {1, 7, 64};
            char label[64];
            snprintf(label, sizeof label, "duplicates %s", spx_dtype_name(types[d]));
            if (A)
                check_all_cases(A, types[d] == SPX_PATTERN ? SPX_F64 : types[d], ns, 3, true, label);
            spx_matrix_destroy(A);
            trip_free(&T);
        }
}

/* alpha == 0: C = beta C and B is not read (NaN in B does not show). */
static void test_alpha_zero(void)
{
    trip T = random_triplets(20, 15, 0.3);
    for (int v = 0; v < NVARIANTS; v++) {
        spx_matrix *A = make_matrix(&T, &variants[v], SPX_F32, SPX_INDEX_I32);
        if (!A)
            continue;
        tdense B = tdense_new(15, 9, SPX_F32, SPX_ROW_MAJOR, 0);
        tdense_fill(&B, NAN);
        for (int ctxi = 0; ctxi < 2; ctxi++) {
            spx_ctx *ctx = ctxi ? cpu_ctx : ref_ctx;
            tdense C = tdense_new(20, 9, SPX_F32, SPX_COL_MAJOR, 2);
            tdense C0 = tdense_copy(&C);
            CHECK_OK(ctx, spx_spmm(ctx, SPX_OP_NONE, 0.0, A, &B.d, 1.5, &C.d));
            bool ok = true;
            for (int64_t i = 0; i < 20; i++)
                for (int64_t j = 0; j < 9; j++)
                    ok &= dget(&C, i, j) == (double)(float)(1.5 * dget(&C0, i, j));
            CHECK(ok, "%s %s: alpha 0 must give beta*C without reading B", spx_backend_name(spx_ctx_backend(ctx)),
                  variants[v].name);
            free(C.d.data);
            free(C0.d.data);
        }
        free(B.d.data);
        spx_matrix_destroy(A);
    }
    trip_free(&T);
}

/* ---- the shared real matrices, read by a small parser of the test's own ---- */

/* Matrix Market coordinate files (real, integer, pattern; general, symmetric,
 * skew-symmetric), expanded to full storage. 0 if skipped (why says so). */
static int read_mtx(const char *path, trip *t, bool *pattern, const char **why)
{
    FILE *f = fopen(path, "r");
    char line[1024], obj[64], fmt[64], field[64], sym[64];
    *why = "unreadable";
    if (!f)
        return 0;
    int ok = 0;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4)
        goto done;
    *why = "not a coordinate file";
    if (strcasecmp(fmt, "coordinate"))
        goto done;
    *why = "complex";
    if (!strcasecmp(field, "complex") || !strcasecmp(sym, "hermitian"))
        goto done;
    *pattern = !strcasecmp(field, "pattern");
    bool symm = !strcasecmp(sym, "symmetric"), skew = !strcasecmp(sym, "skew-symmetric");
    do {
        if (!fgets(line, sizeof line, f))
            goto done;
    } while (line[0] == '%');
    long long m, k, nnz;
    *why = "bad size line";
    if (sscanf(line, "%lld %lld %lld", &m, &k, &nnz) != 3)
        goto done;
    t->rows = m;
    t->cols = k;
    for (long long e = 0; e < nnz; e++) {
        long long i, j;
        double v = 1;
        *why = "bad entry";
        if (fscanf(f, "%lld %lld", &i, &j) != 2 || (!*pattern && fscanf(f, "%lf", &v) != 1))
            goto done;
        trip_push(t, i - 1, j - 1, v);
        if ((symm || skew) && i != j)
            trip_push(t, j - 1, i - 1, skew ? -v : v);
    }
    ok = 1;
done:
    fclose(f);
    return ok;
}

/* DLMC .smtx: "rows, cols, nnz", row offsets, column indices; values random. */
static int read_smtx(const char *path, trip *t)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long m, k, nnz;
    int ok = fscanf(f, "%lld , %lld , %lld", &m, &k, &nnz) == 3;
    long long *off = ok ? malloc((size_t)(m + 1) * sizeof *off) : NULL;
    for (long long i = 0; ok && i <= m; i++)
        ok = fscanf(f, "%lld", &off[i]) == 1;
    t->rows = m;
    t->cols = k;
    for (long long i = 0; ok && i < m; i++)
        for (long long p = off[i]; ok && p < off[i + 1]; p++) {
            long long j;
            ok = fscanf(f, "%lld", &j) == 1;
            trip_push(t, i, j, urand_sym());
        }
    free(off);
    fclose(f);
    return ok;
}

static int data_files_seen;

static void check_data_file(const char *path)
{
    trip T = {0};
    bool pattern = false;
    const char *why = "";
    size_t len = strlen(path);
    int ok = len > 5 && !strcmp(path + len - 5, ".smtx") ? read_smtx(path, &T) : read_mtx(path, &T, &pattern, &why);
    if (!ok) {
        printf("  skipped %s (%s)\n", path, why);
        trip_free(&T);
        return;
    }
    const variant *v = &variants[data_files_seen++ % NVARIANTS];
    spx_index_type it = data_files_seen % 2 ? SPX_INDEX_I64 : SPX_INDEX_I32;
    spx_dtype dts[2] = {pattern ? SPX_PATTERN : SPX_F64, pattern ? SPX_PATTERN : SPX_F32};
    spx_dtype ddts[2] = {SPX_F64, SPX_F32};
    for (int d = 0; d < 2; d++) {
        spx_matrix *A = make_matrix(&T, v, dts[d], it);
        char label[600];
        snprintf(label, sizeof label, "%s as %s", path, v->name);
        /* f64: SpMV both ways; f32: op none with 32 columns */
        spmm_case spmv = {SPX_OP_NONE, SPX_COL_MAJOR, SPX_COL_MAJOR, 1, 1, 0, false, true};
        spmm_case spmm = {SPX_OP_NONE, SPX_ROW_MAJOR, SPX_ROW_MAJOR, 32, -0.5, 2, false, false};
        if (A && d == 0) {
            check_case(A, ddts[d], &spmv, label);
            spmv.op = SPX_OP_TRANSPOSE;
            spmv.beta = 2;
            check_case(A, ddts[d], &spmv, label);
        } else if (A && !quick) {
            check_case(A, ddts[d], &spmm, label);
        }
        spx_matrix_destroy(A);
    }
    trip_free(&T);
}

static void walk_data(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "bad"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = strlen(path);
        if (test_is_dir(path))
            walk_data(path);
        else if ((n > 4 && !strcmp(path + n - 4, ".mtx")) || (n > 5 && !strcmp(path + n - 5, ".smtx")))
            check_data_file(path);
    }
    closedir(d);
}

static void test_shared_data(void)
{
    const char *dir = test_shared_data_dir();
    if (!dir) {
        printf("  shared data folder not found: real-matrix checks skipped\n");
        return;
    }
    walk_data(dir);
    printf("  %d real matrices checked\n", data_files_seen);
    CHECK(data_files_seen > 0, "no matrices found in %s", dir);
}

/* ---- bad input: the right status, a message naming the problem, C untouched ---- */

static void test_bad_input(void)
{
    trip T = random_triplets(5, 7, 0.4);
    spx_matrix *A = make_matrix(&T, &variants[1], SPX_F32, SPX_INDEX_I32);
    spx_matrix *Ai = NULL, *Ac = NULL, *Ap = NULL, *Ad = NULL, *Abad = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_create_coo(cpu_ctx, 5, 7, 0, SPX_INDEX_I32, SPX_I32, &Ai));
    CHECK_OK(cpu_ctx, spx_matrix_create_coo(cpu_ctx, 5, 7, 0, SPX_INDEX_I32, SPX_C128, &Ac));
    CHECK_OK(cpu_ctx, spx_matrix_create_coo(cpu_ctx, 5, 7, 0, SPX_INDEX_I32, SPX_PATTERN, &Ap));
    int32_t off[6] = {0, 1, 2, 2, 3, 3}, col[3] = {0, 9, 2};
    float val[3] = {1, 2, 3};
    CHECK_OK(cpu_ctx, spx_matrix_wrap_csr(cpu_ctx, 5, 7, 3, off, col, val, SPX_INDEX_I32, SPX_F32,
                                          SPX_MEM_HOST, &Abad));
    CHECK_OK(cpu_ctx, spx_matrix_wrap_csr(cpu_ctx, 5, 7, 3, off, col, val, SPX_INDEX_I32, SPX_F32,
                                          SPX_MEM_DEVICE, &Ad));
    tdense B = tdense_new(7, 3, SPX_F32, SPX_ROW_MAJOR, 1), C = tdense_new(5, 3, SPX_F32, SPX_ROW_MAJOR, 1);
    tdense C0 = tdense_copy(&C);
    tdense B6 = tdense_new(6, 3, SPX_F32, SPX_ROW_MAJOR, 0), C4 = tdense_new(4, 3, SPX_F32, SPX_ROW_MAJOR, 0);
    tdense Bd = tdense_new(7, 3, SPX_F64, SPX_ROW_MAJOR, 0), Cd = tdense_new(5, 3, SPX_F64, SPX_ROW_MAJOR, 0);
    tdense Bi = tdense_new(7, 3, SPX_I32, SPX_ROW_MAJOR, 0), Ci = tdense_new(5, 3, SPX_I32, SPX_ROW_MAJOR, 0);
    tdense Bz = tdense_new(7, 3, SPX_C128, SPX_ROW_MAJOR, 0), Cz = tdense_new(5, 3, SPX_C128, SPX_ROW_MAJOR, 0);
    spx_dense Bdev = B.d, Cdev = C.d, Cthin = C.d;
    Bdev.memory = SPX_MEM_DEVICE;
    Cdev.memory = SPX_MEM_DEVICE;
    Cthin.ld = 2;
    /* C inside B's buffer (B is 7 x 3 with ld 4: 28 floats) */
    spx_dense Cover = spx_dense_make((float *)B.d.data + 8, 5, 3, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense x2 = spx_dense_make(B.d.data, 7, 2, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    tdense x6 = tdense_new(6, 1, SPX_F32, SPX_COL_MAJOR, 0), y = tdense_new(5, 1, SPX_F32, SPX_COL_MAJOR, 0);

    CHECK(spx_spmm(NULL, SPX_OP_NONE, 1, A, &B.d, 0, &C.d) == SPX_ERR_INVALID_ARGUMENT, "NULL ctx");
    CHECK(spx_spmv(NULL, SPX_OP_NONE, 1, A, &x6.d, 0, &y.d) == SPX_ERR_INVALID_ARGUMENT, "NULL ctx");
    for (int b = 0; b < 2; b++) {
        spx_ctx *ctx = b ? cpu_ctx : ref_ctx;
        const spx_status INV = SPX_ERR_INVALID_ARGUMENT, UNS = SPX_ERR_UNSUPPORTED;
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, NULL, &B.d, 0, &C.d), INV, "matrix A is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, NULL, 0, &C.d), INV, "B is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, NULL), INV, "C is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, (spx_op)7, 1, A, &B.d, 0, &C.d), INV, "invalid op 7");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B6.d, 0, &C.d), SPX_ERR_SHAPE,
                    "op(A) is 5x7 but B is 6x3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &C4.d), SPX_ERR_SHAPE, "C is 4x3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_TRANSPOSE, 1, A, &B.d, 0, &C.d), SPX_ERR_SHAPE,
                    "op(A) is 7x5 but B is 7x3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &Bd.d, 0, &C.d), UNS,
                    "B has value type f64 but A has f32");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &Cd.d), UNS,
                    "C has value type f64 but B has f32");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ap, &B.d, 0, &Cd.d), UNS, "mixed types");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ai, &Bi.d, 0, &Ci.d), UNS,
                    "A has value type i32 (integer");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ac, &Bz.d, 0, &Cz.d), UNS,
                    "A has value type c128 (complex SpMM is not supported");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ap, &Bi.d, 0, &Ci.d), UNS, "B has value type i32");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &Bdev, 0, &C.d), INV,
                    "different memories (A: host, B: device, C: host)");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ad, &Bdev, 0, &Cdev), UNS, "device memory");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &Cover), INV, "overlaps B");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &Cthin), INV, "leading dimension 2 < 3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Abad, &B.d, 0, &C.d), SPX_ERR_INVALID_MATRIX,
                    "column index 9 out of range [0, 7)");
        CHECK_FAILS(ctx, spx_spmv(ctx, SPX_OP_NONE, 1, A, &x2, 0, &y.d), SPX_ERR_SHAPE,
                    "x must be a vector (k x 1) but is 7x2");
        CHECK_FAILS(ctx, spx_spmv(ctx, SPX_OP_NONE, 1, A, &x6.d, 0, &y.d), SPX_ERR_SHAPE,
                    "op(A) is 5x7 but x is 6x1");
        CHECK(memcmp(C.d.data, C0.d.data, C.bytes) == 0, "C changed by a failed call (%s)",
              spx_backend_name(spx_ctx_backend(ctx)));
        /* B followed directly by C does not overlap */
        float *buf = malloc((28 + 20) * sizeof *buf);
        memcpy(buf, B.d.data, 28 * sizeof *buf);
        spx_dense Bn = spx_dense_make(buf, 7, 3, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
        spx_dense Cn = spx_dense_make(buf + 28, 5, 3, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
        CHECK_OK(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &Bn, 0, &Cn));
        free(buf);
    }
    tdense *all[] = {&B, &C, &C0, &B6, &C4, &Bd, &Cd, &Bi, &Ci, &Bz, &Cz, &x6, &y};
    for (size_t q = 0; q < sizeof all / sizeof all[0]; q++)
        free(all[q]->d.data);
    spx_matrix *mats[] = {A, Ai, Ac, Ap, Ad, Abad};
    for (size_t q = 0; q < sizeof mats / sizeof mats[0]; q++)
        spx_matrix_destroy(mats[q]);
    trip_free(&T);
}

/* ---- larger matrices: parallel paths, thread-count independence ---- */

/* Rows of random length (many empty, one very long), distinct columns. */
static trip skewed_triplets(int64_t m, int64_t k)
{
    trip t = {.rows = m, .cols = k};
    for (int64_t i = 0; i < m; i++) {
        int64_t len = i == 5 ? k * 3 / 4 : (irand(4) ? irand(40) : 0);
        int64_t start = irand(k), stride = 1 + 2 * irand(3);
        for (int64_t q = 0; q < len && q < k / stride; q++)
            trip_push(&t, i, (start + q * stride) % k, urand_sym());
    }
    return t;
}

static void test_threads(void)
{
    trip T = skewed_triplets(quick ? 1200 : 3000, 2000);
    static const int vs[] = {0, 1, 2, 4, 8, 9};
    const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_BF16};
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++)
        for (int d = 0; d < 3; d++) {
            spx_matrix *A = make_matrix(&T, &variants[vs[v]], types[d], d == 1 ? SPX_INDEX_I64 : SPX_INDEX_I32);
            if (!A)
                continue;
            char label[128];
            snprintf(label, sizeof label, "threads %s %s", variants[vs[v]].name, spx_dtype_name(types[d]));
            for (int op = 0; op < 2; op++)
                for (int n = 1; n <= 65; n += 32) {
                    spmm_case cs = {(spx_op)op, SPX_ROW_MAJOR, (spx_layout)(n == 33), n, 1.25, n == 1 ? 0 : -1, false, false};
                    if (n == 33)
                        check_case(A, types[d], &cs, label);
                    int64_t m = op ? T.cols : T.rows, k = op ? T.rows : T.cols;
                    tdense B = tdense_new(k, n, types[d], SPX_ROW_MAJOR, 1);
                    tdense C[3];
                    C[0] = tdense_new(m, n, types[d], (spx_layout)(n == 33), 1);
                    C[1] = tdense_copy(&C[0]);
                    C[2] = tdense_copy(&C[0]);
                    for (int t = 0; t < 3; t++) {
                        spx_ctx_set_num_threads(cpu_ctx, t + 1);
                        CHECK_OK(cpu_ctx, spx_spmm(cpu_ctx, (spx_op)op, 1.25, A, &B.d, -1, &C[t].d));
                    }
                    spx_ctx_set_num_threads(cpu_ctx, 2);
                    CHECK(!memcmp(C[0].d.data, C[1].d.data, C[0].bytes) &&
                              !memcmp(C[0].d.data, C[2].d.data, C[0].bytes),
                          "1, 2 and 3 threads give different bytes: %s op=%d n=%d", label, op, n);
                    for (int t = 0; t < 3; t++)
                        free(C[t].d.data);
                    free(B.d.data);
                }
            spx_matrix_destroy(A);
        }
    trip_free(&T);
}

/* A converted copy is cached with the matrix; touching the matrix drops it. */
static void test_cache_touch(void)
{
    trip T = random_triplets(30, 20, 0.3);
    int32_t *ri = malloc((size_t)(T.n + 1) * 4), *ci = malloc((size_t)(T.n + 1) * 4);
    double *v = malloc((size_t)(T.n + 1) * 8);
    for (int64_t p = 0; p < T.n; p++) {
        ri[p] = (int32_t)T.i[p];
        ci[p] = (int32_t)T.j[p];
        v[p] = T.v[p];
    }
    spx_matrix *A = NULL;
    CHECK_OK(cpu_ctx, spx_matrix_wrap_coo(cpu_ctx, 30, 20, T.n, ri, ci, v, SPX_INDEX_I32, SPX_F64,
                                          SPX_MEM_HOST, &A));
    for (int op = 0; op < 2 && A; op++) {
        spmm_case cs = {(spx_op)op, SPX_ROW_MAJOR, SPX_ROW_MAJOR, 5, 1, 0, true, false};
        check_case(A, SPX_F64, &cs, "cache, first call");
        check_case(A, SPX_F64, &cs, "cache, second call");
        for (int64_t p = 0; p < T.n; p++)
            v[p] = -3 * v[p] + 1;
        spx_matrix_touch(A);
        check_case(A, SPX_F64, &cs, "cache, after touch");
    }
    spx_matrix_destroy(A);
    free(ri);
    free(ci);
    free(v);
    trip_free(&T);
}

/* Each allocation of a call failing in turn: SPX_ERR_OUT_OF_MEMORY, C untouched, nothing leaked. */
static void test_alloc_failures(void)
{
    trip T = random_triplets(40, 30, 0.2);
    const struct {
        int variant;
        spx_dtype dt;
        spx_op op;
        spx_layout lb;
        spx_ctx **ctx;
    } sc[] = {{0, SPX_F16, SPX_OP_TRANSPOSE, SPX_COL_MAJOR, &cpu_ctx}, /* grouping, cache, B copy */
              {2, SPX_F32, SPX_OP_NONE, SPX_ROW_MAJOR, &cpu_ctx},      /* converted copy */
              {4, SPX_F64, SPX_OP_NONE, SPX_ROW_MAJOR, &cpu_ctx},      /* block accumulators */
              {8, SPX_F32, SPX_OP_TRANSPOSE, SPX_ROW_MAJOR, &cpu_ctx},
              {4, SPX_F32, SPX_OP_NONE, SPX_ROW_MAJOR, &ref_ctx}};
    long live0 = spx__debug_live_allocations();
    for (size_t q = 0; q < sizeof sc / sizeof sc[0]; q++) {
        spx_ctx *ctx = *sc[q].ctx;
        bool tr = sc[q].op == SPX_OP_TRANSPOSE;
        tdense B = tdense_new(tr ? 40 : 30, 9, sc[q].dt, sc[q].lb, 1);
        tdense C = tdense_new(tr ? 30 : 40, 9, sc[q].dt, SPX_ROW_MAJOR, 1), C0 = tdense_copy(&C);
        spx_status s = SPX_ERR_OUT_OF_MEMORY;
        long f;
        for (f = 1; s != SPX_OK && f < 100; f++) {
            spx_matrix *A = make_matrix(&T, &variants[sc[q].variant], sc[q].dt, SPX_INDEX_I32);
            if (!A)
                break;
            spx__debug_fail_alloc_after(f);
            s = spx_spmm(ctx, sc[q].op, 1, A, &B.d, 0, &C.d);
            spx__debug_fail_alloc_after(0);
            if (s != SPX_OK) {
                CHECK(s == SPX_ERR_OUT_OF_MEMORY, "allocation %ld failing gives %s: %s", f,
                      spx_status_name(s), spx_last_error(ctx));
                CHECK(!memcmp(C.d.data, C0.d.data, C.bytes), "C changed by a failed call");
            }
            spx_matrix_destroy(A);
        }
        CHECK(s == SPX_OK, "scenario %zu never succeeded", q);
        free(B.d.data);
        free(C.d.data);
        free(C0.d.data);
    }
    CHECK(spx__debug_live_allocations() == live0, "%ld allocations leaked",
          spx__debug_live_allocations() - live0);
    trip_free(&T);
}

int main(void)
{
    test_init();
    rng = test_seed;
    quick = getenv("SPX_TEST_QUICK") != NULL;
    if (spx_ctx_create(&ref_ctx) || spx_ctx_create(&cpu_ctx) ||
        spx_ctx_set_backend(ref_ctx, SPX_BACKEND_REF) || spx_ctx_set_backend(cpu_ctx, SPX_BACKEND_CPU)) {
        fprintf(stderr, "cannot create contexts\n");
        return 1;
    }
    spx_ctx_set_num_threads(cpu_ctx, 2);
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {{"sweep", test_sweep},           {"hard shapes", test_hard_shapes},
                 {"duplicates", test_duplicates}, {"alpha zero", test_alpha_zero},
                 {"bad input", test_bad_input},   {"threads", test_threads},
                 {"cache", test_cache_touch},     {"allocation failures", test_alloc_failures},
                 {"shared data", test_shared_data}};
    for (size_t q = 0; q < sizeof tests / sizeof tests[0]; q++) {
        clock_t t0 = clock();
        tests[q].fn();
        printf("%-20s %.2f s cpu\n", tests[q].name, (double)(clock() - t0) / CLOCKS_PER_SEC);
        fflush(stdout);
    }
    spx_ctx_destroy(ref_ctx);
    spx_ctx_destroy(cpu_ctx);
    return test_finish("test_spmm");
}

/* The GPU SpMM test's harness: the backend under test and the ref oracle,
 * test matrices with their float64 twins, one case run through every
 * algorithm, precision, memory and entry point, and the per-algorithm tally.
 *
 * Error measure: ||C - R||_F / max(||R||_F, ||Q||_F), where R is the ref
 * backend's float64 result on the same (rounded) inputs and Q_ij is the
 * root-sum-square of the terms of C_ij (alpha a_ik b_kj over k, and
 * beta c0_ij). With B of zero mean, E|R_ij|^2 = Q_ij^2: Q is the size R has
 * when its sums do not cancel. Dividing by ||R|| alone fails good results
 * whenever an output is small because its terms cancel (a single 1 x 5000 row
 * summing to 0.05 from terms of 0.3 did); rounding errors scale with the
 * terms, not with their sum. Every result must also satisfy
 * max|C - R| / max(max|R|, rms Q) <= 4 * bound, so that one wrong element in
 * a large output cannot hide in the Frobenius norm.
 *
 * Bounds (case_bound):
 *  - EXACT f32: sequential FMA over a row of L random-sign terms has a
 *    rounding error that grows like u*sqrt(L) relative to the result (random
 *    walk; u = 2^-24), worst case u*L. 1e-5 is ~170u: that covers rows up to
 *    L = 64 with a wide margin, and beyond that the bound grows with
 *    sqrt(L/64) so the margin stays the same. A dropped, doubled or misplaced
 *    entry moves its row by ~1/sqrt(L) and its element by O(1): far above the
 *    bound at the sizes used here.
 *  - EXACT f64: the same argument with u = 2^-53: 1e-12 times the same growth.
 *  - EXACT f16/bf16: accumulation is in f32, so the output rounding dominates
 *    (2^-11 / 2^-8 relative per element): 1e-2.
 *  - TF32: operands rounded to 10-bit mantissas (2^-11 relative each), float
 *    accumulation: ~5e-4 typical, 5e-3 bound. BF16/F16: operands rounded to
 *    8/11-bit mantissas: 2e-2 bound. These errors are per product and average
 *    out over a row, so they need no growth term. F16 is not asked for when
 *    A's values do not fit f16 (F16_SAFE_MAX): overflow is then by request. */
#ifndef SPX_TEST_GPU_HARNESS_H
#define SPX_TEST_GPU_HARNESS_H

#include "spmm_operands.h"

#include <ctype.h>

#define NALG SPX_SPMM_ALG_COUNT
#define NPREC (SPX_PRECISION_F16 + 1)
#define MAX_RUNS 3
#define MAX_FAIL_REPORTS 200
#define F16_SAFE_MAX 60000.0 /* below the largest finite f16, 65504 */
/* DENSE is forced only on matrices of at most this many cells: a dense copy
 * and GEMM of a large sparse matrix would cost minutes for nothing new */
#define DENSE_TEST_CELLS (1 << 24)

static spx_ctx *g_ctx; /* the backend under test */
static spx_ctx *g_ref; /* the ref backend: the oracle */
static int g_cuda;     /* the backend under test is CUDA (device operands, strict plan text) */
static int g_quick;    /* SPX_TEST_QUICK: a smaller sweep for compute-sanitizer runs */
static int g_verbose;  /* SPX_GPU_TEST_VERBOSE: one line per case */
static uint64_t g_rng; /* the test's own random stream, seeded from test_seed */
static int g_fail_reports;
static int g_main_sweep;       /* the sweep holding every algorithm's main case ran */
static int64_t g_error_checks; /* calls checked for an expected error */

/* ---- the tally ---------------------------------------------------------------- */

enum { EC_F32, EC_F64, EC_HALF, EC_TF32, EC_TC16, EC_N };
static const char *const ec_names[EC_N] = {"f32", "f64", "f16/bf16", "tf32", "tc bf16/f16"};

#define MAX_SKIP_MSGS 3
typedef struct {
    int64_t pass, skip, fail;
    double max_err[EC_N];
    int64_t n_err[EC_N]; /* passed results per class */
    double worst_ratio;  /* largest error / bound over passed results */
    int main_ok; /* passed its main case: f32 CSR, op N, row-major B and C */
    char msg[MAX_SKIP_MSGS][200];
    int64_t msg_count[MAX_SKIP_MSGS];
    int nmsg;
    int64_t other_skips;
} alg_stats;

static alg_stats g_stats[NALG];

static int error_class(spx_dtype t, spx_precision p)
{
    if (p == SPX_PRECISION_TF32)
        return EC_TF32;
    if (p != SPX_PRECISION_EXACT)
        return EC_TC16;
    return t == SPX_F32 ? EC_F32 : t == SPX_F64 ? EC_F64 : EC_HALF;
}

/* Skip messages are grouped by their text without digits. */
static int same_message(const char *a, const char *b)
{
    for (;;) {
        while (isdigit((unsigned char)*a))
            a++;
        while (isdigit((unsigned char)*b))
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
        a++;
        b++;
    }
}

static void record_skip(spx_spmm_alg alg, const char *msg)
{
    alg_stats *s = &g_stats[alg];
    s->skip++;
    for (int i = 0; i < s->nmsg; i++)
        if (same_message(s->msg[i], msg)) {
            s->msg_count[i]++;
            return;
        }
    if (s->nmsg == MAX_SKIP_MSGS) {
        s->other_skips++;
        return;
    }
    snprintf(s->msg[s->nmsg], sizeof s->msg[0], "%s", msg[0] ? msg : "(no message)");
    s->msg_count[s->nmsg++] = 1;
}

/* ---- test matrices ---------------------------------------------------------- */

typedef struct {
    char name[160];
    spx_matrix *A;   /* the operand (host, any format) */
    spx_matrix *ref; /* CSR copy with float64 values (pattern stays pattern) for the oracle */
    spx_matrix *dev; /* device copy of A (CUDA), made on first use */
    int64_t rows, cols, nnz;
    int64_t max_row, max_col; /* longest row and column: rounding growth of op N / op T */
    double max_abs;           /* largest magnitude of a value (1 for pattern) */
    double *sq_row, *sq_col;  /* sums of squared values per row and per column */
    spx_format format;
    spx_dtype dtype;
    spx_index_type itype;
} tmat;

static int64_t idx_at(const void *p, spx_index_type t, int64_t i)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* From the oracle's CSR copy: longest row and column, largest magnitude, and
 * the sums of squares per row and column that ||Q||_F needs. */
static int tmat_measure(tmat *t)
{
    spx_matrix_info in;
    spx_matrix_arrays ar;
    free(t->sq_row);
    free(t->sq_col);
    t->sq_row = calloc((size_t)(t->rows > 0 ? t->rows : 1), sizeof(double));
    t->sq_col = calloc((size_t)(t->cols > 0 ? t->cols : 1), sizeof(double));
    int64_t *colcount = calloc((size_t)(t->cols > 0 ? t->cols : 1), sizeof *colcount);
    int ok = t->sq_row && t->sq_col && colcount && !spx_matrix_info_get(t->ref, &in) &&
             !spx_matrix_arrays_get(t->ref, &ar) && in.format == SPX_CSR &&
             (in.dtype == SPX_F64 || in.dtype == SPX_PATTERN);
    t->max_row = t->max_col = 0;
    t->max_abs = in.dtype == SPX_PATTERN ? 1 : 0;
    for (int64_t i = 0; ok && i < in.rows; i++) {
        int64_t a = idx_at(ar.offsets, in.index_type, i);
        int64_t b = idx_at(ar.offsets, in.index_type, i + 1);
        t->max_row = b - a > t->max_row ? b - a : t->max_row;
        for (int64_t p = a; p < b; p++) {
            int64_t j = idx_at(ar.indices, in.index_type, p);
            double v = ar.values ? ((const double *)ar.values)[p] : 1.0;
            colcount[j]++;
            t->sq_row[i] += v * v;
            t->sq_col[j] += v * v;
            t->max_abs = fabs(v) > t->max_abs ? fabs(v) : t->max_abs;
        }
    }
    for (int64_t j = 0; ok && j < in.cols; j++)
        t->max_col = colcount[j] > t->max_col ? colcount[j] : t->max_col;
    free(colcount);
    CHECK(ok, "%s: measuring the oracle's copy", t->name);
    return ok;
}

/* Take csr (a host CSR matrix, consumed) and make the test operand in format
 * fmt (params may be NULL). The oracle's copy is made from csr itself, so a
 * format the backend handles wrongly cannot hide behind the same conversion
 * in the oracle. Returns 0 on failure (reported). */
static int tmat_make(tmat *t, spx_matrix *csr, spx_format fmt, const spx_format_params *params,
                     const char *name)
{
    memset(t, 0, sizeof *t);
    if (!csr)
        return 0;
    spx_matrix_info in;
    CHECK_OK(g_ctx, spx_matrix_info_get(csr, &in));
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = in.rows;
    t->cols = in.cols;
    t->nnz = in.nnz;
    t->dtype = in.dtype;
    t->itype = in.index_type;
    t->format = fmt;
    spx_status s = spx_matrix_astype(g_ctx, csr, in.dtype == SPX_PATTERN ? SPX_PATTERN : SPX_F64,
                                     SPX_INDEX_DEFAULT, &t->ref);
    CHECK_OK(g_ctx, s);
    if (s || !tmat_measure(t)) {
        spx_matrix_destroy(csr);
        return 0;
    }
    if (fmt == SPX_CSR) {
        t->A = csr;
        return 1;
    }
    s = spx_matrix_convert(g_ctx, csr, fmt, params, &t->A);
    CHECK_OK(g_ctx, s);
    spx_matrix_destroy(csr);
    return s == SPX_OK;
}

static void tmat_free(tmat *t)
{
    free(t->sq_row);
    free(t->sq_col);
    spx_matrix_destroy(t->dev);
    spx_matrix_destroy(t->ref);
    spx_matrix_destroy(t->A);
    memset(t, 0, sizeof *t);
}

static const spx_matrix *tmat_operand(tmat *t, spx_memory mem)
{
    if (mem == SPX_MEM_HOST)
        return t->A;
    if (!t->dev) {
        spx_status s = spx_matrix_to_device(g_ctx, t->A, &t->dev);
        CHECK_OK(g_ctx, s);
        spx_matrix_info in;
        if (!s && (spx_matrix_info_get(t->dev, &in) || in.memory != SPX_MEM_DEVICE)) {
            TFAIL("%s: spx_matrix_to_device gave a matrix not in device memory", t->name);
            spx_matrix_destroy(t->dev);
            t->dev = NULL;
        }
    }
    return t->dev;
}

/* ---- cases ------------------------------------------------------------------ */

typedef struct {
    double alpha, beta;
} trun;

typedef struct {
    tmat *M;
    spx_op op;
    spx_dtype dtype; /* of B and C */
    int64_t n;
    spx_layout lb, lc;
    int64_t pad_b, pad_c; /* leading dimension beyond the tight one */
    int64_t off_b, off_c; /* elements past an aligned start */
    int nruns;
    trun runs[MAX_RUNS];
    int plan;          /* also through one plan executed for every run */
    unsigned precs;    /* bit per spx_precision; 0: the default set for dtype */
    unsigned algs;     /* bit per spx_spmm_alg; 0: all */
    int64_t panel;     /* spx_spmm_options.panel_cols of spx_spmm_ex and plans */
    int64_t k_slabs;   /* spx_spmm_options.k_slabs of spx_spmm_ex and plans */
    int nan_b_alpha0;  /* runs with alpha == 0 leave B all NaN: B must not be read */
} tcase;

/* alpha/beta pairs cycled over cases that do not choose their own. */
static const trun g_runs_cycle[] = {{1.0, 0.0}, {-0.75, 0.5}, {1.5, -1.0}, {0.5, 0.0}};
static unsigned g_case_counter;

static tcase case_make(tmat *M, spx_op op, spx_dtype dtype, int64_t n)
{
    tcase c;
    memset(&c, 0, sizeof c);
    /* spx refuses mixed value types; such a case would only be skipped */
    if (M->dtype != dtype && M->dtype != SPX_PATTERN)
        TFAIL("%s: a case of %s values on a matrix of %s", M->name, spx_dtype_name(dtype), spx_dtype_name(M->dtype));
    c.M = M;
    c.op = op;
    c.dtype = dtype;
    c.n = n;
    c.lb = c.lc = SPX_ROW_MAJOR;
    c.nruns = 1;
    c.runs[0] = g_runs_cycle[g_case_counter++ % (sizeof g_runs_cycle / sizeof g_runs_cycle[0])];
    return c;
}

/* Three runs for one plan: overwrite NaN-poisoned C, accumulate into random
 * C, and alpha = 0 (C = beta * C). */
static void case_plan_runs(tcase *c)
{
    c->plan = 1;
    c->nruns = 3;
    c->runs[0] = (trun){1.0, 0.0};
    c->runs[1] = (trun){-0.75, 1.25};
    c->runs[2] = (trun){0.0, -2.0};
}

static unsigned default_precs(spx_dtype t)
{
    unsigned e = 1u << SPX_PRECISION_EXACT;
    switch (t) {
    case SPX_F32:
        return e | 1u << SPX_PRECISION_TF32 | 1u << SPX_PRECISION_BF16 | 1u << SPX_PRECISION_F16;
    case SPX_F16: return e | 1u << SPX_PRECISION_F16;
    case SPX_BF16: return e | 1u << SPX_PRECISION_BF16;
    default: return e;
    }
}

static double case_bound(const tcase *c, spx_precision p)
{
    int64_t L = c->op == SPX_OP_NONE ? c->M->max_row : c->M->max_col;
    double growth = L > 64 ? sqrt((double)L / 64.0) : 1.0;
    double exact = c->dtype == SPX_F64   ? 1e-12 * growth
                   : c->dtype == SPX_F32 ? 1e-5 * growth
                                         : 1e-2;
    double tc = p == SPX_PRECISION_TF32 ? 5e-3 : p == SPX_PRECISION_EXACT ? 0 : 2e-2;
    return exact > tc ? exact : tc;
}

static int case_is_main(const tcase *c)
{
    return c->M->format == SPX_CSR && c->M->dtype == SPX_F32 && c->dtype == SPX_F32 &&
           c->op == SPX_OP_NONE && c->lb == SPX_ROW_MAJOR && c->lc == SPX_ROW_MAJOR && c->n > 0 &&
           c->M->rows > 0 && c->M->nnz > 0;
}

/* ---- one call of the library -------------------------------------------------- */

typedef enum { PATH_SPMM, PATH_EX, PATH_PLAN } tpath;
static const char *const path_names[] = {"spx_spmm", "spx_spmm_ex", "plan"};

typedef struct {
    tpath path;
    spx_memory mem;
    spx_spmm_alg alg;
    spx_precision prec;
    int run;
    char msg[SPX_ERROR_MSG_MAX]; /* the library's message, copied right after the call */
} tcall;

static const char *layout_name(spx_layout l) { return l == SPX_ROW_MAJOR ? "row" : "col"; }

static void describe(char *buf, size_t n, const tcase *c, const tcall *k)
{
    const tmat *M = c->M;
    snprintf(buf, n,
             "[%s: %lldx%lld nnz %lld %s %s %s] op %s, %s, n=%lld, B %s ld+%lld off %lld, "
             "C %s ld+%lld off %lld, alpha=%g beta=%g%s | %s, %s operands, alg %s, precision %s",
             M->name, (long long)M->rows, (long long)M->cols, (long long)M->nnz,
             spx_format_name(M->format), spx_dtype_name(M->dtype),
             M->itype == SPX_INDEX_I64 ? "i64" : "i32", c->op == SPX_OP_NONE ? "N" : "T",
             spx_dtype_name(c->dtype), (long long)c->n, layout_name(c->lb), (long long)c->pad_b,
             (long long)c->off_b, layout_name(c->lc), (long long)c->pad_c, (long long)c->off_c,
             c->runs[k->run].alpha, c->runs[k->run].beta,
             c->nan_b_alpha0 && c->runs[k->run].alpha == 0
                 ? " (B all NaN: alpha == 0 must not read B)"
                 : "",
             path_names[k->path],
             k->mem == SPX_MEM_DEVICE ? "device" : "host", spx_spmm_alg_name(k->alg),
             spx_precision_name(k->prec));
}

static void report_failure(const tcase *c, const tcall *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void report_failure(const tcase *c, const tcall *k, const char *fmt, ...)
{
    test_failures++;
    g_stats[k->alg].fail++;
    if (++g_fail_reports > MAX_FAIL_REPORTS) {
        if (g_fail_reports == MAX_FAIL_REPORTS + 1)
            fprintf(stderr, "FAIL ... further failures counted, not printed\n");
        return;
    }
    char what[1024], why[1024];
    describe(what, sizeof what, c, k);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s\n     %s (SPX_TEST_SEED=%llu)\n", what, why,
            (unsigned long long)test_seed);
}

/* After a call: wait for device work, collect its error state, fetch C. */
static int settle(const tcase *c, tcall *k, spx_status s, tbuf *C)
{
    if (k->mem == SPX_MEM_HOST)
        return 1;
    spx_status ss = spx_ctx_synchronize(g_ctx);
    if (ss) {
        report_failure(c, k, "spx_ctx_synchronize after the call: %s: %s", spx_status_name(ss),
                       spx_last_error(g_ctx));
        return 0;
    }
#ifdef SPX_HAVE_CUDA
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && s == SPX_OK) {
        report_failure(c, k, "returned SPX_OK but left a CUDA error pending: %s",
                       cudaGetErrorString(e));
        return 0;
    }
#else
    (void)s;
#endif
    return tbuf_fetch(C, k->mem);
}

/* Judge a finished call. Returns 1 pass, 0 fail, -1 skipped (unsupported). */
static int judge(const tcase *c, tcall *k, spx_status s, const tbuf *B, tbuf *C, const tref *ref)
{
    if (s == SPX_ERR_UNSUPPORTED && k->alg != SPX_SPMM_AUTO) {
        record_skip(k->alg, k->msg);
        if (!tbuf_unchanged(C)) {
            report_failure(c, k, "C was modified by a call that returned SPX_ERR_UNSUPPORTED");
            return 0;
        }
        return -1;
    }
    if (s != SPX_OK) {
        report_failure(c, k, "%s: %s%s", spx_status_name(s), k->msg,
                       s == SPX_ERR_UNSUPPORTED ? " (AUTO must support every float type)" : "");
        return 0;
    }
    int64_t first = 0;
    char where[96];
    if (tbuf_outside_changed(C, &first)) {
        report_failure(c, k, "C was written outside its m x n elements, first at %s",
                       tbuf_where(C, first, where, sizeof where));
        return 0;
    }
    if (k->mem == SPX_MEM_HOST && !tbuf_unchanged(B)) {
        report_failure(c, k, "B was modified");
        return 0;
    }
    terr e = tbuf_compare(C, ref);
    double bound = case_bound(c, k->prec);
    if (e.nonfinite || !(e.fro <= bound) || !(e.maxrel <= 4 * bound)) {
        tbuf_locate(C, ref, &e);
        if (e.nonfinite)
            report_failure(c, k, "%lld non-finite element(s) in C (unwritten or NaN leak), first "
                                 "C(%lld,%lld) = %g, reference %g",
                           (long long)e.nonfinite, (long long)e.wi, (long long)e.wj, e.got, e.want);
        else
            report_failure(c, k,
                           "relative error %.3g (max-norm %.3g) > bound %.3g (max-norm %.3g); "
                           "worst C(%lld,%lld) = %.9g, reference %.9g",
                           e.fro, e.maxrel, bound, 4 * bound, (long long)e.wi, (long long)e.wj,
                           e.got, e.want);
        return 0;
    }
    alg_stats *st = &g_stats[k->alg];
    st->pass++;
    int ec = error_class(c->dtype, k->prec);
    st->n_err[ec]++;
    double ratio = e.fro / bound > e.maxrel / (4 * bound) ? e.fro / bound : e.maxrel / (4 * bound);
    st->worst_ratio = ratio > st->worst_ratio ? ratio : st->worst_ratio;
    if (e.fro > st->max_err[ec])
        st->max_err[ec] = e.fro;
    if (case_is_main(c))
        st->main_ok = 1;
    return 1;
}

/* Lower-case, with '-' and ' ' read as '_', for matching algorithm names. */
static void normalise_name(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++)
        out[i] = s[i] == '-' || s[i] == ' ' ? '_' : (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

/* The plan's account must exist, and on CUDA name the algorithm it runs
 * (when there is something to run: m > 0 and n > 0). */
static void check_explain(const tcase *c, const tcall *k, const spx_spmm_plan *plan)
{
    const char *text = spx_spmm_plan_explain(plan);
    double ms = spx_spmm_plan_build_ms(plan);
    if (!(ms >= 0 && isfinite(ms)))
        report_failure(c, k, "spx_spmm_plan_build_ms = %g", ms);
    if (!text || !text[0]) {
        report_failure(c, k, "spx_spmm_plan_explain gave %s", text ? "\"\"" : "NULL");
        return;
    }
    int64_t m = c->op == SPX_OP_NONE ? c->M->rows : c->M->cols;
    if (!g_cuda || m == 0 || c->n == 0)
        return;
    static char norm[8192];
    char name[64];
    normalise_name(text, norm, sizeof norm);
    int lo = k->alg == SPX_SPMM_AUTO ? 1 : k->alg, hi = k->alg == SPX_SPMM_AUTO ? NALG - 1 : k->alg;
    for (int a = lo; a <= hi; a++) {
        normalise_name(spx_spmm_alg_name((spx_spmm_alg)a), name, sizeof name);
        if (name[0] && strstr(norm, name))
            return;
    }
    report_failure(c, k, "spx_spmm_plan_explain does not name %s: \"%.300s\"",
                   k->alg == SPX_SPMM_AUTO ? "any algorithm" : spx_spmm_alg_name(k->alg), text);
}

/* ---- running a case ---------------------------------------------------------- */

/* ||Q||_F for C = alpha * op(A) * B + beta * C0: Q_ij^2 = sum_k (alpha a_ik b_kj)^2
 * + (beta c0_ij)^2, so ||Q||_F^2 = alpha^2 sum_k |op(A)(:,k)|^2 |B(k,:)|^2 + beta^2 |C0|^2. */
static double term_norm(const tcase *c, const double *b, const double *c0, trun run)
{
    const tmat *M = c->M;
    int64_t k = c->op == SPX_OP_NONE ? M->cols : M->rows;
    int64_t m = c->op == SPX_OP_NONE ? M->rows : M->cols;
    const double *asq = c->op == SPX_OP_NONE ? M->sq_col : M->sq_row;
    double q = 0;
    for (int64_t kk = 0; run.alpha != 0 && kk < k; kk++) {
        double bsq = 0;
        for (int64_t j = 0; j < c->n; j++)
            bsq += b[kk * c->n + j] * b[kk * c->n + j];
        q += asq[kk] * bsq;
    }
    q *= run.alpha * run.alpha;
    for (int64_t e = 0; run.beta != 0 && e < m * c->n; e++)
        q += run.beta * run.beta * c0[e] * c0[e];
    return sqrt(q);
}

/* C = alpha * op(A) * B + beta * C by the ref backend in float64 on the exact
 * values of B and C, and ||Q||_F. Returns 0 on failure (reported). */
static int compute_ref(const tcase *c, const tbuf *B, const tbuf *C, trun run, tref *out)
{
    int64_t k = B->rows, m = C->rows, n = C->cols;
    double *b = malloc(sizeof(double) * (size_t)(k * n > 0 ? k * n : 1));
    double *r = malloc(sizeof(double) * (size_t)(m * n > 0 ? m * n : 1));
    out->c = NULL;
    if (!b || !r) {
        TFAIL("%s: out of host memory for the reference", c->M->name);
        free(b);
        free(r);
        return 0;
    }
    tbuf_to_f64(B, b);
    if (run.beta != 0)
        tbuf_to_f64(C, r);
    out->qnorm = term_norm(c, b, r, run);
    if (run.beta == 0)
        for (int64_t i = 0; i < m * n; i++)
            r[i] = NAN; /* the oracle, too, must not read C when beta == 0 */
    spx_dense Bd = spx_dense_make(b, k, n, n > 1 ? n : 1, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense Cd = spx_dense_make(r, m, n, n > 1 ? n : 1, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_status s = spx_spmm(g_ref, c->op, run.alpha, c->M->ref, &Bd, run.beta, &Cd);
    free(b);
    if (s) {
        TFAIL("%s: the ref backend failed: %s: %s", c->M->name, spx_status_name(s),
              spx_last_error(g_ref));
        free(r);
        return 0;
    }
    out->c = r;
    return 1;
}

static spx_status call_once(const tcase *c, tcall *k, const spx_matrix *A,
                            const spx_spmm_plan *plan, tbuf *B, tbuf *C)
{
    trun run = c->runs[k->run];
    spx_dense Bd = tbuf_dense(B, k->mem), Cd = tbuf_dense(C, k->mem);
    spx_spmm_options o = {.alg = k->alg, .precision = k->prec, .panel_cols = c->panel, .k_slabs = c->k_slabs};
    spx_status s;
    if (k->path == PATH_SPMM)
        s = spx_spmm(g_ctx, c->op, run.alpha, A, &Bd, run.beta, &Cd);
    else if (k->path == PATH_EX)
        s = spx_spmm_ex(g_ctx, c->op, run.alpha, A, &Bd, run.beta, &Cd, &o);
    else
        s = spx_spmm_plan_execute(g_ctx, plan, run.alpha, &Bd, run.beta, &Cd);
    snprintf(k->msg, sizeof k->msg, "%s", spx_last_error(g_ctx));
    return s;
}

/* Poison C, call, wait, judge: 1 pass, 0 fail, -1 skipped. */
static int run_one(const tcase *c, tcall *k, const spx_matrix *A, const spx_spmm_plan *plan,
                   tbuf *B, tbuf *C, const tref *ref)
{
    if (!tbuf_reset(C, k->mem))
        return 0;
    spx_status s = call_once(c, k, A, plan, B, C);
    if (!settle(c, k, s, C))
        return 0;
    int r = judge(c, k, s, B, C, ref);
    if (k->mem == SPX_MEM_HOST && !tbuf_unchanged(B))
        memcpy(B->work, B->init, (size_t)B->total * B->esize); /* reported; do not cascade */
    return r;
}

/* One plan for every run of the case: create once, execute with each B,
 * alpha and beta. */
static void run_plan(const tcase *c, tcall *k, const spx_matrix *A, tbuf *B, tbuf *C,
                     const tref *ref)
{
    spx_spmm_options o = {.alg = k->alg, .precision = k->prec, .panel_cols = c->panel, .k_slabs = c->k_slabs};
    spx_spmm_plan *plan = NULL;
    k->run = 0;
    spx_status s = spx_spmm_plan_create(g_ctx, c->op, A, c->n, c->dtype, &o, &plan);
    snprintf(k->msg, sizeof k->msg, "%s", spx_last_error(g_ctx));
    if (s && plan)
        report_failure(c, k, "spx_spmm_plan_create failed (%s) but set *out", spx_status_name(s));
    if (s == SPX_ERR_UNSUPPORTED && k->alg != SPX_SPMM_AUTO) {
        record_skip(k->alg, k->msg);
        return;
    }
    if (s) {
        report_failure(c, k, "spx_spmm_plan_create: %s: %s", spx_status_name(s), k->msg);
        return;
    }
    check_explain(c, k, plan);
    for (int r = 0; r < c->nruns; r++) {
        k->run = r;
        run_one(c, k, A, plan, &B[r], &C[r], &ref[r]);
    }
    spx_spmm_plan_destroy(plan);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Which memories a case runs in: host always, device too on CUDA. */
enum { MEM_HOST_ONLY = 1, MEM_DEVICE_ONLY = 2 };

/* Run a case through every selected algorithm and precision, one-shot
 * (spx_spmm_ex; plain spx_spmm for AUTO/EXACT) and, if asked, through a plan,
 * with host operands and, on CUDA, device operands. */
static void run_case(const tcase *c, int mems)
{
    tmat *M = c->M;
    if (!M->A)
        return; /* its construction failed and was reported */
    double t0 = now_s();
    int64_t m = c->op == SPX_OP_NONE ? M->rows : M->cols;
    int64_t k = c->op == SPX_OP_NONE ? M->cols : M->rows;
    tbuf B[MAX_RUNS], C[MAX_RUNS];
    tref ref[MAX_RUNS];
    memset(B, 0, sizeof B);
    memset(C, 0, sizeof C);
    memset(ref, 0, sizeof ref);
    int ok = 1;
    for (int r = 0; r < c->nruns && ok; r++) {
        ok = tbuf_init(&B[r], k, c->n, c->dtype, c->lb, c->pad_b, c->off_b, SENT_B) &&
             tbuf_init(&C[r], m, c->n, c->dtype, c->lc, c->pad_c, c->off_c, SENT_C);
        if (!ok)
            break;
        if (c->runs[r].alpha != 0 || !c->nan_b_alpha0)
            tbuf_fill_random(&B[r], &g_rng);
        if (c->runs[r].beta != 0)
            tbuf_fill_random(&C[r], &g_rng);
        ok = compute_ref(c, &B[r], &C[r], c->runs[r], &ref[r]);
    }
    unsigned precs = c->precs ? c->precs : default_precs(c->dtype);
    unsigned algs = c->algs ? c->algs : (1u << NALG) - 1;
    for (int mi = 0; ok && mi < 2; mi++) {
        spx_memory mem = mi ? SPX_MEM_DEVICE : SPX_MEM_HOST;
        if ((mem == SPX_MEM_DEVICE && (!g_cuda || mems == MEM_HOST_ONLY)) ||
            (mem == SPX_MEM_HOST && mems == MEM_DEVICE_ONLY))
            continue;
        const spx_matrix *A = tmat_operand(M, mem);
        for (int r = 0; r < c->nruns && A; r++)
            if (!tbuf_reset(&B[r], mem))
                A = NULL;
        if (!A)
            break;
        for (int a = 0; a < NALG; a++)
            for (int p = 0; p < NPREC; p++) {
                if (!(algs >> a & 1) || !(precs >> p & 1))
                    continue;
                if (a == SPX_SPMM_DENSE && (double)m * (double)k > DENSE_TEST_CELLS)
                    continue;
                /* f16 operands cannot hold A's values: overflow is by request */
                if (p == SPX_PRECISION_F16 && M->max_abs > F16_SAFE_MAX)
                    continue;
                tcall kk = {PATH_EX, mem, (spx_spmm_alg)a, (spx_precision)p, 0, ""};
                for (kk.run = 0; kk.run < c->nruns; kk.run++)
                    run_one(c, &kk, A, NULL, &B[kk.run], &C[kk.run], &ref[kk.run]);
                if (a == SPX_SPMM_AUTO && p == SPX_PRECISION_EXACT)
                    for (kk.path = PATH_SPMM, kk.run = 0; kk.run < c->nruns; kk.run++)
                        run_one(c, &kk, A, NULL, &B[kk.run], &C[kk.run], &ref[kk.run]);
                if (c->plan) {
                    kk.path = PATH_PLAN;
                    run_plan(c, &kk, A, B, C, ref);
                }
            }
        for (int r = 0; mem == SPX_MEM_DEVICE && r < c->nruns; r++)
            if (tbuf_fetch(&B[r], mem) && !tbuf_unchanged(&B[r]))
                TFAIL("%s: device B was modified", M->name);
    }
    if (g_verbose)
        printf("  %-44.44s op %s %-4s n=%-4lld B %s C %s runs %d%s  %.2fs\n", M->name,
               c->op == SPX_OP_NONE ? "N" : "T", spx_dtype_name(c->dtype), (long long)c->n,
               layout_name(c->lb), layout_name(c->lc), c->nruns, c->plan ? " +plan" : "",
               now_s() - t0);
    for (int r = 0; r < MAX_RUNS; r++) {
        tbuf_free(&B[r]);
        tbuf_free(&C[r]);
        free(ref[r].c);
    }
}

#endif

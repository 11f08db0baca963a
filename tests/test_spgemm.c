/* SpGEMM over semirings with masks: cpu and ref against a brute-force dense
 * oracle (every built-in semiring, value type, mask kind, complement and op),
 * accumulate and drop_identity, custom semirings, determinism across runs and
 * thread counts, memory budgets, real matrices (triangle counting), bad
 * input and allocation failures. Avos operators and closure: test_avos.c. */
#include "format/matrix.h"
#include "semiring_oracle.h"

static spx_ctx *ctx;
static const spx_backend backends[2] = {SPX_BACKEND_REF, SPX_BACKEND_CPU};

/* ---- the oracle product ---- */

typedef struct {
    spx_semiring_kind kind; /* or T_MAX_MIN */
    spx_dtype type;         /* result type */
    spx_mask_kind mask;
    int complement;
    const dmat *M, *accum;
    int drop;
} oracle_args;

static int mask_allows(const oracle_args *o, int64_t i, int64_t j)
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
static tval operand_value(const oracle_args *o, const dmat *X, int64_t i, int64_t j)
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
static int oracle(const oracle_args *o, const dmat *A, const dmat *B, dmat *C, int64_t *bi,
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

/* ---- running a case on both backends ---- */

typedef struct {
    spx_semiring sr;
    const dmat *A, *B, *M, *accum; /* A, B as op(A), op(B) */
    spx_spgemm_options opts;       /* op_a/op_b say how A, B are stored */
    spx_format fa, fb, fm, fc;
    spx_index_type ia, ib;
    const char *label;
} gemm_case;

static spx_matrix *stored_operand(const dmat *X, int trans, spx_format f, spx_index_type it,
                                  uint64_t *s)
{
    if (!trans)
        return dm_to_spx(ctx, X, f, it, s);
    dmat T = dm_transpose(X);
    spx_matrix *Y = dm_to_spx(ctx, &T, f, it, s);
    dm_free(&T);
    return Y;
}

static void run_case(gemm_case *c, uint64_t *s)
{
    oracle_args o = {c->sr.kind == SPX_SEMIRING_CUSTOM ? T_MAX_MIN : c->sr.kind, SPX_BOOL,
                     c->opts.mask.kind, c->opts.mask.complement, c->M, c->accum,
                     c->opts.drop_identity};
    spx_dtype ta = c->A->dtype, tb = c->B->dtype;
    if (c->sr.kind == SPX_SEMIRING_PLUS_PAIR) {
        ta = ta == SPX_BOOL ? SPX_PATTERN : ta;
        tb = tb == SPX_BOOL ? SPX_PATTERN : tb;
    }
    if (c->sr.kind == SPX_SEMIRING_CUSTOM)
        o.type = c->sr.dtype;
    else if (c->sr.kind != SPX_SEMIRING_OR_AND)
        o.type = ta != SPX_PATTERN ? ta : tb != SPX_PATTERN ? tb : SPX_I64;
    dmat expect;
    int64_t bi = -1, bj = -1;
    int overflow = oracle(&o, c->A, c->B, &expect, &bi, &bj);
    spx_matrix *A = stored_operand(c->A, c->opts.op_a, c->fa, c->ia, s);
    spx_matrix *B = stored_operand(c->B, c->opts.op_b, c->fb, c->ib, s);
    spx_matrix *M = c->M ? dm_to_spx(ctx, c->M, c->fm, SPX_INDEX_I32, s) : NULL;
    spx_matrix *acc = c->accum ? dm_to_spx(ctx, c->accum, c->fc, c->ib, s) : NULL;
    c->opts.mask.M = M;
    c->opts.accum = acc;
    spx_index_type want_it = c->ia == SPX_INDEX_I32 && c->ib == SPX_INDEX_I32 ? SPX_INDEX_I32
                                                                              : SPX_INDEX_I64;
    char where[64];
    snprintf(where, sizeof where, "C(%lld, %lld)", (long long)bi, (long long)bj);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *C = NULL;
        spx_status st = spx_spgemm(ctx, &c->sr, A, B, &c->opts, &C);
        if (overflow) {
            CHECK(st == SPX_ERR_OVERFLOW && strstr(spx_last_error(ctx), where) && !C,
                  "%s on %s: want overflow at %s, got %s: %s", c->label,
                  spx_backend_name(backends[b]), where, spx_status_name(st), spx_last_error(ctx));
            continue;
        }
        CHECK(st == SPX_OK, "%s on %s: %s: %s", c->label, spx_backend_name(backends[b]),
              spx_status_name(st), spx_last_error(ctx));
        dmat got;
        if (st == SPX_OK) {
            spx_matrix_info in;
            spx_matrix_info_get(C, &in);
            CHECK(in.index_type == want_it, "%s: output index type %d", c->label, in.index_type);
            int ok = spx_to_dm(ctx, C, &got);
            CHECK(ok, "%s on %s: result is not a canonical CSR", c->label,
                  spx_backend_name(backends[b]));
            if (ok) {
                CHECK(dm_same(&got, &expect, c->label), "%s on %s differs from the oracle",
                      c->label, spx_backend_name(backends[b]));
                dm_free(&got);
            }
        }
        spx_matrix_destroy(C);
    }
    dm_free(&expect);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_matrix_destroy(M);
    spx_matrix_destroy(acc);
}

/* ---- every semiring x type x mask x complement x op ---- */

typedef struct {
    spx_semiring_kind kind;
    spx_dtype type;
    int dist;
} sr_case;

static const sr_case sr_cases[] = {
    {SPX_SEMIRING_PLUS_TIMES, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_PLUS_TIMES, SPX_F64, VAL_UNIFORM},
    {SPX_SEMIRING_PLUS_TIMES, SPX_I32, VAL_SMALL_INT}, {SPX_SEMIRING_PLUS_TIMES, SPX_I64, VAL_SMALL_INT},
    {SPX_SEMIRING_MIN_PLUS, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_MIN_PLUS, SPX_F64, VAL_UNIFORM},
    {SPX_SEMIRING_MIN_PLUS, SPX_I32, VAL_WIDE_INT}, {SPX_SEMIRING_MIN_PLUS, SPX_I64, VAL_WIDE_INT},
    {SPX_SEMIRING_MAX_PLUS, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_MAX_PLUS, SPX_F64, VAL_UNIFORM},
    {SPX_SEMIRING_MAX_PLUS, SPX_I32, VAL_WIDE_INT}, {SPX_SEMIRING_MAX_PLUS, SPX_I64, VAL_WIDE_INT},
    {SPX_SEMIRING_MAX_TIMES, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_MAX_TIMES, SPX_F64, VAL_UNIFORM},
    {SPX_SEMIRING_MAX_TIMES, SPX_I32, VAL_WIDE_INT}, {SPX_SEMIRING_MAX_TIMES, SPX_I64, VAL_WIDE_INT},
    {SPX_SEMIRING_MIN_TIMES, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_MIN_TIMES, SPX_F64, VAL_UNIFORM},
    {SPX_SEMIRING_MIN_TIMES, SPX_I32, VAL_WIDE_INT}, {SPX_SEMIRING_MIN_TIMES, SPX_I64, VAL_WIDE_INT},
    {SPX_SEMIRING_OR_AND, SPX_BOOL, VAL_BOOL}, {SPX_SEMIRING_OR_AND, SPX_F32, VAL_UNIFORM},
    {SPX_SEMIRING_OR_AND, SPX_I64, VAL_SMALL_INT},
    {SPX_SEMIRING_PLUS_PAIR, SPX_F32, VAL_UNIFORM}, {SPX_SEMIRING_PLUS_PAIR, SPX_I32, VAL_SMALL_INT},
    {SPX_SEMIRING_PLUS_PAIR, SPX_BOOL, VAL_BOOL}, {SPX_SEMIRING_PLUS_PAIR, SPX_PATTERN, VAL_BOOL},
    {SPX_SEMIRING_AVOS, SPX_I32, VAL_AVOS}, {SPX_SEMIRING_AVOS, SPX_I64, VAL_AVOS},
    {SPX_SEMIRING_CUSTOM, SPX_F64, VAL_UNIFORM},
};

/* The custom semiring of the tests: max-min over f64. */
static int cu_max(void *z, const void *x, const void *y, void *u)
{
    (void)u;
    double a = *(const double *)x, b = *(const double *)y;
    *(double *)z = a > b ? a : b;
    return 0;
}
static int cu_min(void *z, const void *x, const void *y, void *u)
{
    (void)u;
    double a = *(const double *)x, b = *(const double *)y;
    *(double *)z = a < b ? a : b;
    return 0;
}
static const double neg_inf = -INFINITY;

static spx_semiring max_min_semiring(void)
{
    spx_semiring s = spx_semiring_builtin(SPX_SEMIRING_CUSTOM);
    s.dtype = SPX_F64;
    s.add = cu_max;
    s.mul = cu_min;
    s.add_identity = &neg_inf;
    s.mul_annihilator = &neg_inf;
    return s;
}

/* The type of an operand of case c: mostly c's own, sometimes pattern; the
 * semirings that take any input get mixed types. */
static spx_dtype operand_type(const sr_case *c, uint64_t *s)
{
    static const spx_dtype any[] = {SPX_F32, SPX_F64, SPX_I32, SPX_I64, SPX_BOOL, SPX_PATTERN};
    if (c->kind == SPX_SEMIRING_OR_AND && t_below(s, 2))
        return any[t_below(s, 6)];
    if (c->kind == SPX_SEMIRING_PLUS_PAIR && (c->type == SPX_BOOL || c->type == SPX_PATTERN))
        return t_below(s, 2) ? SPX_BOOL : SPX_PATTERN;
    return t_below(s, 6) == 0 ? SPX_PATTERN : c->type;
}

static void test_against_oracle(void)
{
    uint64_t s = test_seed;
    static const spx_format formats[] = {SPX_CSR, SPX_CSC, SPX_COO};
    for (size_t ci = 0; ci < sizeof sr_cases / sizeof sr_cases[0]; ci++) {
        const sr_case *c = &sr_cases[ci];
        for (int trial = 0; trial < 8; trial++) {
            /* tiny shapes use the dense accumulator, wide ones the hash tables */
            int wide = trial >= 5;
            int64_t m = trial == 0 ? 0 : trial == 1 ? 1 : t_below(&s, wide ? 30 : 9) + 1;
            int64_t K = trial == 1 ? 1 : t_below(&s, wide ? 40 : 9) + (trial != 2);
            int64_t n = trial == 1 ? 1 : wide ? 100 + t_below(&s, 300) : t_below(&s, 10);
            double da = wide ? 0.05 + 0.1 * t_unit(&s) : t_unit(&s);
            double db = wide ? 0.02 + 0.05 * t_unit(&s) : t_unit(&s);
            dmat A = dm_random(m, K, da, operand_type(c, &s), c->dist, &s);
            dmat B = dm_random(K, n, db, operand_type(c, &s), c->dist, &s);
            dmat M = dm_random(m, n, t_unit(&s), SPX_PATTERN, VAL_BOOL, &s);
            spx_dtype rt = c->kind == SPX_SEMIRING_OR_AND   ? SPX_BOOL
                           : c->kind == SPX_SEMIRING_CUSTOM ? SPX_F64
                           : A.dtype != SPX_PATTERN && A.dtype != SPX_BOOL ? A.dtype
                           : B.dtype != SPX_PATTERN && B.dtype != SPX_BOOL ? B.dtype
                                                                           : SPX_I64;
            dmat acc = dm_random(m, n, 0.3 * t_unit(&s), rt, c->dist, &s);
            for (int mk = SPX_MASK_NONE; mk <= SPX_MASK_STRICT_LOWER; mk++) {
                for (int comp = 0; comp < 2; comp++) {
                    gemm_case g = {0};
                    g.sr = c->kind == SPX_SEMIRING_CUSTOM ? max_min_semiring()
                                                          : spx_semiring_builtin(c->kind);
                    g.A = &A;
                    g.B = &B;
                    g.M = mk == SPX_MASK_MATRIX ? &M : NULL;
                    g.accum = t_below(&s, 3) == 0 ? &acc : NULL;
                    g.opts.mask.kind = (spx_mask_kind)mk;
                    g.opts.mask.complement = comp;
                    g.opts.drop_identity = (int)t_below(&s, 2);
                    g.fa = formats[t_below(&s, 3)];
                    g.fb = formats[t_below(&s, 3)];
                    g.fm = formats[t_below(&s, 3)];
                    g.fc = formats[t_below(&s, 3)];
                    g.ia = t_below(&s, 3) ? SPX_INDEX_I32 : SPX_INDEX_I64;
                    g.ib = t_below(&s, 3) ? SPX_INDEX_I32 : SPX_INDEX_I64;
                    for (int op = 0; op < 4; op++) {
                        char label[160];
                        snprintf(label, sizeof label,
                                 "%s %s*%s->%s %lldx%lldx%lld mask %d%s op %d%s%s fmt %d%d",
                                 spx_semiring_name(c->kind), spx_dtype_name(A.dtype),
                                 spx_dtype_name(B.dtype), spx_dtype_name(rt), (long long)m,
                                 (long long)K, (long long)n, mk, comp ? "c" : "", op,
                                 g.accum ? " accum" : "", g.opts.drop_identity ? " drop" : "",
                                 g.fa, g.fb);
                        g.label = label;
                        g.opts.op_a = (op & 1) ? SPX_OP_TRANSPOSE : SPX_OP_NONE;
                        g.opts.op_b = (op & 2) ? SPX_OP_TRANSPOSE : SPX_OP_NONE;
                        run_case(&g, &s);
                    }
                }
            }
            dm_free(&A);
            dm_free(&B);
            dm_free(&M);
            dm_free(&acc);
        }
    }
}

/* ---- small hand-made cases ---- */

static spx_matrix *csr_from(int64_t rows, int64_t cols, const char *pattern, const double *vals,
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

static void test_drop_and_accumulate(void)
{
    spx_semiring pt = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    /* [1 1] * [1; -1] = 0: a structural entry unless dropped */
    spx_matrix *A = csr_from(1, 2, "xx", (double[]){1, 1}, SPX_F64);
    spx_matrix *B = csr_from(2, 1, "xx", (double[]){1, -1}, SPX_F64);
    spx_matrix *C = NULL;
    spx_spgemm_options o = {0};
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        o.drop_identity = 0;
        CHECK_OK(ctx, spx_spgemm(ctx, &pt, A, B, &o, &C));
        spx_matrix_info in;
        spx_matrix_info_get(C, &in);
        CHECK(in.nnz == 1 && ((double *)C->values)[0] == 0.0, "structural zero kept");
        spx_matrix_destroy(C);
        o.drop_identity = 1;
        CHECK_OK(ctx, spx_spgemm(ctx, &pt, A, B, &o, &C));
        spx_matrix_info_get(C, &in);
        CHECK(in.nnz == 0, "zero dropped, nnz %lld", (long long)in.nnz);
        spx_matrix_destroy(C);
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);

    /* accumulate under the strict-upper mask: accum's (1,0) lies outside the
     * mask and stays; (0,1) is summed; (1,1) is masked out of the product */
    A = csr_from(2, 2, "xxxx", (double[]){1, 2, 3, 4}, SPX_F64);
    spx_matrix *acc = csr_from(2, 2, "xxx.", (double[]){10, 20, 30}, SPX_F64);
    o = (spx_spgemm_options){0};
    o.mask.kind = SPX_MASK_STRICT_UPPER;
    o.accum = acc;
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        CHECK_OK(ctx, spx_spgemm(ctx, &pt, A, A, &o, &C));
        dmat got;
        if (C && spx_to_dm(ctx, C, &got)) {
            /* A*A = [7 10; 15 22] */
            CHECK(DIN(&got, 0, 0) && DM(&got, 0, 0).f == 10, "accum outside mask kept");
            CHECK(DIN(&got, 0, 1) && DM(&got, 0, 1).f == 30, "(0,1) = 20 + 10");
            CHECK(DIN(&got, 1, 0) && DM(&got, 1, 0).f == 30, "(1,0) kept");
            CHECK(!DIN(&got, 1, 1), "(1,1) masked out and not in accum");
            dm_free(&got);
        }
        spx_matrix_destroy(C);
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(acc);
}

/* A custom plus-times over i64 that reports overflow, against the built-in. */
static int cu_plus_checked(void *z, const void *x, const void *y, void *u)
{
    (void)u;
    return __builtin_add_overflow(*(const int64_t *)x, *(const int64_t *)y, (int64_t *)z);
}
static int cu_times_checked(void *z, const void *x, const void *y, void *u)
{
    (*(int *)u)++;
    return __builtin_mul_overflow(*(const int64_t *)x, *(const int64_t *)y, (int64_t *)z);
}

static void test_overflow(void)
{
    static const int64_t zero = 0;
    int calls = 0;
    spx_semiring cs = spx_semiring_builtin(SPX_SEMIRING_CUSTOM);
    cs.dtype = SPX_I64;
    cs.add = cu_plus_checked;
    cs.mul = cu_times_checked;
    cs.add_identity = &zero;
    cs.mul_annihilator = &zero;
    cs.user = &calls;
    spx_semiring pt = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    double big = 4611686018427387904.0; /* 2^62 */
    spx_matrix *A = csr_from(2, 3, "xx.x.x", (double[]){3, 0, big, 1}, SPX_I64);
    spx_matrix *B = csr_from(3, 2, "xxx.xx", (double[]){2, 1, 5, 2, 7}, SPX_I64);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *C1 = NULL, *C2 = (spx_matrix *)&calls;
        /* row 0 is fine; row 1: 2^62 * 2 overflows at C(1, 0) */
        CHECK_FAILS(ctx, spx_spgemm(ctx, &pt, A, B, NULL, &C1), SPX_ERR_OVERFLOW, "C(1, 0)");
        CHECK_FAILS(ctx, spx_spgemm(ctx, &cs, A, B, NULL, &C2), SPX_ERR_OVERFLOW,
                    "custom semiring operator");
        CHECK(strstr(spx_last_error(ctx), "C(1, 0)") && C1 == NULL && C2 == (spx_matrix *)&calls,
              "custom overflow at C(1, 0), C untouched: %s", spx_last_error(ctx));
    }
    spx_matrix_destroy(A);
    /* without the overflow both agree; the annihilator (0) in A saves mul calls */
    A = csr_from(2, 3, "xx.x.x", (double[]){3, 0, 4, 1}, SPX_I64);
    spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
    spx_matrix *C1 = NULL, *C2 = NULL;
    CHECK_OK(ctx, spx_spgemm(ctx, &pt, A, B, NULL, &C1));
    calls = 0;
    CHECK_OK(ctx, spx_spgemm(ctx, &cs, A, B, NULL, &C2));
    CHECK(C1 && C2 && C1->nnz == C2->nnz &&
              memcmp(C1->values, C2->values, (size_t)C1->nnz * 8) == 0,
          "custom checked plus-times equals the built-in");
    CHECK(calls == 6, "mul called %d times, want 6 (A(0,1) = 0 annihilates)", calls);
    spx_matrix_destroy(C1);
    spx_matrix_destroy(C2);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);

    /* i32: a sum that overflows */
    A = csr_from(1, 2, "xx", (double[]){2147483647.0, 1}, SPX_I32);
    B = csr_from(2, 1, "xx", (double[]){1, 1}, SPX_I32);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *C = NULL;
        CHECK_FAILS(ctx, spx_spgemm(ctx, &pt, A, B, NULL, &C), SPX_ERR_OVERFLOW,
                    "plus_times over i32 overflows computing C(0, 0)");
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
}

/* ---- larger products: threads, determinism, memory budgets ---- */

/* rows x cols with about per_row random columns per row; every 61st row
 * holds about half the columns (dense accumulator rows among hashed ones). */
static spx_matrix *big_random(int64_t rows, int64_t cols, int64_t per_row, spx_dtype t, int dist,
                              spx_index_type it, uint64_t *s)
{
    int64_t cap = rows * per_row + (rows / 61 + 1) * (cols / 2 + 1);
    int64_t *off = calloc((size_t)rows + 1, 8), *col = malloc((size_t)cap * 8);
    uint8_t *seen = calloc((size_t)cols + 1, 1);
    int64_t nnz = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t want = i % 61 == 0 ? cols / 2 : per_row, b = nnz;
        for (int64_t q = 0; q < want && cols > 0; q++) {
            int64_t j = t_below(s, cols);
            if (!seen[j]) {
                seen[j] = 1;
                col[nnz++] = j;
            }
        }
        for (int64_t q = b; q < nnz; q++) /* sorted by a pass over the marks */
            seen[col[q]] = 0;
        for (int64_t q = b + 1; q < nnz; q++)
            for (int64_t r = q; r > b && col[r - 1] > col[r]; r--) {
                int64_t x = col[r];
                col[r] = col[r - 1];
                col[r - 1] = x;
            }
        off[i + 1] = nnz;
    }
    spx_matrix *X = NULL;
    spx_matrix_create_csr(ctx, rows, cols, nnz, it, t, &X);
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(X, &ar);
    for (int64_t i = 0; i <= rows; i++)
        t_idx_put(ar.offsets, it, i, off[i]);
    for (int64_t q = 0; q < nnz; q++) {
        t_idx_put(ar.indices, it, q, col[q]);
        tval v = t_random_value(s, dist);
        v.f = t_round(t, v.f);
        t_store(ar.values, t, q, v);
    }
    free(off);
    free(col);
    free(seen);
    return X;
}

static int same_bytes(const spx_matrix *X, const spx_matrix *Y)
{
    if (!X || !Y || X->rows != Y->rows || X->cols != Y->cols || X->nnz != Y->nnz ||
        X->itype != Y->itype || X->dtype != Y->dtype)
        return 0;
    size_t isz = X->itype == SPX_INDEX_I64 ? 8 : 4, vsz = spx_dtype_size(X->dtype);
    return memcmp(X->offsets, Y->offsets, (size_t)(X->rows + 1) * isz) == 0 &&
           memcmp(X->indices, Y->indices, (size_t)X->nnz * isz) == 0 &&
           memcmp(X->values, Y->values, (size_t)X->nnz * vsz) == 0;
}

static void test_threads_and_determinism(void)
{
    uint64_t s = test_seed ^ 0x5eed;
    struct {
        spx_semiring_kind kind;
        spx_dtype t;
        int dist;
        spx_mask_kind mask;
    } cases[] = {
        {SPX_SEMIRING_PLUS_TIMES, SPX_F32, VAL_UNIFORM, SPX_MASK_NONE},
        {SPX_SEMIRING_MIN_PLUS, SPX_F64, VAL_UNIFORM, SPX_MASK_MATRIX},
        {SPX_SEMIRING_AVOS, SPX_I64, VAL_AVOS, SPX_MASK_UPPER},
        {SPX_SEMIRING_PLUS_PAIR, SPX_I32, VAL_SMALL_INT, SPX_MASK_STRICT_LOWER},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spx_index_type it = c % 2 ? SPX_INDEX_I64 : SPX_INDEX_I32;
        spx_matrix *A = big_random(2500, 2000, 12, cases[c].t, cases[c].dist, it, &s);
        spx_matrix *B = big_random(2000, 3000, 10, cases[c].t, cases[c].dist, it, &s);
        spx_matrix *M = big_random(2500, 3000, 40, SPX_PATTERN, VAL_BOOL, SPX_INDEX_I32, &s);
        spx_semiring sr = spx_semiring_builtin(cases[c].kind);
        spx_spgemm_options o = {0};
        o.mask.kind = cases[c].mask;
        o.mask.M = M;
        o.mask.complement = c == 1 && (s & 1);
        o.drop_identity = c == 2;
        spx_matrix *R = NULL, *C = NULL;
        spx_ctx_set_backend(ctx, SPX_BACKEND_REF);
        CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, B, &o, &R));
        spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
        for (int threads = 1; threads <= 4; threads++) {
            spx_ctx_set_num_threads(ctx, threads);
            CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, B, &o, &C));
            CHECK(same_bytes(C, R), "%s: cpu with %d threads differs from ref",
                  spx_semiring_name(cases[c].kind), threads);
            spx_matrix_destroy(C);
            C = NULL;
        }
        if (c == 0) { /* 20 runs, identical bytes */
            spx_ctx_set_num_threads(ctx, 2);
            for (int run = 0; run < 20; run++) {
                CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, B, &o, &C));
                CHECK(same_bytes(C, R), "run %d differs", run);
                spx_matrix_destroy(C);
                C = NULL;
            }
        }
        spx_ctx_set_num_threads(ctx, 0);
        spx_matrix_destroy(R);
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
        spx_matrix_destroy(M);
    }
}

/* The minimum a budget error names ("below the N bytes"). */
static int64_t named_minimum(void)
{
    const char *p = strstr(spx_last_error(ctx), "below the ");
    return p ? strtoll(p + 10, NULL, 10) : -1;
}

static void test_memory_budget(void)
{
    uint64_t s = test_seed ^ 0xb0d9e7;
    spx_matrix *A = big_random(3000, 3000, 8, SPX_F64, VAL_UNIFORM, SPX_INDEX_I32, &s);
    spx_semiring sr = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    spx_spgemm_options o = {0};
    o.op_b = SPX_OP_TRANSPOSE; /* a converted operand counts too */
    o.drop_identity = 1;
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_ctx_set_num_threads(ctx, 3);
        spx_matrix *R = NULL, *C = (spx_matrix *)&o;
        int64_t full = 0, min, ws;
        o.memory_budget = 0;
        CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, A, &o, &R));
        CHECK_OK(ctx, spx_spgemm_workspace_size(ctx, &sr, A, A, &o, &full));
        o.memory_budget = 1;
        CHECK_FAILS(ctx, spx_spgemm(ctx, &sr, A, A, &o, &C), SPX_ERR_OUT_OF_MEMORY,
                    "memory_budget of 1 bytes");
        CHECK(C == (spx_matrix *)&o, "C untouched");
        min = named_minimum();
        CHECK(min > 0 && min <= full, "%s: minimum %lld, full %lld", spx_backend_name(backends[b]),
              (long long)min, (long long)full);
        o.memory_budget = min - 1;
        CHECK_FAILS(ctx, spx_spgemm_workspace_size(ctx, &sr, A, A, &o, &ws), SPX_ERR_OUT_OF_MEMORY,
                    "memory_budget");
        int64_t budgets[] = {min, min + 100, min + (full - min) / 3, full - 1, full};
        for (int k = 0; k < 5 && min > 0; k++) {
            if (budgets[k] < min) /* ref needs its full accumulator */
                continue;
            o.memory_budget = budgets[k];
            ws = -1;
            CHECK_OK(ctx, spx_spgemm_workspace_size(ctx, &sr, A, A, &o, &ws));
            CHECK(ws > 0 && ws <= budgets[k], "%s: workspace %lld over budget %lld",
                  spx_backend_name(backends[b]), (long long)ws, (long long)budgets[k]);
            CHECK(k != 4 || ws == full, "a budget of exactly the full workspace changes nothing");
            C = NULL;
            CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, A, &o, &C));
            CHECK(same_bytes(C, R), "%s: result under budget %lld differs",
                  spx_backend_name(backends[b]), (long long)budgets[k]);
            spx_matrix_destroy(C);
        }
        spx_matrix_destroy(R);
    }
    spx_ctx_set_num_threads(ctx, 0);
    spx_matrix_destroy(A);
}

/* ---- real matrices ---- */

/* A tiny Matrix Market reader (coordinate; symmetric files expanded), enough
 * for the test matrices, into a dense matrix (keep_diag: keep i == j). */
static int read_mtx(const char *path, spx_dtype t, int keep_diag, dmat *D)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512] = "";
    long long rows = 0, cols = 0, nnz = 0;
    int symmetric = fgets(line, sizeof line, f) && strstr(line, "symmetric");
    int pattern = strstr(line, "pattern") != NULL;
    while (fgets(line, sizeof line, f) && line[0] == '%') {}
    sscanf(line, "%lld %lld %lld", &rows, &cols, &nnz);
    *D = dm_new(rows, cols, t);
    for (long long e = 0; e < nnz && fgets(line, sizeof line, f); e++) {
        long long i, j;
        double v = 1;
        int got = sscanf(line, "%lld %lld %lf", &i, &j, &v);
        if (got < 2 || (!pattern && got < 3) || (i == j && !keep_diag))
            continue;
        tval x = {(int64_t)v, t_round(t, v)};
        for (int side = 0; side < 1 + symmetric; side++) {
            int64_t r = (side ? j : i) - 1, c = (side ? i : j) - 1;
            DIN(D, r, c) = 1;
            if (D->v)
                DM(D, r, c) = x;
        }
    }
    fclose(f);
    return 1;
}

/* Triangle counting with plus_pair on a symmetric graph A (no diagonal):
 * C<strict lower> = A A counts the common neighbours of i > j, and
 * C<L> = L L^T (L the strict lower part) counts each triangle once. */
static void triangles(const dmat *G, const char *name)
{
    int64_t n = G->rows;
    spx_matrix *A = dm_to_spx(ctx, G, SPX_CSR, SPX_INDEX_I32, NULL);
    dmat Ld = dm_new(n, n, SPX_PATTERN);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++)
            DIN(&Ld, i, j) = DIN(G, i, j);
    spx_matrix *L = dm_to_spx(ctx, &Ld, SPX_CSR, SPX_INDEX_I32, NULL);
    dm_free(&Ld);
    spx_semiring pp = spx_semiring_builtin(SPX_SEMIRING_PLUS_PAIR);
    spx_spgemm_options o = {0}, ot = {0};
    o.mask.kind = SPX_MASK_STRICT_LOWER;
    ot.op_b = SPX_OP_TRANSPOSE;
    ot.mask.kind = SPX_MASK_MATRIX;
    ot.mask.M = L;
    spx_matrix *C = NULL, *T = NULL;
    CHECK_OK(ctx, spx_spgemm(ctx, &pp, A, A, &o, &C));
    CHECK_OK(ctx, spx_spgemm(ctx, &pp, L, L, &ot, &T));
    const int32_t *off = A->offsets, *col = A->indices;
    int64_t *cnt = calloc((size_t)n + 1, 8), tri = 0, entries = 0, bad = 0;
    for (int64_t i = 0; C && i < n && !bad; i++) {
        for (int32_t p = off[i]; p < off[i + 1]; p++) /* paths i - k - j, j < i */
            for (int32_t q = off[col[p]]; q < off[col[p] + 1]; q++)
                cnt[col[q]] += col[q] < i;
        for (int32_t p = off[i]; p < off[i + 1]; p++) /* triangles i > j > k */
            for (int32_t q = off[col[p]]; col[p] < i && q < off[col[p] + 1]; q++)
                tri += col[q] < col[p] && DIN(G, i, col[q]);
        const int32_t *co = C->offsets, *ci = C->indices;
        const int64_t *cv = C->values;
        for (int64_t j = 0; j < i; j++)
            entries += cnt[j] > 0;
        for (int32_t p = co[i]; p < co[i + 1] && !bad; p++)
            if (cv[p] != cnt[ci[p]] || cv[p] == 0) {
                CHECK(0, "%s: C(%lld, %d) = %lld, brute force %lld", name, (long long)i, ci[p],
                      (long long)cv[p], (long long)cnt[ci[p]]);
                bad = 1;
            }
        memset(cnt, 0, (size_t)n * 8);
    }
    CHECK(C && C->nnz == entries, "%s: %lld entries, brute force %lld", name,
          C ? (long long)C->nnz : -1LL, (long long)entries);
    int64_t sum = 0;
    for (int64_t p = 0; T && p < T->nnz; p++)
        sum += ((const int64_t *)T->values)[p];
    CHECK(T && sum == tri && tri > 0, "%s: %lld triangles, brute force %lld", name,
          (long long)sum, (long long)tri);
    free(cnt);
    spx_matrix_destroy(A);
    spx_matrix_destroy(L);
    spx_matrix_destroy(C);
    spx_matrix_destroy(T);
}

static void test_real_matrices(void)
{
    const char *dir = test_shared_data_dir();
    if (!dir) {
        printf("test_spgemm: shared data folder not found, real matrices skipped\n");
        return;
    }
    char path[4200];
    dmat D;
    uint64_t s = test_seed;
    snprintf(path, sizeof path, "%s/suitesparse/1138_bus.mtx", dir);
    CHECK(read_mtx(path, SPX_F64, 1, &D), "cannot read %s", path);
    if (D.v) { /* A*A under the upper mask against the oracle */
        gemm_case g = {0};
        g.sr = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
        g.A = g.B = &D;
        g.opts.mask.kind = SPX_MASK_UPPER;
        g.ia = g.ib = SPX_INDEX_I32;
        g.label = "1138_bus";
        run_case(&g, &s);
        dm_free(&D);
    }
    const char *graphs[] = {"suitesparse/1138_bus.mtx", "graphs/citeseer.mtx"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, graphs[k]);
        D = (dmat){0};
        CHECK(read_mtx(path, SPX_PATTERN, 0, &D), "cannot read %s", path);
        for (int b = 0; D.v && b < 2; b++) {
            spx_ctx_set_backend(ctx, backends[b]);
            triangles(&D, graphs[k]);
        }
        dm_free(&D);
    }
}

/* ---- bad input: a clear error, *C untouched ---- */

static void test_bad_input(void)
{
    spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
    spx_semiring pt = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    spx_semiring avos = spx_semiring_builtin(SPX_SEMIRING_AVOS);
    spx_matrix *A23 = csr_from(2, 3, "x.x.x.", (double[]){1, 2, 3}, SPX_F64);
    spx_matrix *A33 = csr_from(3, 3, "x...x...x", (double[]){1, 2, 3}, SPX_F64);
    spx_matrix *I32 = csr_from(2, 2, "xx.x", (double[]){2, 3, 5}, SPX_I32);
    spx_matrix *bad = csr_from(2, 2, "xx.x", (double[]){2, -2, 5}, SPX_I64);
    spx_matrix *ok64 = csr_from(2, 2, "xx.x", (double[]){2, -1, 5}, SPX_I64);
    spx_matrix *F32 = csr_from(2, 2, "x..x", (double[]){1, 1}, SPX_F32);
    spx_matrix *sentinel = (spx_matrix *)&pt, *C = sentinel;
    spx_spgemm_options o = {0};
#define BAD(call, status, needle)                                                                \
    do {                                                                                         \
        C = sentinel;                                                                            \
        CHECK_FAILS(ctx, call, status, needle);                                                  \
        CHECK(C == sentinel, "C touched by %s", #call);                                          \
    } while (0)
    BAD(spx_spgemm(ctx, &pt, NULL, A33, NULL, &C), SPX_ERR_INVALID_ARGUMENT, "matrix A is NULL");
    BAD(spx_spgemm(ctx, NULL, A33, A33, NULL, &C), SPX_ERR_INVALID_ARGUMENT, "semiring is NULL");
    CHECK_FAILS(ctx, spx_spgemm(ctx, &pt, A33, A33, NULL, NULL), SPX_ERR_INVALID_ARGUMENT,
                "output C is NULL");
    spx_semiring weird = spx_semiring_builtin((spx_semiring_kind)42);
    BAD(spx_spgemm(ctx, &weird, A33, A33, NULL, &C), SPX_ERR_INVALID_ARGUMENT, "kind 42");
    BAD(spx_spgemm(ctx, &pt, A23, A23, NULL, &C), SPX_ERR_SHAPE,
        "op(A) is 2 x 3 but op(B) is 2 x 3");
    o.op_b = SPX_OP_TRANSPOSE; /* 2x3 * 3x2 is fine, the 3x3 mask is not */
    o.mask.kind = SPX_MASK_MATRIX;
    o.mask.M = A33;
    BAD(spx_spgemm(ctx, &pt, A23, A23, &o, &C), SPX_ERR_SHAPE, "mask M is 3 x 3 but C is 2 x 2");
    o.mask.M = NULL;
    BAD(spx_spgemm(ctx, &pt, A23, A23, &o, &C), SPX_ERR_INVALID_ARGUMENT, "needs mask.M");
    o.mask.kind = (spx_mask_kind)9;
    BAD(spx_spgemm(ctx, &pt, A23, A23, &o, &C), SPX_ERR_INVALID_ARGUMENT, "mask kind 9");
    o.mask.kind = SPX_MASK_NONE;
    o.accum = A33;
    BAD(spx_spgemm(ctx, &pt, A23, A23, &o, &C), SPX_ERR_SHAPE, "accum is 3 x 3 but C is 2 x 2");
    o.accum = F32;
    BAD(spx_spgemm(ctx, &pt, I32, I32, &o, &C), SPX_ERR_INVALID_ARGUMENT,
        "accum holds f32 values but plus_times gives i32");
    o = (spx_spgemm_options){0};
    o.op_a = (spx_op)5;
    BAD(spx_spgemm(ctx, &pt, A33, A33, &o, &C), SPX_ERR_INVALID_ARGUMENT, "op_a = 5");
    o.op_a = SPX_OP_NONE;
    o.memory_budget = -5;
    BAD(spx_spgemm(ctx, &pt, A33, A33, &o, &C), SPX_ERR_INVALID_ARGUMENT, "negative memory_budget");
    o.memory_budget = 0;
    o.op_b = SPX_OP_TRANSPOSE;
    BAD(spx_spgemm(ctx, &avos, ok64, bad, &o, &C), SPX_ERR_INVALID_ARGUMENT,
        "matrix B: entry (0, 1) holds -2, not an avos value");
    BAD(spx_spgemm(ctx, &avos, bad, ok64, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "matrix A: entry (0, 1) holds -2");
    BAD(spx_spgemm(ctx, &avos, A33, A33, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "semiring avos is not defined over f64 values; it takes i32 or i64");
    spx_matrix *B8 = csr_from(2, 2, "x..x", (double[]){1, 1}, SPX_BOOL);
    BAD(spx_spgemm(ctx, &pt, B8, B8, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "plus_times is not defined over bool");
    BAD(spx_spgemm(ctx, &pt, F32, I32, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "matrix A holds f32 values and B holds i32; they must share a value type");
    /* f16, bf16, complex: unsupported, named */
    static const spx_dtype unsupported[] = {SPX_F16, SPX_BF16, SPX_C64, SPX_C128};
    for (int u = 0; u < 4; u++) {
        spx_matrix *H = NULL;
        CHECK_OK(ctx, spx_matrix_create_csr(ctx, 2, 2, 0, SPX_INDEX_I32, unsupported[u], &H));
        spx_matrix_arrays ar;
        spx_matrix_arrays_get(H, &ar);
        memset(ar.offsets, 0, 3 * sizeof(int32_t));
        char needle[64];
        snprintf(needle, sizeof needle, "does not support %s values (matrix B)",
                 spx_dtype_name(unsupported[u]));
        spx_semiring oa = spx_semiring_builtin(SPX_SEMIRING_OR_AND);
        BAD(spx_spgemm(ctx, &oa, F32, H, NULL, &C), SPX_ERR_UNSUPPORTED, needle);
        spx_matrix_destroy(H);
    }
    spx_semiring cs = max_min_semiring();
    BAD(spx_spgemm(ctx, &cs, F32, F32, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "the custom semiring is over f64 but matrix A holds f32 values");
    cs.add = NULL;
    BAD(spx_spgemm(ctx, &cs, A33, A33, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
        "needs add, mul and add_identity");
    /* an invalid matrix and COO duplicates with values */
    int32_t off[3] = {0, 2, 2}, idx[2] = {1, 0};
    double vals[2] = {1, 2};
    spx_matrix *W = NULL, *D = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_csr(ctx, 2, 2, 2, off, idx, vals, SPX_INDEX_I32, SPX_F64,
                                      SPX_MEM_HOST, &W));
    BAD(spx_spgemm(ctx, &pt, W, A33, NULL, &C), SPX_ERR_INVALID_MATRIX, "not sorted");
    int32_t ri[2] = {1, 1}, ci[2] = {0, 0};
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, 2, 2, 2, ri, ci, vals, SPX_INDEX_I32, SPX_F64,
                                      SPX_MEM_HOST, &D));
    BAD(spx_spgemm(ctx, &pt, D, D, NULL, &C), SPX_ERR_INVALID_MATRIX,
        "matrix A: duplicate entry (1, 0)");
    spx_matrix_destroy(W);
    spx_matrix_destroy(D);
#undef BAD
    spx_matrix_destroy(A23);
    spx_matrix_destroy(A33);
    spx_matrix_destroy(I32);
    spx_matrix_destroy(bad);
    spx_matrix_destroy(ok64);
    spx_matrix_destroy(F32);
    spx_matrix_destroy(B8);
}

/* ---- allocation failures: each one a clean SPX_ERR_OUT_OF_MEMORY ---- */

static void test_allocation_failures(void)
{
    uint64_t s = test_seed ^ 0xfa11;
    dmat Ad = dm_random(40, 30, 0.2, SPX_F32, VAL_UNIFORM, &s);
    dmat Bd = dm_random(30, 50, 0.2, SPX_F32, VAL_UNIFORM, &s);
    dmat Md = dm_random(40, 50, 0.5, SPX_PATTERN, VAL_BOOL, &s);
    dmat Cd = dm_random(40, 50, 0.1, SPX_BOOL, VAL_BOOL, &s);
    dmat At = dm_transpose(&Ad);
    spx_matrix *A = dm_to_spx(ctx, &At, SPX_COO, SPX_INDEX_I32, &s); /* op transpose */
    spx_matrix *B = dm_to_spx(ctx, &Bd, SPX_CSC, SPX_INDEX_I64, &s); /* widening */
    spx_matrix *M = dm_to_spx(ctx, &Md, SPX_COO, SPX_INDEX_I32, &s);
    spx_matrix *acc = dm_to_spx(ctx, &Cd, SPX_CSC, SPX_INDEX_I32, &s);
    spx_semiring sr[2] = {spx_semiring_builtin(SPX_SEMIRING_OR_AND),
                          spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES)};
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        for (int k = 0; k < 2; k++) {
            spx_spgemm_options o = {0};
            o.op_a = SPX_OP_TRANSPOSE;
            o.mask.kind = SPX_MASK_MATRIX;
            o.mask.M = M;
            o.accum = k == 0 ? acc : NULL;
            o.drop_identity = 1;
            int failures = 0;
            spx_status st = SPX_ERR_OUT_OF_MEMORY;
            for (long n = 1; n < 200 && st != SPX_OK; n++) {
                long live = spx__debug_live_allocations();
                spx_matrix *C = NULL;
                spx__debug_fail_alloc_after(n);
                st = spx_spgemm(ctx, &sr[k], A, B, &o, &C);
                spx__debug_fail_alloc_after(0);
                CHECK(st == SPX_OK || st == SPX_ERR_OUT_OF_MEMORY, "allocation %ld: %s: %s", n,
                      spx_status_name(st), spx_last_error(ctx));
                failures += st == SPX_ERR_OUT_OF_MEMORY;
                CHECK((st == SPX_OK) == (C != NULL), "C set only on success");
                spx_matrix_destroy(C);
                CHECK(spx__debug_live_allocations() == live, "allocation %ld leaks %ld", n,
                      spx__debug_live_allocations() - live);
            }
            CHECK(st == SPX_OK && failures >= 4, "%s: %d injected failures, last %s",
                  spx_backend_name(backends[b]), failures, spx_status_name(st));
        }
    }
    dm_free(&Ad);
    dm_free(&Bd);
    dm_free(&Md);
    dm_free(&Cd);
    dm_free(&At);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_matrix_destroy(M);
    spx_matrix_destroy(acc);
}

static void test_names(void)
{
    for (int k = SPX_SEMIRING_PLUS_TIMES; k <= SPX_SEMIRING_CUSTOM; k++) {
        spx_semiring_kind back;
        CHECK(spx_semiring_from_name(spx_semiring_name((spx_semiring_kind)k), &back) == SPX_OK &&
                  (int)back == k,
              "name round trip %d", k);
    }
    spx_semiring_kind k;
    CHECK(spx_semiring_from_name("MIN_PLUS", &k) == SPX_OK && k == SPX_SEMIRING_MIN_PLUS, "case");
    CHECK(spx_semiring_from_name("plus", &k) == SPX_ERR_INVALID_ARGUMENT, "unknown name");
    CHECK(strcmp(spx_semiring_name((spx_semiring_kind)77), "invalid") == 0, "invalid kind");
}

int main(void)
{
    test_init();
    if (spx_ctx_create(&ctx) != SPX_OK)
        return 1;
    test_names();
    test_against_oracle();
    test_drop_and_accumulate();
    test_overflow();
    test_threads_and_determinism();
    test_memory_budget();
    test_real_matrices();
    test_bad_input();
    test_allocation_failures();
    spx_ctx_destroy(ctx);
    return test_finish("test_spgemm");
}

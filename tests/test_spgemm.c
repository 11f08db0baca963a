/* SpGEMM over semirings with masks: cpu and ref against a brute-force dense
 * oracle (every built-in semiring, value type, mask kind, complement and op,
 * on dense and hashed accumulators), accumulate and drop_identity, overflow,
 * custom semirings, real matrices (triangle counting). Threads, determinism,
 * memory budgets, bad input and allocation failures: test_spgemm_limits.c.
 * Avos operators and closure: test_avos.c. */
#include "format/matrix.h"
#include "semiring_oracle.h"

static spx_ctx *ctx;
static const spx_backend backends[2] = {SPX_BACKEND_REF, SPX_BACKEND_CPU};

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
            double da = trial == 3 ? 0 : wide ? 0.05 + 0.1 * t_unit(&s) : t_unit(&s); /* 3: nnz 0 */
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

static void test_drop_and_accumulate(void)
{
    spx_semiring pt = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    /* [1 1] * [1; -1] = 0: a structural entry unless dropped */
    spx_matrix *A = csr_from(ctx, 1, 2, "xx", (double[]){1, 1}, SPX_F64);
    spx_matrix *B = csr_from(ctx, 2, 1, "xx", (double[]){1, -1}, SPX_F64);
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
    A = csr_from(ctx, 2, 2, "xxxx", (double[]){1, 2, 3, 4}, SPX_F64);
    spx_matrix *acc = csr_from(ctx, 2, 2, "xxx.", (double[]){10, 20, 30}, SPX_F64);
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
    spx_matrix *A = csr_from(ctx, 2, 3, "xx.x.x", (double[]){3, 0, big, 1}, SPX_I64);
    spx_matrix *B = csr_from(ctx, 3, 2, "xxx.xx", (double[]){2, 1, 5, 2, 7}, SPX_I64);
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
    A = csr_from(ctx, 2, 3, "xx.x.x", (double[]){3, 0, 4, 1}, SPX_I64);
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
    A = csr_from(ctx, 1, 2, "xx", (double[]){2147483647.0, 1}, SPX_I32);
    B = csr_from(ctx, 2, 1, "xx", (double[]){1, 1}, SPX_I32);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *C = NULL;
        CHECK_FAILS(ctx, spx_spgemm(ctx, &pt, A, B, NULL, &C), SPX_ERR_OVERFLOW,
                    "plus_times over i32 overflows computing C(0, 0)");
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
}

/* A custom plus-times over c128: the generic 16-byte value path. */
static int cx_add(void *z, const void *x, const void *y, void *u)
{
    const double *a = x, *b = y;
    double *c = z;
    (void)u;
    c[0] = a[0] + b[0];
    c[1] = a[1] + b[1];
    return 0;
}
static int cx_mul(void *z, const void *x, const void *y, void *u)
{
    const double *a = x, *b = y;
    double *c = z;
    (void)u;
    c[0] = a[0] * b[0] - a[1] * b[1];
    c[1] = a[0] * b[1] + a[1] * b[0];
    return 0;
}

static spx_matrix *complex_csr(int64_t rows, int64_t cols, const double *vals, spx_dtype t)
{
    /* dense storage, every entry present, vals re/im pairs row-major */
    spx_matrix *X = NULL;
    spx_matrix_create_csr(ctx, rows, cols, rows * cols, SPX_INDEX_I32, t, &X);
    for (int64_t i = 0; i <= rows; i++)
        ((int32_t *)X->offsets)[i] = (int32_t)(i * cols);
    for (int64_t p = 0; p < rows * cols; p++)
        ((int32_t *)X->indices)[p] = (int32_t)(p % cols);
    if (t == SPX_C128)
        memcpy(X->values, vals, (size_t)(rows * cols) * 16);
    return X;
}

static void test_custom_complex(void)
{
    static const double zero[2] = {0, 0};
    spx_semiring cs = spx_semiring_builtin(SPX_SEMIRING_CUSTOM);
    cs.dtype = SPX_C128;
    cs.add = cx_add;
    cs.mul = cx_mul;
    cs.add_identity = zero;
    spx_matrix *A = complex_csr(1, 2, (double[]){1, 1, 2, 0}, SPX_C128);
    spx_matrix *B = complex_csr(2, 1, (double[]){2, -1, 0, 1}, SPX_C128);
    spx_matrix *P = complex_csr(2, 1, NULL, SPX_PATTERN);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *C = NULL;
        /* (1+i)(2-i) + 2i = 3 + 3i; with a pattern B: (1+i) + 2 = 3 + i */
        CHECK_OK(ctx, spx_spgemm(ctx, &cs, A, B, NULL, &C));
        CHECK(C && C->nnz == 1 && ((double *)C->values)[0] == 3 && ((double *)C->values)[1] == 3,
              "%s: complex custom product", spx_backend_name(backends[b]));
        spx_matrix_destroy(C);
        C = NULL;
        CHECK_OK(ctx, spx_spgemm(ctx, &cs, A, P, NULL, &C));
        CHECK(C && C->nnz == 1 && ((double *)C->values)[0] == 3 && ((double *)C->values)[1] == 1,
              "%s: pattern operand is 1 + 0i", spx_backend_name(backends[b]));
        spx_matrix_destroy(C);
    }
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_matrix_destroy(P);
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
    test_custom_complex();
    test_real_matrices();
    spx_ctx_destroy(ctx);
    return test_finish("test_spgemm");
}

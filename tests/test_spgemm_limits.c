/* SpGEMM limits: larger products on several threads (bit-identical to ref
 * and across 20 runs), memory budgets (the workspace fits the budget, the
 * minimum named in the error is the exact threshold, reduced-thread and
 * chunked plans give the same bytes), bad input (a clear error, *C
 * untouched) and allocation failures (a clean SPX_ERR_OUT_OF_MEMORY each). */
#include "format/matrix.h"
#include "semiring_oracle.h"

static spx_ctx *ctx;
static const spx_backend backends[2] = {SPX_BACKEND_REF, SPX_BACKEND_CPU};

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

/* The minimum a budget error names ("below the N bytes"), and the part of
 * it the backend needs ("..., M for <what>"). */
static int64_t named_minimum(int64_t *backend)
{
    const char *p = strstr(spx_last_error(ctx), "below the ");
    const char *q = strstr(spx_last_error(ctx), "for converted operands, ");
    *backend = q ? strtoll(q + 24, NULL, 10) : -1;
    return p ? strtoll(p + 10, NULL, 10) : -1;
}

/* Under budgets from the named minimum to the full workspace, the plan fits
 * the budget and the bytes of the result do not change. */
static void check_budgets(const spx_matrix *A, const spx_matrix *B, spx_spgemm_options o)
{
    spx_semiring sr = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_ctx_set_num_threads(ctx, 3);
        spx_matrix *R = NULL, *C = (spx_matrix *)&o;
        int64_t full = 0, min, backend_min, ws;
        o.memory_budget = 0;
        CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, B, &o, &R));
        CHECK_OK(ctx, spx_spgemm_workspace_size(ctx, &sr, A, B, &o, &full));
        o.memory_budget = 1;
        CHECK_FAILS(ctx, spx_spgemm(ctx, &sr, A, B, &o, &C), SPX_ERR_OUT_OF_MEMORY,
                    "memory_budget of 1 bytes");
        CHECK(C == (spx_matrix *)&o, "C untouched");
        min = named_minimum(&backend_min);
        CHECK(min > 0 && min <= full, "%s: minimum %lld, full %lld", spx_backend_name(backends[b]),
              (long long)min, (long long)full);
        o.memory_budget = min - 1;
        CHECK_FAILS(ctx, spx_spgemm_workspace_size(ctx, &sr, A, B, &o, &ws), SPX_ERR_OUT_OF_MEMORY,
                    "memory_budget");
        /* the minimum (one-row chunks), more rows per chunk, two accumulators
         * with chunks of about 1000 rows, a third of the way, one thread less
         * than the full plan, and the full plan */
        int64_t budgets[] = {min,      min + 100, min + backend_min + 8000, min + (full - min) / 3,
                             full - 1, full};
        for (int k = 0; k < 6 && min > 0; k++) {
            if (budgets[k] < min) /* ref needs its full accumulator */
                continue;
            o.memory_budget = budgets[k];
            ws = -1;
            CHECK_OK(ctx, spx_spgemm_workspace_size(ctx, &sr, A, B, &o, &ws));
            CHECK(ws > 0 && ws <= budgets[k], "%s: workspace %lld over budget %lld",
                  spx_backend_name(backends[b]), (long long)ws, (long long)budgets[k]);
            CHECK(k != 5 || ws == full, "a budget of exactly the full workspace changes nothing");
            C = NULL;
            CHECK_OK(ctx, spx_spgemm(ctx, &sr, A, B, &o, &C));
            CHECK(same_bytes(C, R), "%s: result under budget %lld differs",
                  spx_backend_name(backends[b]), (long long)budgets[k]);
            spx_matrix_destroy(C);
        }
        spx_matrix_destroy(R);
    }
    spx_ctx_set_num_threads(ctx, 0);
}

static void test_memory_budget(void)
{
    uint64_t s = test_seed ^ 0xb0d9e7;
    spx_spgemm_options o = {0};
    /* square, with dense rows: accumulators dominate; B transposed: a
     * converted operand counts too */
    spx_matrix *A = big_random(3000, 3000, 8, SPX_F64, VAL_UNIFORM, SPX_INDEX_I32, &s);
    o.op_b = SPX_OP_TRANSPOSE;
    o.drop_identity = 1;
    check_budgets(A, A, o);
    spx_matrix_destroy(A);
    /* tall with short rows: the count per row dominates, chunks pay off */
    A = big_random(60000, 300, 3, SPX_F64, VAL_UNIFORM, SPX_INDEX_I32, &s);
    spx_matrix *B = big_random(300, 200, 3, SPX_F64, VAL_UNIFORM, SPX_INDEX_I32, &s);
    o = (spx_spgemm_options){0};
    check_budgets(A, B, o);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
}

/* ---- bad input: a clear error, *C untouched ---- */

static void test_bad_input(void)
{
    spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
    spx_semiring pt = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    spx_semiring avos = spx_semiring_builtin(SPX_SEMIRING_AVOS);
    spx_matrix *A23 = csr_from(ctx, 2, 3, "x.x.x.", (double[]){1, 2, 3}, SPX_F64);
    spx_matrix *A33 = csr_from(ctx, 3, 3, "x...x...x", (double[]){1, 2, 3}, SPX_F64);
    spx_matrix *I32 = csr_from(ctx, 2, 2, "xx.x", (double[]){2, 3, 5}, SPX_I32);
    spx_matrix *bad = csr_from(ctx, 2, 2, "xx.x", (double[]){2, -2, 5}, SPX_I64);
    spx_matrix *ok64 = csr_from(ctx, 2, 2, "xx.x", (double[]){2, -1, 5}, SPX_I64);
    spx_matrix *F32 = csr_from(ctx, 2, 2, "x..x", (double[]){1, 1}, SPX_F32);
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
    spx_matrix *B8 = csr_from(ctx, 2, 2, "x..x", (double[]){1, 1}, SPX_BOOL);
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

int main(void)
{
    test_init();
    if (spx_ctx_create(&ctx) != SPX_OK)
        return 1;
    test_threads_and_determinism();
    test_memory_budget();
    test_bad_input();
    test_allocation_failures();
    spx_ctx_destroy(ctx);
    return test_finish("test_spgemm_limits");
}

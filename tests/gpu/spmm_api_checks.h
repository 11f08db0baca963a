/* The GPU SpMM test's behaviour checks beyond single products: deterministic
 * mode, plans (several alive on one matrix, misuse), matrices that change
 * under spx_matrix_touch, and bad input (shapes, types, memories, invalid
 * wrapped matrices). */
#ifndef SPX_TEST_GPU_API_CHECKS_H
#define SPX_TEST_GPU_API_CHECKS_H

#include "spmm_build.h"

/* ---- deterministic mode -------------------------------------------------------------- */

#define DET_REPEATS 10

/* DET_REPEATS identical calls must give bit-identical C, the first one right.
 * OUTER accumulates with atomics: on CUDA it must refuse deterministic mode. */
static void det_one(const tcase *c, tcall *k, const spx_matrix *A, tbuf *B, tbuf *C,
                    const tref *ref, unsigned char *first)
{
    int must_refuse = g_cuda && k->alg == SPX_SPMM_OUTER;
    spx_spmm_plan *plan = NULL;
    if (k->path == PATH_PLAN) {
        spx_spmm_options o = {.alg = k->alg, .precision = k->prec};
        spx_status s = spx_spmm_plan_create(g_ctx, c->op, A, c->n, c->dtype, &o, &plan);
        snprintf(k->msg, sizeof k->msg, "%s", spx_last_error(g_ctx));
        if (s == SPX_ERR_UNSUPPORTED && k->alg != SPX_SPMM_AUTO) {
            record_skip(k->alg, k->msg);
            return;
        }
        if (s) {
            report_failure(c, k, "spx_spmm_plan_create: %s: %s", spx_status_name(s), k->msg);
            return;
        }
    }
    size_t bytes = (size_t)C->total * C->esize;
    for (int rep = 0; rep < DET_REPEATS; rep++) {
        if (!tbuf_reset(C, k->mem))
            break;
        spx_status s = call_once(c, k, A, plan, B, C);
        if (!settle(c, k, s, C))
            break;
        if (must_refuse) {
            if (s != SPX_ERR_UNSUPPORTED)
                report_failure(c, k, "OUTER accumulates with atomics, so deterministic mode must "
                                     "make it SPX_ERR_UNSUPPORTED; got %s", spx_status_name(s));
            else
                judge(c, k, s, B, C, ref); /* a skip; C must be untouched */
            break;
        }
        if (rep == 0) {
            if (judge(c, k, s, B, C, ref) != 1)
                break;
            memcpy(first, C->work, bytes);
            continue;
        }
        if (s != SPX_OK) {
            report_failure(c, k, "run %d of %d: %s: %s", rep + 1, DET_REPEATS, spx_status_name(s),
                           k->msg);
            break;
        }
        if (memcmp(first, C->work, bytes)) {
            int64_t e = 0;
            while (!memcmp(first + (size_t)e * C->esize, C->work + (size_t)e * C->esize, C->esize))
                e++;
            report_failure(c, k, "deterministic mode: run %d of %d differs from run 1 at buffer "
                                 "element %lld (%.9g vs %.9g)", rep + 1, DET_REPEATS, (long long)e,
                           elem_load(C->work + (size_t)e * C->esize, C->dtype),
                           elem_load(first + (size_t)e * C->esize, C->dtype));
            break;
        }
    }
    spx_spmm_plan_destroy(plan);
}

static void check_determinism(void)
{
    spx_matrix *A0 = NULL;
    CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, (int)pick(13, 10), 16, 0, 0, 0, next_seed(), SPX_F32,
                                 SPX_INDEX_DEFAULT, &A0));
    tmat t;
    if (!tmat_make(&t, A0, SPX_CSR, NULL, "rmat, deterministic mode")) {
        tmat_free(&t);
        return;
    }
    for (int o = 0; o < 2; o++) {
        tcase c = case_make(&t, o ? SPX_OP_TRANSPOSE : SPX_OP_NONE, SPX_F32, 64);
        c.runs[0] = (trun){1.25, -0.5};
        int64_t m = o ? t.cols : t.rows, k = o ? t.rows : t.cols;
        tbuf B = {0}, C = {0};
        tref ref = {0};
        unsigned char *first = NULL;
        if (tbuf_init(&B, k, c.n, SPX_F32, SPX_ROW_MAJOR, 0, 0, SENT_B) &&
            tbuf_init(&C, m, c.n, SPX_F32, SPX_ROW_MAJOR, 0, 0, SENT_C)) {
            tbuf_fill_random(&B, &g_rng);
            tbuf_fill_random(&C, &g_rng);
            if (compute_ref(&c, &B, &C, c.runs[0], &ref))
                first = malloc((size_t)C.total * C.esize);
        }
        for (int mi = 0; first && mi < (g_cuda ? 2 : 1); mi++) {
            spx_memory mem = mi ? SPX_MEM_DEVICE : SPX_MEM_HOST;
            const spx_matrix *A = tmat_operand(&t, mem);
            if (!A || !tbuf_reset(&B, mem))
                break;
            /* Default mode first, so that every algorithm has a plan cached
             * on A that deterministic mode must not reuse. */
            spx_ctx_set_deterministic(g_ctx, 0);
            for (int a = 0; a < NALG; a++) {
                tcall kk = {PATH_EX, mem, (spx_spmm_alg)a, SPX_PRECISION_EXACT, 0, ""};
                if (tbuf_reset(&C, mem))
                    settle(&c, &kk, call_once(&c, &kk, A, NULL, &B, &C), &C);
            }
            spx_ctx_set_deterministic(g_ctx, 1);
            for (int a = 0; a < NALG; a++)
                for (int p = SPX_PRECISION_EXACT; p <= SPX_PRECISION_TF32; p++)
                    for (int path = PATH_SPMM; path <= PATH_PLAN; path++) {
                        if (path == PATH_SPMM && (a != SPX_SPMM_AUTO || p != SPX_PRECISION_EXACT))
                            continue;
                        tcall kk = {(tpath)path, mem, (spx_spmm_alg)a, (spx_precision)p, 0, ""};
                        det_one(&c, &kk, A, &B, &C, &ref, first);
                    }
            spx_ctx_set_deterministic(g_ctx, 0);
        }
        free(first);
        free(ref.c);
        tbuf_free(&B);
        tbuf_free(&C);
    }
    tmat_free(&t);
}

/* ---- non-finite values in B ----------------------------------------------------------- */

/* The dense path's plan says how it reads B, by the rule it runs by: in place
 * when beta = 0, where B is in the GEMM's type (every precision but f32 data
 * rounded to bf16 or f16); then the fix-up reads C where m <= k or the device
 * runs no cooperative launches, else B. */
static void check_dense_reads_b(const spx_matrix *A, int64_t m, int64_t k, int64_t n, spx_dtype dt,
                                spx_precision prec)
{
    int dev = 0, coop = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess) {
        TFAIL("non-finite B: the device's attributes could not be read");
        return;
    }
    const bool rounded = dt == SPX_F32 && (prec == SPX_PRECISION_BF16 || prec == SPX_PRECISION_F16);
    const char *want = rounded              ? "a copy of B in the GEMM's type"
                       : m <= k || !coop ? "B in place when beta = 0 (then the pieces of C's rows that hold Inf"
                                         : "B in place when beta = 0 (then the columns where B holds Inf";
    spx_spmm_options o = {.alg = SPX_SPMM_DENSE, .precision = prec};
    spx_spmm_plan *plan = NULL;
    CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, n, dt, &o, &plan));
    if (plan && !strstr(spx_spmm_plan_explain(plan), want))
        TFAIL("non-finite B, %s %s: the dense plan does not say \"%s\": %s", spx_dtype_name(dt),
              spx_precision_name(prec), want, spx_spmm_plan_explain(plan));
    spx_spmm_plan_destroy(plan);
}

/* Inf and NaN in B must reach only the elements whose terms multiply them,
 * as in ref: an algorithm that also multiplies A's absent entries (the dense
 * path: 0 x Inf = NaN) must keep them apart. Each element of C must match ref
 * in kind (NaN, +Inf, -Inf, finite) and, when finite, lie within tol of it
 * relative to the sum of its terms' magnitudes. */
static void nonfinite_case(const spx_matrix *A, const double *a, int64_t m, int64_t k, int64_t n,
                           const double *b, spx_dtype dt, double beta)
{
    size_t es = spx_dtype_size(dt);
    void *B = malloc((size_t)(k * n) * es), *C0 = malloc((size_t)(m * n) * es),
         *R = malloc((size_t)(m * n) * es), *C = malloc((size_t)(m * n) * es);
    double *Q = calloc((size_t)(m * n), sizeof *Q);
    if (!B || !C0 || !R || !C || !Q) {
        TFAIL("non-finite B: out of host memory");
        goto done;
    }
    for (int64_t x = 0; x < k * n; x++)
        elem_store((unsigned char *)B + x * es, dt, b[x]);
    for (int64_t x = 0; x < m * n; x++)
        elem_store((unsigned char *)C0 + x * es, dt, (double)(x % 7) - 3.0);
    const double alpha = 1.5;
    for (int64_t i = 0; i < m; i++) /* a: dense row-major m x k with NAN marking absent entries */
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; !isnan(a[i * k + p]) && j < n; j++)
                if (isfinite(b[p * n + j]))
                    Q[i * n + j] += fabs(alpha * a[i * k + p] * b[p * n + j]);
    spx_dense Bd = spx_dense_make(B, k, n, n, dt, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense Rd = spx_dense_make(R, m, n, n, dt, SPX_ROW_MAJOR, SPX_MEM_HOST);
    memcpy(R, C0, (size_t)(m * n) * es);
    CHECK_OK(g_ref, spx_spmm(g_ref, SPX_OP_NONE, alpha, A, &Bd, beta, &Rd));
    for (int alg = 0; alg < NALG; alg++)
        for (int prec = 0; prec < NPREC; prec++) {
            if (dt != SPX_F32 && prec != SPX_PRECISION_EXACT) /* the other types multiply in their own */
                continue;
            spx_spmm_options o = {.alg = (spx_spmm_alg)alg, .precision = (spx_precision)prec};
            if (g_cuda && alg == SPX_SPMM_DENSE && beta == 0.0)
                check_dense_reads_b(A, m, k, n, dt, (spx_precision)prec);
            spx_dense Cd = spx_dense_make(C, m, n, n, dt, SPX_ROW_MAJOR, SPX_MEM_HOST);
            memcpy(C, C0, (size_t)(m * n) * es);
            spx_status st = spx_spmm_ex(g_ctx, SPX_OP_NONE, alpha, A, &Bd, beta, &Cd, &o);
            g_error_checks++;
            if (st == SPX_ERR_UNSUPPORTED && alg != SPX_SPMM_AUTO)
                continue;
            if (st) {
                TFAIL("non-finite B, %s %s, %s: %s: %s", spx_dtype_name(dt), spx_precision_name(o.precision),
                      spx_spmm_alg_name(o.alg), spx_status_name(st), spx_last_error(g_ctx));
                continue;
            }
            double tol = dt == SPX_F64 ? 1e-12 : dt == SPX_F32 && prec == SPX_PRECISION_EXACT ? 1e-5 : 2e-2;
            for (int64_t x = 0; x < m * n; x++) {
                double c = elem_load((unsigned char *)C + x * es, dt);
                double r = elem_load((unsigned char *)R + x * es, dt);
                int same = isnan(r) ? isnan(c) : isinf(r) ? c == r
                                                           : isfinite(c) && fabs(c - r) <= tol * (Q[x] + fabs(beta * r) + 1e-30);
                if (!same) {
                    TFAIL("non-finite B, %s %s, %s, beta %g: C(%lld, %lld) = %g, ref %g", spx_dtype_name(dt),
                          spx_precision_name(o.precision), spx_spmm_alg_name(o.alg), beta, (long long)(x / n),
                          (long long)(x % n), c, r);
                    break;
                }
            }
        }
done:
    free(B);
    free(C0);
    free(R);
    free(C);
    free(Q);
}

/* Half of A's cells hold entries; or, where AUTO must take BSR, A is made of
 * whole 16 x 16 blocks, about a third of them present. auto_takes: the
 * algorithm AUTO must take (NULL: any). */
static void nonfinite_shape(int64_t m, int64_t k, int64_t n, const char *auto_takes)
{
    spx_matrix *A = NULL, *At = NULL;
    if (auto_takes && !strcmp(auto_takes, "bsr"))
        CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, m, k, 16, 16, 0.35, next_seed(), SPX_F32, SPX_INDEX_I32, &A));
    else
        CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, m, k, k / 2, next_seed(), SPX_F32, SPX_INDEX_I32, &A));
    if (!A)
        return;
    spx_matrix_arrays arr;
    CHECK_OK(g_ctx, spx_matrix_arrays_get(A, &arr));
    float *av = arr.values;
    av[3] = 0.0f; /* a stored zero times Inf is NaN, as in ref */
    double *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
    if (a && b) {
        const int32_t *off = arr.offsets, *idx = arr.indices;
        for (int64_t x = 0; x < m * k; x++)
            a[x] = NAN;
        for (int64_t i = 0; i < m; i++)
            for (int32_t p = off[i]; p < off[i + 1]; p++)
                a[i * k + idx[p]] = av[p];
        uint64_t r = next_seed();
        for (int64_t x = 0; x < k * n; x++)
            b[x] = (double)(spx__splitmix64(&r) >> 11) / 9007199254740992.0 - 0.5;
        const int32_t col0 = idx[off[0]]; /* row 0 meets it */
        b[col0 * n + 3] = INFINITY;
        b[col0 * n + 70] = -INFINITY;
        b[(col0 + 1) % k * n + 3] = -INFINITY; /* rows holding both columns get NaN */
        b[17 * n + 40] = NAN;
        b[5] = INFINITY; /* B's row 0, where a kernel might point a row's padding */
        for (int64_t j = 0; j < n; j += 5) /* a row of B with many: flags of every chunk */
            b[33 * n + j] = j % 2 ? INFINITY : -INFINITY;
        b[(k - 1) * n + n - 1] = INFINITY; /* the last chunk's last column */
        if (g_cuda && auto_takes) { /* the case this check is for */
            char want[64];
            snprintf(want, sizeof want, "every row: %s", auto_takes);
            spx_spmm_plan *plan = NULL;
            CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, n, SPX_F32, NULL, &plan));
            if (plan && !strstr(spx_spmm_plan_explain(plan), want))
                TFAIL("non-finite B: AUTO did not take %s: %s", auto_takes, spx_spmm_plan_explain(plan));
            spx_spmm_plan_destroy(plan);
        }
        const spx_dtype other[] = {SPX_F64, SPX_F16, SPX_BF16};
        for (int beta = 0; beta < 2; beta++) {
            nonfinite_case(A, a, m, k, n, b, SPX_F32, beta ? 0.5 : 0.0);
            for (int t = 0; t < 3; t++) {
                CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, other[t], SPX_INDEX_I32, &At));
                if (At)
                    nonfinite_case(At, a, m, k, n, b, other[t], beta ? 0.5 : 0.0);
                spx_matrix_destroy(At);
                At = NULL;
            }
        }
    } else {
        TFAIL("non-finite B: out of host memory");
    }
    free(a);
    free(b);
    spx_matrix_destroy(A);
}

static void check_nonfinite_b(void)
{
    /* N >= 256 and nnz x N >= 5e7: AUTO takes the dense path for f32; B's
     * columns in two chunks of the dense path's flags */
    nonfinite_shape(1024, 800, 300, "dense");
    /* a long k (forced: too little work for AUTO's dense path); with beta = 0
     * the dense path reads B in place */
    nonfinite_shape(8, 4096, 1024, NULL);
    /* N = 45 and the in-place fix-up's items of several rows ending past the
     * last row and column (loads clamped there): of B (m > k, k = 41), which
     * holds an Inf there, and of C (m = 41 <= k) */
    nonfinite_shape(803, 41, 45, NULL);
    nonfinite_shape(41, 801, 45, NULL);
    /* N = 264: a whole chunk of C's rows read as 16-byte vectors, then one
     * of 8 columns read element by element */
    nonfinite_shape(50, 600, 264, NULL);
    /* N = 16500: more column chunks than the dense path's flags held so far
     * (they grow, are cleared, and the epochs start again) */
    nonfinite_shape(8, 64, 16500, NULL);
    /* whole 16 x 16 blocks: BSR multiplies B as it is; m, k and N end
     * inside blocks and 16-byte vectors */
    nonfinite_shape(203, 301, 70, "bsr");
    /* small enough for the dense path's own GEMM with 16-bit operands: k = 203
     * ends inside a 16-byte piece of A's rows, m, k and N inside its tiles */
    nonfinite_shape(300, 203, 101, NULL);
    /* the own GEMM's longest k for 16-bit data on mma.sync: 1100 in 18 steps
     * of 64, the last one ending inside a 16-byte piece of A's rows (f32 data
     * takes cuBLASLt there, or, on compute capability 9.0, the wgmma kernel) */
    nonfinite_shape(70, 1100, 200, NULL);
    /* with wgmma (compute capability 9.0), 16-bit operands: k = 3001 in 47
     * steps, past mma.sync's bound, cut into 8 parts (3 tiles), the last
     * ending inside a step; 128 x 128 tiles (132 SMs), k in 2 steps */
    nonfinite_shape(60, 3001, 130, NULL);
    nonfinite_shape(1900, 70, 1000, NULL);
}

/* Whether the dense path's own GEMM runs 16-bit operands on wgmma here: a
 * device of compute capability 9.0 and a build with its sm_90a code. */
static bool own_gemm_on_wgmma(void)
{
    spx_device_info di;
#ifdef SPX_HAVE_WGMMA
    return g_cuda && spx_ctx_device_info(g_ctx, &di) == SPX_OK && di.cc_major == 9 && di.cc_minor == 0;
#else
    (void)di;
    return false;
#endif
}

/* The wgmma kernel cuts a long k into parts where its tiles are too few for
 * the SMs (128 x 2048 at N = 1000: 32 tiles of 64 x 64, k in 8 parts for bf16
 * data, 4 for f32 data at bf16 precision, on 132 SMs); the tile's last block
 * adds the parts in their order, so that repeats are bit-identical whichever
 * part finished first. (The non-finite B cases check the values.) */
static void check_dense_parts_repeat(spx_dtype dt, spx_precision prec)
{
    const int64_t m = 128, k = 2048, n = 1000;
    const size_t es = spx_dtype_size(dt);
    spx_matrix *A = NULL;
    spx_spmm_plan *plan = NULL;
    unsigned char *B = malloc((size_t)(k * n) * es),
                  *C[3] = {malloc((size_t)(m * n) * es), malloc((size_t)(m * n) * es), malloc((size_t)(m * n) * es)};
    CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, m, k, k / 10, next_seed(), dt, SPX_INDEX_I32, &A));
    spx_spmm_options o = {.alg = SPX_SPMM_DENSE, .precision = prec};
    if (A)
        CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, n, dt, &o, &plan));
    if (!plan || !B || !C[0] || !C[1] || !C[2]) {
        TFAIL("dense path, parts of k, %s %s: no plan or no host memory", spx_dtype_name(dt),
              spx_precision_name(prec));
        goto done;
    }
    if (!strstr(spx_spmm_plan_explain(plan), " parts of "))
        TFAIL("dense path, 128 x 2048, N = 1000, %s %s: the plan does not cut k into parts: %s", spx_dtype_name(dt),
              spx_precision_name(prec), spx_spmm_plan_explain(plan));
    uint64_t r = next_seed();
    for (int64_t x = 0; x < k * n; x++)
        elem_store(B + x * es, dt, (double)(spx__splitmix64(&r) >> 11) / 9007199254740992.0 - 0.5);
    spx_dense Bd = spx_dense_make(B, k, n, n, dt, SPX_ROW_MAJOR, SPX_MEM_HOST);
    for (int rep = 0; rep < 3; rep++) {
        spx_dense Cd = spx_dense_make(C[rep], m, n, n, dt, SPX_ROW_MAJOR, SPX_MEM_HOST);
        CHECK_OK(g_ctx, spx_spmm_plan_execute(g_ctx, plan, 1.0, &Bd, 0.0, &Cd));
        g_error_checks++;
        if (rep && memcmp(C[0], C[rep], (size_t)(m * n) * es))
            TFAIL("dense path, parts of k, %s %s: run %d differs from run 1", spx_dtype_name(dt),
                  spx_precision_name(prec), rep + 1);
    }
done:
    spx_spmm_plan_destroy(plan);
    spx_matrix_destroy(A);
    free(B);
    for (int i = 0; i < 3; i++)
        free(C[i]);
}

/* The dense path's own GEMM (one launch) takes the small products of 16-bit
 * operands, cuBLASLt the rest and every other precision; the plan says which.
 * With wgmma it takes 16-bit data up to 3.5e9 flops and C of 4.2e6 elements,
 * past k = 1152 where its 64 x 64 tiles give nine SMs in ten a block or k
 * is cut into parts (own_wgmma, for 100+ SMs), and f32 data rounded to 16
 * bits up to 1.3e9 flops. */
static void check_dense_own_gemm(void)
{
    static const struct {
        int64_t m, k, n;
        spx_dtype dt;
        spx_precision prec;
        bool own, own_wgmma;
    } cases[] = {
        {300, 203, 101, SPX_F32, SPX_PRECISION_BF16, true, true},
        {300, 203, 101, SPX_F32, SPX_PRECISION_F16, true, true},
        {300, 203, 101, SPX_F16, SPX_PRECISION_EXACT, true, true},
        {300, 203, 101, SPX_BF16, SPX_PRECISION_EXACT, true, true},
        {300, 203, 101, SPX_F32, SPX_PRECISION_TF32, false, false},
        {300, 203, 101, SPX_F32, SPX_PRECISION_EXACT, false, false},
        {64, 1024, 100, SPX_BF16, SPX_PRECISION_EXACT, true, true},     /* 16-bit B: k up to 1152 */
        {64, 1024, 100, SPX_F32, SPX_PRECISION_BF16, false, true},      /* f32 B, rounded: k up to 512 (1152) */
        {64, 1600, 100, SPX_BF16, SPX_PRECISION_EXACT, false, true},    /* k past the bound: 2 tiles, k in parts */
        {64, 2048, 100, SPX_BF16, SPX_PRECISION_EXACT, false, true},    /* ... k long enough for parts */
        {600, 2048, 1000, SPX_BF16, SPX_PRECISION_EXACT, false, true},  /* ... tiles for every SM */
        {512, 3000, 1100, SPX_F16, SPX_PRECISION_EXACT, false, true},   /* 3.4e9 flops */
        {512, 3000, 1100, SPX_F32, SPX_PRECISION_F16, false, false},    /* ... past f32's 1.3e9 */
        {512, 1200, 1024, SPX_F32, SPX_PRECISION_BF16, false, true},    /* 1.26e9 flops, k past 1152 */
        {512, 4608, 1024, SPX_F16, SPX_PRECISION_EXACT, false, false},  /* 4.8e9 flops: cuBLASLt's route */
        {2048, 512, 4096, SPX_BF16, SPX_PRECISION_EXACT, false, false}, /* a product cuBLASLt runs faster */
    };
    if (!g_cuda)
        return;
    const bool wgmma = own_gemm_on_wgmma();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        spx_matrix *A = NULL;
        spx_spmm_plan *plan = NULL;
        CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, cases[c].m, cases[c].k, cases[c].k / 10 + 1, next_seed(), cases[c].dt,
                                        SPX_INDEX_I32, &A));
        spx_spmm_options o = {.alg = SPX_SPMM_DENSE, .precision = cases[c].prec};
        if (A)
            CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, cases[c].n, cases[c].dt, &o, &plan));
        g_error_checks++;
        const bool on_wgmma = wgmma && (cases[c].dt != SPX_F32 || cases[c].prec == SPX_PRECISION_BF16 ||
                                        cases[c].prec == SPX_PRECISION_F16),
                   own = on_wgmma ? cases[c].own_wgmma : cases[c].own;
        const char *says = !own       ? "spx's own kernel"
                           : on_wgmma ? "spx's own kernel in one launch (wgmma)"
                                      : "spx's own kernel in one launch (mma.sync)";
        if (plan && !strstr(spx_spmm_plan_explain(plan), says) != !own)
            TFAIL("dense path, %lld x %lld, N = %lld, %s %s: the plan %s \"%s\": %s", (long long)cases[c].m,
                  (long long)cases[c].k, (long long)cases[c].n, spx_dtype_name(cases[c].dt),
                  spx_precision_name(cases[c].prec), own ? "does not say" : "says", says, spx_spmm_plan_explain(plan));
        spx_spmm_plan_destroy(plan);
        spx_matrix_destroy(A);
    }
    if (wgmma) {
        check_dense_parts_repeat(SPX_BF16, SPX_PRECISION_EXACT);
        check_dense_parts_repeat(SPX_F32, SPX_PRECISION_BF16);
    }
}

/* ---- expected errors ----------------------------------------------------------------- */

/* A call that must fail with status want (or want2) and a message, leaving C
 * (if given) bit-identical. got is the call's status, read before anything
 * else touches the context. */
static void expect_error(const char *what, spx_status got, spx_status want, spx_status want2,
                         tbuf *C, spx_memory cmem)
{
    char msg[SPX_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", spx_last_error(g_ctx));
    g_error_checks++;
    if (got != want && got != want2)
        TFAIL("%s: got %s (\"%s\"), expected %s%s%s", what, spx_status_name(got),
              got ? msg : "", spx_status_name(want), want2 != want ? " or " : "",
              want2 != want ? spx_status_name(want2) : "");
    else if (!msg[0])
        TFAIL("%s: %s without a message", what, spx_status_name(got));
    if (!C)
        return;
    if (cmem == SPX_MEM_DEVICE)
        CHECK_OK(g_ctx, spx_ctx_synchronize(g_ctx));
    if (tbuf_fetch(C, cmem) && !tbuf_unchanged(C))
        TFAIL("%s: C was modified by a call that should fail", what);
}

/* Random B (k x nb) and NaN-poisoned C (m x nc), row-major, placed in their memories. */
static int operands(tbuf *B, tbuf *C, int64_t k, int64_t m, int64_t nb, int64_t nc, spx_dtype bt,
                    spx_dtype ct, spx_memory bm, spx_memory cm)
{
    if (!tbuf_init(B, k, nb, bt, SPX_ROW_MAJOR, 0, 0, SENT_B) ||
        !tbuf_init(C, m, nc, ct, SPX_ROW_MAJOR, 0, 0, SENT_C))
        return 0;
    tbuf_fill_random(B, &g_rng);
    return tbuf_reset(B, bm) && tbuf_reset(C, cm);
}

/* ---- plans ---------------------------------------------------------------------------- */

/* Every algorithm's plan alive at once on one matrix, executed interleaved;
 * then the AUTO plan misused. */
static void plans_on(tmat *t, spx_memory mem)
{
    tcase c = case_make(t, SPX_OP_NONE, SPX_F32, 16);
    case_plan_runs(&c);
    int64_t m = t->rows, k = t->cols;
    const spx_matrix *A = tmat_operand(t, mem);
    spx_spmm_plan *plans[NALG] = {0};
    tbuf B[MAX_RUNS], C[MAX_RUNS];
    tref ref[MAX_RUNS];
    memset(B, 0, sizeof B);
    memset(C, 0, sizeof C);
    memset(ref, 0, sizeof ref);
    int ok = A != NULL;
    for (int r = 0; ok && r < c.nruns; r++) {
        ok = tbuf_init(&B[r], k, c.n, SPX_F32, SPX_ROW_MAJOR, 0, 0, SENT_B) &&
             tbuf_init(&C[r], m, c.n, SPX_F32, SPX_ROW_MAJOR, 0, 0, SENT_C);
        if (!ok)
            break;
        tbuf_fill_random(&B[r], &g_rng);
        if (c.runs[r].beta != 0)
            tbuf_fill_random(&C[r], &g_rng);
        ok = compute_ref(&c, &B[r], &C[r], c.runs[r], &ref[r]) && tbuf_reset(&B[r], mem);
    }
    for (int a = 0; ok && a < NALG; a++) {
        spx_spmm_options o = {.alg = (spx_spmm_alg)a, .precision = SPX_PRECISION_EXACT};
        tcall kk = {PATH_PLAN, mem, (spx_spmm_alg)a, SPX_PRECISION_EXACT, 0, ""};
        spx_status s = spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, c.n, SPX_F32, &o, &plans[a]);
        snprintf(kk.msg, sizeof kk.msg, "%s", spx_last_error(g_ctx));
        if (s == SPX_ERR_UNSUPPORTED && a != SPX_SPMM_AUTO)
            record_skip(kk.alg, kk.msg);
        else if (s)
            report_failure(&c, &kk, "spx_spmm_plan_create: %s: %s", spx_status_name(s), kk.msg);
        else
            check_explain(&c, &kk, plans[a]);
    }
    for (int r = 0; ok && r < c.nruns; r++)
        for (int a = 0; a < NALG; a++)
            if (plans[a]) {
                tcall kk = {PATH_PLAN, mem, (spx_spmm_alg)a, SPX_PRECISION_EXACT, r, ""};
                run_one(&c, &kk, A, plans[a], &B[r], &C[r], &ref[r]);
            }
    spx_spmm_plan *p = plans[SPX_SPMM_AUTO];
    tbuf Bx = {0}, Cx = {0};
    if (ok && p) {
        static const struct {
            int64_t brows, crows, n;
            spx_dtype t;
            spx_status want;
            const char *what;
        } bad[] = {
            {0, 0, 17, SPX_F32, SPX_ERR_SHAPE, "plan for n=16 executed with n=17"},
            {0, 0, 16, SPX_F64, SPX_ERR_INVALID_ARGUMENT, "f32 plan executed with f64 B and C"},
            {1, 0, 16, SPX_F32, SPX_ERR_SHAPE, "plan executed with B of k+1 rows"},
            {0, 1, 16, SPX_F32, SPX_ERR_SHAPE, "plan executed with C of m+1 rows"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            if (operands(&Bx, &Cx, k + bad[i].brows, m + bad[i].crows, bad[i].n, bad[i].n,
                         bad[i].t, bad[i].t, mem, mem)) {
                spx_dense Bd = tbuf_dense(&Bx, mem), Cd = tbuf_dense(&Cx, mem);
                char what[160];
                snprintf(what, sizeof what, "%s (%s operands)", bad[i].what,
                         mem == SPX_MEM_DEVICE ? "device" : "host");
                expect_error(what, spx_spmm_plan_execute(g_ctx, p, 1.0, &Bd, 0.0, &Cd),
                             bad[i].want, bad[i].want, &Cx, mem);
            }
            tbuf_free(&Bx);
            tbuf_free(&Cx);
        }
    }
    for (int a = 0; a < NALG; a++)
        spx_spmm_plan_destroy(plans[a]);
    for (int r = 0; r < MAX_RUNS; r++) {
        tbuf_free(&B[r]);
        tbuf_free(&C[r]);
        free(ref[r].c);
    }
}

static void check_plans(void)
{
    spx_matrix *A = NULL;
    CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, 2000, 1500, 10, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                    &A));
    tmat t;
    if (tmat_make(&t, A, SPX_CSR, NULL, "uniform 2000x1500, plans")) {
        plans_on(&t, SPX_MEM_HOST);
        if (g_cuda)
            plans_on(&t, SPX_MEM_DEVICE);
        /* creation errors: *out stays untouched */
        static const struct {
            const char *what;
            int null_a, null_out;
            spx_op op;
            int64_t n;
            spx_dtype t;
            spx_spmm_alg alg;
            spx_precision prec;
            spx_status want, want2;
            int64_t k_slabs;
        } bad[] = {
            {"plan for NULL A", 1, 0, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_AUTO, SPX_PRECISION_EXACT,
             SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with NULL out", 0, 1, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_AUTO,
             SPX_PRECISION_EXACT, SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with n = -1", 0, 0, SPX_OP_NONE, -1, SPX_F32, SPX_SPMM_AUTO, SPX_PRECISION_EXACT,
             SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with op 5", 0, 0, (spx_op)5, 8, SPX_F32, SPX_SPMM_AUTO, SPX_PRECISION_EXACT,
             SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with algorithm 99", 0, 0, SPX_OP_NONE, 8, SPX_F32, (spx_spmm_alg)99,
             SPX_PRECISION_EXACT, SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with precision 99", 0, 0, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_AUTO,
             (spx_precision)99, SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan for i32 values", 0, 0, SPX_OP_NONE, 8, SPX_I32, SPX_SPMM_AUTO,
             SPX_PRECISION_EXACT, SPX_ERR_UNSUPPORTED, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan for f64 B/C with an f32 A", 0, 0, SPX_OP_NONE, 8, SPX_F64, SPX_SPMM_AUTO,
             SPX_PRECISION_EXACT, SPX_ERR_UNSUPPORTED, SPX_ERR_INVALID_ARGUMENT, 0},
            {"plan with k_slabs -1", 0, 0, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_AUTO, SPX_PRECISION_EXACT,
             SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, -1},
            {"plan with k_slabs past the most", 0, 0, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_AUTO, SPX_PRECISION_EXACT,
             SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, SPX_SPMM_MAX_K_SLABS + 1},
            {"plan with k_slabs for merge path", 0, 0, SPX_OP_NONE, 8, SPX_F32, SPX_SPMM_MERGE_PATH,
             SPX_PRECISION_EXACT, SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, 2},
        };
        spx_spmm_plan *untouched = (spx_spmm_plan *)&t, *p = untouched;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            spx_spmm_options o = {.alg = bad[i].alg, .precision = bad[i].prec, .k_slabs = bad[i].k_slabs};
            const spx_matrix *A1 = bad[i].null_a ? NULL : t.A;
            expect_error(bad[i].what,
                         spx_spmm_plan_create(g_ctx, bad[i].op, A1, bad[i].n, bad[i].t, &o,
                                              bad[i].null_out ? NULL : &p),
                         bad[i].want, bad[i].want2, NULL, SPX_MEM_HOST);
        }
        CHECK(p == untouched, "a failed spx_spmm_plan_create changed *out");
        spx_spmm_plan_destroy(NULL);
    }
    tmat_free(&t);
    /* a pattern A plans for any float type */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, 900, 1100, 7, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                    &A));
    A = astype(A, SPX_PATTERN, SPX_INDEX_DEFAULT);
    if (tmat_make(&t, A, SPX_CSR, NULL, "uniform pattern, plans"))
        for (int d = 0; d < 4; d++) {
            static const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};
            tcase c = case_make(&t, SPX_OP_NONE, types[d], 24);
            case_plan_runs(&c);
            run_case(&c, 0);
        }
    tmat_free(&t);
    /* AUTO at bf16 and f16 precision rounds B for the row kernels (here the
     * row runs) where most entries' B rows lie too far apart for the L2
     * cache (B a quarter beyond it; N off the tile); not at exact precision */
    spx_device_info info;
    if (g_cuda && spx_ctx_device_info(g_ctx, &info) == SPX_OK && info.l2_bytes > 0) {
        const int64_t rk = 131072, past_l2 = info.l2_bytes / (4 * rk) * 5 / 4 + 3, rn = past_l2 > 67 ? past_l2 : 67;
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, 1000000, rk, 8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        for (int p = 0; A && p < 3; p++) {
            static const spx_precision precs[] = {SPX_PRECISION_BF16, SPX_PRECISION_F16, SPX_PRECISION_EXACT};
            spx_spmm_options o = {.precision = precs[p]};
            spx_spmm_plan *plan = NULL;
            CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, rn, SPX_F32, &o, &plan));
            g_error_checks++;
            if (plan && (strstr(spx_spmm_plan_explain(plan), "B rounded to") != NULL) != (p < 2))
                TFAIL("AUTO, B of %.0f MB, precision %s: B %s: %s", 4e-6 * (double)(rk * rn),
                      spx_precision_name(precs[p]), p < 2 ? "not rounded" : "rounded", spx_spmm_plan_explain(plan));
            spx_spmm_plan_destroy(plan);
        }
        if (A && tmat_make(&t, A, SPX_CSR, NULL, "uniform 1M x 128K, 8 a row, B beyond L2, plans")) {
            tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, rn);
            c.algs = 1u << SPX_SPMM_AUTO;
            c.precs = 1u << SPX_PRECISION_EXACT | 1u << SPX_PRECISION_BF16 | 1u << SPX_PRECISION_F16;
            run_case(&c, MEM_DEVICE_ONLY);
            tmat_free(&t);
        }
    }
    /* AUTO multiplies as BSR only where A's 16 x 16 blocks are whole */
    for (int half = 0; g_cuda && half < 2; half++) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, 2000, 1600, 16, half ? 8 : 16, 0.05, next_seed(), SPX_F32,
                                             SPX_INDEX_DEFAULT, &A));
        spx_spmm_plan *plan = NULL;
        if (A)
            CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, 32, SPX_F32, NULL, &plan));
        g_error_checks++;
        if (plan && (strstr(spx_spmm_plan_explain(plan), "every row: bsr") != NULL) == (half != 0))
            TFAIL("AUTO on 16 x %d blocks %s BSR: %s", half ? 8 : 16, half ? "took" : "did not take",
                  spx_spmm_plan_explain(plan));
        spx_spmm_plan_destroy(plan);
        /* whole blocks: tensor cores at a tensor-core precision, CUDA cores
         * for exact, in every type the MMA takes */
        for (int c = 0; A && !half && c < 4; c++) {
            static const struct { spx_dtype dtype; spx_precision prec; const char *where; } rule[] = {
                {SPX_F32, SPX_PRECISION_BF16, "tensor cores"}, {SPX_BF16, SPX_PRECISION_BF16, "tensor cores"},
                {SPX_F16, SPX_PRECISION_F16, "tensor cores"}, {SPX_BF16, SPX_PRECISION_EXACT, "CUDA cores"}};
            spx_spmm_options o = {.precision = rule[c].prec};
            spx_matrix *At = NULL;
            plan = NULL;
            CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, rule[c].dtype, SPX_INDEX_DEFAULT, &At));
            if (At)
                CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, At, 32, rule[c].dtype, &o, &plan));
            g_error_checks++;
            if (plan && !strstr(spx_spmm_plan_explain(plan), rule[c].where))
                TFAIL("AUTO on whole blocks, %s data at %s precision: not on %s: %s", spx_dtype_name(rule[c].dtype),
                      spx_precision_name(rule[c].prec), rule[c].where, spx_spmm_plan_explain(plan));
            spx_spmm_plan_destroy(plan);
            spx_matrix_destroy(At);
        }
        spx_matrix_destroy(A);
    }
}

/* ---- changed matrices ------------------------------------------------------------------- */

/* New values, and the last entry of some rows moved one column right: plans
 * and device copies cached on A must be dropped by spx_matrix_touch. */
static void mutate_csr(int64_t rows, int64_t cols, int32_t *off, int32_t *idx, float *val)
{
    for (int64_t i = 0; i < rows; i++) {
        for (int32_t p = off[i]; p < off[i + 1]; p++)
            val[p] = 0.5f * val[p] + 0.25f;
        if (off[i + 1] > off[i] && i % 2 == 0 && idx[off[i + 1] - 1] + 1 < cols)
            idx[off[i + 1] - 1]++;
    }
}

static void rebuild_ref(tmat *t)
{
    spx_matrix_destroy(t->ref);
    t->ref = NULL;
    CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, t->A, SPX_F64, SPX_INDEX_DEFAULT, &t->ref));
    tmat_measure(t);
}

static void check_touch(void)
{
    int64_t rows = 1500, cols = 1200;
    spx_matrix *S = build_random_rows(rows, cols, 0, 20, 1, SPX_INDEX_I32);
    spx_matrix_info in;
    spx_matrix_arrays ar;
    if (!S || spx_matrix_info_get(S, &in) || spx_matrix_arrays_get(S, &ar)) {
        spx_matrix_destroy(S);
        return;
    }
    int64_t nnz = in.nnz;
    int32_t *off = malloc(sizeof(int32_t) * (size_t)(rows + 1));
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)nnz);
    float *val = malloc(sizeof(float) * (size_t)nnz);
    spx_matrix *W = NULL;
    tmat t;
    memset(&t, 0, sizeof t);
    if (off && idx && val) {
        memcpy(off, ar.offsets, sizeof(int32_t) * (size_t)(rows + 1));
        memcpy(idx, ar.indices, sizeof(int32_t) * (size_t)nnz);
        memcpy(val, ar.values, sizeof(float) * (size_t)nnz);
        CHECK_OK(g_ctx, spx_matrix_wrap_csr(g_ctx, rows, cols, nnz, off, idx, val, SPX_INDEX_I32,
                                            SPX_F32, SPX_MEM_HOST, &W));
    }
    spx_matrix_destroy(S);
    if (W && tmat_make(&t, W, SPX_CSR, NULL, "wrapped host CSR, changed in place")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 32);
        c.precs = 1u << SPX_PRECISION_EXACT | 1u << SPX_PRECISION_TF32;
        run_case(&c, MEM_HOST_ONLY); /* caches plans (and device copies) on A */
        mutate_csr(rows, cols, off, idx, val);
        spx_matrix_touch(W);
        rebuild_ref(&t);
        run_case(&c, MEM_HOST_ONLY);
#ifdef SPX_HAVE_CUDA
        void *doff = NULL, *didx = NULL, *dval = NULL;
        size_t boff = sizeof(int32_t) * (size_t)(rows + 1), bidx = sizeof(int32_t) * (size_t)nnz,
               bval = sizeof(float) * (size_t)nnz;
        spx_matrix *D = NULL;
        if (g_cuda && dev_upload(&doff, off, boff) && dev_upload(&didx, idx, bidx) &&
            dev_upload(&dval, val, bval))
            CHECK_OK(g_ctx, spx_matrix_wrap_csr(g_ctx, rows, cols, nnz, doff, didx, dval,
                                                SPX_INDEX_I32, SPX_F32, SPX_MEM_DEVICE, &D));
        if (D) {
            snprintf(t.name, sizeof t.name, "wrapped device CSR, changed in place");
            spx_matrix_destroy(t.dev);
            t.dev = D; /* the host twin t.A holds the same arrays */
            run_case(&c, MEM_DEVICE_ONLY);
            mutate_csr(rows, cols, off, idx, val);
            if (dev_upload(&didx, idx, bidx) && dev_upload(&dval, val, bval)) {
                spx_matrix_touch(W);
                spx_matrix_touch(D);
                rebuild_ref(&t);
                run_case(&c, MEM_DEVICE_ONLY);
            }
        }
        /* the same arrays 4 bytes past 8-byte alignment: kernels that read two
         * entries at once (TILED) fall back to single loads */
        void *didx4 = NULL, *dval4 = NULL;
        spx_matrix *D4 = NULL;
        if (D && cuda_ok(cudaMalloc(&didx4, bidx + 4), "cudaMalloc") && cuda_ok(cudaMalloc(&dval4, bval + 4), "cudaMalloc") &&
            cuda_ok(cudaMemcpy((int32_t *)didx4 + 1, idx, bidx, cudaMemcpyHostToDevice), "cudaMemcpy H2D") &&
            cuda_ok(cudaMemcpy((float *)dval4 + 1, val, bval, cudaMemcpyHostToDevice), "cudaMemcpy H2D"))
            CHECK_OK(g_ctx, spx_matrix_wrap_csr(g_ctx, rows, cols, nnz, doff, (int32_t *)didx4 + 1,
                                                (float *)dval4 + 1, SPX_INDEX_I32, SPX_F32, SPX_MEM_DEVICE, &D4));
        if (D4) {
            snprintf(t.name, sizeof t.name, "wrapped device CSR, arrays off 8-byte alignment");
            spx_matrix_destroy(t.dev);
            t.dev = D4;
            run_case(&c, MEM_DEVICE_ONLY);
        }
        tmat_free(&t); /* destroys the wrappers before their buffers go */
        if (didx4)
            cuda_ok(cudaFree(didx4), "cudaFree");
        if (dval4)
            cuda_ok(cudaFree(dval4), "cudaFree");
        if (doff)
            cuda_ok(cudaFree(doff), "cudaFree");
        if (didx)
            cuda_ok(cudaFree(didx), "cudaFree");
        if (dval)
            cuda_ok(cudaFree(dval), "cudaFree");
#endif
    }
    tmat_free(&t);
    free(off);
    free(idx);
    free(val);
}

/* ---- bad input ------------------------------------------------------------------------ */

/* A 40 x 30 CSR with 3 entries per row, wrapped over the caller's buffers
 * (host or device) after one corruption: 0 column out of range, 1 unsorted
 * row, 2 duplicate column, 3 last offset != nnz. */
static spx_matrix *wrap_invalid(int kind, spx_memory mem, void **dbuf)
{
    enum { R = 40, K = 30, NZ = 120 };
    static int32_t off[R + 1], idx[NZ];
    static float val[NZ];
    for (int i = 0; i <= R; i++)
        off[i] = 3 * i;
    for (int p = 0; p < NZ; p++) {
        idx[p] = (p / 3) % 10 + 10 * (p % 3);
        val[p] = 0.25f * (float)(p % 7) - 0.5f;
    }
    if (kind == 0)
        idx[5] = K;
    else if (kind == 1) {
        int32_t x = idx[6];
        idx[6] = idx[7];
        idx[7] = x;
    } else if (kind == 2)
        idx[10] = idx[9];
    else
        off[R] = NZ - 1;
    void *o = off, *ix = idx, *v = val;
#ifdef SPX_HAVE_CUDA
    if (mem == SPX_MEM_DEVICE) {
        if (!dev_upload(&dbuf[0], off, sizeof off) || !dev_upload(&dbuf[1], idx, sizeof idx) ||
            !dev_upload(&dbuf[2], val, sizeof val))
            return NULL;
        o = dbuf[0];
        ix = dbuf[1];
        v = dbuf[2];
    }
#else
    (void)dbuf;
#endif
    spx_matrix *A = NULL;
    CHECK_OK(g_ctx,
             spx_matrix_wrap_csr(g_ctx, R, K, NZ, o, ix, v, SPX_INDEX_I32, SPX_F32, mem, &A));
    return A;
}

static void invalid_matrices(spx_memory mem)
{
    static const char *const kinds[] = {"column out of range", "unsorted row", "duplicate column",
                                        "last offset != nnz"};
    for (int kind = 0; kind < 4; kind++) {
        void *dbuf[3] = {0};
        spx_matrix *A = wrap_invalid(kind, mem, dbuf);
        tbuf B = {0}, C = {0};
        /* B's tail guard keeps unchecked reads of column 30 inside its buffer */
        if (A && operands(&B, &C, 30, 40, 8, 8, SPX_F32, SPX_F32, mem, mem)) {
            spx_dense Bd = tbuf_dense(&B, mem), Cd = tbuf_dense(&C, mem);
            for (int a = 0; a < 2; a++) {
                spx_spmm_options o = {.alg = a ? SPX_SPMM_ROW_SPLIT : SPX_SPMM_AUTO};
                char what[200];
                /* twice: a failed check must not be cached as passed */
                for (int again = 0; again < 2; again++) {
                    snprintf(what, sizeof what, "%s wrapped CSR with a %s, alg %s%s",
                             mem == SPX_MEM_DEVICE ? "device" : "host", kinds[kind],
                             spx_spmm_alg_name(o.alg), again ? ", second call" : "");
                    expect_error(what, spx_spmm_ex(g_ctx, SPX_OP_NONE, 1.0, A, &Bd, 0.0, &Cd, &o),
                                 SPX_ERR_INVALID_MATRIX, SPX_ERR_INVALID_MATRIX, &C, mem);
                }
                spx_spmm_plan *p = NULL;
                snprintf(what, sizeof what, "plan on a %s wrapped CSR with a %s",
                         mem == SPX_MEM_DEVICE ? "device" : "host", kinds[kind]);
                expect_error(what, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, 8, SPX_F32, &o, &p),
                             SPX_ERR_INVALID_MATRIX, SPX_ERR_INVALID_MATRIX, NULL, mem);
                spx_spmm_plan_destroy(p);
            }
        }
        tbuf_free(&B);
        tbuf_free(&C);
        spx_matrix_destroy(A);
#ifdef SPX_HAVE_CUDA
        for (int b = 0; b < 3; b++)
            if (dbuf[b])
                cuda_ok(cudaFree(dbuf[b]), "cudaFree");
#endif
    }
}

/* Mixed memories. B and C in different memories must be refused; A in a
 * memory other than B's and C's is not specified by spx.h: either refused
 * with SPX_ERR_INVALID_ARGUMENT or computed correctly. */
static void mixed_memories(tmat *t)
{
    static const spx_memory combos[][3] = {
        {SPX_MEM_HOST, SPX_MEM_DEVICE, SPX_MEM_HOST},
        {SPX_MEM_HOST, SPX_MEM_HOST, SPX_MEM_DEVICE},
        {SPX_MEM_DEVICE, SPX_MEM_DEVICE, SPX_MEM_HOST},
        {SPX_MEM_DEVICE, SPX_MEM_HOST, SPX_MEM_DEVICE},
        {SPX_MEM_HOST, SPX_MEM_DEVICE, SPX_MEM_DEVICE},
        {SPX_MEM_DEVICE, SPX_MEM_HOST, SPX_MEM_HOST},
    };
    tcase c = case_make(t, SPX_OP_NONE, SPX_F32, 8);
    c.runs[0] = (trun){1.0, 0.0};
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
        spx_memory ma = combos[i][0], mb = combos[i][1], mc = combos[i][2];
        tbuf B = {0}, C = {0};
        const spx_matrix *A = tmat_operand(t, ma);
        char what[160];
        snprintf(what, sizeof what, "A in %s, B in %s, C in %s memory", ma ? "device" : "host",
                 mb ? "device" : "host", mc ? "device" : "host");
        if (A && operands(&B, &C, t->cols, t->rows, 8, 8, SPX_F32, SPX_F32, mb, mc)) {
            spx_dense Bd = tbuf_dense(&B, mb), Cd = tbuf_dense(&C, mc);
            spx_spmm_options o = {.alg = SPX_SPMM_AUTO, .precision = SPX_PRECISION_EXACT};
            spx_status s = spx_spmm_ex(g_ctx, SPX_OP_NONE, 1.0, A, &Bd, 0.0, &Cd, &o);
            if (mb != mc || s != SPX_OK) {
                expect_error(what, s, SPX_ERR_INVALID_ARGUMENT, SPX_ERR_INVALID_ARGUMENT, &C, mc);
            } else {
                tcall kk = {PATH_EX, mc, SPX_SPMM_AUTO, SPX_PRECISION_EXACT, 0, ""};
                tref ref;
                if (compute_ref(&c, &B, &C, c.runs[0], &ref) && settle(&c, &kk, s, &C))
                    judge(&c, &kk, s, &B, &C, &ref);
                free(ref.c);
            }
        }
        tbuf_free(&B);
        tbuf_free(&C);
    }
}

static void check_bad_input(void)
{
    spx_matrix *A0 = NULL;
    CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, 600, 500, 8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                    &A0));
    tmat t;
    if (!tmat_make(&t, A0, SPX_CSR, NULL, "uniform 600x500, bad input")) {
        tmat_free(&t);
        return;
    }
    const int64_t m = 600, k = 500, n = 8;
    static const struct {
        const char *what;
        int64_t brows, bcols, crows, ccols;
        spx_dtype bt, ct;
        spx_op op;
        spx_status want, want2;
    } bad[] = {
        {"B with k+1 rows", 1, 0, 0, 0, SPX_F32, SPX_F32, SPX_OP_NONE, SPX_ERR_SHAPE,
         SPX_ERR_SHAPE},
        {"B with n+1 columns", 0, 1, 0, 0, SPX_F32, SPX_F32, SPX_OP_NONE, SPX_ERR_SHAPE,
         SPX_ERR_SHAPE},
        {"C with m+1 rows", 0, 0, 1, 0, SPX_F32, SPX_F32, SPX_OP_NONE, SPX_ERR_SHAPE,
         SPX_ERR_SHAPE},
        {"C with n+1 columns", 0, 0, 0, 1, SPX_F32, SPX_F32, SPX_OP_NONE, SPX_ERR_SHAPE,
         SPX_ERR_SHAPE},
        {"op T with op N shapes", 0, 0, 0, 0, SPX_F32, SPX_F32, SPX_OP_TRANSPOSE, SPX_ERR_SHAPE,
         SPX_ERR_SHAPE},
        {"i32 B and C", 0, 0, 0, 0, SPX_I32, SPX_I32, SPX_OP_NONE, SPX_ERR_UNSUPPORTED,
         SPX_ERR_UNSUPPORTED},
        {"c64 B and C", 0, 0, 0, 0, SPX_C64, SPX_C64, SPX_OP_NONE, SPX_ERR_UNSUPPORTED,
         SPX_ERR_UNSUPPORTED},
        {"f64 B and C with an f32 A", 0, 0, 0, 0, SPX_F64, SPX_F64, SPX_OP_NONE,
         SPX_ERR_UNSUPPORTED, SPX_ERR_INVALID_ARGUMENT},
        {"f32 B with f64 C", 0, 0, 0, 0, SPX_F32, SPX_F64, SPX_OP_NONE, SPX_ERR_UNSUPPORTED,
         SPX_ERR_INVALID_ARGUMENT},
    };
    for (int mi = 0; mi < (g_cuda ? 2 : 1); mi++) {
        spx_memory mem = mi ? SPX_MEM_DEVICE : SPX_MEM_HOST;
        const spx_matrix *A = tmat_operand(&t, mem);
        for (size_t i = 0; A && i < sizeof bad / sizeof bad[0]; i++)
            for (int a = 0; a < 2; a++) {
                tbuf B = {0}, C = {0};
                spx_spmm_options o = {.alg = a ? SPX_SPMM_ROW_SPLIT : SPX_SPMM_AUTO};
                if (operands(&B, &C, k + bad[i].brows, m + bad[i].crows, n + bad[i].bcols,
                             n + bad[i].ccols, bad[i].bt, bad[i].ct, mem, mem)) {
                    spx_dense Bd = tbuf_dense(&B, mem), Cd = tbuf_dense(&C, mem);
                    char what[200];
                    snprintf(what, sizeof what, "%s (%s operands, alg %s)", bad[i].what,
                             mem ? "device" : "host", spx_spmm_alg_name(o.alg));
                    expect_error(what, spx_spmm_ex(g_ctx, bad[i].op, 1.0, A, &Bd, 0.0, &Cd, &o),
                                 bad[i].want, bad[i].want2, &C, mem);
                }
                tbuf_free(&B);
                tbuf_free(&C);
            }
        /* null operands and out-of-range enums */
        tbuf B = {0}, C = {0};
        if (A && operands(&B, &C, k, m, n, n, SPX_F32, SPX_F32, mem, mem)) {
            spx_dense Bd = tbuf_dense(&B, mem), Cd = tbuf_dense(&C, mem);
            static const struct {
                const char *what;
                int null_a, null_b, null_c;
                spx_op op;
                spx_spmm_alg alg;
                spx_precision prec;
            } nulls[] = {
                {"NULL A", 1, 0, 0, SPX_OP_NONE, SPX_SPMM_AUTO, SPX_PRECISION_EXACT},
                {"NULL B", 0, 1, 0, SPX_OP_NONE, SPX_SPMM_AUTO, SPX_PRECISION_EXACT},
                {"NULL C", 0, 0, 1, SPX_OP_NONE, SPX_SPMM_AUTO, SPX_PRECISION_EXACT},
                {"op 5", 0, 0, 0, (spx_op)5, SPX_SPMM_AUTO, SPX_PRECISION_EXACT},
                {"algorithm 99", 0, 0, 0, SPX_OP_NONE, (spx_spmm_alg)99, SPX_PRECISION_EXACT},
                {"precision 99", 0, 0, 0, SPX_OP_NONE, SPX_SPMM_AUTO, (spx_precision)99},
            };
            const spx_status IA = SPX_ERR_INVALID_ARGUMENT;
            for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
                spx_spmm_options o = {.alg = nulls[i].alg, .precision = nulls[i].prec};
                expect_error(nulls[i].what,
                             spx_spmm_ex(g_ctx, nulls[i].op, 1.0, nulls[i].null_a ? NULL : A,
                                         nulls[i].null_b ? NULL : &Bd, 0.0,
                                         nulls[i].null_c ? NULL : &Cd, &o),
                             IA, IA, nulls[i].null_c ? NULL : &C, mem);
            }
            spx_spmm_options o = {.alg = SPX_SPMM_AUTO};
            if (mem == SPX_MEM_HOST) { /* C overlapping B inside one buffer */
                tbuf X = {0};
                if (tbuf_init(&X, m + k, n, SPX_F32, SPX_ROW_MAJOR, 0, 0, SENT_C)) {
                    tbuf_fill_random(&X, &g_rng);
                    spx_dense Ba = tbuf_dense(&X, SPX_MEM_HOST), Ca = Ba;
                    Ba.rows = k;
                    Ca.rows = m;
                    Ca.data = (float *)Ba.data + (k - 100) * n;
                    expect_error("C overlapping B",
                                 spx_spmm_ex(g_ctx, SPX_OP_NONE, 1.0, A, &Ba, 0.0, &Ca, &o), IA, IA,
                                 &X, SPX_MEM_HOST);
                }
                tbuf_free(&X);
            }
        }
        tbuf_free(&B);
        tbuf_free(&C);
        invalid_matrices(mem);
    }
    if (g_cuda)
        mixed_memories(&t);
    tmat_free(&t);
}

#endif

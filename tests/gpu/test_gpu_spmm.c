/* GPU SpMM correctness: every algorithm of spx_spmm_alg, forced through
 * spx_spmm_ex and through explicit plans, at every precision, against the ref
 * backend (float64 accumulation), on generated matrices of every family, the
 * shared real matrices, DLMC weights and hard shapes; deterministic mode;
 * plan and bad-input behaviour. See tests/gpu/README.md.
 *
 * No GPU: exit 77 (skipped). SPX_GPU_TEST_BACKEND=cpu runs everything on the
 * CPU backend (which ignores algorithm and precision and computes exactly),
 * to exercise the checks themselves on a machine without a GPU. */
#include "spmm_api_checks.h"

#include <dirent.h>

/* ---- generator families ------------------------------------------------------------ */

/* The standard set of cases for one f32 matrix: the main case with a plan,
 * narrow and odd n, and the transpose. */
static void standard_cases(tmat *t)
{
    tcase c = case_make(t, SPX_OP_NONE, SPX_F32, 64);
    case_plan_runs(&c);
    run_case(&c, 0);
    static const int64_t ns_full[] = {1, 7, 33}, ns_quick[] = {7};
    const int64_t *ns = g_quick ? ns_quick : ns_full;
    for (size_t i = 0; i < (g_quick ? 1u : 3u); i++) {
        c = case_make(t, SPX_OP_NONE, SPX_F32, ns[i]);
        run_case(&c, 0);
    }
    c = case_make(t, SPX_OP_TRANSPOSE, SPX_F32, g_quick ? 7 : 32);
    run_case(&c, 0);
}

/* Cases for a matrix in a non-CSR format: op N and op T. */
static void format_cases(tmat *t, int64_t n)
{
    tcase c = case_make(t, SPX_OP_NONE, SPX_F32, n);
    run_case(&c, 0);
    c = case_make(t, SPX_OP_TRANSPOSE, SPX_F32, 7);
    run_case(&c, 0);
}

static void with_matrix(spx_matrix *A, spx_format fmt, const spx_format_params *fp,
                        const char *name, void (*cases)(tmat *))
{
    tmat t;
    if (tmat_make(&t, A, fmt, fp, name))
        cases(&t);
    tmat_free(&t);
}

static void cases_fmt64(tmat *t) { format_cases(t, 64); }
static void cases_fmt33(tmat *t) { format_cases(t, 33); }

static void sweep_generators(void)
{
    g_main_sweep = 1;
    spx_matrix *A;
    char name[160];
    int64_t ur = pick(20001, 3001), uc = pick(16000, 2500), unz = pick(16, 8);
    snprintf(name, sizeof name, "uniform %lld/row", (long long)unz);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, ur, uc, unz, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                    &A));
    with_matrix(A, SPX_CSR, NULL, name, standard_cases);
    /* the same family in every other format */
    static const spx_format other[] = {SPX_CSC, SPX_COO, SPX_SELL};
    for (size_t f = 0; f < 3; f++) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, ur, uc, unz, next_seed(), SPX_F32,
                                        SPX_INDEX_DEFAULT, &A));
        snprintf(name, sizeof name, "uniform %lld/row as %s", (long long)unz,
                 spx_format_name(other[f]));
        with_matrix(A, other[f], NULL, name, cases_fmt64);
    }

    int scale = (int)pick(14, 10);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, scale, 8, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                 &A));
    snprintf(name, sizeof name, "rmat scale %d", scale);
    with_matrix(A, SPX_CSR, NULL, name, standard_cases);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, scale, 8, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_I64,
                                 &A));
    snprintf(name, sizeof name, "rmat scale %d, int64 indices", scale);
    with_matrix(A, SPX_CSR, NULL, name, cases_fmt64);
    spx_format_params sell = {.sell_c = 8, .sell_sigma = 64};
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, scale, 8, 0.45, 0.15, 0.15, next_seed(), SPX_F32,
                                 SPX_INDEX_DEFAULT, &A));
    snprintf(name, sizeof name, "rmat scale %d as sell 8/64", scale);
    with_matrix(A, SPX_SELL, &sell, name, cases_fmt64);

    int64_t n2 = pick(150, 40), n3 = pick(28, 12);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_laplacian(g_ctx, 2, n2, SPX_F32, SPX_INDEX_DEFAULT, &A));
    with_matrix(A, SPX_CSR, NULL, "laplacian 2D", standard_cases);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_laplacian(g_ctx, 3, n3, SPX_F32, SPX_INDEX_I64, &A));
    with_matrix(A, SPX_CSR, NULL, "laplacian 3D i64", standard_cases);

    int64_t br = pick(11999, 1999), bc = pick(10000, 1800);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_banded(g_ctx, br, bc, 4, 7, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                   &A));
    with_matrix(A, SPX_CSR, NULL, "banded -4..7", standard_cases);
    spx_format_params sell32 = {.sell_c = 32, .sell_sigma = 128};
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_banded(g_ctx, br, bc, 4, 7, next_seed(), SPX_F32, SPX_INDEX_DEFAULT,
                                   &A));
    with_matrix(A, SPX_SELL, &sell32, "banded -4..7 as sell 32/128", cases_fmt33);

    int64_t sr = pick(4001, 1001), sc = pick(2999, 799);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, sr, sc, 16, 8, 0.015, next_seed(), SPX_F32,
                                         SPX_INDEX_DEFAULT, &A));
    with_matrix(A, SPX_CSR, NULL, "block sparse 16x8", standard_cases);
    A = NULL; /* whole 16 x 16 blocks, which AUTO multiplies as BSR, clipped at the edges */
    CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, sr, sc, 16, 16, 0.015, next_seed(), SPX_F32,
                                         SPX_INDEX_DEFAULT, &A));
    with_matrix(A, SPX_CSR, NULL, "block sparse 16x16", standard_cases);
    static const int64_t blocks[][2] = {{16, 8}, {4, 4}, {3, 5}};
    for (size_t b = 0; b < 3; b++) {
        spx_format_params fp = {.block_rows = blocks[b][0], .block_cols = blocks[b][1]};
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, sr, sc, 16, 8, 0.015, next_seed(), SPX_F32,
                                             SPX_INDEX_DEFAULT, &A));
        snprintf(name, sizeof name, "block sparse 16x8 as bsr %lldx%lld", (long long)blocks[b][0],
                 (long long)blocks[b][1]);
        with_matrix(A, SPX_BSR, &fp, name, cases_fmt64);
    }

    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, pick(1024, 256), pick(1536, 384), 0.9, next_seed(),
                                   SPX_F32, SPX_INDEX_DEFAULT, &A));
    with_matrix(A, SPX_CSR, NULL, "pruned 90%", standard_cases);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_nm(g_ctx, pick(512, 128), pick(1024, 256), 2, 4, next_seed(), SPX_F32,
                               SPX_INDEX_DEFAULT, &A));
    with_matrix(A, SPX_CSR, NULL, "2:4 structured", standard_cases);
}

/* ---- value types ---------------------------------------------------------------- */

/* f64, f16 and bf16 throughout, and pattern A with every float B/C. */
static void dtype_cases(tmat *t, spx_dtype dt)
{
    tcase c = case_make(t, SPX_OP_NONE, dt, 64);
    case_plan_runs(&c);
    run_case(&c, 0);
    c = case_make(t, SPX_OP_NONE, dt, 7);
    run_case(&c, 0);
    c = case_make(t, SPX_OP_TRANSPOSE, dt, 33);
    run_case(&c, 0);
}

static void sweep_dtypes(void)
{
    static const spx_dtype types[] = {SPX_F64, SPX_F16, SPX_BF16};
    for (int fam = 0; fam < (g_quick ? 2 : 4); fam++) {
        for (size_t d = 0; d <= 3; d++) {
            int pattern = d == 3;
            spx_dtype dt = pattern ? SPX_F32 : types[d];
            spx_matrix *A = NULL;
            const char *fname = "";
            uint64_t seed = next_seed();
            switch (fam) {
            case 0:
                fname = "uniform 12/row";
                CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, pick(5000, 1000), pick(4000, 900), 12, seed,
                                                dt, SPX_INDEX_DEFAULT, &A));
                break;
            case 1:
                fname = "rmat scale 12";
                CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, (int)pick(12, 9), 8, 0, 0, 0, seed, dt,
                                             SPX_INDEX_DEFAULT, &A));
                break;
            case 2:
                fname = "laplacian 2D";
                CHECK_OK(g_ctx, spx_gen_laplacian(g_ctx, 2, 60, dt, SPX_INDEX_DEFAULT, &A));
                break;
            default:
                fname = "block sparse 16x16";
                CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, 1000, 1000, 16, 16, 0.05, seed, dt,
                                                     SPX_INDEX_DEFAULT, &A));
                break;
            }
            if (pattern)
                A = astype(A, SPX_PATTERN, SPX_INDEX_DEFAULT);
            char name[160];
            snprintf(name, sizeof name, "%s %s", fname, pattern ? "pattern" : spx_dtype_name(dt));
            tmat t;
            if (tmat_make(&t, A, SPX_CSR, NULL, name)) {
                if (!pattern)
                    dtype_cases(&t, dt);
                else
                    for (int v = 0; v < 4; v++) { /* pattern A with every float B/C */
                        static const spx_dtype vt[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};
                        tcase c = case_make(&t, v % 2 ? SPX_OP_TRANSPOSE : SPX_OP_NONE, vt[v], 33);
                        run_case(&c, 0);
                    }
            }
            tmat_free(&t);
        }
    }
}

/* ---- hard shapes -------------------------------------------------------------------- */

static void run_shape(tmat *t, spx_op op, spx_dtype dt, int64_t n, int plan)
{
    tcase c = case_make(t, op, dt, n);
    if (plan)
        case_plan_runs(&c);
    run_case(&c, 0);
}

static void shape_matrix(spx_matrix *A, const char *name, spx_format fmt,
                         const spx_format_params *fp, const int64_t *ns, int nn)
{
    tmat t;
    if (tmat_make(&t, A, fmt, fp, name))
        for (int i = 0; i < nn; i++) {
            run_shape(&t, SPX_OP_NONE, SPX_F32, ns[i], i == 0);
            run_shape(&t, SPX_OP_TRANSPOSE, SPX_F32, ns[i], 0);
        }
    tmat_free(&t);
}

/* The algorithms `algs` (bits) on A (op N) with A's values converted to dt,
 * at each of ns, their plans run on the first. A is consumed. */
static void algs_run_as(spx_dtype dt, spx_matrix *A, const char *name, const int64_t *ns, int nn, unsigned algs)
{
    spx_matrix *A16[2] = {NULL, NULL};
    /* the forced batches also on 16-bit data (the same 64-column tiles in
     * 8-byte loads, or 16-byte ones in teams of 8 lanes), cut as for f32, at
     * each N */
    if (A && (algs & 1u << SPX_SPMM_ROW_BATCHES))
        for (int h = 0; h < 2; h++)
            CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, h ? SPX_BF16 : SPX_F16, SPX_INDEX_DEFAULT, &A16[h]));
    spx_matrix_info in;
    if (A && !spx_matrix_info_get(A, &in) && in.dtype != dt)
        A = astype(A, dt, SPX_INDEX_DEFAULT);
    tmat t;
    if (tmat_make(&t, A, SPX_CSR, NULL, name))
        for (int i = 0; i < nn; i++) {
            tcase c = case_make(&t, SPX_OP_NONE, dt, ns[i]);
            c.algs = algs;
            if (i == 0)
                case_plan_runs(&c);
            run_case(&c, 0);
        }
    tmat_free(&t);
    for (int h = 0; h < 2; h++) {
        char name16[160];
        snprintf(name16, sizeof name16, "%s %s", name, h ? "bf16" : "f16");
        if (tmat_make(&t, A16[h], SPX_CSR, NULL, name16))
            for (int i = 0; i < nn; i++) {
                tcase c = case_make(&t, SPX_OP_NONE, h ? SPX_BF16 : SPX_F16, ns[i]);
                c.algs = 1u << SPX_SPMM_ROW_BATCHES;
                run_case(&c, 0);
            }
        tmat_free(&t);
    }
}
static void algs_run(spx_matrix *A, const char *name, const int64_t *ns, int nn, unsigned algs)
{
    algs_run_as(SPX_F32, A, name, ns, nn, algs);
}

/* AUTO alone on A (op N, f32) at each of ns, its plan run on the first. */
static void auto_runs(spx_matrix *A, const char *name, const int64_t *ns, int nn)
{
    algs_run(A, name, ns, nn, 1u << SPX_SPMM_AUTO);
}

/* Operand layouts, leading dimensions, misaligned starts and alpha/beta on
 * one mid-size matrix of value type dt. */
static void layout_cases(tmat *t, spx_dtype dt)
{
    for (int v = 0; v < 6; v++) {
        tcase c = case_make(t, v == 5 ? SPX_OP_TRANSPOSE : SPX_OP_NONE, dt, v == 4 ? 1 : 33);
        c.lb = v & 1 ? SPX_COL_MAJOR : SPX_ROW_MAJOR;
        c.lc = v & 2 ? SPX_COL_MAJOR : SPX_ROW_MAJOR;
        c.pad_b = v == 0 ? 3 : v == 3 ? 7 : 0;
        c.pad_c = v == 0 ? 5 : v == 3 ? 2 : 1;
        c.off_b = v >= 3 ? 1 : 0; /* starts not 16-byte aligned */
        c.off_c = v >= 3 ? 3 : 0;
        if (v == 5)
            c.lb = c.lc = SPX_COL_MAJOR;
        run_case(&c, 0);
    }
    /* B and C aligned apart, N wider than a warp: 16-byte loads of B with
     * C stored element by element, then B one element off (lanes' columns
     * spread over the tile, lane_cols) with C's rows on 16 bytes */
    const int64_t vec = 16 / (int64_t)spx_dtype_size(dt), pad = (vec - 130 % vec) % vec;
    for (int v = 0; v < 2; v++) {
        tcase c = case_make(t, SPX_OP_NONE, dt, 130);
        c.off_c = v == 0;
        c.pad_b = v == 0 ? pad : 0;
        c.off_b = v == 1;
        c.pad_c = v == 1 ? pad : 0;
        run_case(&c, 0);
    }
    /* a column panel asked of AUTO's row kernels, three 16-byte vectors wide
     * (rounded down to two), B aligned and one element off */
    for (int v = 0; v < 2; v++) {
        tcase c = case_make(t, SPX_OP_NONE, dt, 60);
        c.algs = 1u << SPX_SPMM_AUTO;
        c.panel = 3 * vec;
        c.pad_b = v == 0 ? (vec - 60 % vec) % vec : 0;
        c.off_b = v;
        run_case(&c, 0);
    }
    /* alpha and beta: both 0 over a NaN C; accumulate; alpha 0 */
    tcase c = case_make(t, SPX_OP_NONE, dt, 16);
    c.nruns = 3;
    c.runs[0] = (trun){0.0, 0.0};
    c.runs[1] = (trun){2.0, 1.0};
    c.runs[2] = (trun){0.0, 0.75};
    c.plan = 1;
    c.pad_c = 2;
    run_case(&c, 0);
    /* alpha == 0 does not read B (as in BLAS): a NaN B must not leak */
    c = case_make(t, SPX_OP_NONE, dt, 16);
    c.nruns = 2;
    c.runs[0] = (trun){0.0, 0.75};
    c.runs[1] = (trun){0.0, 0.0};
    c.nan_b_alpha0 = 1;
    run_case(&c, 0);
}

/* One forced algorithm at each column tile width it takes (8, 16 and 32
 * 16-byte vectors), N ending in a partial vector: B and C 16-byte aligned
 * with leading dimensions padded to 16 bytes (cp.async, partial vectors
 * zero-filled), then one element off alignment (element copies); the plan
 * runs at width plan_w. */
static void tile_width_cases(tmat *t, spx_dtype dt, spx_spmm_alg alg, int64_t plan_w)
{
    int64_t vec = 16 / (int64_t)spx_dtype_size(dt);
    for (int64_t w = 8; w <= 32; w *= 2)
        for (int aligned = 1; aligned >= 0; aligned--) {
            int64_t n = w * vec + (vec + 1) / 2;
            tcase c = case_make(t, SPX_OP_NONE, dt, n);
            c.algs = 1u << alg;
            c.panel = w * vec;
            c.off_b = c.off_c = aligned ? 0 : 1;
            c.pad_b = c.pad_c = aligned ? (vec - n % vec) % vec : 0;
            if (w == plan_w && aligned)
                case_plan_runs(&c);
            run_case(&c, 0);
        }
}

/* 512 rows or fewer of `len` entries each, but row rows / 2 of `long_len`. */
static spx_matrix *one_long_row(int64_t rows, int64_t cols, int64_t len, int64_t long_len)
{
    int64_t lens[512];
    if (rows > 512)
        return NULL;
    for (int64_t i = 0; i < rows; i++)
        lens[i] = i == rows / 2 ? long_len : len;
    return build_csr(rows, cols, lens, SPX_INDEX_I32);
}

/* Fails unless the plan of `alg` for A at N (op N, A's value type, the
 * given precision) says `says` (or, with want false, does not). */
static void plan_mentions(const spx_matrix *A, int64_t n, spx_spmm_alg alg, spx_precision precision,
                          const char *says, bool want, const char *name)
{
    spx_spmm_plan *plan = NULL;
    spx_matrix_info info;
    spx_spmm_options opts = {.alg = alg, .precision = precision};
    CHECK_OK(g_ctx, spx_matrix_info_get(A, &info));
    CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, n, info.dtype, &opts, &plan));
    if (plan && (strstr(spx_spmm_plan_explain(plan), says) != NULL) != want)
        TFAIL("%s: %s's plan at precision %s %s \"%s\": %s", name, spx_spmm_alg_name(alg),
              spx_precision_name(precision), want ? "does not say" : "says", says, spx_spmm_plan_explain(plan));
    spx_spmm_plan_destroy(plan);
}
static void auto_plan_mentions(const spx_matrix *A, int64_t n, const char *says, bool want, const char *name)
{
    plan_mentions(A, n, SPX_SPMM_AUTO, SPX_PRECISION_EXACT, says, want, name);
}
static void auto_plan_says(const spx_matrix *A, int64_t n, const char *says, const char *name)
{
    auto_plan_mentions(A, n, says, true, name);
}
static void auto_plan_lacks(const spx_matrix *A, int64_t n, const char *text, const char *name)
{
    auto_plan_mentions(A, n, text, false, name);
}
/* A's entries in another value type; NULL where A is NULL or the conversion
 * fails (a failure counted) */
static spx_matrix *as_type(const spx_matrix *A, spx_dtype dtype)
{
    spx_matrix *C = NULL;
    if (A)
        CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, dtype, SPX_INDEX_DEFAULT, &C));
    return C;
}

/* Where merge path would cut rows, AUTO keeps them whole (N = 200: two column
 * tiles). Rows of 20-40 entries get a warp each (warp_rows_pay in the CUDA
 * plan: rows of 12-128 entries on average and at most) when those 4000 warps
 * give every SM 8 to 64 of them. Rows of 100-200 entries get a block of
 * warps each (block_rows_pay: 48 entries or more on average, the longest at
 * most 2.5 times that), at least two since rows of 128 entries or more give
 * each warp of two about 64: two on 4000 rows of a GPU of at most 333 SMs.
 * 300 such rows take the row batches instead on compute capability 9.0 and
 * later, their blocks making under a wave at this N < 256 (row_batches_may_pay),
 * else eight warps a row on a GPU of 100+ SMs (300 x 2 x 4 warps are under 24
 * per SM). */
static void whole_rows_shapes(void)
{
    static const int64_t n_two_tiles[] = {200};
    spx_matrix *A = build_random_rows(2000, 1500, 20, 40, 1, SPX_INDEX_I32);
    spx_device_info di;
    memset(&di, 0, sizeof di);
    bool gpu = g_cuda && spx_ctx_device_info(g_ctx, &di) == SPX_OK;
    if (A && gpu && 4000 >= 8 * di.sm_count && 4000 <= 64 * di.sm_count)
        auto_plan_says(A, 200, "a warp per row and column tile", "2000x1500 20..40/row");
    shape_matrix(A, "2000x1500 20..40/row", SPX_CSR, NULL, n_two_tiles, 1);
    static const int64_t block_rows[] = {300, 4000};
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "%lldx1000 100..200/row", (long long)block_rows[i]);
        A = build_random_rows(block_rows[i], 1000, 100, 200, 1, SPX_INDEX_I32);
        if (A && gpu)
            auto_plan_says(A, 200,
                           block_rows[i] == 300 && di.cc_major >= 9 ? "a team of 16 lanes per row"
                                                                 : "warps per row and column tile",
                           name);
        shape_matrix(A, name, SPX_CSR, NULL, n_two_tiles, 1);
    }
    /* Merge path keeps rows whole by raising its items a warp to twice the
     * longest row where that is at most twice an equal share (prepare_merge
     * in the CUDA plan): 48 rows an SM of 20 entries at N = 256 in f32 (two
     * column tiles) make an equal share of 32 items on any GPU; rows of 21
     * items then move warp starts by up to 20 entries, over half the share,
     * so the share is raised to 40. */
    static const int64_t n_raised[] = {256};
    A = gpu ? build_random_rows(48 * (int64_t)di.sm_count, 2000, 20, 20, 1, SPX_INDEX_I32) : NULL;
    if (A) {
        plan_mentions(A, 256, SPX_SPMM_MERGE_PATH, SPX_PRECISION_EXACT, "40 rows + entries each, twice the longest "
                      "row (an equal share is 32) (moved to row starts", true, "rows of 20, 48 an SM");
        shape_matrix(A, "rows of 20, 48 an SM", SPX_CSR, NULL, n_raised, 1);
    }
    /* At N <= 64 (f32) a power-law graph's longest row would hold a warp of
     * the row kernels for its whole run, so AUTO takes merge path (merge_pays:
     * 128 rounds of loads or more): R-MAT of scale 13 (16 entries a row, the
     * longest about 1500: 750 rounds at N = 48) at N = 48, its 8192 rows
     * making over 3/4 of a wave of the row batches' blocks up to 340 SMs.
     * At N = 32, in column tiles of 32, the batches take them on compute
     * capability 9.0 on, their blocks (256 of 256 threads, two an SM) making
     * at most a wave on 128 SMs or more (narrow_tile_pays) */
    static const int64_t n_skew[] = {48, 32};
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, 13, 16, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && gpu && di.sm_count <= 340)
        auto_plan_says(A, 48, "merge path cuts it across warps", "R-MAT 13 at N = 48");
    if (A && gpu && di.cc_major >= 9 && di.sm_count >= 128 && di.l2_bytes >= 4 * 8192 * 32 * 4)
        auto_plan_says(A, 32, "column tile of 32", "R-MAT 13 at N = 32");
    shape_matrix(A, "R-MAT 13", SPX_CSR, NULL, n_skew, 2);
    /* Past a wave, in tiles of 16 columns (N = 16: 1024 blocks of 32 rows,
     * four an SM, so 1-4 waves on 64-255 SMs), the batches take long rows (a
     * pruned 32768 x 1024 layer at 95 %: 51 entries a row) but not rows of 16
     * alike (narrow_tile_pays) */
    if (gpu && di.cc_major >= 9 && di.sm_count >= 64 && di.sm_count < 256) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 32768, 1024, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        if (A)
            auto_plan_says(A, 16, "column tile of 16", "pruned 32768x1024 at N = 16");
        spx_matrix_destroy(A);
        A = build_random_rows(32768, 32768, 16, 16, 1, SPX_INDEX_I32);
        if (A)
            auto_plan_lacks(A, 16, "column tile", "32768x32768 16/row at N = 16");
        spx_matrix_destroy(A);
    }
    /* Where the longest row would hold a row kernels' warp (merge path's
     * place), the batches take it at N <= 32 at any waves, the tail cut into
     * 16 pieces (narrow_tile_pays): R-MAT 16 at N = 16 (955k entries, the
     * longest about 6000: over a quarter of an SM's share on 40 SMs or more;
     * about 1.9 waves on 256 SMs, 7.8 on 64). Not where those pieces hold
     * over four times the tail bound: 40000 rows of 2 and one of 40000 at N
     * = 8 (pieces of 2500, the bound at most 512 on 5 SMs or more) */
    if (gpu && di.cc_major >= 9 && di.sm_count >= 64) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, 16, 16, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        if (A)
            auto_plan_says(A, 16, "column tile of 16", "R-MAT 16 at N = 16");
        spx_matrix_destroy(A);
        int64_t *lens = malloc(40000 * sizeof *lens);
        for (int64_t i = 0; lens && i < 40000; i++)
            lens[i] = i == 20000 ? 40000 : 2;
        A = lens ? build_csr(40000, 40000, lens, SPX_INDEX_I32) : NULL;
        free(lens);
        if (A)
            auto_plan_says(A, 8, "merge path cuts it across warps", "40000 rows of 2 and one of 40000 at N = 8");
        spx_matrix_destroy(A);
    }
    /* Medium rows keep a group of lanes each where they fill 3/8 of the
     * threads the GPU holds at once (choose_bin_kernels): 65536 rows of 48 at
     * N = 24, groups of 8 lanes, up to 682 SMs; the batches would make over 4
     * waves under 256 SMs with B's slice over 128 KB (narrow_tile_pays). At N
     * = 64 (half a warp of 16-byte loads a row) f32 keeps the row kernels on
     * this large product without a long row (nnz x N = 2e8), where merge path
     * took it before, and so does bf16 at N = 128; f64 at N = 32 takes merge
     * path (spx__cuda_spmm_plan_create) */
    if (gpu) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_uniform(g_ctx, 65536, 65536, 48, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        if (A && di.sm_count < 256)
            auto_plan_says(A, 24, "-> row_split (8 lanes per row", "65536x65536 48/row at N = 24");
        if (A)
            auto_plan_lacks(A, 64, "merge_path", "65536x65536 48/row at N = 64");
        spx_matrix *A16 = as_type(A, SPX_BF16), *A64 = as_type(A, SPX_F64);
        if (A16)
            auto_plan_lacks(A16, 128, "merge_path", "bf16 65536x65536 48/row at N = 128");
        if (A64)
            auto_plan_says(A64, 32, "merge_path", "f64 65536x65536 48/row at N = 32");
        spx_matrix_destroy(A16);
        spx_matrix_destroy(A64);
        spx_matrix_destroy(A);
    }
    /* A pruned 4096 x 4096 layer at 90 % (rows of about 410 entries): f32 at
     * N = 128 takes the row batches past their one wave in tiles of 64
     * columns (k >= 2048, 2 % of the cells or more: wide_tile_batches_pay),
     * bf16 rows a warp each where merge path would take these long, even
     * rows (warp_rows_pay) */
    if (gpu && di.cc_major >= 9) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 4096, 4096, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        spx_matrix *A16 = as_type(A, SPX_BF16);
        if (A)
            auto_plan_says(A, 128, "column tile of 64", "pruned 4096x4096 at 90 % at N = 128");
        if (A16)
            auto_plan_lacks(A16, 128, "merge_path", "bf16 pruned 4096x4096 at 90 % at N = 128");
        spx_matrix_destroy(A16);
        spx_matrix_destroy(A);
    }
    /* BAND only where N fills over half of its narrowest tile of 32 f32
     * columns (band_pays): a band of +-16 diagonals over 131072 rows at N =
     * 32, not at N = 16 */
    if (gpu) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_banded(g_ctx, 131072, 131072, 16, 16, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
        if (A) {
            auto_plan_says(A, 32, "blocks walk strips", "banded 131072 +-16 at N = 32");
            auto_plan_lacks(A, 16, "blocks walk strips", "banded 131072 +-16 at N = 16");
        }
        spx_matrix_destroy(A);
    }
    /* Short rows that fill the GPU four times over with warps taking 4
     * adjacent rows each (row_runs_pay in the CUDA plan: rows of at most 32
     * entries): 120000 rows of 1-12 entries, two in three empty (two bins:
     * the runs walk the sorted row list), at N = 130 (two column tiles,
     * 16-byte rows: 60000 warps, four waves of 64 per SM up to 234 SMs) and
     * N = 250 (rows off 16 bytes: spread lanes). */
    static const int64_t n_runs[] = {130, 250};
    A = build_random_rows(120000, 50000, 1, 12, 3, SPX_INDEX_I32);
    if (A && gpu && 60000 >= 4 * 64 * di.sm_count) {
        auto_plan_says(A, 130, "each warp taking 4 adjacent rows one after another", "120000x50000 1..12/row");
        /* asked column panels: not the runs, whose tiles are 32 vectors wide
         * (here merge path, which ignores panels, as before the runs) */
        spx_spmm_options o = {.alg = SPX_SPMM_AUTO, .panel_cols = 64};
        spx_spmm_plan *plan = NULL;
        CHECK_OK(g_ctx, spx_spmm_plan_create(g_ctx, SPX_OP_NONE, A, 130, SPX_F32, &o, &plan));
        if (plan && strstr(spx_spmm_plan_explain(plan), "adjacent rows"))
            TFAIL("120000x50000 1..12/row, panels of 64: %s", spx_spmm_plan_explain(plan));
        spx_spmm_plan_destroy(plan);
    }
    /* the same rows in f64 (16-byte vectors of 2 values: three column tiles
     * at N = 130, 90000 warps) */
    spx_matrix *A64 = as_type(A, SPX_F64);
    shape_matrix(A, "120000x50000 1..12/row", SPX_CSR, NULL, n_runs, 2);
    if (A64 && gpu && 90000 >= 4 * 64 * di.sm_count)
        auto_plan_says(A64, 130, "each warp taking 4 adjacent rows one after another", "120000x50000 1..12/row f64");
    tmat t64;
    if (tmat_make(&t64, A64, SPX_CSR, NULL, "120000x50000 1..12/row f64"))
        run_shape(&t64, SPX_OP_NONE, SPX_F64, 130, 1);
    tmat_free(&t64);
    /* TILED in wide blocks (tiled_wide in the CUDA plan): 256 rows of 35
     * entries and one of 60 with k = 1000 (3.5 % of the cells: short rows
     * for the batches, but one over their 48) at N = 1000 give 4 x 32 blocks
     * of 64 rows, and k = 1000 rows of a 128-byte tile miss half an SM's
     * shared memory but fit a whole one's (H100: 113 and 227 KB): AUTO takes
     * 512-thread blocks with every row in pieces where those 128 blocks make
     * one wave (128-256 SMs: AUTO wants every other SM to get a block) or two
     * at least 3/4 full (65-85) */
    static const int64_t n_wide[] = {1000};
    const int64_t sms = di.sm_count;
    A = one_long_row(256, 1000, 35, 60);
    if (A && gpu && ((sms >= 128 && sms <= 256) || (sms > 64 && sms <= 85)) &&
        di.smem_per_block_optin >= 1001 * 128 && 1001 * 128 > di.smem_per_sm / 2 - 1024)
        auto_plan_says(A, 1000, "all of B's column tile in a whole SM's shared memory", "256x1000 wide tiled");
    shape_matrix(A, "256x1000 wide tiled", SPX_CSR, NULL, n_wide, 1);
    /* Under the 4 % of the cells the batches otherwise need, with k >= 1024,
     * where their blocks make at most two waves (sparse_batches_pay in the
     * CUDA plan): a pruned 256 x 1024 layer at 97 % sparsity at N = 1000
     * gives 8 x 16 blocks of 512 threads, one an SM, where 512-thread blocks
     * make 0.9 of a wave (128-142 SMs), else 16 x 16 of 256 threads, two an
     * SM where they outnumber the SMs (up to 255) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 256, 1024, 0.97, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && gpu && di.cc_major >= 9 && sms >= 128 && sms < 256)
        auto_plan_says(A, 1000, "staged 16 at a time", "pruned 256x1024 at 97 % at N = 1000");
    shape_matrix(A, "pruned 256x1024 at 97 %", SPX_CSR, NULL, n_wide, 1);
    /* TILED's tiles of 16 vectors (tiled_double_tile in the CUDA plan): a
     * pruned 512 x 1000 layer at 90 % sparsity and N = 4096 needs chunks of k
     * (1001 rows of a 128-byte tile pass half an SM's shared memory, and its
     * 8 x 128 blocks are too many for wide ones); AUTO takes TILED with 64
     * columns a tile (no rows in batches, below: k < 1024, 512 rows and
     * TILED's 8 x 128 blocks pass one an SM) (the forced tile widths with k in
     * chunks: tile_width_cases below) */
    static const int64_t n_double[] = {130};
    int64_t half_sm = di.smem_per_sm / 2 - 1024; /* TILED's budget a block (tiled_smem_budget) */
    half_sm = half_sm > di.smem_per_block_optin ? di.smem_per_block_optin : half_sm < 48 * 1024 ? 48 * 1024 : half_sm;
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 1000, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && gpu && 1001 * 128 > half_sm && 8 * 128 >= 2 * di.sm_count && 2 * 8 * 64 >= 3 * di.sm_count)
        auto_plan_says(A, 4096, "rows x 64 columns", "pruned 512x1000 at N = 4096");
    shape_matrix(A, "pruned 512x1000", SPX_CSR, NULL, n_double, 1);
    /* Rows in batches (row_batches_pay in the CUDA plan, compute capability
     * 9.0 on; N >= 256; k >= 1024, or k >= 128 with at most 128 rows or TILED
     * at one block an SM at most; 4 % of the cells or more; blocks of 32
     * rows x 64 columns, or of 16 where those would not make 0.9 of a wave;
     * B's 64-column slice within a quarter of L2): a pruned 512 x 2048 layer at
     * 90 % sparsity (205 entries a row, all in one bin: no row list) at N =
     * 4096, run by AUTO; a 256 x 1024 one at 95 % at
     * N = 1024 and 1031 (8 x 16 and 8 x 17 blocks), run by AUTO; a 512 x 4608
     * one at 95 % (230 a row) at N = 1024 (16 x 16 blocks), every algorithm,
     * also at N = 1031 (rows off 16 bytes: spread lanes, a partial last tile),
     * as is 500 x 4608 with empty rows and rows of 200 and 256 entries (one
     * bin, so teams of one warp with 13 and 16 batches; the last block's rows
     * past m) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 2048, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    const bool batches_fit = gpu && di.cc_major >= 9 && di.l2_bytes >= 4 * 4608 * 256;
    if (A && batches_fit && 16 * 64 >= 0.9 * di.sm_count)
        auto_plan_says(A, 4096, "staged 16 at a time", "pruned 512x2048 at N = 4096");
    /* ... and at N < 256 where the blocks make under a wave: the same layer
     * at N = 96 (64 blocks of 16 rows, two column tiles of 64, the last part
     * empty: in a tile of 32 of its own it would make a second round of
     * blocks) and, in tiles as wide as N, N = 32 and 16 (32 blocks of 16
     * rows, 8 and 4 lanes a team); under half a wave (128+ SMs), rows cut
     * to fill it (which may change the blocks' shape) */
    if (A && batches_fit && 32 <= 0.75 * di.sm_count) {
        auto_plan_says(A, 32, "a team of 8 lanes per row and column tile of 32", "pruned 512x2048 at N = 32");
        auto_plan_says(A, 16, "because N = 16 is small", "pruned 512x2048 at N = 16");
        auto_plan_says(A, 16, "a team of 4 lanes per row and column tile of 16", "pruned 512x2048 at N = 16");
        auto_plan_says(A, 96, "because N = 96 is small", "pruned 512x2048 at N = 96");
        auto_plan_lacks(A, 96, "in a launch of its own", "pruned 512x2048 at N = 96");
    }
    static const int64_t n_auto[] = {4096, 32, 16, 96}, n_batches[] = {1024, 1031};
    auto_runs(A, "pruned 512x2048", n_auto, 4);
    /* ... and where N leaves 32 columns or fewer past its tiles of 64, the
     * last tile in a launch of its own after the others, 16 or 32 wide
     * (teams of 4 or 8 lanes, blocks of the same rows), where that makes
     * fewer rounds of blocks (last_tile_rounds): a pruned layer of 64 rows
     * an SM, k = 1024 at 90 % (102 entries a row), the forced batches at N =
     * 96 (2 x SMs blocks of 32 rows a tile, one an SM: 4 rounds in tiles of
     * 64, 2 + 1 with the last on its own), 80 and 160, also on 16-bit data */
    A = NULL;
    if (gpu && di.cc_major >= 9)
        CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 64 * (int64_t)di.sm_count, 1024, 0.9, next_seed(), SPX_F32,
                                       SPX_INDEX_DEFAULT, &A));
    static const int64_t n_last[] = {96, 80, 160};
    for (int i = 0; A && i < 3; i++)
        plan_mentions(A, n_last[i], SPX_SPMM_ROW_BATCHES, SPX_PRECISION_EXACT, "in a launch of its own", true,
                      "pruned layer of 64 rows an SM");
    algs_run(A, "pruned layer of 64 rows an SM", n_last, 3, 1u << SPX_SPMM_ROW_BATCHES);
    /* ... but not where the longest row holds over 4 times the average
     * entries (R-MAT of scale 16, 16 edges a row: its longest rows' blocks
     * would set the time twice over) */
    A = NULL;
    if (gpu && di.cc_major >= 9)
        CHECK_OK(g_ctx, spx_gen_rmat(g_ctx, 16, 16, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A)
        plan_mentions(A, 96, SPX_SPMM_ROW_BATCHES, SPX_PRECISION_EXACT, "in a launch of its own", false,
                      "R-MAT 16");
    spx_matrix_destroy(A);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 256, 1024, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 8 * 16 >= 0.9 * di.sm_count)
        auto_plan_says(A, 1024, "staged 16 at a time", "pruned 256x1024 at N = 1024");
    auto_runs(A, "pruned 256x1024", n_batches, 2);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 4608, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 16 * 16 >= 0.9 * di.sm_count)
        auto_plan_says(A, 1024, "staged 16 at a time", "pruned 512x4608 at N = 1024");
    shape_matrix(A, "pruned 512x4608", SPX_CSR, NULL, n_batches, 2);
    int64_t lens[512];
    static const int64_t cycle[] = {0, 200, 256, 256, 256};
    for (int i = 0; i < 500; i++)
        lens[i] = cycle[i % 5];
    A = build_csr(500, 4608, lens, SPX_INDEX_I32);
    if (A && batches_fit && 16 * 16 >= 0.9 * di.sm_count)
        auto_plan_says(A, 1024, "staged 16 at a time", "500x4608 0..256/row at N = 1024");
    shape_matrix(A, "500x4608 0..256/row", SPX_CSR, NULL, n_batches, 2);
    /* ... also where a row is a tail (more than three times a team's share),
     * cut into pieces on the teams beside each other (spx__row_batches_cut)
     * while the grid over the pieces makes at most 2.5 waves: 511 rows of 230
     * entries and one of 4608 (share 122138 x 16 / (32 x SMs): a tail from 40
     * SMs; 14 pieces on 132 SMs, the last slot of the group before them left
     * empty, 17 x 16 blocks, under 2.5 waves from 109 SMs), every algorithm at N =
     * 1024 and 1031; 480 rows of 100 and 32 of 4608 at N = 512 (share 195456
     * x 8 / (32 x SMs), a tail from 33 SMs; on 132 SMs 16 pieces a row, a
     * group each, 31 x 8 blocks; under 2.5 waves from 64 SMs), AUTO and the
     * forced batches, also at N = 515 */
    A = one_long_row(512, 4608, 230, 4608);
    if (A && batches_fit && di.sm_count >= 109)
        auto_plan_says(A, 1024, "cut into up to 16 pieces", "512x4608 with a full row at N = 1024");
    shape_matrix(A, "512x4608 with a full row", SPX_CSR, NULL, n_batches, 2);
    for (int i = 0; i < 512; i++)
        lens[i] = i % 16 == 5 ? 4608 : 100;
    A = build_csr(512, 4608, lens, SPX_INDEX_I32);
    if (A && batches_fit && di.sm_count >= 64)
        auto_plan_says(A, 512, "cut into up to 16 pieces", "512x4608 with 32 full rows at N = 512");
    static const int64_t n_cut[] = {512, 515};
    algs_run(A, "512x4608 with 32 full rows", n_cut, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... but not where the grid over the pieces would make more than 2.5
     * waves however long the pieces (up to the tail's length): 1024 x 1024
     * with 992 rows of 10 entries and 32 of 1024 at N = 1024 (4.07 % of the
     * cells; share 42688 x 16 / (32 x SMs), a tail from 65 SMs; on 132 SMs 8
     * pieces a row make 39 x 16 blocks, 4.7 waves, and 4 pieces 35 x 16),
     * where the forced batches still cut them, also at N = 1031 */
    int64_t tall[1024];
    for (int i = 0; i < 1024; i++)
        tall[i] = i % 32 == 7 ? 1024 : 10;
    A = build_csr(1024, 1024, tall, SPX_INDEX_I32);
    if (A && batches_fit && di.sm_count >= 65 && di.sm_count <= 200)
        auto_plan_lacks(A, 1024, "staged", "1024x1024 with 32 full rows at N = 1024");
    algs_run(A, "1024x1024 with 32 full rows", n_batches, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... and, where the rows make at most half a wave (tail or not), cut
     * into pieces within a bound of 16 entries or more, as many as one
     * wave holds (spx__row_batches_cut): a pruned 32 x 1024 layer at 95 % sparsity
     * (51 entries a row, the longest under 128) at N = 256 (32 x 4 teams in 8
     * blocks of 16 rows: half a wave from 16 SMs; about 4 pieces a row in a
     * wave from 40 SMs); 40 x 1024 with rows of 0, 128, 17, 64, 5 and 100
     * entries (5.1 % of the cells; on 64 SMs or more in 8, 2, 4, 1 and 7
     * pieces, a group's last slots left empty where a row's would cross its
     * end); AUTO and the forced batches, also at N = 259 (spread lanes, a
     * partial last tile) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 32, 1024, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && di.sm_count >= 40)
        auto_plan_says(A, 256, "of a wave) cut into up to 16 pieces", "pruned 32x1024 at N = 256");
    static const int64_t n_fill[] = {256, 259};
    algs_run(A, "pruned 32x1024", n_fill, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    static const int64_t fill_cycle[] = {0, 128, 17, 64, 5, 100};
    for (int i = 0; i < 40; i++)
        lens[i] = fill_cycle[i % 6];
    A = build_csr(40, 1024, lens, SPX_INDEX_I32);
    if (A && batches_fit && di.sm_count >= 64)
        auto_plan_says(A, 256, "of a wave) cut into up to 16 pieces", "40x1024 0..128/row at N = 256");
    algs_run(A, "40x1024 0..128/row", n_fill, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... the fill cut before the tail cut: a pruned 32 x 2048 layer at 80 %
     * sparsity (410 entries a row, the longest a tail from about 22 SMs:
     * over 128 entries and three shares) at N = 256 (2 x 4 blocks of 16
     * rows: half a wave from 16 SMs), AUTO and the forced batches, also at
     * N = 259 */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 32, 2048, 0.8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && di.sm_count >= 16)
        auto_plan_says(A, 256, "of a wave) cut into up to 16 pieces", "pruned 32x2048 at N = 256");
    algs_run(A, "pruned 32x2048", n_fill, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... and under 0.9 of a wave AUTO takes the batches whatever the rows'
     * length: a pruned 384 x 2048 layer at 90 % sparsity (205 entries a row)
     * at N = 256 (24 x 4 blocks of 16 rows: 0.5-0.9 of a wave on 54-95 SMs,
     * two an SM, and on 107-191, one an SM, the rows whole where none is a
     * tail; 0.9 or more on other counts up to 106, the rows cut to fill one
     * from 192), also at N = 259 */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 384, 2048, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit)
        auto_plan_says(A, 256, "the row's entries staged", "pruned 384x2048 at N = 256");
    auto_runs(A, "pruned 384x2048", n_fill, 2);
    /* ... and where whole rows leave the last round of blocks part empty,
     * every row cut into 2-8 pieces where the model of rounds_pieces says that
     * pays: a pruned 640 x 4096 layer at 90 % sparsity (410 entries a row,
     * no tail) at N = 512 (20 x 8 blocks of 32 rows, one an SM: 1.2 waves
     * on 132 SMs; in 2 or 3 pieces on 108-156 SMs), AUTO and the forced
     * batches, also at N = 515 (a partial last tile) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 640, 4096, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && di.sm_count >= 108 && di.sm_count <= 156)
        auto_plan_says(A, 512, "the busiest SM's blocks 2 x 32 rows; in ", "pruned 640x4096 at N = 512");
    static const int64_t n_rounds[] = {512, 515};
    algs_run(A, "pruned 640x4096", n_rounds, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... but not on rows of unequal length, whose pieces the model (the
     * average row's) misjudges: 300 x 4096 with 2 rows of 960 entries, 224
     * of 640 and 74 of 320 (the longest 1.7 times the average; no tail) at N
     * = 256 (76 blocks of 256 threads, 0.58 of a wave on 132 SMs) on 76-132
     * SMs, where the batches' blocks make over half a wave and no row is a
     * tail (from 133 SMs the longest are): rows whole (without the bound on
     * the rows' spread, 3 pieces on 120-132 SMs); AUTO and the forced
     * batches, also at N = 259 */
    for (int i = 0; i < 300; i++)
        lens[i] = i < 2 ? 960 : i < 226 ? 640 : 320;
    A = build_csr(300, 4096, lens, SPX_INDEX_I32);
    if (A && batches_fit && di.sm_count >= 76 && di.sm_count <= 132)
        auto_plan_lacks(A, 256, "pieces", "300x4096 320..960/row at N = 256");
    algs_run(A, "300x4096 320..960/row", n_fill, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* ... and where 128 <= k < 1024 on matrices of at most 128 rows: a pruned 64 x
     * 256 layer at 80 % sparsity at N = 4096 (2 x 64 blocks of 512 threads),
     * run by AUTO, also at N = 4099 (rows off 16 bytes, a partial last tile);
     * or where TILED would run one block an SM at most: a pruned 256 x 512
     * layer at 90 % at N = 1024 (TILED's 4 x 32 blocks, the batches' 8 x
     * 16); blocks of 256 threads where those of 512 would not make 0.9 of a
     * wave: a pruned 120 x 1152 layer at N = 1024 (8 x 16 blocks of 16 rows,
     * the last of 8, where 4 x 16 of 32 would leave SMs idle), also at N =
     * 1031 */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 64, 256, 0.8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 128 >= 0.9 * di.sm_count)
        auto_plan_says(A, 4096, "32 rows a block of 512 threads", "pruned 64x256 at N = 4096");
    static const int64_t n_small_k[] = {4096, 4099};
    auto_runs(A, "pruned 64x256", n_small_k, 2);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 256, 512, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 128 <= di.sm_count && 128 >= 0.9 * di.sm_count)
        auto_plan_says(A, 1024, "32 rows a block of 512 threads", "pruned 256x512 at N = 1024");
    auto_runs(A, "pruned 256x512", n_batches, 1);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 120, 1152, 0.8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 64 < 0.9 * di.sm_count && 128 >= 0.9 * di.sm_count)
        auto_plan_says(A, 1024, "16 rows a block of 256 threads", "pruned 120x1152 at N = 1024");
    auto_runs(A, "pruned 120x1152", n_batches, 2);
    /* On 16-bit data AUTO takes the batches in every shape, that of 32
     * entries a batch too: a pruned 120 x 1152 layer at 95 % sparsity at N =
     * 1024 (8 x 16 blocks of 256 threads, one an SM from 128 SMs; rows of
     * about 58 entries, no cut; the dense path does not pay, nnz x N = 7e6)
     * stages 32 entries a batch for f32 and bf16 data, run by AUTO on bf16 at
     * N = 1024 and 1031. AUTO on a bf16 pruned 128 x 1152 layer at 90 % at N
     * = 256 and 259 (rows cut to fill a wave; on 132 SMs in 144 blocks of 256
     * threads staging 16, two an SM) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 120, 1152, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    spx_matrix *A16 = as_type(A, SPX_BF16);
    if (A16 && batches_fit && di.sm_count >= 128 && 64 < 0.9 * di.sm_count) {
        auto_plan_says(A, 1024, "staged 32 at a time", "pruned 120x1152 at 95 % at N = 1024");
        auto_plan_says(A16, 1024, "staged 32 at a time", "bf16 pruned 120x1152 at 95 % at N = 1024");
    }
    spx_matrix_destroy(A);
    static const int64_t n_32[] = {1024, 1031};
    algs_run_as(SPX_BF16, A16, "bf16 pruned 120x1152 at 95 %", n_32, 2, 1u << SPX_SPMM_AUTO);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 128, 1152, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    static const int64_t n_bf16[] = {256, 259};
    algs_run_as(SPX_BF16, A, "pruned 128x1152", n_bf16, 2, 1u << SPX_SPMM_AUTO);
    /* The 256-thread blocks stage 32 entries a batch, one block an SM, where
     * they number at most the SMs, else 16, two blocks an SM: a pruned 512 x
     * 4608 layer at 95 % sparsity at N = 256 (32 x 4 blocks), every
     * algorithm, also at N = 255 (spread lanes, a partial last tile; AUTO
     * takes the batches from N = 256, so there only the forced ones); a
     * pruned 768 x 3072 one at 90 % at N = 256 (48 x 4), AUTO and the forced
     * batches, also at N = 255 */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 4608, 0.95, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 64 < 0.9 * di.sm_count && 128 >= 0.9 * di.sm_count && 128 <= di.sm_count)
        auto_plan_says(A, 256, "staged 32 at a time in shared memory and 32 B row segments in flight a lane, 16 rows a "
                       "block of 256 threads (128 blocks, 1 an SM)", "pruned 512x4608 at N = 256");
    static const int64_t n_256[] = {256, 255};
    shape_matrix(A, "pruned 512x4608 (N = 256)", SPX_CSR, NULL, n_256, 2);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 768, 3072, 0.9, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 96 < 0.9 * di.sm_count && 192 > di.sm_count)
        auto_plan_says(A, 256, "staged 16 at a time in shared memory and 16 B row segments in flight a lane, 16 rows a "
                       "block of 256 threads (192 blocks, 2 an SM)", "pruned 768x3072 at N = 256");
    algs_run(A, "pruned 768x3072", n_256, 2, 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_BATCHES);
    /* A longest row of at most 128 entries is no tail (ROW_BATCHES_NO_TAIL_ROW),
     * however many times a team's share it holds: at N = 256 (the blocks as
     * above), 512 x 128 with rows of 8 entries and one of 120 (a team's share,
     * at most 4208 x 4 / (16 x SMs), is under 15 on the 72 SMs or more that
     * these blocks need) takes the batches whole, every algorithm checked;
     * 512 x 256 with rows of 16 and one of 200 (share under 30) takes them
     * with that row in two pieces of 100, every algorithm checked */
    A = one_long_row(512, 128, 8, 120);
    const bool one_wave_256 = batches_fit && 64 < 0.9 * di.sm_count && 128 >= 0.9 * di.sm_count;
    if (A && one_wave_256 && 128 <= di.sm_count)
        auto_plan_says(A, 256, "staged 32 at a time", "512x128 8/row and one of 120 at N = 256");
    if (A && one_wave_256 && 128 <= di.sm_count)
        auto_plan_lacks(A, 256, "pieces", "512x128 8/row and one of 120 at N = 256");
    static const int64_t n_short[] = {256};
    shape_matrix(A, "512x128 8/row and one of 120", SPX_CSR, NULL, n_short, 1);
    A = one_long_row(512, 256, 16, 200);
    if (A && one_wave_256 && 128 <= di.sm_count)
        auto_plan_says(A, 256, "rows of over 128 entries (1; the longest 200", "512x256 16/row and one of 200 at N = 256");
    shape_matrix(A, "512x256 16/row and one of 200", SPX_CSR, NULL, n_short, 1);
    /* Under 4 % of the cells with k < 1024, short rows stage 8 entries a
     * batch, four blocks of 128 threads an SM (ROW_BATCHES_SHORT_*): a
     * pruned 512 x 512 layer at 98 % sparsity (about 10 entries a row, the
     * longest some 25) at N = 2048 (32 x 32 blocks, 16 an SM at most from 64
     * SMs), every algorithm, also at N = 2051 (spread lanes, a partial last
     * tile), and 10 entries a row with one of 48; not with a row of 49
     * entries, nor under 1.5 % of the cells (98.6 % sparsity), nor with k =
     * 1024, nor where the blocks pass 16 an SM (2048 x 512 at N = 4096: 128 x
     * 64 blocks, up to 512 SMs) */
    const bool short_rows_fit = batches_fit && 1024 >= 0.9 * di.sm_count && 1024 <= 16 * di.sm_count;
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 512, 0.98, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && short_rows_fit) {
        auto_plan_says(A, 2048, "staged 8 at a time in shared memory and 8 B row segments in flight a lane, 16 rows a "
                       "block of 128 threads (1024 blocks, 4 an SM)", "pruned 512x512 at 98 % at N = 2048");
        /* the same at the tensor-core precisions, where the dense path does
         * not pay (nnz x N = 1.1e7), B read as given */
        for (spx_precision p = SPX_PRECISION_TF32; p <= SPX_PRECISION_F16; p++) {
            plan_mentions(A, 2048, SPX_SPMM_AUTO, p, "staged 8 at a time in shared memory", true,
                          "pruned 512x512 at 98 % at N = 2048");
            plan_mentions(A, 2048, SPX_SPMM_AUTO, p, "operands as given (not rounded)", true,
                          "pruned 512x512 at 98 % at N = 2048");
        }
    }
    static const int64_t n_short_rows[] = {2048, 2051};
    spx_matrix *A_copy = NULL; /* the batches forced on it also on 16-bit data (algs_run) */
    if (A)
        CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, SPX_F32, SPX_INDEX_DEFAULT, &A_copy));
    shape_matrix(A, "pruned 512x512 at 98 %", SPX_CSR, NULL, n_short_rows, 2);
    algs_run(A_copy, "pruned 512x512 at 98 %", n_short_rows, 2, 1u << SPX_SPMM_ROW_BATCHES);
    A = one_long_row(512, 512, 10, 48);
    if (A && short_rows_fit)
        auto_plan_says(A, 2048, "staged 8", "512x512 10/row and one of 48 at N = 2048");
    spx_matrix_destroy(A);
    A = one_long_row(512, 512, 10, 49);
    if (A && short_rows_fit)
        auto_plan_lacks(A, 2048, "staged", "512x512 10/row and one of 49 at N = 2048");
    spx_matrix_destroy(A);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 512, 0.986, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && short_rows_fit)
        auto_plan_lacks(A, 2048, "staged", "pruned 512x512 at 98.6 % at N = 2048");
    spx_matrix_destroy(A);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 512, 1024, 0.98, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && short_rows_fit)
        auto_plan_lacks(A, 2048, "staged", "pruned 512x1024 at 98 % at N = 2048");
    spx_matrix_destroy(A);
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 2048, 512, 0.98, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && batches_fit && 8192 > 16 * di.sm_count)
        auto_plan_lacks(A, 4096, "staged", "pruned 2048x512 at 98 % at N = 4096");
    spx_matrix_destroy(A);
    /* TILED keeps tiles of 32 columns where 64-row blocks of 64-column tiles
     * would leave SMs idle: a pruned 192 x 1000 layer at 80 % sparsity at N
     * = 4096 would give 3 x 64 blocks (no batches: k < 1024, over 128 rows
     * and TILED's 3 x 128 blocks pass one an SM) */
    A = NULL;
    CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 192, 1000, 0.8, next_seed(), SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (A && gpu && 2 * 3 * 64 < 3 * di.sm_count)
        auto_plan_says(A, 4096, "rows x 32 columns", "pruned 192x1000 at N = 4096");
    spx_matrix_destroy(A);
}

/* AUTO's product of A (of type t, destroyed) checked at N = n. */
static void auto_16bit_check(spx_matrix *A, spx_dtype t, int64_t n, const char *name)
{
    tmat m;
    if (tmat_make(&m, A, SPX_CSR, NULL, name)) {
        tcase c = case_make(&m, SPX_OP_NONE, t, n);
        c.algs = 1u << SPX_SPMM_AUTO;
        case_plan_runs(&c);
        run_case(&c, 0);
    }
    tmat_free(&m);
}

/* AUTO on f16 and bf16 data (dense_pays and tiled_pays in the CUDA plan): a
 * pruned 512 x 512 layer at 97 % sparsity takes TILED at N = 1024 (8 x 16
 * blocks of 64 rows x 64 columns; all of k in 64 KB; too sparse for the own
 * GEMM's 1/25 of the cells, too little work for cuBLASLt's; its wgmma kernel
 * asks for 1/64 and takes it; where that kernel is not built, compute
 * capability 9.0 gives its short rows, 15 entries on average, to the
 * batches); at 90 % it
 * takes the dense path with spx's own GEMM at N = 1024 (2 m k N = 5.4e8), as
 * does a 512 x 128 one at N = 1024 (nnz x N = 6.7e6), and cuBLASLt's at N =
 * 4096 (past the own GEMM's flops; not its wgmma kernel's, which takes it
 * where it runs: own_gemm_on_wgmma); a 512 x 2048 one at N = 256, where TILED
 * would need chunks of k at this density, takes the dense path from nnz x N
 * = 2.7e7; a 2048 x 512 one at 98 % sparsity takes it at N = 4096 (16-bit
 * GEMMs from 1/64 of the cells). Every plan's result is checked too. */
static void auto_16bit_shapes(void)
{
    static const spx_dtype types16[] = {SPX_F16, SPX_BF16};
    static const struct {
        int64_t m, k, n;
        double sparsity;
        const char *says;
        const char *says_wgmma; /* where own_gemm_on_wgmma */
        const char *says_sm90;  /* elsewhere on compute capability 9.0 and later */
        /* a NULL pins nothing there; nor do GPUs of fewer than min_sms SMs or
         * more than max_sms (0: no bound) */
        int min_sms, max_sms;
        unsigned types; /* bit d: types16[d] */
    } cases[] = {/* TILED wants every other SM to get a block: 128 blocks */
                 {512, 512, 1024, 0.97, "all of B's column tile in shared memory",
                  "spx's own kernel in one launch (wgmma)", "staged 8 at a time", 0, 256, 3},
                 {512, 512, 1024, 0.9, "spx's own kernel in one launch", NULL, NULL, 0, 0, 3},
                 {512, 128, 1024, 0.9, "spx's own kernel in one launch", NULL, NULL, 0, 0, 3},
                 {512, 512, 4096, 0.9, "GEMM by cuBLASLt", "spx's own kernel in one launch (wgmma)", NULL, 0, 0, 3},
                 {512, 2048, 256, 0.9, "written out densely", NULL, NULL, 0, 0, 3},
                 {2048, 512, 4096, 0.98, "written out densely", NULL, NULL, 0, 0, 3},
                 /* rows of 61 entries: 4096 warps, a warp per row and
                  * column tile in place of the batches' 1024 blocks
                  * (merge_place_first) */
                 {2048, 4096, 512, 0.985, "a warp per row and column tile", NULL, NULL, 96, 255, 3},
                 /* rows of 15 entries: 8192 warps, a warp per row and column
                  * tile (8 to 64 an SM, or to 128 where merge path's share,
                  * 2094 / SMs items, falls under the longest row, about 29
                  * entries), where merge path would run anyway or the
                  * batches' 1024 blocks make over 2 waves */
                 {2048, 1024, 1024, 0.985, "a warp per row and column tile", NULL, NULL, 96, 255, 3},
                 /* and where the batches make at most 2 waves, once the
                  * 2048 warps give every SM 12 or more: 512 rows in 4
                  * column tiles at N = 1024, 2048 rows in one at N = 256 */
                 {512, 2048, 1024, 0.985, "a warp per row and column tile", NULL, NULL, 100, 170, 3},
                 {2048, 2048, 256, 0.985, "a warp per row and column tile", NULL, NULL, 100, 170, 3},
                 /* a small product too, at full column tiles (32 lanes, not
                  * narrowed: choose_bin_kernels) */
                 {2048, 1024, 256, 0.985, "warp_row (32 lanes per row", NULL, NULL, 100, 170, 3},
                 /* where TILED would pay (1.5 % of the cells) */
                 {4096, 1024, 256, 0.985, "a warp per row and column tile", NULL, NULL, 100, 170, 3},
                 /* rows of 7 entries: merge path rather than the batches'
                  * 1024 blocks (over 2 waves below 256 SMs; merge_place_first),
                  * and their 512 at N = 512, though the product is small from
                  * 128 SMs (the row kernels would take it otherwise) */
                 {2048, 1024, 1024, 0.993, "merge_path", NULL, NULL, 96, 255, 3},
                 {2048, 1024, 512, 0.993, "merge_path", NULL, NULL, 96, 255, 3}};
    spx_device_info di;
    memset(&di, 0, sizeof di);
    const bool gpu = g_cuda && spx_ctx_device_info(g_ctx, &di) == SPX_OK, wgmma = own_gemm_on_wgmma();
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            if (!(cases[i].types >> d & 1))
                continue;
            spx_matrix *A = NULL;
            CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, cases[i].m, cases[i].k, cases[i].sparsity, next_seed(),
                                           types16[d], SPX_INDEX_DEFAULT, &A));
            char name[80];
            snprintf(name, sizeof name, "pruned %lldx%lld (%g sparse) %s N=%lld", (long long)cases[i].m,
                     (long long)cases[i].k, cases[i].sparsity, spx_dtype_name(types16[d]), (long long)cases[i].n);
            const char *says = wgmma && cases[i].says_wgmma                        ? cases[i].says_wgmma
                               : !wgmma && cases[i].says_sm90 && di.cc_major >= 9 ? cases[i].says_sm90
                                                                                   : cases[i].says;
            if (A && gpu && says && di.sm_count >= cases[i].min_sms &&
                (!cases[i].max_sms || di.sm_count <= cases[i].max_sms))
                auto_plan_says(A, cases[i].n, says, name);
            auto_16bit_check(A, types16[d], cases[i].n, name);
        }
    /* k not whole 16-byte vectors of 16-bit values: cuBLASLt's GEMM (past
     * the own GEMM's flops) ran 4-5x slower, so a 2048 x 2003 layer at 2 %
     * of the cells keeps to the sparse kernels at N = 1024 (dense_pays) */
    for (size_t d = 0; d < 2; d++) {
        spx_matrix *A = NULL;
        CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, 2048, 2003, 0.979, next_seed(), types16[d], SPX_INDEX_DEFAULT, &A));
        char name[80];
        snprintf(name, sizeof name, "pruned 2048x2003 (0.979 sparse) %s N=1024", spx_dtype_name(types16[d]));
        if (A && gpu)
            auto_plan_lacks(A, 1024, "written out densely", name);
        auto_16bit_check(A, types16[d], 1024, name);
    }
}

/* Slabs of A's columns (spx_spmm_options.k_slabs) asked of AUTO and the row
 * kernels: rows with none, few or many entries in a slab, N of one column to
 * several column tiles, B one element off alignment, leading dimensions
 * padded, op N and T, every float type; more slabs than columns. Then the
 * planner's own choice: uniform random rows of 64 entries whose B is 4.5
 * times the L2 cache (N = 64) must run in slabs. */
static void k_slabs_shapes(void)
{
    static const spx_dtype types_all[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};
    const unsigned row_algs = 1u << SPX_SPMM_AUTO | 1u << SPX_SPMM_ROW_SPLIT | 1u << SPX_SPMM_WARP_ROW |
                              1u << SPX_SPMM_BLOCK_ROW;
    static const int64_t ns[] = {33, 1, 7, 130};
    tmat t;
    if (tmat_make(&t, build_random_rows(700, 3000, 0, 40, 1, SPX_INDEX_I32), SPX_CSR, NULL, "k slabs 700x3000"))
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int op = 0; op < 2; op++) {
                tcase c = case_make(&t, op ? SPX_OP_TRANSPOSE : SPX_OP_NONE, SPX_F32, ns[i]);
                c.algs = row_algs;
                c.k_slabs = i == 0 ? 3 : 5;
                c.off_b = ns[i] == 130;
                c.pad_c = ns[i] == 7 ? 2 : 0;
                if (i == 0 && !op)
                    case_plan_runs(&c);
                run_case(&c, 0);
            }
    tmat_free(&t);
    for (size_t d = 1; d < 4; d++) {
        char name[64];
        snprintf(name, sizeof name, "k slabs 900x2000 %s", spx_dtype_name(types_all[d]));
        if (tmat_make(&t, astype(build_random_rows(900, 2000, 0, 60, 2, SPX_INDEX_I32), types_all[d], SPX_INDEX_DEFAULT),
                      SPX_CSR, NULL, name)) {
            tcase c = case_make(&t, SPX_OP_NONE, types_all[d], 100);
            c.algs = row_algs;
            c.k_slabs = 4;
            run_case(&c, 0);
        }
        tmat_free(&t);
    }
    /* one row holding half the entries (huge-row bin: blocks of warps per slab) */
    if (tmat_make(&t, build_dense_row(pick(8192, 2048), pick(4097, 1025)), SPX_CSR, NULL, "k slabs one dense row")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 64);
        c.algs = row_algs;
        c.k_slabs = 7;
        run_case(&c, 0);
    }
    tmat_free(&t);
    if (tmat_make(&t, build_random_rows(200, 3, 0, 3, 1, SPX_INDEX_I32), SPX_CSR, NULL, "k slabs beyond k")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 40);
        c.algs = row_algs;
        c.k_slabs = SPX_SPMM_MAX_K_SLABS;
        run_case(&c, 0);
    }
    tmat_free(&t);
    spx_device_info di;
    memset(&di, 0, sizeof di);
    if (!g_cuda || spx_ctx_device_info(g_ctx, &di) != SPX_OK || di.l2_bytes <= 0)
        return;
    const int64_t n = 64, k = (int64_t)(4.5 * (double)di.l2_bytes / (double)(n * 4));
    spx_matrix *A = build_random_rows(50000, k, 64, 64, 1, SPX_INDEX_I32);
    if (A)
        auto_plan_says(A, n, "slabs", "k slabs chosen");
    if (tmat_make(&t, A, SPX_CSR, NULL, "k slabs chosen")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, n);
        c.algs = 1u << SPX_SPMM_AUTO;
        c.precs = 1u << SPX_PRECISION_EXACT;
        case_plan_runs(&c);
        run_case(&c, 0);
    }
    tmat_free(&t);
}

/* GATHER_TC: k cut into chunks of B's rows (3000 rows of B with op N, 700
 * with op T: several chunks at every operand width), N over several column
 * tiles and off the 16-byte vector (300) or within one narrow tile (40), f16
 * and bf16 data; and a product wide enough for 256-byte column tiles. */
static void gather_shapes(void)
{
    static const int64_t ns[] = {300, 40};
    static const spx_dtype halves[] = {SPX_F16, SPX_BF16};
    const unsigned algs = 1u << SPX_SPMM_GATHER_TC | 1u << SPX_SPMM_AUTO;
    const int64_t rows = pick(700, 300);
    tmat t;
    for (int h = 0; h < 2; h++) {
        spx_matrix *X = astype(build_random_rows(rows, 3000, 150, 300, 1, SPX_INDEX_I32), halves[h], SPX_INDEX_DEFAULT);
        if (tmat_make(&t, X, SPX_CSR, NULL, h ? "gather chunks bf16" : "gather chunks f16")) {
            tcase c = case_make(&t, SPX_OP_NONE, halves[h], 300);
            c.algs = algs;
            run_case(&c, 0);
        }
        tmat_free(&t);
    }
    if (tmat_make(&t, build_random_rows(rows, 3000, 150, 300, 1, SPX_INDEX_I32), SPX_CSR, NULL, "gather chunks")) {
        for (int op = 0; op < 2; op++)
            for (int i = 0; i < 2; i++) {
                tcase c = case_make(&t, op ? SPX_OP_TRANSPOSE : SPX_OP_NONE, SPX_F32, ns[i]);
                c.algs = algs;
                if (i == 0)
                    case_plan_runs(&c);
                run_case(&c, 0);
            }
    }
    tmat_free(&t);
    /* enough blocks for 256-byte column tiles (on GPUs of up to 288 SMs), k in two chunks of them */
    if (tmat_make(&t, build_random_rows(4096, 600, 20, 40, 1, SPX_INDEX_I32), SPX_CSR, NULL, "gather wide tiles")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 2200);
        c.algs = 1u << SPX_SPMM_GATHER_TC;
        run_case(&c, 0);
    }
    tmat_free(&t);
}

static void hard_shapes(void)
{
    static const int64_t n_small[] = {7, 1}, n_mid[] = {64, 1000, 1}, n_one[] = {1, 7};
    static const spx_dtype types_all[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16};
    int64_t lens1 = 1, lens0 = 0;
    /* 0 nnz, 1x1, a matrix of empty rows */
    spx_matrix *A = build_random_rows(300, 200, 0, 0, 1, SPX_INDEX_I32);
    shape_matrix(A, "300x200 no entries", SPX_CSR, NULL, n_small, 2);
    shape_matrix(build_csr(1, 1, &lens1, SPX_INDEX_I32), "1x1", SPX_CSR, NULL, n_one, 2);
    shape_matrix(build_csr(1, 1, &lens0, SPX_INDEX_I32), "1x1 no entries", SPX_CSR, NULL, n_one, 2);
    A = build_random_rows(pick(5000, 1000), pick(4000, 900), 1, 40, 3, SPX_INDEX_I32);
    shape_matrix(A, "2 of 3 rows empty", SPX_CSR, NULL, n_small, 2);
    /* empty dimensions: 0 x 50 (no output), 50 x 0 (C = beta * C), N = 0 */
    A = build_random_rows(0, 50, 0, 0, 1, SPX_INDEX_I32);
    shape_matrix(A, "0x50", SPX_CSR, NULL, n_small, 2);
    A = build_random_rows(50, 0, 0, 0, 1, SPX_INDEX_I32);
    shape_matrix(A, "50x0", SPX_CSR, NULL, n_small, 2);
    tmat t;
    if (tmat_make(&t, build_random_rows(300, 200, 1, 9, 1, SPX_INDEX_I32), SPX_CSR, NULL,
                  "300x200 with n = 0")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 0);
        run_case(&c, 0);
    }
    tmat_free(&t);
    /* one row holds half the nonzeros */
    int64_t dn = pick(8192, 1024);
    shape_matrix(build_dense_row(dn, dn / 2 + 1), "one dense row", SPX_CSR, NULL, n_mid,
                 g_quick ? 1 : 3);
    shape_matrix(astype(build_dense_row(dn, 3), SPX_DTYPE_DEFAULT, SPX_INDEX_I64),
                 "one dense row i64", SPX_CSR, NULL, n_mid, 1);
    if (!g_quick)
        shape_matrix(build_dense_row(30000, 29999), "one dense row 30000", SPX_CSR, NULL, n_mid, 1);
    /* a row cut into hundreds of merge-path pieces (added in two levels), in
     * the 8- and 2-byte types, over two column tiles */
    for (size_t d = 1; d < 4; d += 2) {
        int64_t rn = pick(30000, 6000);
        char name[64];
        snprintf(name, sizeof name, "one dense row %lld %s", (long long)rn, spx_dtype_name(types_all[d]));
        if (tmat_make(&t, astype(build_dense_row(rn, rn / 3), types_all[d], SPX_INDEX_DEFAULT), SPX_CSR, NULL,
                      name))
            run_shape(&t, SPX_OP_NONE, types_all[d], 300, 0);
        tmat_free(&t);
    }
    /* a single row and a single column, full */
    int64_t full = pick(5000, 500);
    shape_matrix(build_csr(1, full, &full, SPX_INDEX_I32), "one full row", SPX_CSR, NULL, n_small,
                 2);
    int64_t *ones = malloc(sizeof(int64_t) * (size_t)full);
    if (ones) {
        for (int64_t i = 0; i < full; i++)
            ones[i] = 1;
        shape_matrix(build_csr(full, 1, ones, SPX_INDEX_I32), "one full column", SPX_CSR, NULL,
                     n_small, 2);
        free(ones);
    }
    /* n = 1, 7, 33, 1000 on a mid-size non-square matrix; int64 indices */
    static const int64_t n_odd[] = {33, 1, 7, 1000};
    shape_matrix(build_random_rows(3000, 2500, 0, 18, 1, SPX_INDEX_I32), "3000x2500 0..18/row",
                 SPX_CSR, NULL, n_odd, g_quick ? 2 : 4);
    shape_matrix(build_random_rows(3000, 2500, 0, 18, 1, SPX_INDEX_I64), "3000x2500 i64", SPX_CSR,
                 NULL, n_odd, 2);
    whole_rows_shapes();
    auto_16bit_shapes();
    k_slabs_shapes();
    gather_shapes();
    /* blocked formats whose blocks and slices do not divide the shape */
    /* 16 x 32: the last block column's second half starts past k = 997 */
    static const int64_t bsr_shapes[][2] = {{4, 4}, {3, 5}, {16, 16}, {20, 24}, {16, 32}};
    for (size_t b = 0; b < 5; b++) {
        spx_format_params fp = {.block_rows = bsr_shapes[b][0], .block_cols = bsr_shapes[b][1]};
        char name[64];
        snprintf(name, sizeof name, "1001x997 as bsr %lldx%lld", (long long)fp.block_rows,
                 (long long)fp.block_cols);
        shape_matrix(build_random_rows(1001, 997, 0, 12, 1, b == 1 ? SPX_INDEX_I64 : SPX_INDEX_I32),
                     name, SPX_BSR, &fp, n_odd, 2);
    }
    spx_matrix *blocks = NULL; /* whole 16 x 16 blocks of a pattern A: AUTO's BSR of ones */
    CHECK_OK(g_ctx, spx_gen_block_sparse(g_ctx, 1001, 997, 16, 16, 0.1, next_seed(), SPX_F32, SPX_INDEX_I32, &blocks));
    shape_matrix(astype(blocks, SPX_PATTERN, SPX_INDEX_DEFAULT), "1001x997 16x16 blocks, pattern", SPX_CSR, NULL,
                 n_odd, 2);
    static const int64_t sell_shapes[][2] = {{32, 64}, {8, 1}, {4, 1000}};
    for (size_t s = 0; s < 3; s++) {
        spx_format_params fp = {.sell_c = sell_shapes[s][0], .sell_sigma = sell_shapes[s][1]};
        char name[64];
        snprintf(name, sizeof name, "1001x997 as sell %lld/%lld", (long long)fp.sell_c,
                 (long long)fp.sell_sigma);
        shape_matrix(build_random_rows(1001, 997, 0, 30, 1, s == 1 ? SPX_INDEX_I64 : SPX_INDEX_I32),
                     name, SPX_SELL, &fp, n_odd, 2);
    }
    /* TILED at each of its column tile widths, in every float type: 75 x 2500
     * (rows of ~200-700 entries) holds B's tile in several chunks of k,
     * 75 x 1111 too but for the narrowest tile, which takes a wide block
     * (all of k in a whole SM's shared memory, on GPUs with 143 KB a block),
     * 300 x 200 in one (on GPUs with ~100 KB of shared memory a block, the
     * widest tile in chunks); k, m and N divide none of them */
    static const struct {
        int64_t m, k;
        double sparsity;
    } tiled_shapes[] = {{75, 2500, 0.8}, {75, 1111, 0.8}, {300, 200, 0.7}};
    for (size_t d = 0; d < 4; d++)
        for (size_t sh = 0; sh < 3; sh++) {
            A = NULL;
            CHECK_OK(g_ctx, spx_gen_pruned(g_ctx, tiled_shapes[sh].m, tiled_shapes[sh].k, tiled_shapes[sh].sparsity,
                                           next_seed(), types_all[d], SPX_INDEX_DEFAULT, &A));
            char name[64];
            snprintf(name, sizeof name, "tiled widths %lldx%lld %s", (long long)tiled_shapes[sh].m,
                     (long long)tiled_shapes[sh].k, spx_dtype_name(types_all[d]));
            if (tmat_make(&t, A, SPX_CSR, NULL, name))
                tile_width_cases(&t, types_all[d], SPX_SPMM_TILED, 32);
            tmat_free(&t);
        }
    /* TILED with rows cut into 2, 4 and 8 pieces (rows over twice the
     * average; the longest is full) beside rows of 10-30 entries, with k in
     * one chunk (600, narrowest tile), in one wide block (1500, narrowest
     * tile: every row in 2 pieces or more) and in several chunks (1500
     * wider, 3000; 200 rows leave the last block of 64 room for the pieces),
     * in every float type */
    static const int64_t piece_k[] = {600, 1500, 3000};
    int64_t piece_lens[200];
    for (size_t kk = 0; kk < 3; kk++) {
        for (int64_t i = 0; i < 200; i++)
            piece_lens[i] = 10 + (int64_t)spx__rand_below(&g_rng, 21);
        for (int64_t i = 0; i < 11; i++) /* spread out: pieces land in several blocks and warps */
            piece_lens[18 * i + 3] = i < 5 ? 70 : i < 8 ? 150 : i < 10 ? 400 : piece_k[kk];
        for (size_t d = 0; d < 4; d++) {
            char name[64];
            snprintf(name, sizeof name, "tiled pieces 200x%lld %s", (long long)piece_k[kk],
                     spx_dtype_name(types_all[d]));
            if (tmat_make(&t,
                          astype(build_csr(200, piece_k[kk], piece_lens, SPX_INDEX_I32), types_all[d],
                                 SPX_INDEX_DEFAULT),
                          SPX_CSR, NULL, name))
                tile_width_cases(&t, types_all[d], SPX_SPMM_TILED, 32);
            tmat_free(&t);
        }
    }
    /* BAND on a 3D Laplacian 40^3 (32^3 quick): the +-1 and +-40 diagonals in
     * the ring, +-1600 from global memory, strips of several steps (the ring
     * wraps), at each column tile width (the widest keeps only the diagonal
     * in its ring), in every float type */
    for (size_t d = 0; d < 4; d++) {
        A = NULL;
        CHECK_OK(g_ctx, spx_gen_laplacian(g_ctx, 3, pick(40, 32), types_all[d], SPX_INDEX_DEFAULT, &A));
        char name[64];
        snprintf(name, sizeof name, "band widths laplacian %s", spx_dtype_name(types_all[d]));
        if (tmat_make(&t, A, SPX_CSR, NULL, name))
            tile_width_cases(&t, types_all[d], SPX_SPMM_BAND, 8);
        tmat_free(&t);
    }
    /* layouts, leading dimensions, alignment, alpha/beta, in every float type */
    for (size_t d = 0; d < 4; d++) {
        A = build_random_rows(pick(2000, 500), pick(1700, 400), 0, 24, 1, SPX_INDEX_I32);
        if (types_all[d] != SPX_F32)
            A = astype(A, types_all[d], SPX_INDEX_DEFAULT);
        char name[64];
        snprintf(name, sizeof name, "layouts %s", spx_dtype_name(types_all[d]));
        if (tmat_make(&t, A, SPX_CSR, NULL, name))
            layout_cases(&t, types_all[d]);
        tmat_free(&t);
    }
    /* B one element off, rows of 120-136 entries at N = 130: merge path with
     * lanes' columns spread over the tile and rows cut between warps (their
     * carries spread too), in every float type, C's rows on 16 bytes or not */
    for (size_t d = 0; d < 4; d++) {
        A = build_random_rows(2000, 32000, 120, 136, 1, SPX_INDEX_I32);
        if (types_all[d] != SPX_F32)
            A = astype(A, types_all[d], SPX_INDEX_DEFAULT);
        char name[64];
        snprintf(name, sizeof name, "layouts, large B off alignment %s", spx_dtype_name(types_all[d]));
        if (tmat_make(&t, A, SPX_CSR, NULL, name)) {
            const int64_t vec = 16 / (int64_t)spx_dtype_size(types_all[d]);
            tcase c = case_make(&t, SPX_OP_NONE, types_all[d], 130);
            c.off_b = 1;
            c.off_c = (int64_t)(d & 1);
            c.pad_c = d & 1 ? 0 : (vec - 130 % vec) % vec;
            run_case(&c, 0);
        }
        tmat_free(&t);
    }
    /* B one element off, rows of 0-3 entries (the row kernels of a small
     * product, lanes' columns spread over the tile) */
    if (tmat_make(&t, build_random_rows(300, 2000, 0, 3, 1, SPX_INDEX_I32), SPX_CSR, NULL, "layouts, few entries"))
        for (int64_t n = 33; n <= 130; n += 97) {
            tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, n);
            c.off_b = 1;
            run_case(&c, 0);
        }
    tmat_free(&t);
}

/* ---- real matrices ------------------------------------------------------------------ */

typedef struct {
    char **v;
    size_t n, cap;
} strlist;

static void list_files(const char *dir, strlist *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "bad")) /* bad/: malformed on purpose */
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p)
            break;
        snprintf(p, len, "%s/%s", dir, e->d_name);
        size_t nl = strlen(p);
        if (test_is_dir(p)) {
            list_files(p, out);
            free(p);
        } else if ((nl > 4 && !strcmp(p + nl - 4, ".mtx")) ||
                   (nl > 5 && !strcmp(p + nl - 5, ".smtx"))) {
            if (out->n == out->cap) {
                size_t cap = out->cap ? 2 * out->cap : 64;
                char **v = realloc(out->v, cap * sizeof *v);
                if (!v) {
                    free(p);
                    break;
                }
                out->v = v;
                out->cap = cap;
            }
            out->v[out->n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One file of the data folder (name: its path below the folder): .mtx with
 * n = 1, 7, 64 as f32 (pattern stays pattern; real files also as f64), .smtx
 * (DLMC weights, seeded values) with n = 256. */
static void data_file(const char *path, const char *name, size_t index)
{
    size_t len = strlen(path);
    int smtx = len > 5 && !strcmp(path + len - 5, ".smtx");
    if (g_quick && smtx && index % 4)
        return;
    spx_read_options ro = {0};
    ro.seed = next_seed();
    spx_matrix *A = NULL;
    spx_status s = spx_matrix_read(g_ctx, path, &ro, &A);
    if (s) {
        TFAIL("%s: %s: %s", path, spx_status_name(s), spx_last_error(g_ctx));
        return;
    }
    spx_matrix_info in;
    CHECK_OK(g_ctx, spx_matrix_info_get(A, &in));
    if (in.dtype == SPX_C64 || in.dtype == SPX_C128) {
        printf("  %s: complex values, skipped (spx SpMM is real only)\n", name);
        spx_matrix_destroy(A);
        return;
    }
    spx_matrix *F = A;
    if (in.dtype != SPX_PATTERN && in.dtype != SPX_F32) {
        F = NULL;
        CHECK_OK(g_ctx, spx_matrix_astype(g_ctx, A, SPX_F32, SPX_INDEX_DEFAULT, &F));
    }
    tmat t;
    if (tmat_make(&t, F, SPX_CSR, NULL, name)) {
        if (t.max_abs > F16_SAFE_MAX)
            printf("  %s: values up to %.3g do not fit f16: precision f16 not run\n", name,
                   t.max_abs);
        static const int64_t ns[] = {1, 7, 64};
        for (int i = smtx ? 2 : g_quick ? 1 : 0; i < 3; i++) {
            tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, smtx ? pick(256, 64) : ns[i]);
            run_case(&c, 0);
        }
    }
    tmat_free(&t);
    if (F == A) /* tmat_make took it */
        return;
    if (in.dtype != SPX_F64 || g_quick) {
        spx_matrix_destroy(A);
        return;
    }
    char name64[200];
    snprintf(name64, sizeof name64, "%s as f64", name);
    if (tmat_make(&t, A, SPX_CSR, NULL, name64)) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F64, 7);
        run_case(&c, 0);
    }
    tmat_free(&t);
}

static void sweep_data_files(void)
{
    const char *dir = test_shared_data_dir();
    if (!dir) {
        printf("  shared data folder not found (set SPX_DATA_DIR): real matrices skipped\n");
        return;
    }
    strlist files = {0};
    list_files(dir, &files);
    qsort(files.v, files.n, sizeof *files.v, cmp_str);
    if (!files.n)
        printf("  no .mtx or .smtx files under %s: real matrices skipped\n", dir);
    for (size_t i = 0; i < files.n; i++) {
        data_file(files.v[i], files.v[i] + strlen(dir) + 1, i);
        free(files.v[i]);
    }
    free(files.v);
}

/* Kernels above the default 48 KB of shared memory (TILED, BAND, GATHER_TC:
 * their limit is raised once per device) run again in a context made after a
 * device reset, which drops the raised limits. Runs last: the reset ends the
 * earlier context. */
static void check_device_reset(void)
{
#ifdef SPX_HAVE_CUDA
    if (!g_cuda)
        return;
    spx_ctx_destroy(g_ctx);
    g_ctx = NULL;
    CHECK(cudaDeviceReset() == cudaSuccess, "cudaDeviceReset failed");
    if (spx_ctx_create(&g_ctx) != SPX_OK) {
        CHECK(0, "no context after the device reset");
        return;
    }
    CHECK_OK(g_ctx, spx_ctx_set_backend(g_ctx, SPX_BACKEND_CUDA));
    spx_ctx_set_progress(g_ctx, 0);
    tmat t;
    if (tmat_make(&t, build_random_rows(pick(700, 300), 3000, 150, 300, 1, SPX_INDEX_I32), SPX_CSR, NULL,
                  "after a device reset")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 300);
        c.algs = 1u << SPX_SPMM_TILED | 1u << SPX_SPMM_GATHER_TC;
        run_case(&c, 0);
    }
    tmat_free(&t);
    spx_matrix *A = NULL;
    CHECK_OK(g_ctx, spx_gen_laplacian(g_ctx, 3, 32, SPX_F32, SPX_INDEX_DEFAULT, &A));
    if (tmat_make(&t, A, SPX_CSR, NULL, "band after a device reset")) {
        tcase c = case_make(&t, SPX_OP_NONE, SPX_F32, 64);
        c.algs = 1u << SPX_SPMM_BAND;
        run_case(&c, 0);
    }
    tmat_free(&t);
#endif
}

/* ---- setup, summary ------------------------------------------------------------------ */

/* < 0: go on; else the exit code (77: no GPU, skipped). */
static int setup(void)
{
    const char *want = getenv("SPX_GPU_TEST_BACKEND");
    spx_backend b = SPX_BACKEND_CUDA;
    if (want && *want && (spx_backend_from_name(want, &b) != SPX_OK || b == SPX_BACKEND_AUTO)) {
        fprintf(stderr, "test_gpu_spmm: SPX_GPU_TEST_BACKEND=%s: expected cuda, cpu or ref\n",
                want);
        return 1;
    }
    if (b == SPX_BACKEND_CUDA) {
#ifdef SPX_HAVE_CUDA
        int ndev = 0;
        cudaError_t e = cudaGetDeviceCount(&ndev);
        if (e != cudaSuccess || ndev == 0) {
            printf("test_gpu_spmm: no CUDA device (%s): skipped (SPX_GPU_TEST_BACKEND=cpu runs "
                   "the checks on the CPU backend)\n",
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
            return 77;
        }
        if (!spx_backend_available(SPX_BACKEND_CUDA)) {
            fprintf(stderr, "FAIL test_gpu_spmm: %d CUDA device(s) present, but "
                            "spx_backend_available(SPX_BACKEND_CUDA) is 0\n", ndev);
            return 1;
        }
#else
        printf("test_gpu_spmm: spx built without CUDA: skipped\n");
        return 77;
#endif
    }
    g_cuda = b == SPX_BACKEND_CUDA;
    if (spx_ctx_create(&g_ctx) || spx_ctx_create(&g_ref)) {
        fprintf(stderr, "FAIL test_gpu_spmm: cannot create contexts\n");
        return 1;
    }
    CHECK_OK(g_ctx, spx_ctx_set_backend(g_ctx, b));
    CHECK_OK(g_ref, spx_ctx_set_backend(g_ref, SPX_BACKEND_REF));
    if (test_failures)
        return 1;
    spx_ctx_set_progress(g_ctx, 0);
    spx_ctx_set_progress(g_ref, 0);
    printf("test_gpu_spmm: backend %s, %s sweep, SPX_TEST_SEED=%llu\n", spx_backend_name(b),
           g_quick ? "quick" : "full", (unsigned long long)test_seed);
    if (g_cuda) {
        spx_device_info di;
        memset(&di, 0, sizeof di);
        CHECK_OK(g_ctx, spx_ctx_device_info(g_ctx, &di));
        printf("  device %d: %s, sm_%d%d, %d SMs\n", di.device, di.name, di.cc_major, di.cc_minor,
               di.sm_count);
    }
    return -1;
}

static void section(const char *name, void (*fn)(void))
{
    if (!test_section_selected(name))
        return;
    int64_t before = 0;
    for (int a = 0; a < NALG; a++)
        before += g_stats[a].pass + g_stats[a].skip + g_stats[a].fail;
    int fails = test_failures;
    int64_t checks = g_error_checks;
    double t0 = now_s();
    printf("%s\n", name);
    fflush(stdout);
    fn();
    int64_t after = 0;
    for (int a = 0; a < NALG; a++)
        after += g_stats[a].pass + g_stats[a].skip + g_stats[a].fail;
    printf("  -> %lld results, %lld error checks, %d failure(s), %.1f s\n",
           (long long)(after - before), (long long)(g_error_checks - checks),
           test_failures - fails, now_s() - t0);
    fflush(stdout);
}

static void summary(void)
{
    printf("\n%-11s %7s %6s %5s %6s  largest error by class:", "algorithm", "passed", "skip",
           "fail", "/bound");
    for (int e = 0; e < EC_N; e++)
        printf(" %s", ec_names[e]);
    printf("\n");
    for (int a = 0; a < NALG; a++) {
        alg_stats *s = &g_stats[a];
        printf("%-11s %7lld %6lld %5lld %6.3f ", spx_spmm_alg_name((spx_spmm_alg)a),
               (long long)s->pass, (long long)s->skip, (long long)s->fail, s->worst_ratio);
        for (int e = 0; e < EC_N; e++)
            if (s->n_err[e])
                printf(" %9.2e", s->max_err[e]);
            else
                printf(" %9s", "-");
        printf("\n");
    }
    for (int a = 0; a < NALG; a++) {
        alg_stats *s = &g_stats[a];
        for (int i = 0; i < s->nmsg; i++)
            printf("  skipped %s x%lld: %s\n", spx_spmm_alg_name((spx_spmm_alg)a),
                   (long long)s->msg_count[i], s->msg[i]);
        if (s->other_skips)
            printf("  skipped %s x%lld for other reasons\n", spx_spmm_alg_name((spx_spmm_alg)a),
                   (long long)s->other_skips);
        if (g_main_sweep)
            CHECK(s->main_ok, "algorithm %s never passed its main case (f32 CSR A, op N, row-major "
                              "B and C, any precision)",
                  spx_spmm_alg_name((spx_spmm_alg)a));
    }
}

int main(void)
{
    test_init();
    g_rng = test_seed ^ 0x9E3779B97F4A7C15ull;
    const char *q = getenv("SPX_TEST_QUICK"), *v = getenv("SPX_GPU_TEST_VERBOSE");
    g_quick = q && *q && strcmp(q, "0");
    g_verbose = v && *v && strcmp(v, "0");
    int r = setup();
    if (r >= 0) {
        spx_ctx_destroy(g_ctx);
        spx_ctx_destroy(g_ref);
        return r;
    }
    section("generated: matrices of every family and format (f32)", sweep_generators);
    section("types: f64, f16, bf16, pattern A", sweep_dtypes);
    section("shapes: hard shapes, layouts, alpha and beta", hard_shapes);
    section("files: shared real matrices and DLMC weights", sweep_data_files);
    section("determinism: bit-identical repeats", check_determinism);
    section("non-finite B: Inf and NaN reach only their terms", check_nonfinite_b);
    section("plans: the dense path's own GEMM", check_dense_own_gemm);
    section("plans: several on one matrix, misuse", check_plans);
    section("touch: matrices changed in place", check_touch);
    section("bad-input: shapes, types, memories, invalid matrices", check_bad_input);
    section("reset: large shared-memory kernels after a device reset", check_device_reset);
    summary();
    spx_ctx_destroy(g_ctx);
    spx_ctx_destroy(g_ref);
    return test_finish("test_gpu_spmm");
}

/* SpMM and SpMV: the ref backend against an independent dense computation,
 * and the cpu backend against ref, over every format, op, layout pair, value
 * and index type, n and (alpha, beta); hard shapes; duplicates; bad input;
 * thread-count independence; the conversion cache; allocation failures.
 * Error bounds: see spmm_fixture.h. The shared real matrices are in
 * test_spmm_data.c. */
#include "spmm_fixture.h"

/* ---- the sweep: every format x op x layouts x value and index type x n x (alpha, beta) ---- */

static void test_sweep(void)
{
    static const int64_t ns_full[] = {1, 7, 64, 130}, ns_quick[] = {1, 7, 64};
    const spx_dtype types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16, SPX_PATTERN};
    int pattern_turn = 0;
    for (int v = 0; v < NVARIANTS; v++)
        for (int d = 0; d < 5; d++)
            for (int x = 0; x < 2; x++) {
                spx_index_type it = x ? SPX_INDEX_I64 : SPX_INDEX_I32;
                trip T = random_triplets(1 + irand(40), 1 + irand(40),
                                         0.02 + 0.3 * urand_sym() * urand_sym());
                spx_matrix *A = make_matrix(&T, &variants[v], types[d], it);
                spx_dtype ddt =
                    types[d] == SPX_PATTERN ? dense_types[pattern_turn++ % 4] : types[d];
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

/* Shapes 0-3 hold no entries: 6 x 9, 0 x 5, 5 x 0 (k = 0: C = beta C), 0 x 0. */
static trip shaped_triplets(int shape)
{
    static const int64_t empty[4][2] = {{6, 9}, {0, 5}, {5, 0}, {0, 0}};
    if (shape < 4)
        return (trip){.rows = empty[shape][0], .cols = empty[shape][1]};
    trip t = {0};
    if (shape == 4) { /* empty rows (i % 3 != 0) and empty columns (j % 4 == 1) */
        trip r = random_triplets(40, 30, 0.3);
        t = (trip){.rows = 40, .cols = 30};
        for (int64_t p = 0; p < r.n; p++)
            if (r.i[p] % 3 == 0 && r.j[p] % 4 != 1)
                trip_push(&t, r.i[p], r.j[p], r.v[p]);
        trip_free(&r);
    } else if (shape == 5) { /* power law: one dense row among empty ones, a few short rows */
        t = (trip){.rows = 150, .cols = 1200};
        for (int64_t j = 0; j < 1200; j++)
            if (j % 7)
                trip_push(&t, 17, j, urand_sym());
        for (int q = 0; q < 20; q++)
            trip_push(&t, 40 + q * 5, irand(1200), urand_sym());
    } else if (shape == 6) { /* 1 x 1 */
        t = (trip){.rows = 1, .cols = 1};
        trip_push(&t, 0, 0, urand_sym());
    } else if (shape == 7) { /* one column, full */
        t = (trip){.rows = 37, .cols = 1};
        for (int64_t i = 0; i < 37; i++)
            trip_push(&t, i, 0, urand_sym());
    } else { /* one row */
        t = random_triplets(1, 300, 0.5);
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
                check_all_cases(A, types[d] == SPX_PATTERN ? SPX_F64 : types[d], ns, 3, true,
                                label);
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
            CHECK(ok, "%s %s: alpha 0 must give beta*C without reading B",
                  spx_backend_name(spx_ctx_backend(ctx)), variants[v].name);
            free(C.d.data);
            free(C0.d.data);
        }
        free(B.d.data);
        spx_matrix_destroy(A);
    }
    trip_free(&T);
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
    tdense B = tdense_new(7, 3, SPX_F32, SPX_ROW_MAJOR, 1),
           C = tdense_new(5, 3, SPX_F32, SPX_ROW_MAJOR, 1);
    tdense C0 = tdense_copy(&C);
    tdense B6 = tdense_new(6, 3, SPX_F32, SPX_ROW_MAJOR, 0),
           C4 = tdense_new(4, 3, SPX_F32, SPX_ROW_MAJOR, 0);
    tdense Bd = tdense_new(7, 3, SPX_F64, SPX_ROW_MAJOR, 0),
           Cd = tdense_new(5, 3, SPX_F64, SPX_ROW_MAJOR, 0);
    tdense Bi = tdense_new(7, 3, SPX_I32, SPX_ROW_MAJOR, 0),
           Ci = tdense_new(5, 3, SPX_I32, SPX_ROW_MAJOR, 0);
    tdense Bz = tdense_new(7, 3, SPX_C128, SPX_ROW_MAJOR, 0),
           Cz = tdense_new(5, 3, SPX_C128, SPX_ROW_MAJOR, 0);
    spx_dense Bdev = B.d, Cdev = C.d, Cthin = C.d;
    Bdev.memory = SPX_MEM_DEVICE;
    Cdev.memory = SPX_MEM_DEVICE;
    Cthin.ld = 2;
    /* C inside B's buffer (B is 7 x 3 with ld 4: 28 floats) */
    spx_dense Cover =
        spx_dense_make((float *)B.d.data + 8, 5, 3, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense x2 = spx_dense_make(B.d.data, 7, 2, 4, SPX_F32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    tdense x6 = tdense_new(6, 1, SPX_F32, SPX_COL_MAJOR, 0),
           y = tdense_new(5, 1, SPX_F32, SPX_COL_MAJOR, 0);

    CHECK(spx_spmm(NULL, SPX_OP_NONE, 1, A, &B.d, 0, &C.d) == SPX_ERR_INVALID_ARGUMENT, "NULL ctx");
    CHECK(spx_spmv(NULL, SPX_OP_NONE, 1, A, &x6.d, 0, &y.d) == SPX_ERR_INVALID_ARGUMENT,
          "NULL ctx");
    for (int b = 0; b < 2; b++) {
        spx_ctx *ctx = b ? cpu_ctx : ref_ctx;
        const spx_status INV = SPX_ERR_INVALID_ARGUMENT, UNS = SPX_ERR_UNSUPPORTED;
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, NULL, &B.d, 0, &C.d), INV,
                    "matrix A is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, NULL, 0, &C.d), INV, "B is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, NULL), INV, "C is NULL");
        CHECK_FAILS(ctx, spx_spmm(ctx, (spx_op)7, 1, A, &B.d, 0, &C.d), INV, "invalid op 7");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B6.d, 0, &C.d), SPX_ERR_SHAPE,
                    "op(A) is 5x7 but B is 6x3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &C4.d), SPX_ERR_SHAPE,
                    "C is 4x3");
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
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ap, &Bi.d, 0, &Ci.d), UNS,
                    "B has value type i32");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &Bdev, 0, &C.d), INV,
                    "different memories (A: host, B: device, C: host)");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Ad, &Bdev, 0, &Cdev), UNS, "device memory");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &Cover), INV, "overlaps B");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &Cthin), INV,
                    "leading dimension 2 < 3");
        CHECK_FAILS(ctx, spx_spmm(ctx, SPX_OP_NONE, 1, Abad, &B.d, 0, &C.d), SPX_ERR_INVALID_MATRIX,
                    "column index 9 out of range [0, 7)");
        const spx_spmm_options slabs_neg = {.k_slabs = -1},
                               slabs_merge = {.alg = SPX_SPMM_MERGE_PATH, .k_slabs = 2};
        CHECK_FAILS(ctx, spx_spmm_ex(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &C.d, &slabs_neg), INV,
                    "k_slabs must be 0 to 256 (got -1)");
        CHECK_FAILS(ctx, spx_spmm_ex(ctx, SPX_OP_NONE, 1, A, &B.d, 0, &C.d, &slabs_merge), INV,
                    "k_slabs applies to AUTO and the row kernels");
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
            spx_matrix *A =
                make_matrix(&T, &variants[vs[v]], types[d], d == 1 ? SPX_INDEX_I64 : SPX_INDEX_I32);
            if (!A)
                continue;
            char label[128];
            snprintf(label, sizeof label, "threads %s %s", variants[vs[v]].name,
                     spx_dtype_name(types[d]));
            for (int op = 0; op < 2; op++)
                for (int n = 1; n <= 65; n += 32) {
                    spmm_case cs = {.op = (spx_op)op,
                                    .lc = (spx_layout)(n == 33),
                                    .n = n,
                                    .alpha = 1.25,
                                    .beta = n == 1 ? 0 : -1};
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
                        CHECK_OK(cpu_ctx,
                                 spx_spmm(cpu_ctx, (spx_op)op, 1.25, A, &B.d, -1, &C[t].d));
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
        spmm_case cs = {.op = (spx_op)op, .n = 5, .alpha = 1, .exact = true};
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
        for (long f = 1; s != SPX_OK && f < 100; f++) {
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
    if (!spmm_fixture_init())
        return 1;
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {{"sweep", test_sweep},           {"hard shapes", test_hard_shapes},
                 {"duplicates", test_duplicates}, {"alpha zero", test_alpha_zero},
                 {"bad input", test_bad_input},   {"threads", test_threads},
                 {"cache", test_cache_touch},     {"allocation failures", test_alloc_failures}};
    for (size_t q = 0; q < sizeof tests / sizeof tests[0]; q++) {
        clock_t t0 = clock();
        tests[q].fn();
        printf("%-20s %.2f s cpu\n", tests[q].name, (double)(clock() - t0) / CLOCKS_PER_SEC);
        fflush(stdout);
    }
    spmm_fixture_fini();
    return test_finish("test_spmm");
}

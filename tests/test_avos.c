/* The avos semiring: every identity and parity rule by hand, overflow for
 * i32 and i64, the public operators, and spx_avos_closure against a hand
 * computed pedigree and a brute-force dense closure. Also the portable
 * checked 64-bit arithmetic of core/semiring.h against compiler builtins. */
#include "core/semiring.h"
#include "format/matrix.h"
#include "semiring_oracle.h"

static spx_ctx *ctx;

static void test_product_rules(void)
{
    struct { int64_t x, y, z; const char *rule; } cases[] = {
        {0, 5, 0, "annihilator on the left"},
        {7, 0, 0, "annihilator on the right"},
        {0, -1, 0, "annihilator with a self marker"},
        {-1, -1, -1, "(-1, -1) keeps -1"},
        {1, 1, 1, "(1, 1) keeps 1"},
        {-1, 1, 0, "(-1, 1) mixed parity"},
        {1, -1, 0, "(1, -1) mixed parity"},
        {2, -1, 2, "even x with y = -1"},
        {6, -1, 6, "even x with y = -1"},
        {3, -1, 0, "odd x with y = -1"},
        {3, 1, 3, "odd x with y = 1"},
        {2, 1, 0, "even x with y = 1"},
        {-1, 2, 2, "-1 on the left acts as 1"},
        {-1, 7, 7, "-1 on the left acts as 1"},
        {1, 5, 5, "1 on the left"},
        {4, 7, 19, "4 (x) 7 = 19"},
        {2, 3, 5, "2 (x) 3: father's mother"},
        {2, 2, 4, "2 (x) 2: father's father"},
        {3, 2, 6, "3 (x) 2: mother's father"},
        {5, 6, 22, "5 (x) 6"},
        {(INT64_C(1) << 29), 2, (INT64_C(1) << 30), "largest i32 power of two"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int bits = 32; bits <= 64; bits += 32) {
            int64_t z = -99;
            CHECK(spx_avos_product(cases[c].x, cases[c].y, bits, &z) == SPX_OK &&
                      z == cases[c].z,
                  "%s: %lld (x) %lld = %lld, want %lld (bits %d)", cases[c].rule,
                  (long long)cases[c].x, (long long)cases[c].y, (long long)z,
                  (long long)cases[c].z, bits);
            int64_t t = -99;
            CHECK(!t_avos_product(cases[c].x, cases[c].y, bits, &t) && t == cases[c].z,
                  "oracle disagrees on %s", cases[c].rule);
        }
    }
    int64_t z = 12345;
    CHECK(spx_avos_product(INT64_C(1) << 30, 2, 32, &z) == SPX_ERR_OVERFLOW && z == 12345,
          "2^30 (x) 2 overflows i32, out untouched");
    CHECK(spx_avos_product(INT64_C(1) << 30, 2, 64, &z) == SPX_OK && z == INT64_C(1) << 31,
          "fits i64");
    CHECK(spx_avos_product(INT64_C(1) << 61, 2, 64, &z) == SPX_OK && z == INT64_C(1) << 62,
          "2^61 (x) 2");
    CHECK(spx_avos_product(INT64_C(1) << 62, 2, 64, &z) == SPX_ERR_OVERFLOW, "2^62 (x) 2");
    CHECK(spx_avos_product(7, INT64_C(1) << 61, 64, &z) == SPX_ERR_OVERFLOW, "7 (x) 2^61");
    CHECK(spx_avos_product(-2, 3, 64, &z) == SPX_ERR_INVALID_ARGUMENT, "-2 is not avos");
    CHECK(spx_avos_product(3, -5, 64, &z) == SPX_ERR_INVALID_ARGUMENT, "-5 is not avos");
    CHECK(spx_avos_product(INT64_C(1) << 40, 2, 32, &z) == SPX_ERR_INVALID_ARGUMENT,
          "operand wider than i32");
    CHECK(spx_avos_product(2, 3, 16, &z) == SPX_ERR_INVALID_ARGUMENT, "bits 16");
    CHECK(spx_avos_product(2, 3, 64, NULL) == SPX_ERR_INVALID_ARGUMENT, "NULL out");

    struct { int64_t x, y, z; } sums[] = {{0, 5, 5}, {5, 0, 5}, {0, 0, 0}, {3, 2, 2},
                                          {-1, 1, -1}, {1, -1, -1}, {-1, 0, -1}, {9, 9, 9}};
    for (size_t c = 0; c < sizeof sums / sizeof sums[0]; c++)
        CHECK(spx_avos_sum(sums[c].x, sums[c].y) == sums[c].z &&
                  t_avos_sum(sums[c].x, sums[c].y) == sums[c].z,
              "avos_sum(%lld, %lld) = %lld", (long long)sums[c].x, (long long)sums[c].y,
              (long long)spx_avos_sum(sums[c].x, sums[c].y));
    /* exhaustive over small values: library and oracle agree */
    for (int64_t x = -1; x < 300; x++)
        for (int64_t y = -1; y < 300; y++) {
            int64_t a = 0, b = 0;
            spx_status s = spx_avos_product(x, y, 32, &a);
            int o = t_avos_product(x, y, 32, &b);
            CHECK((s == SPX_ERR_OVERFLOW) == o && (o || a == b), "%lld (x) %lld", (long long)x,
                  (long long)y);
        }
}

static void test_checked_arithmetic(void)
{
    const int64_t edge[] = {0, 1, -1, 2, -2, 3, INT32_MAX, INT32_MIN, (INT64_C(1) << 32) + 1,
                            INT64_MAX, INT64_MIN, INT64_MAX / 2, INT64_MIN / 2, 3037000499,
                            3037000500, -3037000500};
    size_t n = sizeof edge / sizeof edge[0];
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            int64_t x = edge[a], y = edge[b], z1 = 0, z2 = 0;
            int o1 = spx__i64_plus_portable(&z1, x, y), o2 = __builtin_add_overflow(x, y, &z2);
            CHECK(o1 == o2 && (o1 || z1 == z2), "portable %lld + %lld", (long long)x, (long long)y);
            o1 = spx__i64_times_portable(&z1, x, y);
            o2 = __builtin_mul_overflow(x, y, &z2);
            CHECK(o1 == o2 && (o1 || z1 == z2), "portable %lld * %lld", (long long)x, (long long)y);
        }
}

/* ---- closure ---- */

static spx_matrix *from_dense(const dmat *D, spx_format f, spx_index_type it)
{
    uint64_t s = test_seed;
    return dm_to_spx(ctx, D, f, it, &s);
}

/* Brute-force closure: C <- C (+) (C (x) C) on j >= i until nothing changes.
 * Returns the squarings, or -1 on overflow. */
static int brute_closure(dmat *C, int bits)
{
    int64_t n = C->rows;
    for (int it = 1;; it++) {
        dmat N = dm_new(n, n, C->dtype);
        memcpy(N.v, C->v, (size_t)(n * n) * sizeof *N.v);
        memcpy(N.in, C->in, (size_t)(n * n));
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i; j < n; j++) {
                int found = 0;
                int64_t acc = 0;
                for (int64_t k = 0; k < n; k++) {
                    if (!DIN(C, i, k) || !DIN(C, k, j))
                        continue;
                    int64_t t;
                    if (t_avos_product(DM(C, i, k).i, DM(C, k, j).i, bits, &t)) {
                        dm_free(&N);
                        return -1;
                    }
                    acc = found ? t_avos_sum(acc, t) : t;
                    found = 1;
                }
                if (found) {
                    DM(&N, i, j).i = DIN(C, i, j) ? t_avos_sum(DM(C, i, j).i, acc) : acc;
                    DIN(&N, i, j) = 1;
                }
            }
        int same = memcmp(N.in, C->in, (size_t)(n * n)) == 0;
        for (int64_t p = 0; same && p < n * n; p++)
            same = !C->in[p] || C->v[p].i == N.v[p].i;
        dm_free(C);
        *C = N;
        if (same)
            return it;
    }
}

static void test_closure_hand(void)
{
    /* child 0 (female), father 1, mother 2, their parents 3..6 */
    dmat P = dm_new(7, 7, SPX_I32);
    const int64_t sex[7] = {1, -1, 1, -1, 1, -1, 1};
    for (int i = 0; i < 7; i++) {
        DIN(&P, i, i) = 1;
        DM(&P, i, i).i = sex[i];
    }
    const int edges[6][3] = {{0, 1, 2}, {0, 2, 3}, {1, 3, 2}, {1, 4, 3}, {2, 5, 2}, {2, 6, 3}};
    for (int e = 0; e < 6; e++) {
        DIN(&P, edges[e][0], edges[e][1]) = 1;
        DM(&P, edges[e][0], edges[e][1]).i = edges[e][2];
    }
    static const int64_t expect[7][7] = {
        {1, 2, 3, 4, 5, 6, 7}, {0, -1, 0, 2, 3, 0, 0}, {0, 0, 1, 0, 0, 2, 3},
        {0, 0, 0, -1, 0, 0, 0}, {0, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 0, -1, 0},
        {0, 0, 0, 0, 0, 0, 1}};
    dmat E = dm_new(7, 7, SPX_I32); /* the brute force agrees with the hand result */
    memcpy(E.v, P.v, 49 * sizeof *E.v);
    memcpy(E.in, P.in, 49);
    CHECK(brute_closure(&E, 32) == 2, "brute force: two squarings");
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++)
            CHECK(DIN(&E, i, j) == (expect[i][j] != 0) && DM(&E, i, j).i == expect[i][j],
                  "brute-force closure (%d, %d) = %lld, want %lld", i, j,
                  (long long)DM(&E, i, j).i, (long long)expect[i][j]);
    dm_free(&E);
    static const spx_backend backends[2] = {SPX_BACKEND_REF, SPX_BACKEND_CPU};
    for (int b = 0; b < 2; b++) {
        spx_ctx_set_backend(ctx, backends[b]);
        spx_matrix *A = from_dense(&P, b ? SPX_COO : SPX_CSR, SPX_INDEX_I32), *C = NULL;
        int it = 0;
        CHECK_OK(ctx, spx_avos_closure(ctx, A, &C, &it));
        dmat G;
        if (C && spx_to_dm(ctx, C, &G)) {
            for (int i = 0; i < 7; i++)
                for (int j = 0; j < 7; j++)
                    CHECK(DIN(&G, i, j) == (expect[i][j] != 0) && DM(&G, i, j).i == expect[i][j],
                          "%s: closure (%d, %d) = %lld, want %lld", spx_backend_name(backends[b]),
                          i, j, (long long)DM(&G, i, j).i, (long long)expect[i][j]);
            dm_free(&G);
        }
        CHECK(it == 2, "two squarings (the second changes nothing), got %d", it);
        spx_matrix_destroy(A);
        spx_matrix_destroy(C);
    }
    dm_free(&P);
}

/* n individuals; i's parents have larger indices (a topological order):
 * among the next 6 (deep lines), or with gen > 0 in the next generation of
 * gen individuals (as deep as n / gen generations). */
static dmat random_pedigree(int64_t n, int64_t gen, spx_dtype t, uint64_t *s)
{
    dmat P = dm_new(n, n, t);
    for (int64_t i = 0; i < n; i++) {
        if (t_below(s, 8)) { /* most have a sex marker */
            DIN(&P, i, i) = 1;
            DM(&P, i, i).i = t_below(s, 2) ? -1 : 1;
        }
        for (int parent = 2; parent <= 3 && i + 1 < n; parent++) {
            if (t_below(s, 5) == 0)
                continue; /* unknown parent */
            int64_t first = gen ? (i / gen + 1) * gen : i + 1, span = gen ? gen : 6;
            span = n - first < span ? n - first : span;
            if (span <= 0)
                continue;
            int64_t j = first + t_below(s, span);
            DIN(&P, i, j) = 1;
            DM(&P, i, j).i = t_below(s, 25) ? parent : 0; /* a few explicit zeros */
        }
    }
    return P;
}

static void test_closure_random(void)
{
    uint64_t s = test_seed ^ 0xa7a7;
    for (int trial = 0; trial < 40; trial++) {
        int64_t n = trial < 3 ? trial : 2 + t_below(&s, 40);
        spx_dtype t = trial % 2 ? SPX_I64 : SPX_I32;
        dmat P = random_pedigree(n, 0, t, &s);
        dmat E = dm_new(n, n, t);
        memcpy(E.v, P.v, (size_t)(n * n > 0 ? n * n : 1) * sizeof *E.v);
        memcpy(E.in, P.in, (size_t)(n * n > 0 ? n * n : 1));
        int want_it = brute_closure(&E, t == SPX_I32 ? 32 : 64);
        for (int b = SPX_BACKEND_REF; b <= SPX_BACKEND_CPU; b++) {
            spx_ctx_set_backend(ctx, (spx_backend)b);
            spx_matrix *A = from_dense(&P, trial % 3 == 0 ? SPX_CSC : SPX_CSR,
                                       trial % 4 ? SPX_INDEX_I32 : SPX_INDEX_I64);
            spx_matrix *C = NULL;
            int it = -1;
            spx_status st = spx_avos_closure(ctx, A, &C, &it);
            if (want_it < 0) {
                CHECK(st == SPX_ERR_OVERFLOW, "n %lld: overflow expected", (long long)n);
            } else {
                dmat G;
                CHECK(st == SPX_OK && it == want_it, "n %lld: %s, %d squarings, want %d",
                      (long long)n, spx_last_error(ctx), it, want_it);
                if (st == SPX_OK && spx_to_dm(ctx, C, &G)) {
                    CHECK(dm_same(&G, &E, "closure"), "%s: closure of a %lld-pedigree differs",
                          spx_backend_name((spx_backend)b), (long long)n);
                    dm_free(&G);
                }
            }
            spx_matrix_destroy(A);
            spx_matrix_destroy(C);
        }
        dm_free(&P);
        dm_free(&E);
    }
}

/* A line of fathers: C(0, g) = 2^g, so 31 generations overflow i32, 63 i64. */
static void test_closure_overflow(void)
{
    for (int bits = 32; bits <= 64; bits += 32) {
        int64_t n = bits;
        dmat P = dm_new(n, n, bits == 32 ? SPX_I32 : SPX_I64);
        for (int64_t i = 0; i + 1 < n; i++) {
            DIN(&P, i, i + 1) = 1;
            DM(&P, i, i + 1).i = 2;
        }
        spx_matrix *A = from_dense(&P, SPX_CSR, SPX_INDEX_I32), *C = (spx_matrix *)&P;
        CHECK_FAILS(ctx, spx_avos_closure(ctx, A, &C, NULL), SPX_ERR_OVERFLOW, "avos over i");
        CHECK(C == (spx_matrix *)&P, "C untouched");
        spx_matrix_destroy(A);
        /* one generation fewer fits */
        DIN(&P, n - 2, n - 1) = 0;
        A = from_dense(&P, SPX_CSR, SPX_INDEX_I32);
        C = NULL;
        CHECK_OK(ctx, spx_avos_closure(ctx, A, &C, NULL));
        spx_matrix_destroy(A);
        spx_matrix_destroy(C);
        dm_free(&P);
    }
}

static void test_closure_large(void)
{
    uint64_t s = test_seed ^ 0x1a7e;
    dmat P = random_pedigree(1500, 100, SPX_I64, &s);
    spx_matrix *A = from_dense(&P, SPX_CSR, SPX_INDEX_I32), *R = NULL;
    int it_ref = 0;
    spx_ctx_set_backend(ctx, SPX_BACKEND_REF);
    CHECK_OK(ctx, spx_avos_closure(ctx, A, &R, &it_ref));
    spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
    for (int threads = 1; threads <= 3 && R; threads++) {
        spx_matrix *C = NULL;
        int it = 0;
        spx_ctx_set_num_threads(ctx, threads);
        CHECK_OK(ctx, spx_avos_closure(ctx, A, &C, &it));
        CHECK(C && it == it_ref && C->nnz == R->nnz &&
                  memcmp(C->indices, R->indices, (size_t)R->nnz * 4) == 0 &&
                  memcmp(C->values, R->values, (size_t)R->nnz * 8) == 0,
              "cpu closure with %d threads differs from ref", threads);
        spx_matrix_destroy(C);
    }
    spx_ctx_set_num_threads(ctx, 0);
    spx_matrix_destroy(A);
    spx_matrix_destroy(R);
    dm_free(&P);
}

static void test_closure_bad_input(void)
{
    spx_matrix *C = NULL;
    dmat P = dm_new(3, 3, SPX_I32);
    DIN(&P, 2, 0) = 1;
    DM(&P, 2, 0).i = 2;
    spx_matrix *low = from_dense(&P, SPX_CSR, SPX_INDEX_I32);
    CHECK_FAILS(ctx, spx_avos_closure(ctx, low, &C, NULL), SPX_ERR_INVALID_ARGUMENT,
                "A(2, 0) is below the diagonal");
    dm_free(&P);
    P = dm_new(2, 3, SPX_I32);
    spx_matrix *rect = from_dense(&P, SPX_CSR, SPX_INDEX_I32);
    CHECK_FAILS(ctx, spx_avos_closure(ctx, rect, &C, NULL), SPX_ERR_SHAPE, "2 x 3");
    dm_free(&P);
    P = dm_new(2, 2, SPX_F32);
    spx_matrix *f = from_dense(&P, SPX_CSR, SPX_INDEX_I32);
    CHECK_FAILS(ctx, spx_avos_closure(ctx, f, &C, NULL), SPX_ERR_INVALID_ARGUMENT,
                "f32 values; the avos closure needs i32 or i64");
    dm_free(&P);
    P = dm_new(2, 2, SPX_I64);
    DIN(&P, 0, 1) = 1;
    DM(&P, 0, 1).i = -4;
    spx_matrix *neg = from_dense(&P, SPX_CSR, SPX_INDEX_I32);
    CHECK_FAILS(ctx, spx_avos_closure(ctx, neg, &C, NULL), SPX_ERR_INVALID_ARGUMENT,
                "entry (0, 1) holds -4, not an avos value");
    dm_free(&P);
    int32_t ri[2] = {0, 0}, ci[2] = {1, 1};
    int64_t v[2] = {2, 3};
    spx_matrix *dup = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, 2, 2, 2, ri, ci, v, SPX_INDEX_I32, SPX_I64,
                                      SPX_MEM_HOST, &dup));
    CHECK_FAILS(ctx, spx_avos_closure(ctx, dup, &C, NULL), SPX_ERR_INVALID_MATRIX,
                "duplicate entry (0, 1)");
    CHECK_FAILS(ctx, spx_avos_closure(ctx, NULL, &C, NULL), SPX_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(ctx, spx_avos_closure(ctx, low, NULL, NULL), SPX_ERR_INVALID_ARGUMENT,
                "output C is NULL");
    CHECK(C == NULL, "C untouched");
    spx_matrix_destroy(low);
    spx_matrix_destroy(rect);
    spx_matrix_destroy(f);
    spx_matrix_destroy(neg);
    spx_matrix_destroy(dup);
}

static void test_closure_allocation_failures(void)
{
    uint64_t s = test_seed ^ 0xfa11;
    dmat P = random_pedigree(30, 5, SPX_I32, &s);
    spx_matrix *A = from_dense(&P, SPX_COO, SPX_INDEX_I32);
    for (int b = SPX_BACKEND_REF; b <= SPX_BACKEND_CPU; b++) {
        spx_ctx_set_backend(ctx, (spx_backend)b);
        spx_status st = SPX_ERR_OUT_OF_MEMORY;
        int failures = 0;
        for (long n = 1; n < 400 && st != SPX_OK; n++) {
            long live = spx__debug_live_allocations();
            spx_matrix *C = NULL;
            spx__debug_fail_alloc_after(n);
            st = spx_avos_closure(ctx, A, &C, NULL);
            spx__debug_fail_alloc_after(0);
            CHECK(st == SPX_OK || st == SPX_ERR_OUT_OF_MEMORY, "allocation %ld: %s", n,
                  spx_last_error(ctx));
            failures += st != SPX_OK;
            spx_matrix_destroy(C);
            CHECK(spx__debug_live_allocations() == live, "allocation %ld leaks", n);
        }
        CHECK(st == SPX_OK && failures > 5, "closure never succeeded or never failed");
    }
    spx_matrix_destroy(A);
    dm_free(&P);
}

int main(void)
{
    test_init();
    if (spx_ctx_create(&ctx) != SPX_OK)
        return 1;
    test_product_rules();
    test_checked_arithmetic();
    test_closure_hand();
    test_closure_random();
    test_closure_overflow();
    test_closure_large();
    test_closure_bad_input();
    test_closure_allocation_failures();
    spx_ctx_destroy(ctx);
    return test_finish("test_avos");
}

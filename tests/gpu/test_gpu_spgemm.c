/* GPU SpGEMM correctness: the cuda backend against the ref backend for
 * every built-in semiring and value type, mask kind and complement, in
 * deterministic mode (bit for bit) and fast mode (within a bound); hard
 * shapes; rows whose tables need device memory or that fit a dense table
 * in shared memory; rows computed in column windows and block rows ranked
 * by a bitmap of their span (with accum, drop, masks); rows sorted in
 * registers; tables of 8
 * lanes; real matrices;
 * operands in device memory; accumulate and drop_identity; memory budgets
 * that force chunks; the avos closure of a generated pedigree; overflow
 * reports; run-to-run determinism; and the pool returning every buffer.
 *
 * No GPU: exit 77 (skipped). SPX_GPU_TEST_BACKEND=cpu runs the same checks
 * on the cpu backend (device cases skipped), to exercise the test itself
 * without a GPU. SPX_TEST_QUICK=1 shrinks the inputs (compute-sanitizer),
 * SPX_GPU_TEST_VERBOSE=1 prints every product, SPX_DATA_DIR names the real
 * matrix folder, SPX_GPU_TEST_ONLY=name[,name...] runs only those sections. */
#include "spgemm_harness.h"

#define SR(k) spx_semiring_builtin(SPX_SEMIRING_##k)

typedef struct {
    spx_semiring_kind kind;
    spx_dtype type;
} sr_pair;

/* Every built-in (semiring, value type) pair, from docs/SEMIRINGS.md. */
static const sr_pair pairs[] = {
    {SPX_SEMIRING_PLUS_TIMES, SPX_F32}, {SPX_SEMIRING_PLUS_TIMES, SPX_F64},
    {SPX_SEMIRING_PLUS_TIMES, SPX_I32}, {SPX_SEMIRING_PLUS_TIMES, SPX_I64},
    {SPX_SEMIRING_MIN_PLUS, SPX_F32},   {SPX_SEMIRING_MIN_PLUS, SPX_F64},
    {SPX_SEMIRING_MIN_PLUS, SPX_I32},   {SPX_SEMIRING_MIN_PLUS, SPX_I64},
    {SPX_SEMIRING_MAX_PLUS, SPX_F32},   {SPX_SEMIRING_MAX_PLUS, SPX_F64},
    {SPX_SEMIRING_MAX_PLUS, SPX_I32},   {SPX_SEMIRING_MAX_PLUS, SPX_I64},
    {SPX_SEMIRING_MAX_TIMES, SPX_F32},  {SPX_SEMIRING_MAX_TIMES, SPX_F64},
    {SPX_SEMIRING_MAX_TIMES, SPX_I32},  {SPX_SEMIRING_MAX_TIMES, SPX_I64},
    {SPX_SEMIRING_MIN_TIMES, SPX_F32},  {SPX_SEMIRING_MIN_TIMES, SPX_F64},
    {SPX_SEMIRING_MIN_TIMES, SPX_I32},  {SPX_SEMIRING_MIN_TIMES, SPX_I64},
    {SPX_SEMIRING_OR_AND, SPX_BOOL},    {SPX_SEMIRING_PLUS_PAIR, SPX_F32},
    {SPX_SEMIRING_PLUS_PAIR, SPX_F64},  {SPX_SEMIRING_PLUS_PAIR, SPX_I32},
    {SPX_SEMIRING_PLUS_PAIR, SPX_I64},  {SPX_SEMIRING_AVOS, SPX_I32},
    {SPX_SEMIRING_AVOS, SPX_I64},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static const spx_mask_kind mask_kinds[] = {SPX_MASK_NONE,         SPX_MASK_MATRIX,
                                           SPX_MASK_UPPER,        SPX_MASK_STRICT_UPPER,
                                           SPX_MASK_LOWER,        SPX_MASK_STRICT_LOWER};

static int is_float(spx_dtype t) { return t == SPX_F32 || t == SPX_F64; }

/* A random host matrix (values from dist; pattern when t is SPX_PATTERN). */
static spx_matrix *random_matrix(int64_t rows, int64_t cols, double density, spx_dtype t,
                                 int dist, spx_format f, spx_index_type it)
{
    dmat D = dm_random(rows, cols, density, t, dist, &g_rng);
    spx_matrix *X = dm_to_spx(g_ref, &D, f, it, &g_rng);
    dm_free(&D);
    CHECK(X != NULL, "building a %lldx%lld %s matrix", (long long)rows, (long long)cols,
          spx_dtype_name(t));
    return X;
}

/* How a mode's results compare with ref: deterministic ones bit for bit;
 * fast float sums within the bound, fast min/max as numbers (a -0 may
 * become 0); everything else is exact in any order. */
static cmp_kind fast_rule(spx_semiring_kind k, spx_dtype t)
{
    if (!is_float(t) || k == SPX_SEMIRING_PLUS_PAIR)
        return CMP_BITS;
    return k == SPX_SEMIRING_PLUS_TIMES ? CMP_BOUND : CMP_VALUE;
}

/* One product (without accum) in deterministic mode and, where it can
 * differ, fast mode; fast float sums are bounded with the product of the
 * operands' magnitudes. */
static void check_modes(const char *what, spx_semiring_kind k, spx_dtype t, const spx_matrix *A,
                        const spx_matrix *B, spx_spgemm_options o)
{
    spx_semiring sr = spx_semiring_builtin(k);
    char name[360];
    o.mode = SPX_SPGEMM_DETERMINISTIC;
    snprintf(name, sizeof name, "%.300s, deterministic", what);
    spx_matrix_destroy(both(name, &sr, A, B, &o, NULL, NULL, NULL, CMP_BITS, NULL));
    cmp_kind rule = fast_rule(k, t);
    if (rule == CMP_BITS && !is_float(t))
        return;
    o.mode = SPX_SPGEMM_FAST;
    snprintf(name, sizeof name, "%.300s, fast", what);
    spx_matrix *Q = NULL, *aA = NULL, *aB = NULL;
    if (rule == CMP_BOUND) {
        aA = magnitudes(A);
        aB = magnitudes(B);
        CHECK_OK(g_ref, spx_spgemm(g_ref, &sr, aA, aB, &o, &Q));
    }
    spx_matrix_destroy(both(name, &sr, A, B, &o, NULL, NULL, NULL, rule, Q));
    spx_matrix_destroy(Q);
    spx_matrix_destroy(aA);
    spx_matrix_destroy(aB);
}

/* ---- every semiring x value type x mask x complement ---- */

static void test_semirings(void)
{
    for (size_t x = 0; x < NPAIRS; x++) {
        spx_semiring_kind k = pairs[x].kind;
        spx_dtype t = pairs[x].type;
        int dist = k == SPX_SEMIRING_AVOS ? VAL_AVOS : VAL_UNIFORM;
        int64_t m = pick(150, 40) + t_below(&g_rng, 60), kk = 40 + t_below(&g_rng, 120);
        int64_t n = pick(170, 45) + t_below(&g_rng, 60);
        double dens = 0.02 + 0.1 * t_unit(&g_rng);
        /* operand types: the pair's own; OR_AND converts f32, PLUS_PAIR reads
         * patterns; a pattern A here and there */
        spx_dtype ta = k == SPX_SEMIRING_OR_AND ? SPX_F32 : t, tb = t;
        if (x % 5 == 0 && k != SPX_SEMIRING_AVOS)
            ta = SPX_PATTERN;
        spx_index_type it = x % 3 == 0 ? SPX_INDEX_I64 : SPX_INDEX_I32;
        spx_matrix *A = random_matrix(m, kk, dens, ta, dist, x % 4 == 1 ? SPX_CSC : SPX_CSR, it);
        spx_matrix *B = random_matrix(kk, n, dens, tb, dist, x % 7 == 3 ? SPX_COO : SPX_CSR, it);
        spx_matrix *M = random_matrix(m, n, 0.3, SPX_PATTERN, VAL_BOOL, SPX_CSR, SPX_INDEX_I32);
        for (size_t mk = 0; mk < sizeof mask_kinds / sizeof mask_kinds[0]; mk++)
            for (int comp = 0; comp <= 1; comp++) {
                spx_spgemm_options o = {0};
                o.mask.kind = mask_kinds[mk];
                o.mask.M = mask_kinds[mk] == SPX_MASK_MATRIX ? M : NULL;
                o.mask.complement = comp;
                char what[200];
                snprintf(what, sizeof what, "%s over %s (A %s), mask %d%s, %lldx%lldx%lld",
                         spx_semiring_name(k), spx_dtype_name(t), spx_dtype_name(ta),
                         (int)mask_kinds[mk], comp ? " complemented" : "", (long long)m,
                         (long long)kk, (long long)n);
                check_modes(what, k, t, A, B, o);
            }
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
        spx_matrix_destroy(M);
    }
}

/* ---- hard shapes ---- */

static void test_shapes(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {0, 5, 7}, {6, 0, 4}, {5, 7, 0}, {1, 300, 1},
                                        {300, 1, 300}, {2, 2, 900}, {97, 13, 211}};
    spx_semiring pt = SR(PLUS_TIMES);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        for (int empty = 0; empty <= 1; empty++) {
            spx_matrix *A = random_matrix(m, k, empty ? 0.0 : 0.5, SPX_F64, VAL_UNIFORM, SPX_CSR,
                                          SPX_INDEX_I32);
            spx_matrix *B = random_matrix(k, n, 0.3, SPX_F64, VAL_UNIFORM, SPX_CSR, SPX_INDEX_I32);
            /* bit-for-bit needs deterministic mode: fast mode starts sums at +0 */
            spx_spgemm_options o = {.mode = SPX_SPGEMM_DETERMINISTIC};
            char what[120];
            snprintf(what, sizeof what, "shape %lldx%lldx%lld%s", (long long)m, (long long)k,
                     (long long)n, empty ? ", A empty" : "");
            spx_matrix_destroy(both(what, &pt, A, B, &o, NULL, NULL, NULL, CMP_BITS, NULL));
            spx_matrix_destroy(A);
            spx_matrix_destroy(B);
        }
    }
    /* a single busy row among empty ones */
    dmat D = dm_new(400, 300, SPX_F32);
    for (int64_t j = 0; j < 300; j += 2) {
        DIN(&D, 17, j) = 1;
        DM(&D, 17, j).f = 0.25 * (double)(j % 7) - 0.5;
    }
    spx_matrix *A = dm_to_spx(g_ref, &D, SPX_CSR, SPX_INDEX_I32, &g_rng);
    dm_free(&D);
    spx_matrix *B = random_matrix(300, 500, 0.05, SPX_F32, VAL_UNIFORM, SPX_CSR, SPX_INDEX_I32);
    spx_spgemm_options o = {0};
    check_modes("one busy row", SPX_SEMIRING_PLUS_TIMES, SPX_F32, A, B, o);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    /* Up to 8192 rows one block bins the rows and groups them by bin; above,
     * the sort does. Rows of every size, so that most bins hold some: empty
     * ones, a few entries (warp tables), and every 61st row half full (block
     * tables of thousands of products). */
    B = random_matrix(400, 700, 0.05, SPX_F32, VAL_UNIFORM, SPX_CSR, SPX_INDEX_I32);
    for (int64_t m = 8192; m <= 8193; m++) {
        D = dm_new(m, 400, SPX_F32);
        for (int64_t i = 0; i < m; i++) {
            const int64_t per = i % 61 == 0 ? 200 : (int64_t)t_below(&g_rng, 6);
            for (int64_t e = 0; e < per; e++) {
                const int64_t j = (int64_t)t_below(&g_rng, 400);
                DIN(&D, i, j) = 1;
                DM(&D, i, j).f = t_unit(&g_rng) - 0.5;
            }
        }
        A = dm_to_spx(g_ref, &D, SPX_CSR, SPX_INDEX_I32, &g_rng);
        dm_free(&D);
        char what[80];
        snprintf(what, sizeof what, "%lld rows of every size", (long long)m);
        check_modes(what, SPX_SEMIRING_PLUS_TIMES, SPX_F32, A, B, o);
        spx_matrix_destroy(A);
    }
    spx_matrix_destroy(B);
}

/* ---- rows whose tables need device memory, and dense tables ---- */

/* rows x (n + 2 pad): the first `big` rows hold every one of the k rows of
 * B, which hold `per` random columns each in [pad, pad + n) (integer values
 * -1 to 2: some products are 0); the other rows hold a few entries. */
static void big_rows_operands(int64_t rows, int64_t big, int64_t k, int64_t per, int64_t n,
                              int64_t pad, spx_dtype t, spx_matrix **A, spx_matrix **B)
{
    dmat DA = dm_new(rows, k, t);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t p = 0; p < k; p++)
            if (i < big || t_below(&g_rng, 16) == 0) {
                DIN(&DA, i, p) = 1;
                DM(&DA, i, p) = (tval){1 + t_below(&g_rng, 3), 0.5 + t_unit(&g_rng)};
            }
    *A = dm_to_spx(g_ref, &DA, SPX_CSR, SPX_INDEX_I32, &g_rng);
    dm_free(&DA);
    /* B sparse by rows: built as COO, compressed by the library */
    spx_matrix *coo = NULL;
    CHECK_OK(g_ref, spx_matrix_create_coo(g_ref, k, n + 2 * pad, k * per, SPX_INDEX_I32, t, &coo));
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(coo, &ar);
    for (int64_t r = 0; r < k; r++)
        for (int64_t q = 0; q < per; q++) {
            int64_t e = r * per + q;
            ((int32_t *)ar.row_indices)[e] = (int32_t)r;
            ((int32_t *)ar.indices)[e] = (int32_t)(pad + t_below(&g_rng, n));
            t_store(ar.values, t, e, (tval){t_below(&g_rng, 4) - 1, 2 * t_unit(&g_rng) - 1});
        }
    CHECK_OK(g_ref, spx_matrix_canonicalize(g_ref, coo, SPX_DUP_LAST, B));
    spx_matrix_destroy(coo);
    spx_matrix *csr = NULL;
    CHECK_OK(g_ref, spx_matrix_convert(g_ref, *B, SPX_CSR, NULL, &csr));
    spx_matrix_destroy(*B);
    *B = csr;
}

static void test_big_rows(void)
{
    /* 20000 products per big row: tables beyond shared memory in both phases;
     * columns over 4M (hashed in device memory: the span is over 16x the
     * hash size), 1M (hashed too: each of ~120 column windows would read the
     * row of A again, more than its products) or 30000 (four windows) */
    static const int64_t spans[] = {4000000, 1000000, 30000};
    for (int s = 0; s < 3; s++) {
        spx_matrix *A = NULL, *B = NULL;
        const uint64_t seed = g_rng;
        big_rows_operands(pick(64, 24), pick(6, 3), 200, 100, spans[s], 0, SPX_F32, &A, &B);
        spx_spgemm_options o = {0};
        char what[120];
        snprintf(what, sizeof what, "big rows over %lld columns", (long long)spans[s]);
        check_modes(what, SPX_SEMIRING_PLUS_TIMES, SPX_F32, A, B, o);
        o.mask.kind = SPX_MASK_LOWER;
        snprintf(what, sizeof what, "big rows over %lld columns, lower mask", (long long)spans[s]);
        check_modes(what, SPX_SEMIRING_MIN_PLUS, SPX_F32, A, B, o);
        spx_matrix *Ai = NULL, *Bi = NULL; /* the same pattern with integer values */
        g_rng = seed;
        big_rows_operands(pick(64, 24), pick(6, 3), 200, 100, spans[s], 0, SPX_I64, &Ai, &Bi);
        spx_spgemm_options oi = {0};
        snprintf(what, sizeof what, "big rows over %lld columns, i64", (long long)spans[s]);
        check_modes(what, SPX_SEMIRING_PLUS_TIMES, SPX_I64, Ai, Bi, oi);
        snprintf(what, sizeof what, "big rows over %lld columns, plus_pair", (long long)spans[s]);
        check_modes(what, SPX_SEMIRING_PLUS_PAIR, SPX_I64, Ai, Bi, oi);
        spx_matrix_destroy(Ai);
        spx_matrix_destroy(Bi);
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
    }
    /* banded operands: every row's span is small, so tables are dense */
    spx_matrix *A = NULL, *B = NULL;
    int64_t n = pick(20000, 3000);
    CHECK_OK(g_ref, spx_gen_banded(g_ref, n, n, 5, 9, next_seed(), SPX_F64, SPX_INDEX_I32, &A));
    CHECK_OK(g_ref, spx_gen_banded(g_ref, n, n, 30, 3, next_seed(), SPX_F64, SPX_INDEX_I32, &B));
    spx_spgemm_options o = {0};
    check_modes("banded x banded", SPX_SEMIRING_PLUS_TIMES, SPX_F64, A, B, o);
    o.mask.kind = SPX_MASK_STRICT_UPPER;
    check_modes("banded x banded, strict upper", SPX_SEMIRING_MAX_TIMES, SPX_F64, A, B, o);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    /* a power law: rows in every bin at once */
    CHECK_OK(g_ref, spx_gen_rmat(g_ref, (int)pick(13, 10), 8, 0, 0, 0, next_seed(), SPX_F32,
                                 SPX_INDEX_I32, &A));
    o.mask.kind = SPX_MASK_NONE;
    check_modes("rmat squared", SPX_SEMIRING_PLUS_TIMES, SPX_F32, A, A, o);
    spx_matrix_destroy(A);
}

/* Deterministic options with accum, variant v of 4: drop_identity when v is
 * odd; the mask `plain` for v < 2, else the matrix M, complemented for v 3. */
static spx_spgemm_options accum_variant(int v, const spx_matrix *acc, spx_mask_kind plain,
                                        const spx_matrix *M)
{
    spx_spgemm_options o = {0};
    o.accum = acc;
    o.drop_identity = v & 1;
    o.mask.kind = v & 2 ? SPX_MASK_MATRIX : plain;
    o.mask.M = v & 2 ? M : NULL;
    o.mask.complement = v == 3;
    o.mode = SPX_SPGEMM_DETERMINISTIC;
    return o;
}

/* ---- large rows: column windows, ranked rows ---- */

/* For each of eight semiring/type pairs: rows x (span + 2 pad) products from
 * big_rows_operands (k rows of B of `per` columns each), alone and with
 * accum (entries before, in and after the span), drop_identity (integer
 * products of 0 give identities to drop), the mask matrix M and its
 * complement; deterministic and fast mode. */
static void large_row_cases(const char *label, int64_t rows, int64_t k, int64_t per, int64_t span,
                            int64_t pad, const spx_matrix *M)
{
    static const sr_pair cases[] = {
        {SPX_SEMIRING_PLUS_TIMES, SPX_F32}, {SPX_SEMIRING_PLUS_TIMES, SPX_F64},
        {SPX_SEMIRING_PLUS_TIMES, SPX_I32}, {SPX_SEMIRING_MIN_PLUS, SPX_F32},
        {SPX_SEMIRING_MAX_TIMES, SPX_I64}, {SPX_SEMIRING_OR_AND, SPX_BOOL},
        {SPX_SEMIRING_PLUS_PAIR, SPX_I64}, {SPX_SEMIRING_AVOS, SPX_I64}};
    const int64_t n = span + 2 * pad;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const spx_semiring_kind kind = cases[c].kind;
        const spx_dtype t = cases[c].type;
        spx_semiring sr = spx_semiring_builtin(kind);
        spx_matrix *A = NULL, *B = NULL;
        big_rows_operands(rows, pick(6, 3), k, per, span, pad, t, &A, &B);
        spx_matrix *Acc = random_matrix(rows, n, 0.02, t,
                                        kind == SPX_SEMIRING_AVOS ? VAL_AVOS : VAL_SMALL_INT,
                                        SPX_CSR, SPX_INDEX_I32);
        char what[240];
        snprintf(what, sizeof what, "%s, %s over %s", label, spx_semiring_name(kind),
                 spx_dtype_name(t));
        spx_spgemm_options o = {0};
        check_modes(what, kind, t, A, B, o);
        for (int variant = 0; variant < 4; variant++) {
            o = accum_variant(variant, Acc, SPX_MASK_NONE, M);
            snprintf(what, sizeof what, "%s, %s over %s, accum%s, mask %s", label,
                     spx_semiring_name(kind), spx_dtype_name(t), o.drop_identity ? ", drop" : "",
                     variant < 2 ? "none" : variant == 2 ? "matrix" : "complemented matrix");
            spx_matrix_destroy(both(what, &sr, A, B, &o, NULL, NULL, NULL, CMP_BITS, NULL));
        }
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
        spx_matrix_destroy(Acc);
    }
}

static void test_window_rows(void)
{
    /* rows of 20000 products over the columns [pad, pad + 30000) of 36000:
     * too large for shared memory in both phases (bool: the symbolic one;
     * its numeric tables fit) and dense enough for windows (four); the mask
     * matrix (3/4 of 26000 columns) cuts the span on both sides and leaves
     * rows large enough for windows in both phases */
    const int64_t pad = 3000, span = 30000, n = span + 2 * pad, rows = pick(40, 12);
    dmat Mp = dm_new(rows, n, SPX_PATTERN);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = pad + 2000 + i; j < pad + 28000; j++)
            DIN(&Mp, i, j) = t_below(&g_rng, 4) != 0;
    spx_matrix *M = dm_to_spx(g_ref, &Mp, SPX_CSR, SPX_INDEX_I32, &g_rng);
    dm_free(&Mp);
    large_row_cases("window rows", rows, 200, 100, span, pad, M);
    spx_matrix_destroy(M);
}

static void test_ranked_rows(void)
{
    /* numeric rows of the block bins: 600 products (about 540 entries, the
     * bin of 2048 slots) over 3000 columns and 4000 products (about 3600
     * entries, 8192 slots) over 20000, spans narrow enough for a bitmap
     * beside the entries (ranked rows), and 600 products over 150000
     * columns, too wide for it (hash tables, sorted) */
    static const int64_t shapes[][3] = {{20, 30, 3000}, {100, 40, 20000}, {20, 30, 150000}};
    const int64_t pad = 100, rows = pick(24, 8);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t span = shapes[s][2];
        spx_matrix *M = random_matrix(rows, span + 2 * pad, 0.5, SPX_PATTERN, VAL_BOOL, SPX_CSR,
                                      SPX_INDEX_I32);
        char label[80];
        snprintf(label, sizeof label, "block rows of %lld products over %lld columns",
                 (long long)(shapes[s][0] * shapes[s][1]), (long long)span);
        large_row_cases(label, rows, shapes[s][0], shapes[s][1], span, pad, M);
        spx_matrix_destroy(M);
    }
}

/* ---- rows of 33 to 128 products (sorted in registers) ---- */

static void test_sorted_rows(void)
{
    /* about 12 entries a row of A, 6 columns a row of B: rows of 33 to 128
     * products (enough of them for the sort, SPX_GEMM_SORT_MIN_ROWS); few
     * columns repeat them, many keep them distinct (the
     * unordered path sorts only rows of mostly distinct columns); over 2^25
     * columns a row's span is too wide for the sort keys and the row takes
     * a table (skipped in quick runs: the ref backend's accumulator has a
     * slot per column) */
    static const sr_pair cases[] = {
        {SPX_SEMIRING_PLUS_TIMES, SPX_F32}, {SPX_SEMIRING_PLUS_TIMES, SPX_F64},
        {SPX_SEMIRING_PLUS_TIMES, SPX_I32}, {SPX_SEMIRING_MIN_PLUS, SPX_F64},
        {SPX_SEMIRING_MAX_TIMES, SPX_F32}, {SPX_SEMIRING_PLUS_PAIR, SPX_I64},
        {SPX_SEMIRING_AVOS, SPX_I64}};
    const int64_t spans[] = {60, 5000, (1 << 25) + (1 << 23)};
    for (int s = 0; s < (g_quick ? 2 : 3); s++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const int64_t m = 9000; /* about 8900 rows in range: the sort runs from 8192 on */
            spx_matrix *A = NULL, *B = NULL, *M = NULL;
            big_rows_operands(m, 0, 200, 6, spans[s], 0, cases[c].type, &A, &B);
            /* a matrix mask over the narrowest span (it is built dense) */
            if (s == 0)
                M = random_matrix(m, spans[s], 0.5, SPX_PATTERN, VAL_BOOL, SPX_CSR, SPX_INDEX_I32);
            for (int mk = 0; mk < (M ? 3 : 2); mk++) {
                spx_spgemm_options o = {0};
                o.mask.kind = mk == 0 ? SPX_MASK_NONE : mk == 1 ? SPX_MASK_LOWER : SPX_MASK_MATRIX;
                o.mask.M = mk == 2 ? M : NULL;
                char what[200];
                snprintf(what, sizeof what, "rows of few products over %lld columns, %s over %s, mask %d",
                         (long long)spans[s], spx_semiring_name(cases[c].kind),
                         spx_dtype_name(cases[c].type), (int)o.mask.kind);
                check_modes(what, cases[c].kind, cases[c].type, A, B, o);
            }
            spx_matrix_destroy(A);
            spx_matrix_destroy(B);
            spx_matrix_destroy(M);
        }
}

/* ---- many short, even rows (tables of 8 lanes) ---- */

static void test_short_rows(void)
{
    /* the cuda backend gives rows of up to 64 entries 8 lanes when there are
     * 2^17 rows or more, averaging at most 8 entries and none over 32: 2D and
     * 3D Laplacians (25 and 49 products a row, tables in both phases) and a
     * uniform matrix at 4 a row (random values and columns) */
    static const sr_pair cases[] = {
        {SPX_SEMIRING_PLUS_TIMES, SPX_F32}, {SPX_SEMIRING_PLUS_TIMES, SPX_I32},
        {SPX_SEMIRING_MIN_PLUS, SPX_F64}, {SPX_SEMIRING_PLUS_PAIR, SPX_I64}};
    for (int f = 0; f < 3; f++)
        for (size_t c = 0; c < (g_quick ? 1 : sizeof cases / sizeof cases[0]); c++) {
            spx_dtype t = cases[c].type;
            spx_matrix *A = NULL;
            if (f < 2)
                CHECK_OK(g_ref, spx_gen_laplacian(g_ref, f + 2, f ? 52 : 370, t, SPX_INDEX_I32, &A));
            else
                CHECK_OK(g_ref, spx_gen_uniform(g_ref, 140000, 140000, 4, next_seed(), t,
                                                SPX_INDEX_I32, &A));
            for (int mk = 0; mk < 2; mk++) {
                spx_spgemm_options o = {0};
                o.mask.kind = mk ? SPX_MASK_LOWER : SPX_MASK_NONE;
                char what[200];
                snprintf(what, sizeof what, "%s squared, %s over %s, mask %d",
                         f == 0 ? "2D Laplacian 370^2" : f == 1 ? "3D Laplacian 52^3" : "uniform 140000, 4 a row",
                         spx_semiring_name(cases[c].kind), spx_dtype_name(t), (int)o.mask.kind);
                check_modes(what, cases[c].kind, t, A, A, o);
            }
            spx_matrix_destroy(A);
        }
}

/* ---- real matrices ---- */

static void test_real(void)
{
    const char *dir = test_shared_data_dir();
    static const char *files[] = {"suitesparse/1138_bus.mtx", "graphs/citeseer.mtx",
                                  "graphs/cora.mtx"};
    char path[4096];
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        if (dir)
            snprintf(path, sizeof path, "%.3000s/%s", dir, files[f]);
        if (!dir || access(path, R_OK) != 0) { /* the committed copies, where there are */
            const char *base = strrchr(files[f], '/') + 1;
            snprintf(path, sizeof path, "%.3000s/%s", test_local_data_dir(), base);
            if (access(path, R_OK) != 0) {
                fprintf(stderr, "  (no %s: skipped)\n", files[f]);
                continue;
            }
        }
        spx_matrix *A = NULL;
        spx_read_options ro = {0};
        CHECK_OK(g_ref, spx_matrix_read(g_ref, path, &ro, &A));
        if (!A)
            continue;
        spx_matrix *A32 = NULL, *A64 = NULL;
        CHECK_OK(g_ref, spx_matrix_astype(g_ref, A, SPX_F32, SPX_INDEX_DEFAULT, &A32));
        CHECK_OK(g_ref, spx_matrix_astype(g_ref, A, SPX_F64, SPX_INDEX_DEFAULT, &A64));
        spx_spgemm_options o = {0};
        char what[300];
        snprintf(what, sizeof what, "%s squared, f32", files[f]);
        check_modes(what, SPX_SEMIRING_PLUS_TIMES, SPX_F32, A32, A32, o);
        snprintf(what, sizeof what, "%s squared, f64", files[f]);
        check_modes(what, SPX_SEMIRING_PLUS_TIMES, SPX_F64, A64, A64, o);
        snprintf(what, sizeof what, "%s squared, plus_pair", files[f]);
        check_modes(what, SPX_SEMIRING_PLUS_PAIR, SPX_I64, A, A, o);
        spx_matrix_destroy(A);
        spx_matrix_destroy(A32);
        spx_matrix_destroy(A64);
    }
    spx_matrix *L = NULL;
    CHECK_OK(g_ref, spx_gen_laplacian(g_ref, 3, pick(30, 12), SPX_F32, SPX_INDEX_I32, &L));
    spx_spgemm_options o = {0};
    check_modes("3D Laplacian squared", SPX_SEMIRING_PLUS_TIMES, SPX_F32, L, L, o);
    check_modes("3D Laplacian squared, plus_pair", SPX_SEMIRING_PLUS_PAIR, SPX_F32, L, L, o);
    spx_matrix_destroy(L);
}

/* ---- operands in device memory ---- */

/* Device results of a context of their own: a freed result's memory stays
 * with the context for the next one (counted as cached), and a result
 * outlives its context. */
static void result_lifetime(const spx_semiring *sr, const spx_matrix *dA, const spx_matrix *dB,
                            const spx_matrix *A, const spx_matrix *B)
{
    spx_ctx *c = NULL;
    spx_matrix *C = NULL, *R = NULL;
    spx_memory_stats before, after;
    if (spx_ctx_create(&c) || spx_ctx_set_backend(c, SPX_BACKEND_CUDA)) {
        CHECK(0, "a second cuda context");
        spx_ctx_destroy(c);
        return;
    }
    spx_spgemm_options o = {0};
    o.mode = SPX_SPGEMM_DETERMINISTIC;
    CHECK_OK(g_ref, spx_spgemm(g_ref, sr, A, B, &o, &R));
    CHECK_OK(c, spx_spgemm(c, sr, dA, dB, &o, &C));
    CHECK_OK(c, spx_ctx_memory_stats(c, &before));
    spx_matrix_destroy(C);
    C = NULL;
    CHECK_OK(c, spx_ctx_memory_stats(c, &after));
    CHECK(after.cached > before.cached, "a freed result's memory is kept: cached %lld -> %lld",
          (long long)before.cached, (long long)after.cached);
    CHECK_OK(c, spx_spgemm(c, sr, dA, dB, &o, &C));
    spx_ctx_destroy(c);
    if (C)
        same_result("a device result after its context ended", C, R, CMP_BITS, NULL);
    spx_matrix_destroy(C);
    spx_matrix_destroy(R);
}

static void test_device_operands(void)
{
    if (!g_cuda)
        return;
    spx_semiring pt = SR(PLUS_TIMES);
    for (int it = 0; it < 2; it++) {
        spx_index_type ix = it ? SPX_INDEX_I64 : SPX_INDEX_I32;
        spx_matrix *A = random_matrix(230, 180, 0.06, SPX_F64, VAL_UNIFORM, SPX_CSR, ix);
        spx_matrix *B = random_matrix(180, 250, 0.06, SPX_F64, VAL_UNIFORM, SPX_CSR, ix);
        spx_matrix *M = random_matrix(230, 250, 0.4, SPX_PATTERN, VAL_BOOL, SPX_CSR, ix);
        spx_matrix *Acc = random_matrix(230, 250, 0.05, SPX_F64, VAL_UNIFORM, SPX_CSR, ix);
        /* A^T in CSC holds A's CSR arrays: op transpose reads it in place */
        spx_matrix *T = NULL, *At = NULL;
        CHECK_OK(g_ref, spx_matrix_transpose(g_ref, A, &T));
        CHECK_OK(g_ref, spx_matrix_convert(g_ref, T, SPX_CSC, NULL, &At));
        spx_matrix *dAt = to_device(At);
        spx_matrix *dA = to_device(A), *dB = to_device(B), *dM = to_device(M), *dAcc = to_device(Acc);
        spx_spgemm_options o = {0}, ho = {0};
        o.mask.kind = ho.mask.kind = SPX_MASK_MATRIX;
        o.mask.M = dM;
        ho.mask.M = M;
        o.accum = dAcc;
        ho.accum = Acc;
        o.mode = ho.mode = SPX_SPGEMM_DETERMINISTIC;
        spx_matrix_destroy(both("device A, B, M, accum", &pt, dA, dB, &o, A, B, &ho, CMP_BITS, NULL));
        o.mask.M = M; /* host mask and accum with device operands */
        o.accum = Acc;
        o.drop_identity = ho.drop_identity = 1;
        spx_matrix_destroy(both("device A, B; host M, accum; drop", &pt, dA, dB, &o, A, B, &ho,
                                CMP_BITS, NULL));
        spx_spgemm_options t = {0}, ht = {0};
        t.op_a = SPX_OP_TRANSPOSE;
        t.mode = SPX_SPGEMM_DETERMINISTIC;
        spx_matrix_destroy(both("device CSC A read transposed", &pt, dAt, dB, &t, A, B, &ht,
                                CMP_BITS, NULL));
        result_lifetime(&pt, dA, dB, A, B);
        spx_matrix *C = (spx_matrix *)&t;
        CHECK_FAILS(g_ctx, spx_spgemm(g_ctx, &pt, A, dB, NULL, &C), SPX_ERR_INVALID_ARGUMENT,
                    "share one");
        CHECK(C == (spx_matrix *)&t, "C untouched");
        spx_matrix *v[] = {A, B, M, Acc, At, T, dAt, dA, dB, dM, dAcc};
        for (size_t x = 0; x < sizeof v / sizeof v[0]; x++)
            spx_matrix_destroy(v[x]);
    }
}

/* ---- accumulate and drop_identity ---- */

static void test_accum_drop(void)
{
    for (size_t x = 0; x < NPAIRS; x += 2) {
        spx_semiring_kind k = pairs[x].kind;
        spx_dtype t = pairs[x].type;
        int dist = k == SPX_SEMIRING_AVOS ? VAL_AVOS : VAL_SMALL_INT; /* zeros and cancellations */
        spx_dtype top = k == SPX_SEMIRING_PLUS_PAIR ? SPX_PATTERN : t;
        spx_matrix *A = random_matrix(120, 90, 0.08, top, dist, SPX_CSR, SPX_INDEX_I32);
        spx_matrix *B = random_matrix(90, 140, 0.08, top, dist, SPX_CSR, SPX_INDEX_I32);
        spx_dtype ct = k == SPX_SEMIRING_PLUS_PAIR ? SPX_I64 : t; /* patterns count in i64 */
        spx_matrix *Acc = random_matrix(120, 140, 0.1, ct, dist, SPX_CSR, SPX_INDEX_I32);
        spx_matrix *M = random_matrix(120, 140, 0.5, SPX_PATTERN, VAL_BOOL, SPX_CSR, SPX_INDEX_I32);
        for (int variant = 0; variant < 4; variant++) {
            spx_spgemm_options o = accum_variant(variant, Acc, SPX_MASK_UPPER, M);
            char what[200];
            snprintf(what, sizeof what, "%s over %s, accum%s, variant %d", spx_semiring_name(k),
                     spx_dtype_name(ct), o.drop_identity ? ", drop" : "", variant);
            spx_semiring sr = spx_semiring_builtin(k);
            spx_matrix_destroy(both(what, &sr, A, B, &o, NULL, NULL, NULL, CMP_BITS, NULL));
            if (g_cuda) { /* the same with every operand on the device */
                spx_matrix *dA = to_device(A), *dB = to_device(B), *dAcc = to_device(Acc);
                spx_spgemm_options d = o, h = o;
                d.accum = dAcc;
                snprintf(what, sizeof what, "%s over %s, device accum%s, variant %d",
                         spx_semiring_name(k), spx_dtype_name(ct), o.drop_identity ? ", drop" : "",
                         variant);
                spx_matrix_destroy(both(what, &sr, dA, dB, &d, A, B, &h, CMP_BITS, NULL));
                spx_matrix_destroy(dA);
                spx_matrix_destroy(dB);
                spx_matrix_destroy(dAcc);
            }
        }
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
        spx_matrix_destroy(Acc);
        spx_matrix_destroy(M);
    }
}

/* ---- memory budgets ---- */

/* The minimum a budget error names ("below the N bytes"). */
static int64_t named_minimum(spx_ctx *ctx)
{
    const char *p = strstr(spx_last_error(ctx), "below the ");
    return p ? strtoll(p + 10, NULL, 10) : -1;
}

/* Under the named minimum the product fails; at it (and between it and the
 * full workspace) it fits the budget and gives the same bytes. */
static void check_budgets(const char *what, const spx_matrix *A, const spx_matrix *B,
                          spx_spgemm_options o, int device)
{
    if (device && !g_cuda)
        return;
    spx_semiring sr = SR(PLUS_TIMES);
    spx_matrix *dA = device ? to_device(A) : NULL, *dB = device ? to_device(B) : NULL;
    const spx_matrix *xA = device ? dA : A, *xB = device ? dB : B;
    spx_matrix *R = NULL, *C = NULL;
    int64_t full = -1, ws = -1;
    o.mode = SPX_SPGEMM_DETERMINISTIC;
    o.memory_budget = 0;
    CHECK_OK(g_ctx, spx_spgemm(g_ctx, &sr, xA, xB, &o, &R));
    CHECK_OK(g_ctx, spx_spgemm_workspace_size(g_ctx, &sr, xA, xB, &o, &full));
    o.memory_budget = 1;
    CHECK_FAILS(g_ctx, spx_spgemm(g_ctx, &sr, xA, xB, &o, &C), SPX_ERR_OUT_OF_MEMORY,
                "memory_budget of 1 bytes");
    int64_t min = named_minimum(g_ctx);
    CHECK(min > 1, "%s: the budget error names a minimum (%s)", what, spx_last_error(g_ctx));
    o.memory_budget = min - 1;
    CHECK_FAILS(g_ctx, spx_spgemm(g_ctx, &sr, xA, xB, &o, &C), SPX_ERR_OUT_OF_MEMORY,
                "memory_budget");
    int64_t budgets[] = {min, min + (full > min ? (full - min) / 7 : 0), full > min ? full : min};
    int owned = 0;
    spx_matrix *HR = host_of(R, &owned);
    for (int b = 0; b < 3 && min > 1 && HR; b++) {
        char name[200];
        snprintf(name, sizeof name, "%s, budget %lld (minimum %lld, full %lld)", what,
                 (long long)budgets[b], (long long)min, (long long)full);
        o.memory_budget = budgets[b];
        ws = -1;
        CHECK_OK(g_ctx, spx_spgemm_workspace_size(g_ctx, &sr, xA, xB, &o, &ws));
        CHECK(ws > 0 && ws <= budgets[b], "%s: workspace %lld", name, (long long)ws);
        C = NULL;
        CHECK_OK(g_ctx, spx_spgemm(g_ctx, &sr, xA, xB, &o, &C));
        if (C)
            same_result(name, C, HR, CMP_BITS, NULL);
        spx_matrix_destroy(C);
    }
    if (owned)
        spx_matrix_destroy(HR);
    spx_matrix_destroy(R);
    spx_matrix_destroy(dA);
    spx_matrix_destroy(dB);
}

static void test_budgets(void)
{
    spx_matrix *A = NULL, *B = NULL;
    CHECK_OK(g_ref, spx_gen_rmat(g_ref, (int)pick(12, 9), 8, 0, 0, 0, next_seed(), SPX_F32,
                                 SPX_INDEX_I32, &A));
    spx_spgemm_options o = {0};
    check_budgets("rmat squared", A, A, o, 0);
    o.drop_identity = 1;
    check_budgets("rmat squared, drop", A, A, o, 0);
    check_budgets("rmat squared, drop, device", A, A, o, 1);
    spx_matrix_destroy(A);
    /* more than 8192 rows: binned by the sort, not one block */
    CHECK_OK(g_ref, spx_gen_rmat(g_ref, 14, 4, 0, 0, 0, next_seed(), SPX_F32, SPX_INDEX_I32, &A));
    check_budgets("rmat 2^14 squared, drop", A, A, o, 0);
    check_budgets("rmat 2^14 squared, drop, device", A, A, o, 1);
    spx_matrix_destroy(A);
    /* several rows with tables in device memory, fewer regions than rows */
    big_rows_operands(pick(40, 16), pick(12, 5), 200, 100, 1000000, 0, SPX_F32, &A, &B);
    spx_spgemm_options z = {0};
    check_budgets("big rows", A, B, z, 0);
    check_budgets("big rows, device", A, B, z, 1);
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
}

/* ---- the avos closure ---- */

/* n individuals in 12 generations of consecutive indices; each parent is
 * known with probability 0.7 and lives near the child's place in the next
 * generation (a father, marked -1 on the diagonal, and a mother, marked 1);
 * A(i, father) = 2, A(i, mother) = 3: upper triangular, lines of at most 12
 * generations, and about 1.4^g ancestors g generations back. */
static spx_matrix *pedigree(int64_t n, spx_dtype t)
{
    const int64_t gen = (n + 11) / 12;
    dmat P = dm_new(n, n, t);
    int8_t *female = calloc((size_t)(n > 0 ? n : 1), 1);
    for (int64_t i = 0; i < n; i++)
        female[i] = (int8_t)t_below(&g_rng, 2);
    for (int64_t i = 0; i < n; i++) {
        DIN(&P, i, i) = 1;
        DM(&P, i, i).i = female[i] ? 1 : -1;
        const int64_t first = (i / gen + 1) * gen;
        for (int sex = 0; sex <= 1 && first < n; sex++) {
            if (t_below(&g_rng, 10) < 3)
                continue; /* unknown parent */
            for (int tries = 0; tries < 8; tries++) {
                int64_t j = first + i % gen + t_below(&g_rng, 17) - 8;
                j = j < first ? first : j >= n ? n - 1 : j;
                if (female[j] == sex) {
                    DIN(&P, i, j) = 1;
                    DM(&P, i, j).i = sex ? 3 : 2;
                    break;
                }
            }
        }
    }
    free(female);
    spx_matrix *A = dm_to_spx(g_ref, &P, SPX_CSR, SPX_INDEX_I32, &g_rng);
    dm_free(&P);
    return A;
}

static void test_closure(void)
{
    spx_ctx *cpu = NULL;
    CHECK_OK(g_ref, spx_ctx_create(&cpu));
    if (!cpu)
        return;
    spx_ctx_set_backend(cpu, SPX_BACKEND_CPU);
    for (int t = 0; t < 2; t++) {
        spx_dtype dt = t ? SPX_I64 : SPX_I32;
        spx_matrix *A = pedigree(pick(3000, 600), dt), *R = NULL, *C = NULL;
        int itr = -1, it = -2;
        CHECK_OK(cpu, spx_avos_closure(cpu, A, &R, &itr));
        CHECK_OK(g_ctx, spx_avos_closure(g_ctx, A, &C, &it));
        CHECK(it == itr, "closure over %s: %d squarings, cpu %d", spx_dtype_name(dt), it, itr);
        if (C && R)
            same_result("pedigree closure", C, R, CMP_BITS, NULL);
        spx_matrix_destroy(C);
        spx_matrix *dA = to_device(A);
        if (dA) { /* the closure of a device matrix stays on the device */
            C = NULL;
            CHECK_OK(g_ctx, spx_avos_closure(g_ctx, dA, &C, &it));
            spx_matrix_info in;
            CHECK(C && spx_matrix_info_get(C, &in) == SPX_OK && in.memory == SPX_MEM_DEVICE,
                  "closure of a device matrix in device memory");
            CHECK(it == itr, "device closure: %d squarings, cpu %d", it, itr);
            if (C && R)
                same_result("pedigree closure, device", C, R, CMP_BITS, NULL);
            spx_matrix_destroy(C);
            spx_matrix_destroy(dA);
        }
        spx_matrix_destroy(A);
        spx_matrix_destroy(R);
    }
    spx_ctx_destroy(cpu);
}

/* ---- overflow reports ---- */

static void test_overflow(void)
{
    /* C(3, 5) overflows in its second product; row 7 overflows too */
    for (int t = 0; t < 2; t++) {
        spx_dtype dt = t ? SPX_I64 : SPX_I32;
        double big = t ? 6.0e18 : 2.0e9; /* sums and products of two are out of range */
        dmat DA = dm_random(12, 10, 0.3, dt, VAL_SMALL_INT, &g_rng);
        dmat DB = dm_random(10, 9, 0.3, dt, VAL_SMALL_INT, &g_rng);
        for (int64_t k = 0; k < 10; k++) {
            DIN(&DA, 3, k) = DIN(&DA, 7, k) = 0;
            DIN(&DB, k, 5) = 0;
        }
        DIN(&DA, 3, 2) = DIN(&DA, 3, 6) = DIN(&DA, 7, 1) = 1;
        DM(&DA, 3, 2).i = 1;
        DM(&DA, 3, 6).i = DM(&DA, 7, 1).i = (int64_t)big;
        DIN(&DB, 2, 5) = DIN(&DB, 6, 5) = DIN(&DB, 1, 0) = 1;
        DM(&DB, 2, 5).i = 1;
        DM(&DB, 6, 5).i = DM(&DB, 1, 0).i = (int64_t)big;
        spx_matrix *A = dm_to_spx(g_ref, &DA, SPX_CSR, SPX_INDEX_I32, &g_rng);
        spx_matrix *B = dm_to_spx(g_ref, &DB, SPX_CSR, SPX_INDEX_I32, &g_rng);
        dm_free(&DA);
        dm_free(&DB);
        static const spx_semiring_kind kinds[] = {SPX_SEMIRING_PLUS_TIMES, SPX_SEMIRING_MIN_TIMES,
                                                  SPX_SEMIRING_MAX_PLUS};
        for (int k = 0; k < 3; k++) {
            spx_semiring sr = spx_semiring_builtin(kinds[k]);
            spx_spgemm_options o = {0};
            char what[120];
            snprintf(what, sizeof what, "overflow, %s over %s", spx_semiring_name(kinds[k]),
                     spx_dtype_name(dt));
            spx_matrix_destroy(both(what, &sr, A, B, &o, NULL, NULL, NULL, CMP_BITS, NULL));
            spx_matrix *dA = to_device(A), *dB = to_device(B);
            if (dA) {
                snprintf(what, sizeof what, "overflow, %s over %s, device",
                         spx_semiring_name(kinds[k]), spx_dtype_name(dt));
                spx_matrix_destroy(both(what, &sr, dA, dB, &o, A, B, NULL, CMP_BITS, NULL));
            }
            spx_matrix_destroy(dA);
            spx_matrix_destroy(dB);
        }
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
    }
    /* a line of fathers overflows the avos closure */
    dmat P = dm_new(34, 34, SPX_I32);
    for (int64_t i = 0; i + 1 < 34; i++) {
        DIN(&P, i, i + 1) = 1;
        DM(&P, i, i + 1).i = 2;
    }
    spx_matrix *L = dm_to_spx(g_ref, &P, SPX_CSR, SPX_INDEX_I32, &g_rng), *C = NULL;
    dm_free(&P);
    CHECK_FAILS(g_ctx, spx_avos_closure(g_ctx, L, &C, NULL), SPX_ERR_OVERFLOW, "avos over i32");
    CHECK(C == NULL, "C untouched");
    spx_matrix_destroy(L);
}

/* ---- determinism ---- */

static void test_determinism(void)
{
    spx_matrix *A = NULL, *first = NULL;
    CHECK_OK(g_ref, spx_gen_rmat(g_ref, (int)pick(14, 10), 16, 0, 0, 0, next_seed(), SPX_F32,
                                 SPX_INDEX_I32, &A));
    spx_semiring pt = SR(PLUS_TIMES);
    spx_spgemm_options o = {0};
    o.mode = SPX_SPGEMM_DETERMINISTIC;
    spx_matrix *R = both("rmat determinism vs ref", &pt, A, A, &o, NULL, NULL, NULL, CMP_BITS, NULL);
    for (int run = 0; run < (g_quick ? 3 : 20); run++) {
        spx_matrix *C = NULL;
        CHECK_OK(g_ctx, product(&pt, A, A, &o, &C));
        if (!C)
            break;
        if (!first) {
            first = C;
            continue;
        }
        char what[80];
        snprintf(what, sizeof what, "deterministic run %d", run);
        same_result(what, C, first, CMP_BITS, NULL);
        spx_matrix_destroy(C);
    }
    spx_ctx_set_deterministic(g_ctx, 1); /* mode AUTO follows the context */
    o.mode = SPX_SPGEMM_AUTO;
    spx_matrix *C = NULL;
    CHECK_OK(g_ctx, product(&pt, A, A, &o, &C));
    if (C && R)
        same_result("deterministic context", C, R, CMP_BITS, NULL);
    spx_matrix_destroy(C);
    spx_ctx_set_deterministic(g_ctx, 0);
    spx_matrix_destroy(first);
    spx_matrix_destroy(R);
    spx_matrix_destroy(A);
}

static void test_unsupported(void)
{
    if (!g_cuda)
        return;
    spx_semiring cu = max_min_semiring();
    spx_matrix *A = random_matrix(20, 20, 0.2, SPX_F64, VAL_UNIFORM, SPX_CSR, SPX_INDEX_I32);
    spx_matrix *C = NULL;
    CHECK_FAILS(g_ctx, spx_spgemm(g_ctx, &cu, A, A, NULL, &C), SPX_ERR_UNSUPPORTED,
                "custom semirings run on the cpu and ref backends only");
    CHECK(C == NULL, "C untouched");
    spx_matrix_destroy(A);
}

int main(void)
{
    test_init();
    g_rng = test_seed;
    g_quick = getenv("SPX_TEST_QUICK") && atoi(getenv("SPX_TEST_QUICK"));
    g_verbose = getenv("SPX_GPU_TEST_VERBOSE") && atoi(getenv("SPX_GPU_TEST_VERBOSE"));
    const char *be = getenv("SPX_GPU_TEST_BACKEND");
    spx_backend want = SPX_BACKEND_CUDA;
    if (be && spx_backend_from_name(be, &want) != SPX_OK) {
        fprintf(stderr, "SPX_GPU_TEST_BACKEND=%s: not a backend\n", be);
        return 2;
    }
    if (want == SPX_BACKEND_CUDA && !spx_backend_available(SPX_BACKEND_CUDA)) {
        printf("test_gpu_spgemm: no CUDA device, skipped\n");
        return 77;
    }
    if (spx_ctx_create(&g_ctx) || spx_ctx_create(&g_ref) || spx_ctx_set_backend(g_ctx, want) ||
        spx_ctx_set_backend(g_ref, SPX_BACKEND_REF)) {
        fprintf(stderr, "test_gpu_spgemm: cannot set up the contexts\n");
        return 1;
    }
    g_cuda = want == SPX_BACKEND_CUDA;
    printf("test_gpu_spgemm: %s backend against ref%s (SPX_TEST_SEED=%llu)\n",
           spx_backend_name(want), g_quick ? ", quick" : "", (unsigned long long)test_seed);
    static const struct {
        const char *name;
        void (*run)(void);
    } sections[] = {
        {"semirings", test_semirings},     {"shapes", test_shapes},
        {"big rows", test_big_rows},       {"window rows", test_window_rows},
        {"ranked rows", test_ranked_rows}, {"sorted rows", test_sorted_rows},
        {"short rows", test_short_rows},   {"real matrices", test_real},
        {"device operands", test_device_operands}, {"accumulate", test_accum_drop},
        {"budgets", test_budgets},         {"closure", test_closure},
        {"overflow", test_overflow},       {"determinism", test_determinism},
        {"unsupported", test_unsupported},
    };
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        if (!test_section_selected(sections[s].name))
            continue;
        int before = test_failures;
        int64_t pool = pool_in_use();
        double t0 = (double)clock() / CLOCKS_PER_SEC;
        sections[s].run();
        CHECK(pool_in_use() == pool, "%s: the pool holds %lld bytes more after the section",
              sections[s].name, (long long)(pool_in_use() - pool));
        printf("  %-16s %s (%.1f s cpu)\n", sections[s].name,
               test_failures == before ? "ok" : "FAILED",
               (double)clock() / CLOCKS_PER_SEC - t0);
        fflush(stdout);
    }
    printf("spgemm gpu test (%s backend): %lld products, %lld results compared, %d failures\n",
           spx_backend_name(want), (long long)g_products, (long long)g_compared, test_failures);
    spx_ctx_destroy(g_ctx);
    spx_ctx_destroy(g_ref);
    return test_finish("test_gpu_spgemm");
}

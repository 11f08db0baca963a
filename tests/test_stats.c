/* Matrix statistics: every field against a brute-force computation from the
 * entry list, for every format, plus hand-made cases. BSR and SELL matrices
 * are built by the test itself (wrapped arrays) and, when spx_matrix_convert
 * can produce them in this build, also by conversion. */
#include "core/core.h"
#include "testutil.h"

#define LL(x) ((long long)(x))

static spx_ctx *ctx;
static uint64_t rng;

typedef struct {
    int64_t i, j;
} entry;

/* ---- the oracle ---- */

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    return a->i != b->i ? (a->i > b->i) - (a->i < b->i) : (a->j > b->j) - (a->j < b->j);
}

/* Statistics of the entries e[0, n) (each counted as given) of a rows x cols matrix. */
static spx_matrix_stats brute(int64_t rows, int64_t cols, const entry *e, int64_t n)
{
    spx_matrix_stats st;
    memset(&st, 0, sizeof st);
    st.rows = rows;
    st.cols = cols;
    st.nnz = n;
    int64_t *len = calloc((size_t)rows + 1, sizeof *len);
    char *hit = calloc((size_t)cols + 1, 1);
    int64_t low = INT64_MIN, up = INT64_MIN;
    for (int64_t p = 0; p < n; p++) {
        len[e[p].i]++;
        hit[e[p].j] = 1;
        st.diagonal_nnz += e[p].i == e[p].j;
        if (e[p].i - e[p].j > low)
            low = e[p].i - e[p].j;
        if (e[p].j - e[p].i > up)
            up = e[p].j - e[p].i;
    }
    if (n > 0) {
        st.lower_bandwidth = low > 0 ? low : 0;
        st.upper_bandwidth = up > 0 ? up : 0;
        st.bandwidth = st.lower_bandwidth + st.upper_bandwidth + 1;
    }
    for (int64_t j = 0; j < cols; j++)
        st.empty_cols += !hit[j];
    if (rows > 0 && cols > 0)
        st.density = (double)n / ((double)rows * (double)cols);
    if (rows > 0) {
        st.row_min = INT64_MAX;
        for (int64_t i = 0; i < rows; i++) {
            st.row_min = len[i] < st.row_min ? len[i] : st.row_min;
            st.row_max = len[i] > st.row_max ? len[i] : st.row_max;
            st.empty_rows += len[i] == 0;
            int b = 0;
            while (b < SPX_STATS_HIST_BINS - 1 && len[i] >= (INT64_C(1) << b))
                b++;
            st.row_hist[b]++;
        }
        st.row_mean = (double)n / (double)rows;
        double ss = 0;
        for (int64_t i = 0; i < rows; i++)
            ss += ((double)len[i] - st.row_mean) * ((double)len[i] - st.row_mean);
        st.row_std = sqrt(ss / (double)rows);
        st.row_cv = st.row_mean > 0 ? st.row_std / st.row_mean : 0;
        qsort(len, (size_t)rows, sizeof *len, cmp_i64);
        st.row_median = rows % 2 ? (double)len[rows / 2]
                                 : ((double)len[rows / 2 - 1] + (double)len[rows / 2]) / 2;
    }
    free(len);
    free(hit);
    return st;
}

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b));
}

static void compare(const spx_matrix_stats *got, const spx_matrix_stats *want, const char *what)
{
#define SAME_INT(f)                                                                                \
    CHECK(got->f == want->f, "%s: " #f " %lld, expected %lld", what, LL(got->f), LL(want->f))
#define SAME_DBL(f)                                                                                \
    CHECK(close_to(got->f, want->f) && !isnan(got->f), "%s: " #f " %.17g, expected %.17g", what,   \
          got->f, want->f)
    SAME_INT(rows);
    SAME_INT(cols);
    SAME_INT(nnz);
    SAME_INT(row_min);
    SAME_INT(row_max);
    SAME_INT(empty_rows);
    SAME_INT(empty_cols);
    SAME_INT(lower_bandwidth);
    SAME_INT(upper_bandwidth);
    SAME_INT(bandwidth);
    SAME_INT(diagonal_nnz);
    SAME_DBL(density);
    SAME_DBL(row_mean);
    SAME_DBL(row_std);
    SAME_DBL(row_cv);
    CHECK(got->row_median == want->row_median, "%s: row_median %g, expected %g", what,
          got->row_median, want->row_median);
    for (int b = 0; b < SPX_STATS_HIST_BINS; b++)
        SAME_INT(row_hist[b]);
#undef SAME_INT
#undef SAME_DBL
}

/* ---- building matrices ---- */

/* A COO matrix wrapping copies of the entries (values 1..n, f64). */
typedef struct {
    spx_matrix *A;
    void *ri, *ci;
    double *v;
} coo;

static coo make_coo(int64_t rows, int64_t cols, const entry *e, int64_t n, spx_index_type it)
{
    coo c = {0};
    size_t isz = it == SPX_INDEX_I64 ? 8 : 4;
    c.ri = malloc((size_t)(n + 1) * isz);
    c.ci = malloc((size_t)(n + 1) * isz);
    c.v = malloc((size_t)(n + 1) * sizeof *c.v);
    for (int64_t p = 0; p < n; p++) {
        spx__idx_set(c.ri, it, p, e[p].i);
        spx__idx_set(c.ci, it, p, e[p].j);
        c.v[p] = (double)(p + 1);
    }
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, rows, cols, n, c.ri, c.ci, c.v, it, SPX_F64,
                                      SPX_MEM_HOST, &c.A));
    return c;
}

static void free_coo(coo *c)
{
    spx_matrix_destroy(c->A);
    free(c->ri);
    free(c->ci);
    free(c->v);
}

/* Sorted entries without repeats; returns the count. */
static int64_t unique(entry *e, int64_t n)
{
    if (n == 0)
        return 0;
    qsort(e, (size_t)n, sizeof *e, cmp_entry);
    int64_t k = 1;
    for (int64_t p = 1; p < n; p++)
        if (cmp_entry(&e[p], &e[k - 1]))
            e[k++] = e[p];
    return k;
}

/* Every slot inside the matrix of every br x bc block holding an entry (e unique). */
static entry *bsr_slots(int64_t rows, int64_t cols, const entry *e, int64_t n, int64_t br,
                        int64_t bc, int64_t *count)
{
    entry *blocks = malloc((size_t)(n + 1) * sizeof *blocks);
    for (int64_t p = 0; p < n; p++)
        blocks[p] = (entry){e[p].i / br, e[p].j / bc};
    int64_t nb = unique(blocks, n), k = 0;
    entry *out = malloc((size_t)(nb * br * bc + 1) * sizeof *out);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t r = 0; r < br; r++)
            for (int64_t c = 0; c < bc; c++) {
                int64_t i = blocks[b].i * br + r, j = blocks[b].j * bc + c;
                if (i < rows && j < cols)
                    out[k++] = (entry){i, j};
            }
    free(blocks);
    *count = k;
    return out;
}

/* A BSR or SELL matrix wrapped over arrays the test builds itself (f64 ones). */
typedef struct {
    spx_matrix *A;
    void *off, *idx, *perm, *len;
    double *val;
} wrapped;

static void free_wrapped(wrapped *w)
{
    spx_matrix_destroy(w->A);
    free(w->off);
    free(w->idx);
    free(w->perm);
    free(w->len);
    free(w->val);
}

/* BSR holding the unique sorted entries e in br x bc blocks. */
static wrapped make_bsr(int64_t rows, int64_t cols, const entry *e, int64_t n, int64_t br,
                        int64_t bc, spx_index_type it)
{
    wrapped w = {0};
    entry *blocks = malloc((size_t)(n + 1) * sizeof *blocks);
    for (int64_t p = 0; p < n; p++)
        blocks[p] = (entry){e[p].i / br, e[p].j / bc};
    int64_t nb = unique(blocks, n), nbr = (rows + br - 1) / br;
    size_t isz = it == SPX_INDEX_I64 ? 8 : 4;
    w.off = calloc((size_t)nbr + 1, isz);
    w.idx = malloc((size_t)(nb + 1) * isz);
    w.val = calloc((size_t)(nb * br * bc + 1), sizeof *w.val);
    for (int64_t I = 0, b = 0; I < nbr; I++) {
        while (b < nb && blocks[b].i == I) {
            spx__idx_set(w.idx, it, b, blocks[b].j);
            b++;
        }
        spx__idx_set(w.off, it, I + 1, b);
    }
    for (int64_t p = 0; p < n; p++) {
        entry key = {e[p].i / br, e[p].j / bc};
        int64_t b =
            (const entry *)bsearch(&key, blocks, (size_t)nb, sizeof key, cmp_entry) - blocks;
        w.val[(b * br + e[p].i % br) * bc + e[p].j % bc] = 1.0;
    }
    free(blocks);
    CHECK_OK(ctx, spx_matrix_wrap_bsr(ctx, rows, cols, br, bc, nb, w.off, w.idx, w.val, it, SPX_F64,
                                      SPX_MEM_HOST, &w.A));
    return w;
}

/* SELL-C-sigma holding the unique sorted entries e; rows sorted by
 * decreasing length within each sigma window. */
static wrapped make_sell(int64_t rows, int64_t cols, const entry *e, int64_t n, int64_t C,
                         int64_t sigma, spx_index_type it)
{
    wrapped w = {0};
    int64_t nslices = (rows + C - 1) / C, npos = nslices * C;
    int64_t *start = calloc((size_t)rows + 2, sizeof *start),
            *order = malloc((size_t)(npos + 1) * sizeof *order);
    for (int64_t p = 0; p < n; p++)
        start[e[p].i + 1]++;
    for (int64_t i = 0; i < rows; i++)
        start[i + 1] += start[i];
#define LEN(i) (start[(i) + 1] - start[i])
    for (int64_t p = 0; p < npos; p++)
        order[p] = p < rows ? p : -1;
    for (int64_t w0 = 0; w0 < rows; w0 += sigma) /* insertion sort inside the window */
        for (int64_t p = w0 + 1; p < rows && p < w0 + sigma; p++)
            for (int64_t q = p; q > w0 && LEN(order[q]) > LEN(order[q - 1]); q--) {
                int64_t t = order[q];
                order[q] = order[q - 1];
                order[q - 1] = t;
            }
    size_t isz = it == SPX_INDEX_I64 ? 8 : 4;
    w.off = calloc((size_t)nslices + 1, isz);
    w.perm = malloc((size_t)(npos + 1) * isz);
    w.len = malloc((size_t)(npos + 1) * isz);
    int64_t slots = 0;
    for (int64_t sl = 0; sl < nslices; sl++) {
        int64_t width = 0;
        for (int64_t r = 0; r < C; r++)
            if (order[sl * C + r] >= 0 && LEN(order[sl * C + r]) > width)
                width = LEN(order[sl * C + r]);
        slots += width * C;
        spx__idx_set(w.off, it, sl + 1, slots);
    }
    w.idx = malloc((size_t)(slots + 1) * isz);
    w.val = calloc((size_t)slots + 1, sizeof *w.val);
    for (int64_t q = 0; q < slots; q++)
        spx__idx_set(w.idx, it, q, -1);
    for (int64_t p = 0; p < npos; p++) {
        int64_t i = order[p], sl = p / C, r = p % C, base = spx__idx_get(w.off, it, sl);
        spx__idx_set(w.perm, it, p, i);
        spx__idx_set(w.len, it, p, i >= 0 ? LEN(i) : 0);
        for (int64_t k = 0; i >= 0 && k < LEN(i); k++) {
            spx__idx_set(w.idx, it, base + k * C + r, e[start[i] + k].j);
            w.val[base + k * C + r] = 1.0;
        }
    }
#undef LEN
    free(start);
    free(order);
    CHECK_OK(ctx, spx_matrix_wrap_sell(ctx, rows, cols, C, sigma, nslices, w.off, w.idx, w.val,
                                       w.perm, w.len, it, SPX_F64, SPX_MEM_HOST, &w.A));
    return w;
}

static void check_wrapped(wrapped *w, const spx_matrix_stats *want, const char *what,
                          const char *fmt)
{
    if (w->A) {
        spx_matrix_stats st;
        char label[96];
        snprintf(label, sizeof label, "%s as hand-built %s", what, fmt);
        spx_status s = spx_matrix_stats_compute(ctx, w->A, &st);
        CHECK_OK(ctx, s);
        if (!s)
            compare(&st, want, label);
    }
    free_wrapped(w);
}

static bool bsr_available = true, sell_available = true;

/* Stats of A converted to `to` (params may be NULL) against `want`. Formats
 * whose conversion this build does not have yet are skipped. */
static void check_converted(const spx_matrix *A, spx_format to, const spx_format_params *fp,
                            const spx_matrix_stats *want, const char *what)
{
    spx_matrix *B = NULL;
    spx_status s = spx_matrix_convert(ctx, A, to, fp, &B);
    if (s == SPX_ERR_UNSUPPORTED && (to == SPX_BSR || to == SPX_SELL)) {
        *(to == SPX_BSR ? &bsr_available : &sell_available) = false;
        return;
    }
    CHECK_OK(ctx, s);
    if (!B)
        return;
    spx_matrix_stats st;
    char label[96];
    snprintf(label, sizeof label, "%s as %s", what, spx_format_name(to));
    if (!(s = spx_matrix_stats_compute(ctx, B, &st)))
        compare(&st, want, label);
    CHECK_OK(ctx, s);
    spx_matrix_destroy(B);
}

/* One entry list through every format. */
static void check_all_formats(int64_t rows, int64_t cols, entry *e, int64_t n, spx_index_type it,
                              const char *what)
{
    coo c = make_coo(rows, cols, e, n, it);
    if (!c.A)
        return;
    spx_matrix_stats st, want = brute(rows, cols, e, n);
    spx_status s = spx_matrix_stats_compute(ctx, c.A, &st);
    CHECK_OK(ctx, s);
    if (!s)
        compare(&st, &want, what); /* COO counts duplicates as stored */

    int64_t nu = unique(e, n);
    spx_matrix_stats uwant = brute(rows, cols, e, nu);
    check_converted(c.A, SPX_CSR, NULL, &uwant, what);
    check_converted(c.A, SPX_CSC, NULL, &uwant, what);
    static const int64_t sell[][2] = {{4, 8}, {32, 1}, {1, 1}, {3, 7}};
    for (int k = 0; k < 4; k++) {
        spx_format_params fp = {.sell_c = sell[k][0], .sell_sigma = sell[k][1]};
        check_converted(c.A, SPX_SELL, &fp, &uwant, what);
        wrapped w = make_sell(rows, cols, e, nu, sell[k][0], sell[k][1], it);
        check_wrapped(&w, &uwant, what, "SELL");
    }
    static const int64_t shapes[][2] = {{2, 3}, {4, 4}, {1, 1}, {5, 2}};
    for (int k = 0; k < 4; k++) {
        int64_t nb;
        entry *slots = bsr_slots(rows, cols, e, nu, shapes[k][0], shapes[k][1], &nb);
        spx_matrix_stats bwant = brute(rows, cols, slots, nb);
        spx_format_params fp = {.block_rows = shapes[k][0], .block_cols = shapes[k][1]};
        check_converted(c.A, SPX_BSR, &fp, &bwant, what);
        wrapped w = make_bsr(rows, cols, e, nu, shapes[k][0], shapes[k][1], it);
        check_wrapped(&w, &bwant, what, "BSR");
        free(slots);
    }
    free_coo(&c);
}

/* ---- cases ---- */

static void test_random(void)
{
    for (int round = 0; round < 60; round++) {
        int64_t rows = (int64_t)spx__rand_below(&rng, 50),
                cols = (int64_t)spx__rand_below(&rng, 50);
        int64_t n =
            rows && cols ? (int64_t)spx__rand_below(&rng, (uint64_t)(rows * cols * 3 / 2 + 1)) : 0;
        entry *e = malloc((size_t)(n + cols + 1) * sizeof *e);
        for (int64_t p = 0; p < n; p++)
            e[p] = (entry){(int64_t)spx__rand_below(&rng, (uint64_t)rows),
                           (int64_t)spx__rand_below(&rng, (uint64_t)cols)};
        if (round % 3 == 0 && rows > 0) { /* a dense row: the power-law shape */
            int64_t i = (int64_t)spx__rand_below(&rng, (uint64_t)rows);
            for (int64_t j = 0; j < cols; j++)
                e[n++] = (entry){i, j};
        }
        char what[64];
        snprintf(what, sizeof what, "random %lld x %lld, %lld entries", LL(rows), LL(cols), LL(n));
        check_all_formats(rows, cols, e, n, round % 2 ? SPX_INDEX_I64 : SPX_INDEX_I32, what);
        free(e);
    }
}

/* Shapes with known answers. */
static void test_hand_cases(void)
{
    /* empty shapes: zeros, no NaN */
    static const int64_t empty[][2] = {{0, 0}, {0, 5}, {5, 0}, {5, 7}};
    for (int k = 0; k < 4; k++) {
        int64_t rows = empty[k][0], cols = empty[k][1];
        check_all_formats(rows, cols, NULL, 0, SPX_INDEX_I32, "empty");
        coo c = make_coo(rows, cols, NULL, 0, SPX_INDEX_I32);
        spx_matrix_stats st;
        CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
        CHECK(st.nnz == 0 && st.row_mean == 0 && st.row_std == 0 && st.row_cv == 0 &&
                  st.density == 0 && st.row_median == 0 && st.bandwidth == 0 &&
                  st.empty_rows == rows && st.empty_cols == cols && st.row_hist[0] == rows,
              "empty %lld x %lld", LL(rows), LL(cols));
        free_coo(&c);
    }

    entry e[64];
    int64_t n = 0;
    /* one dense row among empty ones */
    for (int64_t j = 0; j < 10; j++)
        e[n++] = (entry){4, j};
    coo c = make_coo(9, 10, e, n, SPX_INDEX_I32);
    spx_matrix_stats st;
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
    CHECK(st.nnz == 10 && st.row_min == 0 && st.row_max == 10 && st.row_median == 0 &&
              st.empty_rows == 8 && st.empty_cols == 0 && st.lower_bandwidth == 4 &&
              st.upper_bandwidth == 5 && st.bandwidth == 10 && st.diagonal_nnz == 1 &&
              st.row_hist[0] == 8 && st.row_hist[4] == 1,
          "dense row");
    CHECK(close_to(st.row_mean, 10.0 / 9) && close_to(st.row_std, sqrt(800.0) / 9) &&
              close_to(st.row_cv, sqrt(800.0) / 10),
          "dense row: mean %g std %g cv %g", st.row_mean, st.row_std, st.row_cv);
    free_coo(&c);
    check_all_formats(9, 10, e, n, SPX_INDEX_I64, "dense row");

    /* a diagonal */
    n = 0;
    for (int64_t i = 0; i < 6; i++)
        e[n++] = (entry){i, i};
    c = make_coo(6, 6, e, n, SPX_INDEX_I32);
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
    CHECK(st.lower_bandwidth == 0 && st.upper_bandwidth == 0 && st.bandwidth == 1 &&
              st.diagonal_nnz == 6 && st.row_median == 1 && st.row_std == 0 && st.row_cv == 0 &&
              st.row_hist[1] == 6,
          "diagonal");
    free_coo(&c);

    /* a band -2 <= j - i <= 3 on 10 x 10 */
    spx_matrix *B = NULL;
    CHECK_OK(ctx, spx_gen_banded(ctx, 10, 10, 2, 3, 1, SPX_F32, SPX_INDEX_DEFAULT, &B));
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, B, &st));
    CHECK(st.lower_bandwidth == 2 && st.upper_bandwidth == 3 && st.bandwidth == 6 &&
              st.diagonal_nnz == 10 && st.row_max == 6 && st.row_min == 3,
          "band: %lld %lld %lld", LL(st.lower_bandwidth), LL(st.upper_bandwidth), LL(st.bandwidth));
    spx_matrix_destroy(B);

    /* one entry below the diagonal: no upper part */
    e[0] = (entry){5, 0};
    c = make_coo(6, 6, e, 1, SPX_INDEX_I32);
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
    CHECK(st.lower_bandwidth == 5 && st.upper_bandwidth == 0 && st.bandwidth == 6 &&
              st.diagonal_nnz == 0,
          "below: %lld %lld %lld", LL(st.lower_bandwidth), LL(st.upper_bandwidth),
          LL(st.bandwidth));
    free_coo(&c);

    /* histogram bins at powers of two; even row count median */
    static const int64_t lens[10] = {16, 0, 1, 2, 3, 4, 7, 8, 15, 39};
    static const int64_t bins[8] = {1, 1, 2, 2, 2, 1, 1, 0};
    entry *h = malloc(128 * sizeof *h);
    n = 0;
    for (int64_t i = 0; i < 10; i++)
        for (int64_t j = 0; j < lens[i]; j++)
            h[n++] = (entry){i, j};
    c = make_coo(10, 40, h, n, SPX_INDEX_I32);
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
    for (int b = 0; b < 8; b++)
        CHECK(st.row_hist[b] == bins[b], "bin %d holds %lld, expected %lld", b, LL(st.row_hist[b]),
              LL(bins[b]));
    CHECK(st.row_median == 5.5 && st.empty_cols == 1, "median %g, empty columns %lld",
          st.row_median, LL(st.empty_cols));
    free_coo(&c);
    check_all_formats(10, 40, h, n, SPX_INDEX_I32, "histogram");
    free(h);

    /* duplicates in COO count as stored */
    e[0] = (entry){1, 1};
    e[1] = (entry){1, 1};
    e[2] = (entry){0, 2};
    c = make_coo(3, 3, e, 3, SPX_INDEX_I64);
    CHECK_OK(ctx, spx_matrix_stats_compute(ctx, c.A, &st));
    CHECK(st.nnz == 3 && st.row_max == 2 && st.diagonal_nnz == 2, "duplicates: nnz %lld",
          LL(st.nnz));
    free_coo(&c);
}

/* Larger generated matrices against the oracle, and thread independence. */
static void test_generated(void)
{
    spx_matrix *gens[3] = {NULL, NULL, NULL};
    CHECK_OK(ctx,
             spx_gen_uniform(ctx, 2000, 3000, 17, test_seed, SPX_F32, SPX_INDEX_DEFAULT, &gens[0]));
    CHECK_OK(ctx,
             spx_gen_rmat(ctx, 12, 8, 0, 0, 0, test_seed, SPX_PATTERN, SPX_INDEX_I64, &gens[1]));
    CHECK_OK(ctx, spx_gen_laplacian(ctx, 3, 12, SPX_F64, SPX_INDEX_DEFAULT, &gens[2]));
    for (int g = 0; g < 3; g++) {
        if (!gens[g])
            continue;
        spx_matrix_info info;
        spx_matrix_arrays arr;
        spx_matrix_info_get(gens[g], &info);
        spx_matrix_arrays_get(gens[g], &arr);
        entry *e = malloc((size_t)(info.nnz + 1) * sizeof *e);
        for (int64_t i = 0; i < info.rows; i++)
            for (int64_t p = spx__idx_get(arr.offsets, info.index_type, i);
                 p < spx__idx_get(arr.offsets, info.index_type, i + 1); p++)
                e[p] = (entry){i, spx__idx_get(arr.indices, info.index_type, p)};
        spx_matrix_stats want = brute(info.rows, info.cols, e, info.nnz), one, two;
        spx_ctx_set_num_threads(ctx, 1);
        CHECK_OK(ctx, spx_matrix_stats_compute(ctx, gens[g], &one));
        spx_ctx_set_num_threads(ctx, 2);
        CHECK_OK(ctx, spx_matrix_stats_compute(ctx, gens[g], &two));
        spx_ctx_set_num_threads(ctx, 0);
        compare(&one, &want, "generated");
        CHECK(memcmp(&one, &two, sizeof one) == 0, "generated %d: thread counts differ", g);
        free(e);
        spx_matrix_destroy(gens[g]);
    }
}

static void test_errors(void)
{
    spx_matrix_stats st;
    int32_t off[3] = {0, 2, 3}, idx[3] = {1, 0, 1};
    float v[3] = {1, 2, 3};
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_csr(ctx, 2, 2, 3, off, idx, v, SPX_INDEX_I32, SPX_F32,
                                      SPX_MEM_HOST, &A));
    CHECK_FAILS(ctx, spx_matrix_stats_compute(ctx, A, &st), SPX_ERR_INVALID_MATRIX, "not sorted");
    CHECK_FAILS(ctx, spx_matrix_stats_compute(ctx, A, NULL), SPX_ERR_INVALID_ARGUMENT,
                "out is NULL");
    spx_matrix_destroy(A);
    CHECK_FAILS(ctx, spx_matrix_stats_compute(ctx, NULL, &st), SPX_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_OK(ctx, spx_matrix_wrap_csr(ctx, 2, 2, 3, off, idx, v, SPX_INDEX_I32, SPX_F32,
                                      SPX_MEM_DEVICE, &A));
    CHECK_FAILS(ctx, spx_matrix_stats_compute(ctx, A, &st), SPX_ERR_UNSUPPORTED, "device");
    spx_matrix_destroy(A);

    /* allocation failures leave nothing behind */
    spx_matrix *G = NULL;
    CHECK_OK(ctx, spx_gen_uniform(ctx, 50, 60, 7, 1, SPX_F32, SPX_INDEX_DEFAULT, &G));
    long live = spx__debug_live_allocations();
    for (long k = 1; k < 10; k++) {
        spx__debug_fail_alloc_after(k);
        spx_status s = spx_matrix_stats_compute(ctx, G, &st);
        spx__debug_fail_alloc_after(0);
        CHECK(s == SPX_OK || s == SPX_ERR_OUT_OF_MEMORY, "allocation %ld failing gives %s", k,
              spx_status_name(s));
        CHECK(spx__debug_live_allocations() == live, "allocation %ld failing leaks", k);
        if (s == SPX_OK)
            break;
    }
    spx_matrix_destroy(G);
}

int main(void)
{
    test_init();
    rng = test_seed;
    CHECK(spx_ctx_create(&ctx) == SPX_OK, "context");
    test_random();
    test_hand_cases();
    test_generated();
    test_errors();
    if (!bsr_available)
        printf(
            "test_stats: BSR not checked (spx_matrix_convert cannot produce BSR in this build)\n");
    if (!sell_available)
        printf("test_stats: SELL not checked (spx_matrix_convert cannot produce SELL in this "
               "build)\n");
    spx_ctx_destroy(ctx);
    return test_finish("test_stats");
}

/* Formats: conversions between every pair of formats, validation of corrupted
 * structures, duplicate policies, transpose, canonicalize, astype and dense
 * conversions. Expected results come from the triplets (format_fixture.h),
 * never from the code under test. */
#include "format_fixture.h"

/* ---- conversion cases ---- */

typedef struct {
    spx_format f;
    spx_format_params p;
} fmt_case;

static int format_cases(fmt_case *cs, int64_t rows)
{
    int n = 0;
    cs[n++] = (fmt_case){SPX_COO, {0}};
    cs[n++] = (fmt_case){SPX_CSR, {0}};
    cs[n++] = (fmt_case){SPX_CSC, {0}};
    static const int64_t blocks[][2] = {{1, 1}, {2, 3}, {4, 4}, {16, 16}, {3, 5}, {1, 7}, {5, 1}};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        cs[n++] = (fmt_case){SPX_BSR, {.block_rows = blocks[b][0], .block_cols = blocks[b][1]}};
    static const int64_t cvals[] = {1, 4, 32};
    for (int c = 0; c < 3; c++) {
        int64_t C = cvals[c], sig[] = {1, C, 4 * C, rows > 0 ? rows : 1};
        for (int k = 0; k < 4; k++)
            cs[n++] = (fmt_case){SPX_SELL, {.sell_c = C, .sell_sigma = sig[k]}};
    }
    return n;
}
#define MAX_CASES 32

static const char *case_name(const fmt_case *c)
{
    static char buf[64];
    if (c->f == SPX_BSR)
        snprintf(buf, sizeof buf, "bsr %lldx%lld", (long long)c->p.block_rows,
                 (long long)c->p.block_cols);
    else if (c->f == SPX_SELL)
        snprintf(buf, sizeof buf, "sell C=%lld sigma=%lld", (long long)c->p.sell_c,
                 (long long)c->p.sell_sigma);
    else
        snprintf(buf, sizeof buf, "%s", spx_format_name(c->f));
    return buf;
}

/* The pattern a conversion to BSR produces: every position of a touched block. */
static void block_fill(const unsigned char *P, int64_t rows, int64_t cols, int64_t br, int64_t bc,
                       unsigned char *out)
{
    memset(out, 0, (size_t)(rows * cols));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            if (P[i * cols + j]) {
                int64_t i0 = i / br * br, j0 = j / bc * bc;
                for (int64_t a = i0; a < i0 + br && a < rows; a++)
                    for (int64_t b = j0; b < j0 + bc && b < cols; b++)
                        out[a * cols + b] = 1;
            }
}

static int64_t count_pattern(const unsigned char *P, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        k += P[i];
    return k;
}

/* Structure the conversion of a matrix with pattern P into case c must have,
 * derived from P alone. */
static void check_structure(const spx_matrix *M, const fmt_case *c, const unsigned char *P,
                            int64_t rows, int64_t cols, const char *what)
{
    spx_matrix_info in;
    spx_matrix_arrays a;
    spx_matrix_info_get(M, &in);
    spx_matrix_arrays_get(M, &a);
    spx_index_type t = in.index_type;
    int64_t np = count_pattern(P, rows * cols);
    CHECK(in.format == c->f && in.rows == rows && in.cols == cols, "%s: header", what);
    if (c->f == SPX_COO || c->f == SPX_CSR || c->f == SPX_CSC)
        CHECK(in.nnz == np, "%s: nnz %lld, expected %lld", what, (long long)in.nnz, (long long)np);
    if (c->f == SPX_COO)
        for (int64_t p = 1; p < in.nnz; p++) {
            int64_t a0 = fx_ix(a.row_indices, t, p - 1) * cols + fx_ix(a.indices, t, p - 1);
            int64_t a1 = fx_ix(a.row_indices, t, p) * cols + fx_ix(a.indices, t, p);
            CHECK(a0 < a1, "%s: COO not sorted and unique at %lld", what, (long long)p);
        }
    if (c->f == SPX_BSR) {
        int64_t br = c->p.block_rows, bc = c->p.block_cols, nb = 0;
        int64_t gr = (rows + br - 1) / br, gc = (cols + bc - 1) / bc;
        unsigned char *g = calloc(gr * gc > 0 ? (size_t)(gr * gc) : 1, 1);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                if (P[i * cols + j] && !g[i / br * gc + j / bc]++)
                    nb++;
        free(g);
        CHECK(in.block_rows == br && in.block_cols == bc && in.nblocks == nb,
              "%s: %lld blocks of %lldx%lld, expected %lld of %lldx%lld", what,
              (long long)in.nblocks, (long long)in.block_rows, (long long)in.block_cols,
              (long long)nb, (long long)br, (long long)bc);
        CHECK(in.nnz == nb * br * bc, "%s: BSR nnz", what);
    }
    if (c->f == SPX_SELL) {
        int64_t C = c->p.sell_c, sigma = c->p.sell_sigma, ns = (rows + C - 1) / C;
        CHECK(in.sell_c == C && in.sell_sigma == sigma && in.nslices == ns && in.nnz == np,
              "%s: SELL header C=%lld sigma=%lld slices=%lld nnz=%lld", what, (long long)in.sell_c,
              (long long)in.sell_sigma, (long long)in.nslices, (long long)in.nnz);
        if (in.nslices != ns)
            return;
        /* expected order: per window, longest first, ties in row order (insertion sort) */
        int64_t *len = calloc((size_t)(rows + 1), sizeof *len), *perm = calloc((size_t)(rows + 1), sizeof *perm);
        for (int64_t i = 0; i < rows; i++)
            len[i] = count_pattern(P + i * cols, cols);
        for (int64_t i = 0; i < rows; i++) {
            int64_t k = i;
            while (k > i / sigma * sigma && len[perm[k - 1]] < len[i]) {
                perm[k] = perm[k - 1];
                k--;
            }
            perm[k] = i;
        }
        int64_t slots = 0;
        for (int64_t s = 0; s < ns; s++) {
            int64_t w = 0;
            for (int64_t pos = s * C; pos < (s + 1) * C; pos++) {
                int64_t want = pos < rows ? perm[pos] : -1, wl = pos < rows ? len[perm[pos]] : 0;
                CHECK(fx_ix(a.perm, t, pos) == want && fx_ix(a.row_lengths, t, pos) == wl,
                      "%s: position %lld holds row %lld (length %lld), expected %lld (%lld)", what,
                      (long long)pos, (long long)fx_ix(a.perm, t, pos),
                      (long long)fx_ix(a.row_lengths, t, pos), (long long)want, (long long)wl);
                w = wl > w ? wl : w;
            }
            slots += w * C;
        }
        CHECK(in.sell_slots == slots, "%s: %lld slots, expected %lld", what,
              (long long)in.sell_slots, (long long)slots);
        free(len);
        free(perm);
    }
}

/* Image of M (read from its arrays) against the triplets' image over pattern P. */
static void check_image(const spx_matrix *M, const fx_triplets *T, const unsigned char *P,
                        const char *what)
{
    size_t n = T->rows * T->cols > 0 ? (size_t)(T->rows * T->cols) : 1;
    double *re = malloc(n * sizeof *re), *im = malloc(n * sizeof *im);
    unsigned char *pat = malloc(n);
    fx_image(M, re, im, pat);
    int bad = 0;
    for (int64_t c = 0; c < T->rows * T->cols && bad < 3; c++) {
        double want = T->dtype == SPX_PATTERN ? P[c] : T->re[c];
        if (pat[c] != P[c] || re[c] != want || im[c] != T->im[c]) {
            bad++;
            CHECK(0, "%s: (%lld, %lld) holds %g%+gi (stored %d), expected %g%+gi (stored %d)", what,
                  (long long)(c / T->cols), (long long)(c % T->cols), re[c], im[c], pat[c], want,
                  T->im[c], P[c]);
        }
    }
    free(re);
    free(im);
    free(pat);
}

/* Every source case built from the COO, then converted into every target case. */
static void roundtrip_all(spx_ctx *ctx, const fx_triplets *T, const char *label)
{
    fmt_case cs[MAX_CASES];
    int n = format_cases(cs, T->rows);
    size_t cells = T->rows * T->cols > 0 ? (size_t)(T->rows * T->cols) : 1;
    unsigned char *P_src = malloc(cells), *P_dst = malloc(cells);
    char what[512];
    for (int a = 0; a < n; a++) {
        spx_matrix *S = NULL;
        snprintf(what, sizeof what, "%s: coo -> %s", label, case_name(&cs[a]));
        CHECK_OK(ctx, spx_matrix_convert(ctx, T->coo, cs[a].f, &cs[a].p, &S));
        if (!S)
            continue;
        CHECK_OK(ctx, spx_matrix_check(ctx, S));
        check_structure(S, &cs[a], T->present, T->rows, T->cols, what);
        if (cs[a].f == SPX_BSR)
            block_fill(T->present, T->rows, T->cols, cs[a].p.block_rows, cs[a].p.block_cols, P_src);
        else
            memcpy(P_src, T->present, cells);
        check_image(S, T, P_src, what);
        for (int b = 0; b < n; b++) {
            spx_matrix *D = NULL;
            char src_name[64];
            snprintf(src_name, sizeof src_name, "%s", case_name(&cs[a]));
            snprintf(what, sizeof what, "%s: %s -> %s", label, src_name, case_name(&cs[b]));
            CHECK_OK(ctx, spx_matrix_convert(ctx, S, cs[b].f, &cs[b].p, &D));
            if (!D)
                continue;
            CHECK_OK(ctx, spx_matrix_check(ctx, D));
            check_structure(D, &cs[b], P_src, T->rows, T->cols, what);
            if (cs[b].f == SPX_BSR)
                block_fill(P_src, T->rows, T->cols, cs[b].p.block_rows, cs[b].p.block_cols, P_dst);
            else
                memcpy(P_dst, P_src, cells);
            check_image(D, T, P_dst, what);
            spx_matrix_destroy(D);
        }
        spx_matrix_destroy(S);
    }
    free(P_src);
    free(P_dst);
}

typedef struct {
    const char *name;
    int64_t rows, cols, nnz;
    fx_shape shape;
} shape_case;

static void test_roundtrips(spx_ctx *ctx)
{
    uint64_t st = test_seed;
    int64_t rr = 1 + (int64_t)spx__rand_below(&st, 70), rc = 1 + (int64_t)spx__rand_below(&st, 70);
    shape_case shapes[] = {
        {"0x0", 0, 0, 0, FX_RANDOM},
        {"5x7 empty", 5, 7, 0, FX_RANDOM},
        {"1x1", 1, 1, 3, FX_RANDOM},
        {"one row", 1, 40, 25, FX_RANDOM},
        {"one column", 45, 1, 30, FX_RANDOM},
        {"empty rows", 30, 20, 40, FX_FEW_ROWS},
        {"dense row", 33, 45, 0, FX_DENSE_ROW},
        {"37x53", 37, 53, 300, FX_RANDOM},
        {"random shape", rr, rc, (int64_t)spx__rand_below(&st, (uint64_t)(rr * rc)) + 1, FX_RANDOM},
    };
    static const spx_dtype dtypes[] = {SPX_F64, SPX_F32, SPX_F16, SPX_BF16, SPX_I32,
                                       SPX_I64, SPX_BOOL, SPX_C64, SPX_C128, SPX_PATTERN};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
            for (int it = 0; it < 2; it++) {
                /* every shape in f64 with both index types; other types on a few shapes */
                if (dtypes[d] != SPX_F64 && s != 2 && s != 5 && s != 8)
                    continue;
                spx_index_type itype = it ? SPX_INDEX_I64 : SPX_INDEX_I32;
                fx_triplets T;
                fx_make(ctx, &T, shapes[s].rows, shapes[s].cols, shapes[s].nnz, shapes[s].shape,
                        dtypes[d], itype, spx__rand_stream(test_seed, s * 100 + d * 2 + (size_t)it));
                char label[128];
                snprintf(label, sizeof label, "%s %lldx%lld %s %s", shapes[s].name,
                         (long long)T.rows, (long long)T.cols, spx_dtype_name(dtypes[d]),
                         it ? "i64" : "i32");
                if (T.coo)
                    roundtrip_all(ctx, &T, label);
                fx_free(&T);
            }
}

/* SELL wrapped with an unsorted row (and then a repeated column); BSR and
 * SELL storage that overflows; bad conversion parameters. */
static void test_blocked_edges(spx_ctx *ctx)
{
    int32_t off[] = {0, 4, 4}, idx[] = {4, 2, 1, -1}, perm[] = {0, 1, 2, -1}, len[] = {2, 1, 0, 0};
    double val[] = {40, 20, 10, 0};
    spx_matrix *S = NULL, *C = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_sell(ctx, 3, 5, 2, 2, 2, off, idx, val, perm, len, SPX_INDEX_I32,
                                       SPX_F64, SPX_MEM_HOST, &S));
    CHECK_OK(ctx, spx_matrix_convert(ctx, S, SPX_CSR, NULL, &C));
    if (C) {
        spx_matrix_arrays a;
        spx_matrix_arrays_get(C, &a);
        const int32_t *o = a.offsets, *j = a.indices;
        const double *v = a.values;
        CHECK(o[1] == 2 && o[2] == 3 && o[3] == 3 && j[0] == 1 && j[1] == 4 && j[2] == 2 &&
                  v[0] == 10 && v[1] == 40 && v[2] == 20,
              "unsorted SELL row sorted with its values");
        CHECK_OK(ctx, spx_matrix_check(ctx, C));
    }
    spx_matrix_destroy(C);
    C = NULL;
    idx[2] = 4;
    spx_matrix_touch(S);
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, S, SPX_CSR, NULL, &C), SPX_ERR_INVALID_MATRIX,
                "row 0 holds column 4 twice");
    CHECK(C == NULL, "no output on error");
    spx_matrix_destroy(S);

    int32_t ro[] = {0, 9}, co[] = {0, 9};
    float fv[] = {1, 2};
    spx_matrix *A = NULL, *B = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, 10, 10, 2, ro, co, fv, SPX_INDEX_I32, SPX_F32,
                                      SPX_MEM_HOST, &A));
    spx_format_params p = {.block_rows = 50000, .block_cols = 50000};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_BSR, &p, &B), SPX_ERR_OVERFLOW,
                "do not fit int32 indices");
    p = (spx_format_params){.block_rows = 3, .block_cols = INT64_MAX / 2};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_BSR, &p, &B), SPX_ERR_OVERFLOW, "overflows");
    p = (spx_format_params){.sell_c = (int64_t)1 << 40, .sell_sigma = 1};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_SELL, &p, &B), SPX_ERR_OVERFLOW,
                "do not fit int32 indices");
    p = (spx_format_params){.block_rows = -2};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_BSR, &p, &B), SPX_ERR_INVALID_ARGUMENT, "-2");
    p = (spx_format_params){.sell_sigma = -1};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_SELL, &p, &B), SPX_ERR_INVALID_ARGUMENT, "-1");
    p = (spx_format_params){.dup = (spx_dup_policy)9};
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_BSR, &p, &B), SPX_ERR_INVALID_ARGUMENT,
                "duplicate policy 9");
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, (spx_format)17, NULL, &B), SPX_ERR_INVALID_ARGUMENT,
                "17");
    CHECK(B == NULL, "no output on error");
    /* zero parameters take the defaults: 4x4 blocks, C=32, sigma=256 */
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_BSR, NULL, &B));
    spx_matrix_info in;
    if (B && spx_matrix_info_get(B, &in) == SPX_OK)
        CHECK(in.block_rows == 4 && in.block_cols == 4 && in.nblocks == 2, "BSR defaults");
    spx_matrix_destroy(B);
    B = NULL;
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_SELL, &(spx_format_params){.sell_c = 4}, &B));
    if (B && spx_matrix_info_get(B, &in) == SPX_OK)
        CHECK(in.sell_c == 4 && in.sell_sigma == 256 && in.nslices == 3, "SELL defaults");
    spx_matrix_destroy(B);
    spx_matrix_destroy(A);
}

int main(void)
{
    test_init();
    spx_ctx *ctx = NULL;
    if (spx_ctx_create(&ctx) != SPX_OK) {
        fprintf(stderr, "cannot create a context\n");
        return 1;
    }
    long live = spx__debug_live_allocations();
    test_roundtrips(ctx);
    test_blocked_edges(ctx);
    CHECK(spx__debug_live_allocations() == live, "%ld allocations leaked",
          spx__debug_live_allocations() - live);
    spx_ctx_destroy(ctx);
    return test_finish("test_format");
}

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

/* M through spx_matrix_to_dense (f64, or c128 for complex values) in the given
 * layout with a leading dimension larger than needed, against the triplets'
 * image over pattern P; the gaps beyond each row/column stay untouched. */
static void check_to_dense(spx_ctx *ctx, const spx_matrix *M, const fx_triplets *T,
                           const unsigned char *P, spx_layout layout, const char *what)
{
    bool cplx = spx__dtype_is_complex(T->dtype);
    int64_t inner = layout == SPX_ROW_MAJOR ? T->cols : T->rows;
    int64_t outer = layout == SPX_ROW_MAJOR ? T->rows : T->cols, ld = inner + 3;
    size_t n = (size_t)(outer * ld + 1) * (cplx ? 2 : 1);
    double *buf = malloc(n * sizeof *buf);
    for (size_t k = 0; k < n; k++)
        buf[k] = -12345.0;
    spx_dense D = spx_dense_make(buf, T->rows, T->cols, ld, cplx ? SPX_C128 : SPX_F64, layout,
                                 SPX_MEM_HOST);
    CHECK_OK(ctx, spx_matrix_to_dense(ctx, M, &D));
    int bad = 0;
    for (int64_t i = 0; i < T->rows && bad < 3; i++)
        for (int64_t j = 0; j < T->cols; j++) {
            int64_t o = layout == SPX_ROW_MAJOR ? i * ld + j : j * ld + i;
            double re = cplx ? buf[2 * o] : buf[o], im = cplx ? buf[2 * o + 1] : 0;
            double want = T->dtype == SPX_PATTERN ? P[i * T->cols + j] : T->re[i * T->cols + j];
            if (re != want || im != T->im[i * T->cols + j]) {
                CHECK(0, "%s: to_dense (%lld, %lld) = %g%+gi, expected %g", what, (long long)i,
                      (long long)j, re, im, want);
                bad++;
            }
        }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = inner; k < ld; k++)
            CHECK(buf[(cplx ? 2 : 1) * (o * ld + k)] == -12345.0, "%s: to_dense wrote a gap", what);
    free(buf);
}

/* Same header and byte-identical arrays. */
static void check_same(const spx_matrix *A, const spx_matrix *B, const char *what)
{
    spx_matrix_info a, b;
    spx_matrix_arrays x, y;
    spx_matrix_info_get(A, &a);
    spx_matrix_info_get(B, &b);
    a.owns_data = b.owns_data = 0;
    CHECK(memcmp(&a, &b, sizeof a) == 0, "%s: headers differ (%lld x %lld, %lld entries vs %lld x %lld, %lld)",
          what, (long long)a.rows, (long long)a.cols, (long long)a.nnz, (long long)b.rows,
          (long long)b.cols, (long long)b.nnz);
    if (memcmp(&a, &b, sizeof a))
        return;
    spx_matrix_arrays_get(A, &x);
    spx_matrix_arrays_get(B, &y);
    size_t isz = a.index_type == SPX_INDEX_I64 ? 8 : 4, vsz = spx_dtype_size(a.dtype);
    int64_t noff = a.format == SPX_CSR ? a.rows + 1 : a.format == SPX_CSC ? a.cols + 1
                 : a.format == SPX_BSR ? (a.rows + a.block_rows - 1) / a.block_rows + 1
                 : a.format == SPX_SELL ? a.nslices + 1 : 0;
    int64_t nidx = a.format == SPX_BSR ? a.nblocks : a.format == SPX_SELL ? a.sell_slots : a.nnz;
    int64_t nval = a.format == SPX_SELL ? a.sell_slots : a.nnz, npos = a.nslices * a.sell_c;
    CHECK(!noff || !memcmp(x.offsets, y.offsets, (size_t)noff * isz), "%s: offsets differ", what);
    CHECK(!nidx || !memcmp(x.indices, y.indices, (size_t)nidx * isz), "%s: indices differ", what);
    CHECK(a.format != SPX_COO || !nidx || !memcmp(x.row_indices, y.row_indices, (size_t)nidx * isz),
          "%s: row indices differ", what);
    CHECK(!vsz || !nval || !memcmp(x.values, y.values, (size_t)nval * vsz), "%s: values differ", what);
    CHECK(!npos || (!memcmp(x.perm, y.perm, (size_t)npos * isz) &&
                    !memcmp(x.row_lengths, y.row_lengths, (size_t)npos * isz)),
          "%s: SELL order differs", what);
}

/* Transpose, transpose back and canonicalize a source matrix S with pattern P. */
static void check_transforms(spx_ctx *ctx, const spx_matrix *S, const fx_triplets *T,
                             const unsigned char *P, const char *what)
{
    spx_matrix *A = NULL, *B = NULL;
    char w[600];
    snprintf(w, sizeof w, "%s: transpose", what);
    CHECK_OK(ctx, spx_matrix_transpose(ctx, S, &A));
    if (A) {
        CHECK_OK(ctx, spx_matrix_check(ctx, A));
        spx_matrix_info in, sin;
        spx_matrix_info_get(A, &in);
        spx_matrix_info_get(S, &sin);
        CHECK(in.format == sin.format && in.rows == T->cols && in.cols == T->rows &&
                  in.block_rows == sin.block_cols && in.block_cols == sin.block_rows &&
                  in.sell_c == sin.sell_c && in.sell_sigma == sin.sell_sigma,
              "%s: header of the transpose", w);
        size_t n = T->rows * T->cols > 0 ? (size_t)(T->rows * T->cols) : 1;
        double *re = malloc(n * sizeof *re), *im = malloc(n * sizeof *im);
        unsigned char *pat = malloc(n);
        fx_image(A, re, im, pat);
        for (int64_t i = 0; i < T->rows; i++)
            for (int64_t j = 0; j < T->cols; j++) {
                int64_t c = i * T->cols + j, ct = j * T->rows + i;
                double want = T->dtype == SPX_PATTERN ? P[c] : T->re[c];
                CHECK(pat[ct] == P[c] && re[ct] == want && im[ct] == T->im[c],
                      "%s: A^T(%lld, %lld) = %g, expected %g", w, (long long)j, (long long)i,
                      re[ct], want);
            }
        free(re);
        free(im);
        free(pat);
        CHECK_OK(ctx, spx_matrix_transpose(ctx, A, &B));
        snprintf(w, sizeof w, "%s: transpose twice", what);
        if (B)
            check_same(S, B, w);
        spx_matrix_destroy(A);
        spx_matrix_destroy(B);
    }
    A = NULL;
    snprintf(w, sizeof w, "%s: canonicalize", what);
    CHECK_OK(ctx, spx_matrix_canonicalize(ctx, S, SPX_DUP_SUM, &A));
    if (A)
        check_same(S, A, w);
    spx_matrix_destroy(A);
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
        check_to_dense(ctx, S, T, P_src, a % 2 ? SPX_COL_MAJOR : SPX_ROW_MAJOR, what);
        check_transforms(ctx, S, T, P_src, what);
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
            check_to_dense(ctx, D, T, P_dst, (a + b) % 2 ? SPX_COL_MAJOR : SPX_ROW_MAJOR, what);
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
                if (T.coo) {
                    /* the wrapped triplets themselves, duplicates and all */
                    check_to_dense(ctx, T.coo, &T, T.present, (s + d) % 2 ? SPX_COL_MAJOR : SPX_ROW_MAJOR, label);
                    roundtrip_all(ctx, &T, label);
                }
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

/* ---- spx_matrix_check on corrupted structures ---- */

static void expect_invalid(spx_ctx *ctx, spx_matrix *A, const char *needle)
{
    CHECK(A != NULL, "wrap for \"%s\" failed: %s", needle, spx_last_error(ctx));
    if (A)
        CHECK_FAILS(ctx, spx_matrix_check(ctx, A), SPX_ERR_INVALID_MATRIX, needle);
    spx_matrix_destroy(A);
}

static spx_matrix *csr3x4(spx_ctx *ctx, spx_format f, int32_t *off, int32_t *idx, int64_t nnz)
{
    spx_matrix *A = NULL;
    static double vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    if (f == SPX_CSR)
        spx_matrix_wrap_csr(ctx, 3, 4, nnz, off, idx, vals, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    else
        spx_matrix_wrap_csc(ctx, 3, 4, nnz, off, idx, vals, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    return A;
}

/* A 3 x 5 SELL with C = 2 and sigma = 2: rows 0 (2 entries) and 1 (1) in slice
 * 0, row 2 (1 entry) in slice 1; the arrays are edited per case. */
typedef struct {
    int32_t off[3], idx[6], perm[4], len[4];
    double val[6];
} sell_arrays;

static spx_matrix *sell3x5(spx_ctx *ctx, sell_arrays *a, int64_t sigma)
{
    spx_matrix *A = NULL;
    spx_matrix_wrap_sell(ctx, 3, 5, 2, sigma, 2, a->off, a->idx, a->val, a->perm, a->len,
                         SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    return A;
}

static sell_arrays sell_good(void)
{
    return (sell_arrays){{0, 4, 6}, {0, 2, 3, -1, 4, -1}, {0, 1, 2, -1}, {2, 1, 1, 0},
                         {1, 2, 3, 0, 4, 0}};
}

static void test_check_rejects(spx_ctx *ctx)
{
    /* CSR / CSC */
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){0, 2, 1, 3}, (int32_t[]){0, 1, 2}, 3),
                   "offsets decrease at 1");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){1, 2, 2, 3}, (int32_t[]){0, 1, 2}, 3),
                   "offsets[0] is 1");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){0, 1, 2, 2}, (int32_t[]){0, 1, 2}, 3),
                   "offsets[3] is 2, must equal the entry count 3");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){0, 1, 2, 3}, (int32_t[]){0, 4, 2}, 3),
                   "row 1: column index 4 out of range [0, 4) at entry 1");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){0, 2, 2, 3}, (int32_t[]){3, 1, 2}, 3),
                   "column indices not sorted (1 after 3 at entry 1)");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSR, (int32_t[]){0, 0, 2, 3}, (int32_t[]){1, 1, 2}, 3),
                   "duplicate column index 1 at entry 1");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSC, (int32_t[]){0, 1, 1, 2, 2}, (int32_t[]){0, 3}, 2),
                   "CSC column 2: row index 3 out of range [0, 3)");
    expect_invalid(ctx, csr3x4(ctx, SPX_CSC, (int32_t[]){0, 2, 2, 2, 2}, (int32_t[]){2, 0}, 2),
                   "row indices not sorted");
    /* COO */
    spx_matrix *A = NULL;
    int32_t ri[] = {0, -1}, ci[] = {0, 1}, ri2[] = {0, 1}, ci2[] = {0, 9};
    spx_matrix_wrap_coo(ctx, 3, 4, 2, ri, ci, NULL, SPX_INDEX_I32, SPX_PATTERN, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "row index -1 out of range [0, 3) at entry 1");
    spx_matrix_wrap_coo(ctx, 3, 4, 2, ri2, ci2, NULL, SPX_INDEX_I32, SPX_PATTERN, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "column index 9 out of range [0, 4) at entry 1");
    /* BSR 3 x 3 with 2 x 2 blocks: block (1, 1) covers (2..3, 2..3); only (2, 2) is inside */
    int32_t bo[] = {0, 1, 2}, bj[] = {0, 1}, bad_bj[] = {0, 2}, bo2[] = {0, 2, 2}, bj2[] = {1, 0};
    double bv[8] = {1, 2, 3, 4, 5, 0, 0, 0};
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo, bj, bv, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    CHECK_OK(ctx, spx_matrix_check(ctx, A));
    spx_matrix_destroy(A);
    bv[6] = 7; /* slot (1, 0) of block (1, 1): row 3, outside */
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo, bj, bv, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "block 1 holds a nonzero at (3, 2), outside the 3 x 3 matrix");
    /* a nonzero imaginary part in slot 5 (block 1, slot (0, 1): (2, 3), outside) */
    double cv[16] = {0};
    float cf[16] = {0};
    cv[2 * 5 + 1] = 1;
    cf[2 * 5 + 1] = 1;
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo, bj, cv, SPX_INDEX_I32, SPX_C128, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "block 1 holds a nonzero at (2, 3)");
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo, bj, cf, SPX_INDEX_I32, SPX_C64, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "block 1 holds a nonzero at (2, 3)");
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo, bad_bj, bv, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "block column index 2 out of range [0, 2)");
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, bo2, bj2, bv, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "block column indices not sorted");
    spx_matrix_wrap_bsr(ctx, 3, 3, 2, 2, 2, (int32_t[]){0, 2, 1}, bj, bv, SPX_INDEX_I32, SPX_F64,
                        SPX_MEM_HOST, &A);
    expect_invalid(ctx, A, "BSR: offsets decrease");
    /* SELL */
    sell_arrays sa = sell_good();
    A = sell3x5(ctx, &sa, 2);
    CHECK(A && spx_matrix_check(ctx, A) == SPX_OK, "good SELL: %s", spx_last_error(ctx));
    spx_matrix_destroy(A);
    sa = sell_good(), sa.perm[1] = 0;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "row 0 appears twice (position 1)");
    sa = sell_good(), sa.perm[1] = 5;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "perm[1] = 5 out of range [0, 3)");
    sa = sell_good(), sa.perm[0] = 1, sa.perm[1] = 0, sa.len[0] = 1, sa.len[1] = 2,
    sa.idx[1] = 0, sa.idx[0] = 2, sa.idx[3] = 3, sa.idx[2] = -1;
    expect_invalid(ctx, sell3x5(ctx, &sa, 1), "row 1 stored at position 0, outside its sigma=1 window");
    sa = sell_good(), sa.perm[1] = 2, sa.perm[2] = 1;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "row 2 stored at position 1, outside its sigma=2 window");
    sa = sell_good(), sa.len[0] = 3;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "row length 3 at position 0 outside [0, 2]");
    sa = sell_good(), sa.len[1] = -1, sa.len[3] = 2;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "row length -1 at position 1");
    sa = sell_good(), sa.idx[3] = 2;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "padding slot 1 at position 1 holds column 2, must be -1");
    sa = sell_good(), sa.idx[5] = 0;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "padding slot 0 at position 3 holds column 0");
    sa = sell_good(), sa.perm[3] = 2;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "position 3 is past the last row but has perm 2");
    sa = sell_good(), sa.idx[2] = 5;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "column index 5 out of range [0, 5) in row 0");
    sa = sell_good(), sa.off[1] = 3;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "slice 0 has 3 slots, not a multiple of C=2");
    sa = sell_good(), sa.off[2] = 2;
    expect_invalid(ctx, sell3x5(ctx, &sa, 2), "SELL: offsets[1] = 4 exceeds the 2 stored entries");
    CHECK_FAILS(ctx, spx_matrix_wrap_sell(ctx, 3, 5, 2, 2, 3, sa.off, sa.idx, sa.val, sa.perm,
                                          sa.len, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A),
                SPX_ERR_INVALID_ARGUMENT, "has 2 slices, not 3");
}

/* ---- duplicate policies ---- */

static void dup_case(spx_ctx *ctx, spx_dtype t, const double *v, int n, spx_dup_policy dup,
                     double want, const char *what)
{
    int32_t ri[8] = {0}, ci[8] = {0};
    unsigned char buf[8 * 16];
    for (int k = 0; k < n; k++) {
        fx_set_val(buf, t, k, v[k], 0);
        ri[k] = k == n - 1 ? 1 : 0; /* the last entry sits alone at (1, 1) */
        ci[k] = ri[k];
    }
    spx_matrix *A = NULL, *C = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_coo(ctx, 2, 2, n, ri, ci, buf, SPX_INDEX_I32, t, SPX_MEM_HOST, &A));
    spx_format targets[] = {SPX_CSR, SPX_CSC, SPX_COO};
    for (int f = 0; f < 3; f++) {
        CHECK_OK(ctx, spx_matrix_convert(ctx, A, targets[f], &(spx_format_params){.dup = dup}, &C));
        spx_matrix_info in;
        spx_matrix_arrays a;
        if (!C || spx_matrix_info_get(C, &in) || spx_matrix_arrays_get(C, &a))
            continue;
        double re, im;
        fx_val(a.values, t, 0, &re, &im);
        CHECK(in.nnz == 2 && (re == want || (isnan(want) && isnan(re))),
              "%s %s to %s: (0, 0) = %g, expected %g", what, spx_dtype_name(t),
              spx_format_name(targets[f]), re, want);
        spx_matrix_destroy(C);
        C = NULL;
    }
    spx_matrix_destroy(A);
}

static void test_dup_policies(spx_ctx *ctx)
{
    const double v[] = {3, -1, 5, 2, 9};
    spx_dtype real[] = {SPX_F64, SPX_F32, SPX_F16, SPX_BF16, SPX_I32, SPX_I64};
    for (int k = 0; k < 6; k++) {
        dup_case(ctx, real[k], v, 5, SPX_DUP_SUM, 9, "sum");
        dup_case(ctx, real[k], v, 5, SPX_DUP_MIN, -1, "min");
        dup_case(ctx, real[k], v, 5, SPX_DUP_MAX, 5, "max");
        dup_case(ctx, real[k], v, 5, SPX_DUP_LAST, 2, "last");
    }
    const double nan_v[] = {3, NAN, 5, 1};
    dup_case(ctx, SPX_F64, nan_v, 4, SPX_DUP_MIN, NAN, "NaN propagates through min");
    dup_case(ctx, SPX_F64, nan_v, 4, SPX_DUP_MAX, NAN, "NaN propagates through max");
    const double bools[] = {1, 1, 0, 1}, falses[] = {0, 0, 1};
    dup_case(ctx, SPX_BOOL, bools, 4, SPX_DUP_SUM, 1, "bool sum saturates");
    dup_case(ctx, SPX_BOOL, falses, 3, SPX_DUP_SUM, 0, "bool sum of false");
    dup_case(ctx, SPX_BOOL, bools, 4, SPX_DUP_MIN, 0, "bool min");
    const double back[] = {2147483647.0, 1, -1, 0};
    dup_case(ctx, SPX_I32, back, 4, SPX_DUP_SUM, 2147483647.0, "i32 sum fitting in total");

    /* error policy, overflow, complex min */
    int32_t ri[] = {0, 1, 0}, ci[] = {1, 1, 1};
    int32_t i32v[] = {INT32_MAX, 4, 1};
    int64_t i64v[] = {INT64_MAX, 4, 1};
    double cv[] = {1, 2, 3, 4, 5, 6};
    spx_matrix *A = NULL, *C = NULL;
    spx_matrix_wrap_coo(ctx, 2, 2, 3, ri, ci, i32v, SPX_INDEX_I32, SPX_I32, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_CSR, &(spx_format_params){.dup = SPX_DUP_ERROR}, &C),
                SPX_ERR_INVALID_MATRIX, "duplicate entry (0, 1) at entries 0 and 2");
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_CSC, NULL, &C), SPX_ERR_OVERFLOW,
                "sum of the duplicate entries at (0, 1) overflows i32");
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_SUM, &C), SPX_ERR_OVERFLOW, "overflows i32");
    spx_matrix_destroy(A);
    spx_matrix_wrap_coo(ctx, 2, 2, 3, ri, ci, i64v, SPX_INDEX_I32, SPX_I64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_BSR, NULL, &C), SPX_ERR_OVERFLOW, "overflows i64");
    spx_matrix_destroy(A);
    spx_matrix_wrap_coo(ctx, 2, 2, 3, ri, ci, cv, SPX_INDEX_I32, SPX_C128, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_CSR, &(spx_format_params){.dup = SPX_DUP_MAX}, &C),
                SPX_ERR_UNSUPPORTED, "complex");
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_CSR, NULL, &C));
    if (C) {
        spx_matrix_arrays a;
        spx_matrix_arrays_get(C, &a);
        const double *z = a.values;
        CHECK(z[0] == 6 && z[1] == 8 && z[2] == 3 && z[3] == 4, "complex sum %g%+gi", z[0], z[1]);
    }
    spx_matrix_destroy(C);
    C = NULL;
    spx_matrix_destroy(A);
    spx_matrix_wrap_coo(ctx, 2, 2, 3, ri, ci, NULL, SPX_INDEX_I32, SPX_PATTERN, SPX_MEM_HOST, &A);
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_CSR, &(spx_format_params){.dup = SPX_DUP_MIN}, &C));
    spx_matrix_info in;
    CHECK(C && spx_matrix_info_get(C, &in) == SPX_OK && in.nnz == 2, "pattern duplicates combined");
    spx_matrix_destroy(C);
    C = NULL;
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_ERROR, &C), SPX_ERR_INVALID_MATRIX,
                "duplicate entry (0, 1)");
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, (spx_dup_policy)-1, &C), SPX_ERR_INVALID_ARGUMENT,
                "duplicate policy -1");
    CHECK(C == NULL, "no output on error");
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
    test_check_rejects(ctx);
    test_dup_policies(ctx);
    CHECK(spx__debug_live_allocations() == live, "%ld allocations leaked",
          spx__debug_live_allocations() - live);
    spx_ctx_destroy(ctx);
    return test_finish("test_format");
}

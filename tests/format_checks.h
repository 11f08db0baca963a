/* Conversion cases and the checks test_format.c applies to every result:
 * structure derived from the expected pattern alone, dense images read from
 * the arrays and through spx_matrix_to_dense, byte-wise identity. */
#ifndef SPX_FORMAT_CHECKS_H
#define SPX_FORMAT_CHECKS_H

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

#endif

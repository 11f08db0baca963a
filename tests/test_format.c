/* Formats: conversions between every pair of formats, validation of corrupted
 * structures, duplicate policies, transpose, canonicalize, astype and dense
 * conversions. Expected results come from the triplets (format_fixture.h),
 * never from the code under test. */
#include "format_checks.h"

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

/* ---- canonicalize of wrapped, non-canonical arrays ---- */

static void expect_csr(spx_ctx *ctx, const spx_matrix *C, const int32_t *off, int nrows,
                       const int32_t *idx, const double *val, int nnz, const char *what)
{
    spx_matrix_info in;
    spx_matrix_arrays a;
    if (!C || spx_matrix_info_get(C, &in) || spx_matrix_arrays_get(C, &a)) {
        CHECK(0, "%s: no matrix", what);
        return;
    }
    CHECK_OK(ctx, spx_matrix_check(ctx, C));
    CHECK(in.nnz == nnz && !memcmp(a.offsets, off, (size_t)(nrows + 1) * 4) &&
              !memcmp(a.indices, idx, (size_t)nnz * 4) && !memcmp(a.values, val, (size_t)nnz * 8),
          "%s: wrong arrays", what);
}

static void test_canonicalize(spx_ctx *ctx)
{
    /* row 0 holds column 3 twice and is unsorted; row 2 is unsorted */
    int32_t off[] = {0, 3, 3, 5}, idx[] = {3, 1, 3, 2, 0};
    double val[] = {1, 2, 4, 8, 16};
    spx_matrix *A = NULL, *C = NULL;
    CHECK_OK(ctx, spx_matrix_wrap_csr(ctx, 3, 4, 5, off, idx, val, SPX_INDEX_I32, SPX_F64,
                                      SPX_MEM_HOST, &A));
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_CSC, NULL, &C), SPX_ERR_INVALID_MATRIX,
                "not sorted");
    const int32_t want_off[] = {0, 2, 2, 4}, want_idx[] = {1, 3, 0, 2};
    const struct {
        spx_dup_policy dup;
        double v03;
    } pol[] = {{SPX_DUP_SUM, 5}, {SPX_DUP_MIN, 1}, {SPX_DUP_MAX, 4}, {SPX_DUP_LAST, 4}};
    for (int k = 0; k < 4; k++) {
        CHECK_OK(ctx, spx_matrix_canonicalize(ctx, A, pol[k].dup, &C));
        expect_csr(ctx, C, want_off, 3, want_idx, (double[]){2, pol[k].v03, 16, 8}, 4, "canonical CSR");
        spx_matrix_destroy(C);
        C = NULL;
    }
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_ERROR, &C), SPX_ERR_INVALID_MATRIX,
                "duplicate entry (0, 3) at entries 0 and 2");
    spx_matrix_destroy(A);
    /* the same arrays as CSC of a 4 x 3 matrix: the transpose of the above */
    CHECK_OK(ctx, spx_matrix_wrap_csc(ctx, 4, 3, 5, off, idx, val, SPX_INDEX_I32, SPX_F64,
                                      SPX_MEM_HOST, &A));
    CHECK_OK(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_SUM, &C));
    expect_csr(ctx, C, want_off, 3, want_idx, (double[]){2, 5, 16, 8}, 4, "canonical CSC");
    spx_matrix_destroy(C);
    C = NULL;
    spx_matrix_destroy(A);
    /* broken offsets and out-of-range indices are errors, not repairs */
    int32_t bad_off[] = {0, 3, 2, 5}, bad_idx[] = {3, 1, 3, 2, 7};
    spx_matrix_wrap_csr(ctx, 3, 4, 5, bad_off, idx, val, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_SUM, &C), SPX_ERR_INVALID_MATRIX,
                "CSR: offsets decrease at 1");
    spx_matrix_destroy(A);
    spx_matrix_wrap_csr(ctx, 3, 4, 5, off, bad_idx, val, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_SUM, &C), SPX_ERR_INVALID_MATRIX,
                "entry 4 at (2, 7) is outside the 3 x 4 matrix");
    spx_matrix_destroy(A);
    /* SELL: row 0 holds column 3 twice (values 1 and 3), unsorted around it */
    sell_arrays sa = sell_good();
    sa.idx[0] = 3, sa.idx[2] = 3;
    A = sell3x5(ctx, &sa, 2);
    CHECK_FAILS(ctx, spx_matrix_convert(ctx, A, SPX_CSR, NULL, &C), SPX_ERR_INVALID_MATRIX,
                "row 0 holds column 3 twice");
    CHECK_OK(ctx, spx_matrix_canonicalize(ctx, A, SPX_DUP_SUM, &C));
    if (C) {
        spx_matrix_info in;
        spx_matrix_info_get(C, &in);
        double re[15], im[15];
        unsigned char pat[15];
        fx_image(C, re, im, pat);
        CHECK(in.format == SPX_SELL && in.sell_c == 2 && in.sell_sigma == 2 && in.nnz == 3 &&
                  re[3] == 4 && re[5 + 2] == 2 && re[10 + 4] == 4 && pat[0] == 0,
              "canonical SELL");
        CHECK_OK(ctx, spx_matrix_check(ctx, C));
    }
    spx_matrix_destroy(C);
    spx_matrix_destroy(A);
}

/* ---- astype ---- */

/* A 4 x 5 f64 matrix with an explicit zero, converted to format f. */
static spx_matrix *small_matrix(spx_ctx *ctx, spx_format f, spx_index_type it)
{
    static int64_t ri[] = {0, 0, 1, 2, 3, 3, 3}, ci[] = {0, 4, 2, 1, 0, 3, 4};
    static double v[] = {-3, 0, 2, 7, 1, -1, 100};
    int32_t ri32[7], ci32[7];
    for (int k = 0; k < 7; k++)
        ri32[k] = (int32_t)ri[k], ci32[k] = (int32_t)ci[k];
    spx_matrix *A = NULL, *B = NULL;
    spx_matrix_wrap_coo(ctx, 4, 5, 7, it == SPX_INDEX_I64 ? (void *)ri : ri32,
                        it == SPX_INDEX_I64 ? (void *)ci : ci32, v, it, SPX_F64, SPX_MEM_HOST, &A);
    spx_format_params p = {.block_rows = 2, .block_cols = 2, .sell_c = 2, .sell_sigma = 4};
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, f, &p, &B));
    spx_matrix_destroy(A);
    return B;
}

static void test_astype(spx_ctx *ctx)
{
    static const spx_dtype all[] = {SPX_F64, SPX_F32, SPX_F16, SPX_BF16, SPX_I32,
                                    SPX_I64, SPX_BOOL, SPX_C64, SPX_C128, SPX_PATTERN};
    static const spx_format fmts[] = {SPX_COO, SPX_CSR, SPX_CSC, SPX_BSR, SPX_SELL};
    for (int f = 0; f < 5; f++) {
        spx_matrix *A = small_matrix(ctx, fmts[f], SPX_INDEX_I32);
        if (!A)
            continue;
        double re0[20], im0[20], re[20], im[20];
        unsigned char pat0[20], pat[20];
        fx_image(A, re0, im0, pat0);
        for (int d = 0; d < 10; d++) {
            spx_matrix *B = NULL, *C = NULL;
            CHECK_OK(ctx, spx_matrix_astype(ctx, A, all[d], SPX_INDEX_DEFAULT, &B));
            if (!B)
                continue;
            CHECK_OK(ctx, spx_matrix_check(ctx, B));
            /* back to f64 (c128 from complex): the values each type keeps */
            spx_dtype back = spx__dtype_is_complex(all[d]) ? SPX_C128 : SPX_F64;
            CHECK_OK(ctx, spx_matrix_astype(ctx, B, back, SPX_INDEX_I64, &C));
            if (C) {
                CHECK_OK(ctx, spx_matrix_check(ctx, C));
                fx_image(C, re, im, pat);
                for (int c = 0; c < 20; c++) {
                    double want = all[d] == SPX_PATTERN ? pat0[c]
                                : all[d] == SPX_BOOL    ? re0[c] != 0
                                                        : re0[c];
                    CHECK(pat[c] == pat0[c] && re[c] == want && im[c] == 0,
                          "%s -> %s -> %s: cell %d is %g, expected %g", spx_format_name(fmts[f]),
                          spx_dtype_name(all[d]), spx_dtype_name(back), c, re[c], want);
                }
                if (fmts[f] == SPX_SELL && all[d] == SPX_PATTERN) { /* padding stays zero */
                    spx_matrix_info in;
                    spx_matrix_arrays a;
                    spx_matrix_info_get(C, &in);
                    spx_matrix_arrays_get(C, &a);
                    for (int64_t k = 0; k < in.sell_slots; k++)
                        CHECK(((int64_t *)a.indices)[k] >= 0 || ((double *)a.values)[k] == 0,
                              "SELL padding value from pattern");
                }
            }
            spx_matrix_destroy(B);
            spx_matrix_destroy(C);
        }
        /* index types both ways give the same arrays */
        spx_matrix *W = NULL, *N = NULL, *A64 = small_matrix(ctx, fmts[f], SPX_INDEX_I64);
        CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_DTYPE_DEFAULT, SPX_INDEX_I64, &W));
        if (W && A64)
            check_same(A64, W, "astype i32 -> i64");
        if (W)
            CHECK_OK(ctx, spx_matrix_astype(ctx, W, SPX_DTYPE_DEFAULT, SPX_INDEX_I32, &N));
        if (N)
            check_same(A, N, "astype i64 -> i32");
        spx_matrix_destroy(W);
        spx_matrix_destroy(N);
        spx_matrix_destroy(A64);
        spx_matrix_destroy(A);
    }

    /* errors, each naming the value */
    int32_t r1[] = {0, 0}, c1[] = {0, 1};
    double bad[][2] = {{2, 1.5}, {NAN, 1}, {3e9, 1}, {1, INFINITY}, {0x1p63, 1}};
    struct {
        spx_dtype to;
        spx_status st;
        const char *needle;
    } ecase[] = {{SPX_I32, SPX_ERR_INVALID_ARGUMENT, "value 1.5 at entry 1 is not an integer"},
                 {SPX_I64, SPX_ERR_INVALID_ARGUMENT, "at entry 0 is not an integer"},
                 {SPX_I32, SPX_ERR_OVERFLOW, "value 3000000000 at entry 0 is outside the range of i32"},
                 {SPX_I64, SPX_ERR_OVERFLOW, "value inf at entry 1 is outside the range of i64"},
                 {SPX_I64, SPX_ERR_OVERFLOW, "value 9.2233720368547758e+18 at entry 0 is outside"}};
    spx_matrix *A = NULL, *B = NULL;
    for (int k = 0; k < 5; k++) {
        spx_matrix_wrap_coo(ctx, 1, 2, 2, r1, c1, bad[k], SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
        CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, ecase[k].to, SPX_INDEX_DEFAULT, &B), ecase[k].st,
                    ecase[k].needle);
        spx_matrix_destroy(A);
    }
    double lim[] = {-0x1p63, -2147483648.0};
    spx_matrix_wrap_coo(ctx, 1, 2, 2, r1, c1, lim, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_I64, SPX_INDEX_DEFAULT, &B));
    spx_matrix_destroy(B);
    B = NULL;
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_I32, SPX_INDEX_DEFAULT, &B), SPX_ERR_OVERFLOW,
                "outside the range of i32");
    spx_matrix_destroy(A);
    int64_t big[] = {1, (int64_t)1 << 40}, r64[] = {0, 0}, c64[] = {0, (int64_t)1 << 40};
    spx_matrix_wrap_coo(ctx, 1, 2, 2, r1, c1, big, SPX_INDEX_I32, SPX_I64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_I32, SPX_INDEX_DEFAULT, &B), SPX_ERR_OVERFLOW,
                "value 1099511627776 at entry 1 is outside the range of i32");
    spx_matrix_destroy(A);
    float cz[] = {1, 2, 3, 4};
    spx_matrix_wrap_coo(ctx, 1, 2, 2, r1, c1, cz, SPX_INDEX_I32, SPX_C64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_F32, SPX_INDEX_DEFAULT, &B), SPX_ERR_UNSUPPORTED,
                "imaginary parts");
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, (spx_dtype)42, SPX_INDEX_DEFAULT, &B),
                SPX_ERR_INVALID_ARGUMENT, "invalid value type 42");
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_F32, (spx_index_type)7, &B),
                SPX_ERR_INVALID_ARGUMENT, "invalid index type 7");
    spx_matrix_destroy(A);
    /* an (unchecked) COO index that does not fit int32 */
    spx_matrix_wrap_coo(ctx, 4, (int64_t)1 << 41, 2, r64, c64, NULL, SPX_INDEX_I64, SPX_PATTERN,
                        SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_DTYPE_DEFAULT, SPX_INDEX_I32, &B),
                SPX_ERR_OVERFLOW, "does not fit int32");
    spx_matrix_destroy(A);
    spx_matrix_wrap_coo(ctx, 4, 4, 2, r64, c64, NULL, SPX_INDEX_I64, SPX_PATTERN, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_astype(ctx, A, SPX_DTYPE_DEFAULT, SPX_INDEX_I32, &B),
                SPX_ERR_OVERFLOW, "indices[1] = 1099511627776 does not fit int32 indices");
    spx_matrix_destroy(A);
    CHECK(B == NULL, "no output on error");

    /* single rounding: these would round wrongly through float */
    double f[] = {1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11, 65520.0, 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-8,
                  1 + 3 * 0x1p-8, 0.5, -0.0, NAN};
    int32_t r9[9] = {0}, c9[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    spx_matrix_wrap_coo(ctx, 1, 9, 9, r9, c9, f, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    spx_matrix *H = NULL, *BF = NULL, *BO = NULL;
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_F16, SPX_INDEX_DEFAULT, &H));
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_BF16, SPX_INDEX_DEFAULT, &BF));
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_BOOL, SPX_INDEX_DEFAULT, &BO));
    spx_matrix_arrays a;
    if (H && BF && BO) {
        spx_matrix_arrays_get(H, &a);
        const uint16_t *h = a.values;
        CHECK(h[0] == 0x3c01 && h[1] == 0x3c00 && h[2] == 0x7c00, "f16 rounding %04x %04x %04x",
              h[0], h[1], h[2]);
        spx_matrix_arrays_get(BF, &a);
        const uint16_t *b = a.values;
        CHECK(b[3] == 0x3f81 && b[4] == 0x3f80 && b[5] == 0x3f82 && (b[8] & 0x7fff) > 0x7f80,
              "bf16 rounding %04x %04x %04x", b[3], b[4], b[5]);
        spx_matrix_arrays_get(BO, &a);
        const uint8_t *o = a.values;
        CHECK(o[0] == 1 && o[6] == 1 && o[7] == 0 && o[8] == 1, "bool: 0.5, -0, NaN -> 1 0 1");
    }
    spx_matrix_destroy(H);
    spx_matrix_destroy(BF);
    spx_matrix_destroy(BO);
    spx_matrix_destroy(A);
    int64_t iv[] = {((int64_t)1 << 40) + ((int64_t)1 << 32) + 1, ((int64_t)1 << 40) + ((int64_t)1 << 32),
                    ((int64_t)1 << 60) + ((int64_t)1 << 36) + 1, INT64_MAX};
    spx_matrix_wrap_coo(ctx, 1, 9, 4, r9, c9, iv, SPX_INDEX_I32, SPX_I64, SPX_MEM_HOST, &A);
    H = BF = NULL;
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_BF16, SPX_INDEX_DEFAULT, &BF));
    CHECK_OK(ctx, spx_matrix_astype(ctx, A, SPX_F32, SPX_INDEX_DEFAULT, &H));
    if (H && BF) {
        spx_matrix_arrays_get(BF, &a);
        const uint16_t *b = a.values;
        CHECK(b[0] == 0x5381 && b[1] == 0x5380 && b[3] == 0x5f00, "i64 -> bf16 %04x %04x %04x",
              b[0], b[1], b[3]);
        spx_matrix_arrays_get(H, &a);
        uint32_t u;
        memcpy(&u, (const float *)a.values + 2, 4);
        CHECK(u == 0x5d800001u, "i64 -> f32 %08x", u);
    }
    spx_matrix_destroy(H);
    spx_matrix_destroy(BF);
    spx_matrix_destroy(A);
}

/* ---- dense conversions ---- */

/* Nonzeros of the 4 x 5 dense test matrix, row by row. */
static const struct {
    int i, j;
    double v;
} dense_entries[] = {{0, 1, 1e-3}, {1, 0, -2}, {1, 4, NAN}, {2, 2, -0.0}, {3, 3, 0.5}, {3, 4, -0.02}};

static void fill_dense(double *buf, spx_layout layout, int64_t ld)
{
    for (int64_t k = 0; k < 6 * 7; k++)
        buf[k] = 99; /* the gaps must be ignored */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            buf[layout == SPX_ROW_MAJOR ? i * ld + j : j * ld + i] = 0;
    for (int k = 0; k < 6; k++)
        buf[layout == SPX_ROW_MAJOR ? dense_entries[k].i * ld + dense_entries[k].j
                                    : dense_entries[k].j * ld + dense_entries[k].i] = dense_entries[k].v;
}

static void test_dense(spx_ctx *ctx)
{
    double rm[6 * 7], cm[6 * 7];
    fill_dense(rm, SPX_ROW_MAJOR, 7);
    fill_dense(cm, SPX_COL_MAJOR, 6);
    spx_dense Dr = spx_dense_make(rm, 4, 5, 7, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_dense Dc = spx_dense_make(cm, 4, 5, 6, SPX_F64, SPX_COL_MAJOR, SPX_MEM_HOST);
    /* drop_tol: which entries stay, by magnitude (NaN always stays, -0 never) */
    const struct {
        double tol;
        int keep[6];
    } tols[] = {{0, {1, 1, 1, 0, 1, 1}}, {0.01, {0, 1, 1, 0, 1, 1}}, {0.5, {0, 1, 1, 0, 0, 0}}};
    for (int t = 0; t < 3; t++)
        for (int l = 0; l < 2; l++) {
            spx_matrix *A = NULL;
            CHECK_OK(ctx, spx_matrix_from_dense(ctx, l ? &Dc : &Dr, tols[t].tol, SPX_FORMAT_DEFAULT,
                                                NULL, SPX_INDEX_DEFAULT, &A));
            if (!A)
                continue;
            spx_matrix_info in;
            spx_matrix_arrays a;
            spx_matrix_info_get(A, &in);
            spx_matrix_arrays_get(A, &a);
            CHECK(in.format == SPX_CSR && in.index_type == SPX_INDEX_I32, "from_dense default CSR");
            int64_t q = 0;
            bool ok = true;
            int32_t rowptr[5] = {0};
            for (int k = 0; k < 6; k++) {
                if (!tols[t].keep[k])
                    continue;
                double v = ((double *)a.values)[q];
                ok = ok && q < in.nnz && ((int32_t *)a.indices)[q] == dense_entries[k].j &&
                     (v == dense_entries[k].v || (isnan(v) && isnan(dense_entries[k].v)));
                rowptr[dense_entries[k].i + 1]++;
                q++;
            }
            for (int i = 0; i < 4; i++)
                rowptr[i + 1] += rowptr[i];
            CHECK(ok && in.nnz == q && !memcmp(a.offsets, rowptr, sizeof rowptr),
                  "from_dense tol %g %s-major: wrong entries", tols[t].tol, l ? "column" : "row");
            spx_matrix_destroy(A);
        }
    /* every format, and back to dense in the other layout */
    for (spx_format f = SPX_COO; f <= SPX_SELL; f++) {
        spx_matrix *A = NULL;
        spx_format_params p = {.block_rows = 3, .block_cols = 2, .sell_c = 2};
        CHECK_OK(ctx, spx_matrix_from_dense(ctx, &Dr, 0, f, &p, SPX_INDEX_I64, &A));
        if (!A)
            continue;
        spx_matrix_info in;
        spx_matrix_info_get(A, &in);
        CHECK(in.format == f && in.index_type == SPX_INDEX_I64, "from_dense into %s", spx_format_name(f));
        CHECK_OK(ctx, spx_matrix_check(ctx, A));
        double back[6 * 7];
        for (int k = 0; k < 6 * 7; k++)
            back[k] = 99;
        spx_dense B = spx_dense_make(back, 4, 5, 6, SPX_F64, SPX_COL_MAJOR, SPX_MEM_HOST);
        CHECK_OK(ctx, spx_matrix_to_dense(ctx, A, &B));
        for (int k = 0; k < 6 * 7; k++)
            CHECK(back[k] == cm[k] || (isnan(back[k]) && isnan(cm[k])),
                  "%s to dense: element %d is %g, expected %g", spx_format_name(f), k, back[k], cm[k]);
        spx_matrix_destroy(A);
    }
    /* every dense value type round trips */
    static const spx_dtype dts[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16, SPX_I32,
                                    SPX_I64, SPX_BOOL, SPX_C64, SPX_C128};
    for (int d = 0; d < 9; d++) {
        unsigned char src[12 * 16], dst[12 * 16];
        int nz = 0;
        for (int k = 0; k < 12; k++) {
            double v = k % 3 ? 0 : (dts[d] == SPX_BOOL ? 1 : k - 5);
            double im = spx__dtype_is_complex(dts[d]) && k == 4 ? -1 : 0; /* only imaginary */
            fx_set_val(src, dts[d], k, v, im);
            nz += v != 0 || im != 0;
        }
        spx_dense S = spx_dense_make(src, 3, 4, 4, dts[d], SPX_ROW_MAJOR, SPX_MEM_HOST);
        spx_dense T = spx_dense_make(dst, 3, 4, 4, dts[d], SPX_ROW_MAJOR, SPX_MEM_HOST);
        memset(dst, 0x5a, sizeof dst);
        spx_matrix *A = NULL;
        spx_matrix_info in;
        CHECK_OK(ctx, spx_matrix_from_dense(ctx, &S, 0, SPX_COO, NULL, SPX_INDEX_DEFAULT, &A));
        if (!A)
            continue;
        spx_matrix_info_get(A, &in);
        CHECK(in.dtype == dts[d] && in.nnz == nz, "%s: %lld entries, expected %d",
              spx_dtype_name(dts[d]), (long long)in.nnz, nz);
        CHECK_OK(ctx, spx_matrix_to_dense(ctx, A, &T));
        CHECK(!memcmp(src, dst, 12 * spx_dtype_size(dts[d])), "%s dense round trip",
              spx_dtype_name(dts[d]));
        spx_matrix_destroy(A);
    }

    /* errors */
    spx_matrix *A = NULL;
    CHECK_FAILS(ctx, spx_matrix_from_dense(ctx, &Dr, -1, SPX_CSR, NULL, SPX_INDEX_DEFAULT, &A),
                SPX_ERR_INVALID_ARGUMENT, "drop_tol -1");
    CHECK_FAILS(ctx, spx_matrix_from_dense(ctx, &Dr, NAN, SPX_CSR, NULL, SPX_INDEX_DEFAULT, &A),
                SPX_ERR_INVALID_ARGUMENT, "drop_tol nan");
    CHECK_FAILS(ctx, spx_matrix_from_dense(ctx, &Dr, 0, (spx_format)9, NULL, SPX_INDEX_DEFAULT, &A),
                SPX_ERR_INVALID_ARGUMENT, "invalid format 9");
    spx_dense Dbad = spx_dense_make(rm, 4, 5, 4, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    CHECK_FAILS(ctx, spx_matrix_from_dense(ctx, &Dbad, 0, SPX_CSR, NULL, SPX_INDEX_DEFAULT, &A),
                SPX_ERR_INVALID_ARGUMENT, "leading dimension 4 < 5");
    spx_dense Ddev = spx_dense_make(rm, 4, 5, 7, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_DEVICE);
    CHECK_FAILS(ctx, spx_matrix_from_dense(ctx, &Ddev, 0, SPX_CSR, NULL, SPX_INDEX_DEFAULT, &A),
                SPX_ERR_UNSUPPORTED, "device memory");
    CHECK(A == NULL, "no output on error");
    CHECK_OK(ctx, spx_matrix_from_dense(ctx, &Dr, 0, SPX_CSR, NULL, SPX_INDEX_DEFAULT, &A));
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &Ddev), SPX_ERR_UNSUPPORTED, "device memory");
    spx_dense Dt = spx_dense_make(cm, 5, 4, 6, SPX_F64, SPX_COL_MAJOR, SPX_MEM_HOST);
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &Dt), SPX_ERR_SHAPE,
                "matrix A is 4 x 5 but dense D is 5 x 4");
    spx_matrix_destroy(A);
    /* a failed conversion leaves D untouched */
    int32_t r1[] = {0, 1}, c1[] = {0, 1};
    double vals[] = {2, 1.5};
    int32_t out[4] = {7, 7, 7, 7};
    spx_dense Di = spx_dense_make(out, 2, 2, 2, SPX_I32, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_matrix_wrap_coo(ctx, 2, 2, 2, r1, c1, vals, SPX_INDEX_I32, SPX_F64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &Di), SPX_ERR_INVALID_ARGUMENT,
                "value 1.5 at entry 1 is not an integer");
    CHECK(out[0] == 7 && out[1] == 7 && out[2] == 7 && out[3] == 7, "D untouched on error");
    spx_matrix_destroy(A);
    float cv[] = {1, 2, 3, 4};
    spx_matrix_wrap_coo(ctx, 2, 2, 2, r1, c1, cv, SPX_INDEX_I32, SPX_C64, SPX_MEM_HOST, &A);
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &Dr), SPX_ERR_SHAPE, "2 x 2");
    spx_dense D2 = spx_dense_make(rm, 2, 2, 2, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &D2), SPX_ERR_UNSUPPORTED, "imaginary parts");
    spx_matrix_destroy(A);
    spx_matrix_wrap_coo(ctx, 2, 2, 2, r1, c1, vals, SPX_INDEX_I32, SPX_F64, SPX_MEM_DEVICE, &A);
    CHECK_FAILS(ctx, spx_matrix_to_dense(ctx, A, &D2), SPX_ERR_UNSUPPORTED, "device memory");
    spx_matrix_destroy(A);
}

/* ---- allocation failures: every one is reported and nothing leaks ---- */

enum { OP_COUNT = 17 };

static spx_status run_op(spx_ctx *ctx, int op, spx_matrix *const *in, spx_matrix **out)
{
    static double dense[12] = {0, 1, 0, 2, 3, 0, 0, 0, 4, 5, 0, 6};
    spx_dense D = spx_dense_make(dense, 3, 4, 4, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    double buf[12];
    spx_dense E = spx_dense_make(buf, 3, 4, 4, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    spx_format_params p = {.block_rows = 2, .block_cols = 3, .sell_c = 2, .sell_sigma = 4};
    switch (op) {
    case 0: return spx_matrix_convert(ctx, in[0], SPX_CSR, NULL, out);
    case 1: return spx_matrix_convert(ctx, in[0], SPX_CSC, NULL, out);
    case 2: return spx_matrix_convert(ctx, in[1], SPX_BSR, &p, out);
    case 3: return spx_matrix_convert(ctx, in[1], SPX_SELL, &p, out);
    case 4: return spx_matrix_convert(ctx, in[2], SPX_SELL, &p, out);
    case 5: return spx_matrix_convert(ctx, in[3], SPX_COO, NULL, out);
    case 6: case 7: case 8: case 9: return spx_matrix_transpose(ctx, in[op - 6], out);
    case 10: return spx_matrix_canonicalize(ctx, in[0], SPX_DUP_SUM, out);
    case 11: return spx_matrix_canonicalize(ctx, in[4], SPX_DUP_SUM, out);
    case 12: return spx_matrix_canonicalize(ctx, in[3], SPX_DUP_SUM, out);
    case 13: return spx_matrix_astype(ctx, in[2], SPX_F16, SPX_INDEX_I64, out);
    case 14: return spx_matrix_from_dense(ctx, &D, 0, SPX_BSR, &p, SPX_INDEX_DEFAULT, out);
    case 15: return spx_matrix_to_dense(ctx, in[0], &E);
    default: return spx_matrix_to_dense(ctx, in[3], &E);
    }
}

static void test_alloc_failures(spx_ctx *ctx)
{
    fx_triplets T;
    fx_make(ctx, &T, 3, 4, 9, FX_RANDOM, SPX_F64, SPX_INDEX_I32, test_seed);
    spx_matrix *in[5] = {T.coo, NULL, NULL, NULL, NULL};
    spx_format_params p = {.block_rows = 2, .block_cols = 2, .sell_c = 2, .sell_sigma = 2};
    CHECK_OK(ctx, spx_matrix_convert(ctx, T.coo, SPX_CSR, NULL, &in[1]));
    CHECK_OK(ctx, spx_matrix_convert(ctx, T.coo, SPX_BSR, &p, &in[2]));
    CHECK_OK(ctx, spx_matrix_convert(ctx, T.coo, SPX_SELL, &p, &in[3]));
    int32_t off[] = {0, 3, 3, 5}, idx[] = {3, 1, 3, 2, 0};
    double val[] = {1, 2, 4, 8, 16};
    CHECK_OK(ctx, spx_matrix_wrap_csr(ctx, 3, 4, 5, off, idx, val, SPX_INDEX_I32, SPX_F64,
                                      SPX_MEM_HOST, &in[4]));
    for (int op = 0; op < OP_COUNT && in[1] && in[2] && in[3]; op++) {
        for (long k = 1; k < 1000; k++) {
            long live = spx__debug_live_allocations();
            spx_matrix *out = NULL;
            spx__debug_fail_alloc_after(k);
            spx_status s = run_op(ctx, op, in, &out);
            spx__debug_fail_alloc_after(0);
            if (s == SPX_OK) {
                spx_matrix_destroy(out);
                break;
            }
            CHECK(s == SPX_ERR_OUT_OF_MEMORY && out == NULL &&
                      spx__debug_live_allocations() == live,
                  "operation %d with allocation %ld failing: %s (%s), %ld leaked", op, k,
                  spx_status_name(s), spx_last_error(ctx), spx__debug_live_allocations() - live);
        }
    }
    for (int k = 1; k < 5; k++)
        spx_matrix_destroy(in[k]);
    fx_free(&T);
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
    test_canonicalize(ctx);
    test_astype(ctx);
    test_dense(ctx);
    test_alloc_failures(ctx);
    CHECK(spx__debug_live_allocations() == live, "%ld allocations leaked",
          spx__debug_live_allocations() - live);
    spx_ctx_destroy(ctx);
    return test_finish("test_format");
}

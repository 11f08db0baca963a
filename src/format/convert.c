/* Conversions between COO, CSR and CSC, and the spx_matrix_convert dispatcher.
 * Sorting is two stable counting passes (minor key, then major key), so it is
 * O(nnz + rows + cols) and duplicates keep their storage order for
 * SPX_DUP_LAST. */
#include "format/convert.h"

#include <math.h>
#include <string.h>

#define LL(x) ((long long)(x))

/* Accumulator for one run of duplicate entries. */
typedef struct {
    double re, im;
    int64_t i;
    bool int_overflow;
} dup_acc;

static void acc_start(dup_acc *a, const void *vals, spx_dtype t, int64_t p)
{
    a->int_overflow = false;
    a->im = 0;
    if (t == SPX_I32 || t == SPX_I64)
        a->i = t == SPX_I32 ? ((const int32_t *)vals)[p] : ((const int64_t *)vals)[p];
    else if (t == SPX_C64 || t == SPX_C128) {
        a->re = t == SPX_C64 ? ((const float *)vals)[2 * p] : ((const double *)vals)[2 * p];
        a->im = t == SPX_C64 ? ((const float *)vals)[2 * p + 1] : ((const double *)vals)[2 * p + 1];
    } else if (t != SPX_PATTERN)
        a->re = spx__val_get(vals, t, p);
}

static void acc_add(dup_acc *a, const void *vals, spx_dtype t, int64_t p, spx_dup_policy dup)
{
    dup_acc b;
    acc_start(&b, vals, t, p);
    if (t == SPX_PATTERN)
        return;
    if (dup == SPX_DUP_LAST) {
        *a = b;
        return;
    }
    if (t == SPX_I32 || t == SPX_I64) {
        if (dup == SPX_DUP_SUM) /* i32 sums accumulate in int64: only the total must fit */
            a->int_overflow |= spx__add_overflows(a->i, b.i, &a->i);
        else if ((dup == SPX_DUP_MIN) == (b.i < a->i))
            a->i = b.i;
        return;
    }
    if (dup == SPX_DUP_SUM) {
        a->re += b.re;
        a->im += b.im;
        if (t == SPX_BOOL)
            a->re = a->re != 0.0;
    } else if ((dup == SPX_DUP_MIN && b.re < a->re) || (dup == SPX_DUP_MAX && b.re > a->re) ||
               isnan(b.re)) {
        a->re = b.re; /* NaN propagates through min/max */
    }
}

/* Whether the combined value does not fit its type. */
static bool acc_overflows(const dup_acc *a, spx_dtype t)
{
    return a->int_overflow || (t == SPX_I32 && (a->i > INT32_MAX || a->i < INT32_MIN));
}

static void acc_store(const dup_acc *a, void *vals, spx_dtype t, int64_t q)
{
    switch (t) {
    case SPX_I32: ((int32_t *)vals)[q] = (int32_t)a->i; break;
    case SPX_I64: ((int64_t *)vals)[q] = a->i; break;
    case SPX_C64: ((float *)vals)[2 * q] = (float)a->re; ((float *)vals)[2 * q + 1] = (float)a->im; break;
    case SPX_C128: ((double *)vals)[2 * q] = a->re; ((double *)vals)[2 * q + 1] = a->im; break;
    case SPX_PATTERN: break;
    default: spx__val_set(vals, t, q, a->re);
    }
}

/* Stable counting sort of positions `in` (or 0..n-1 if in is NULL) by key[p]
 * in [0, nkeys); writes order to out and, if counts is given, fills counts
 * (nkeys+1 offsets). Keys are assumed in range. */
static void counting_sort(const void *key, spx_index_type t, int64_t n, int64_t nkeys,
                          const int64_t *in, int64_t *out, int64_t *offs)
{
    memset(offs, 0, (size_t)(nkeys + 1) * sizeof *offs);
    for (int64_t q = 0; q < n; q++)
        offs[spx__idx_get(key, t, in ? in[q] : q) + 1]++;
    for (int64_t k = 0; k < nkeys; k++)
        offs[k + 1] += offs[k];
    for (int64_t q = 0; q < n; q++) {
        int64_t p = in ? in[q] : q;
        out[offs[spx__idx_get(key, t, p)]++] = p;
    }
    /* offs[k] now holds the end of bucket k; shift back to starts */
    for (int64_t k = nkeys; k > 0; k--)
        offs[k] = offs[k - 1];
    offs[0] = 0;
}

spx_status spx__coo_compress(spx_ctx *ctx, const spx_matrix *A, spx_format to, spx_dup_policy dup,
                             spx_matrix **out)
{
    spx_status s = spx__check_dup_policy(ctx, dup);
    if (s)
        return s;
    if (spx__dtype_is_complex(A->dtype) && (dup == SPX_DUP_MIN || dup == SPX_DUP_MAX))
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "min/max of complex duplicates is undefined");
    spx_index_type t = A->itype;
    bool by_rows = to == SPX_CSR;
    const void *major = by_rows ? A->row_indices : A->indices;
    const void *minor = by_rows ? A->indices : A->row_indices;
    int64_t nmajor = by_rows ? A->rows : A->cols, nminor = by_rows ? A->cols : A->rows;
    int64_t n = A->nnz;

    for (int64_t p = 0; p < n; p++) {
        int64_t i = spx__idx_get(A->row_indices, t, p), j = spx__idx_get(A->indices, t, p);
        if (i < 0 || i >= A->rows || j < 0 || j >= A->cols)
            return spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                             "entry %lld at (%lld, %lld) is outside the %lld x %lld matrix",
                             LL(p), LL(i), LL(j), LL(A->rows), LL(A->cols));
    }

    int64_t *tmp = NULL, *order = NULL, *offs = NULL;
    spx_matrix *C = NULL;
    int64_t nkeys = nmajor > nminor ? nmajor : nminor;
    s = spx__alloc(ctx, (void **)&tmp, n, sizeof(int64_t), "sort buffer");
    if (!s)
        s = spx__alloc(ctx, (void **)&order, n, sizeof(int64_t), "sort buffer");
    if (!s)
        s = spx__alloc(ctx, (void **)&offs, nkeys + 1, sizeof(int64_t), "sort counts");
    if (s)
        goto done;
    counting_sort(minor, t, n, nminor, NULL, tmp, offs);
    counting_sort(major, t, n, nmajor, tmp, order, offs);

    /* count unique entries */
    int64_t nuniq = 0;
    for (int64_t q = 0; q < n; q++) {
        if (q > 0 && spx__idx_get(major, t, order[q]) == spx__idx_get(major, t, order[q - 1]) &&
            spx__idx_get(minor, t, order[q]) == spx__idx_get(minor, t, order[q - 1])) {
            if (dup == SPX_DUP_ERROR) {
                s = spx__fail(ctx, SPX_ERR_INVALID_MATRIX,
                              "duplicate entry (%lld, %lld) at entries %lld and %lld",
                              LL(spx__idx_get(A->row_indices, t, order[q])),
                              LL(spx__idx_get(A->indices, t, order[q])), LL(order[q - 1]),
                              LL(order[q]));
                goto done;
            }
            continue;
        }
        nuniq++;
    }

    if ((s = spx__matrix_new(ctx, to, A->rows, A->cols, t, A->dtype, &C)))
        goto done;
    C->nnz = nuniq;
    if ((s = spx__matrix_alloc(ctx, C)))
        goto done;

    memset(offs, 0, (size_t)(nmajor + 1) * sizeof *offs);
    int64_t k = -1, overflow_at = -1;
    dup_acc acc = {0};
    for (int64_t q = 0; q <= n; q++) {
        int64_t p = q < n ? order[q] : -1;
        int64_t a = p >= 0 ? spx__idx_get(major, t, p) : -1;
        int64_t b = p >= 0 ? spx__idx_get(minor, t, p) : -1;
        if (p >= 0 && k >= 0 && a == spx__idx_get(major, t, order[q - 1]) &&
            b == spx__idx_get(minor, t, order[q - 1])) {
            acc_add(&acc, A->values, A->dtype, p, dup);
            continue;
        }
        if (k >= 0) { /* the run of entry k ended */
            acc_store(&acc, C->values, C->dtype, k);
            if (overflow_at < 0 && dup == SPX_DUP_SUM && acc_overflows(&acc, C->dtype))
                overflow_at = order[q - 1];
        }
        if (p < 0)
            break;
        k++;
        offs[a + 1]++;
        spx__idx_set(C->indices, t, k, b);
        acc_start(&acc, A->values, A->dtype, p);
    }
    if (overflow_at >= 0) {
        s = spx__fail(ctx, SPX_ERR_OVERFLOW, "sum of the duplicate entries at (%lld, %lld) overflows %s",
                      LL(spx__idx_get(A->row_indices, t, overflow_at)),
                      LL(spx__idx_get(A->indices, t, overflow_at)), spx_dtype_name(A->dtype));
        goto done;
    }
    for (int64_t r = 0; r < nmajor; r++)
        offs[r + 1] += offs[r];
    for (int64_t r = 0; r <= nmajor; r++)
        spx__idx_set(C->offsets, t, r, offs[r]);
    C->checked_version = C->version;
done:
    spx__free(tmp);
    spx__free(order);
    spx__free(offs);
    if (s) {
        spx_matrix_destroy(C);
        return s;
    }
    *out = C;
    return SPX_OK;
}

spx_status spx__check_dup_policy(spx_ctx *ctx, spx_dup_policy dup)
{
    if ((int)dup < SPX_DUP_SUM || (int)dup > SPX_DUP_ERROR)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid duplicate policy %d", (int)dup);
    return SPX_OK;
}

spx_status spx__compressed_flip(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_index_type t = A->itype;
    spx_format to = A->format == SPX_CSR ? SPX_CSC : SPX_CSR;
    int64_t nmajor = A->format == SPX_CSR ? A->rows : A->cols;
    int64_t nminor = A->format == SPX_CSR ? A->cols : A->rows;
    size_t vsz = spx_dtype_size(A->dtype);
    spx_matrix *C = NULL;
    int64_t *next = NULL;
    spx_status s = spx__matrix_new(ctx, to, A->rows, A->cols, t, A->dtype, &C);
    if (s)
        return s;
    C->nnz = A->nnz;
    if ((s = spx__matrix_alloc(ctx, C)) ||
        (s = spx__alloc_zero(ctx, (void **)&next, nminor + 1, sizeof(int64_t), "transpose counts")))
        goto done;
    for (int64_t p = 0; p < A->nnz; p++)
        next[spx__idx_get(A->indices, t, p) + 1]++;
    for (int64_t j = 0; j < nminor; j++)
        next[j + 1] += next[j];
    for (int64_t j = 0; j <= nminor; j++)
        spx__idx_set(C->offsets, t, j, next[j]);
    /* walking majors in order keeps the new minor indices sorted */
    for (int64_t i = 0; i < nmajor; i++) {
        int64_t b = spx__idx_get(A->offsets, t, i), e = spx__idx_get(A->offsets, t, i + 1);
        for (int64_t p = b; p < e; p++) {
            int64_t q = next[spx__idx_get(A->indices, t, p)]++;
            spx__idx_set(C->indices, t, q, i);
            if (vsz)
                memcpy((char *)C->values + q * vsz, (const char *)A->values + p * vsz, vsz);
        }
    }
    C->checked_version = C->version;
done:
    spx__free(next);
    if (s) {
        spx_matrix_destroy(C);
        return s;
    }
    *out = C;
    return SPX_OK;
}

spx_status spx__compressed_to_coo(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_index_type t = A->itype;
    spx_matrix *C = NULL;
    spx_status s = spx__matrix_new(ctx, SPX_COO, A->rows, A->cols, t, A->dtype, &C);
    if (s)
        return s;
    C->nnz = A->nnz;
    if ((s = spx__matrix_alloc(ctx, C))) {
        spx_matrix_destroy(C);
        return s;
    }
    bool rows = A->format == SPX_CSR;
    int64_t nmajor = rows ? A->rows : A->cols;
    for (int64_t i = 0; i < nmajor; i++) {
        int64_t b = spx__idx_get(A->offsets, t, i), e = spx__idx_get(A->offsets, t, i + 1);
        for (int64_t p = b; p < e; p++) {
            int64_t j = spx__idx_get(A->indices, t, p);
            spx__idx_set(C->row_indices, t, p, rows ? i : j);
            spx__idx_set(C->indices, t, p, rows ? j : i);
        }
    }
    size_t vsz = spx_dtype_size(A->dtype);
    if (vsz && A->nnz)
        memcpy(C->values, A->values, (size_t)A->nnz * vsz);
    C->checked_version = C->version;
    *out = C;
    return SPX_OK;
}

spx_status spx__to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    return spx_matrix_convert(ctx, A, SPX_CSR, NULL, out);
}

spx_status spx_matrix_convert(spx_ctx *ctx, const spx_matrix *A, spx_format to,
                              const spx_format_params *params, spx_matrix **out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (to == SPX_FORMAT_DEFAULT)
        to = SPX_CSR;
    if (to < SPX_COO || to > SPX_SELL)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid target format %d", (int)to);
    spx_format_params p = params ? *params : (spx_format_params){0};
    if (!p.block_rows)
        p.block_rows = 4;
    if (!p.block_cols)
        p.block_cols = 4;
    if (!p.sell_c)
        p.sell_c = 32;
    if (!p.sell_sigma)
        p.sell_sigma = 256;
    if (p.block_rows < 0 || p.block_cols < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid BSR block shape %lld x %lld",
                         LL(p.block_rows), LL(p.block_cols));
    if (p.sell_c < 0 || p.sell_sigma < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid SELL parameters C=%lld sigma=%lld",
                         LL(p.sell_c), LL(p.sell_sigma));
    if ((s = spx__check_dup_policy(ctx, p.dup)))
        return s;
    if (A->format != SPX_COO && (s = spx__matrix_ensure_valid(ctx, A)))
        return s;

    /* same format: a copy, unless BSR/SELL parameters differ */
    if (A->format == to &&
        !(to == SPX_BSR && (A->br != p.block_rows || A->bc != p.block_cols)) &&
        !(to == SPX_SELL && (A->sell_c != p.sell_c || A->sell_sigma != p.sell_sigma)) &&
        to != SPX_COO)
        return spx_matrix_copy(ctx, A, out);

    /* first reach CSR (or go straight where a direct path exists) */
    spx_matrix *csr = NULL;
    switch (A->format) {
    case SPX_COO:
        if (to == SPX_CSC)
            return spx__coo_compress(ctx, A, SPX_CSC, p.dup, out);
        s = spx__coo_compress(ctx, A, SPX_CSR, p.dup, &csr);
        break;
    case SPX_CSR: break;
    case SPX_CSC:
        if (to == SPX_COO) { /* via CSR so that COO comes out row-sorted */
            spx_matrix *tmp = NULL;
            if ((s = spx__compressed_flip(ctx, A, &tmp)))
                return s;
            s = spx__compressed_to_coo(ctx, tmp, out);
            spx_matrix_destroy(tmp);
            return s;
        }
        s = spx__compressed_flip(ctx, A, &csr);
        break;
    case SPX_BSR: s = spx__bsr_to_csr(ctx, A, &csr); break;
    case SPX_SELL: s = spx__sell_to_csr(ctx, A, &csr); break;
    default: return spx__fail(ctx, SPX_ERR_INVALID_MATRIX, "unknown format %d", (int)A->format);
    }
    if (s)
        return s;
    const spx_matrix *src = csr ? csr : A;
    switch (to) {
    case SPX_COO: s = spx__compressed_to_coo(ctx, src, out); break;
    case SPX_CSR: s = csr ? (*out = csr, csr = NULL, SPX_OK) : spx_matrix_copy(ctx, A, out); break;
    case SPX_CSC: s = spx__compressed_flip(ctx, src, out); break;
    case SPX_BSR: s = spx__csr_to_bsr(ctx, src, p.block_rows, p.block_cols, out); break;
    case SPX_SELL: s = spx__csr_to_sell(ctx, src, p.sell_c, p.sell_sigma, out); break;
    default: break;
    }
    spx_matrix_destroy(csr);
    return s;
}

/* Reference SpGEMM over semirings: the oracle. Serial, row by row, with a
 * dense accumulator over the columns of the current row, products applied in
 * k order. Two passes over the rows (the first only counts), so the output is
 * allocated once at its exact size. Obviously correct, not fast.
 *
 * Unlike the other ref kernels (float64 accumulation) this one computes in
 * the semiring's value type: the semiring defines the arithmetic, and it
 * keeps ref and cpu bit-comparable. Working memory: n values, two n-byte
 * flag arrays and n int64 column slots, where n is the number of columns of
 * C; there is no smaller configuration, so that is also the minimum
 * memory_budget (beyond converted operands). */
#include <stdlib.h>

#include "backend/spgemm_common.h"
#include "format/matrix.h"

typedef struct {
    const spx_spgemm_args *a;
    size_t vsz;
    unsigned char *val;    /* n values: the row being accumulated */
    uint8_t *occupied;     /* n flags: val[j] holds a product */
    uint8_t *in_mask;      /* n flags: M(i, j) is stored (MATRIX masks) */
    int64_t *cols;         /* the occupied columns of the row, then sorted */
    int64_t ncols;         /* how many */
    spx__value_slot one, identity;
} ref_acc;

/* z = x (+) y or x (x) y; nonzero if the operator reports overflow. */
static int apply(const ref_acc *w, int mul, void *z, const void *x, const void *y)
{
    const spx_spgemm_args *a = w->a;
    if (a->kind != SPX_SEMIRING_CUSTOM)
        return spx__semiring_apply(a->kind, a->type, mul, z, x, y);
    spx__value_slot t;
    int r = (mul ? a->custom->mul : a->custom->add)(t.bytes, x, y, a->custom->user);
    memcpy(z, t.bytes, w->vsz);
    return r;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static const void *value_at(const ref_acc *w, const spx_matrix *X, int64_t p)
{
    return X->values ? (const unsigned char *)X->values + p * (int64_t)w->vsz : w->one.bytes;
}

static void mark_mask(ref_acc *w, int64_t i, uint8_t v)
{
    const spx_matrix *M = w->a->M;
    int64_t e = spx__idx_get(M->offsets, M->itype, i + 1);
    for (int64_t p = spx__idx_get(M->offsets, M->itype, i); p < e; p++)
        w->in_mask[spx__idx_get(M->indices, M->itype, p)] = v;
}

/* Accumulate the masked products of row i; on overflow store its column in
 * *bad_j and return nonzero. */
static int product_row(ref_acc *w, int64_t i, int64_t *bad_j)
{
    const spx_spgemm_args *a = w->a;
    const spx_matrix *A = a->A, *B = a->B;
    spx_index_type t = A->itype;
    int64_t lo, hi;
    spx__spgemm_window(a, i, B->cols, &lo, &hi);
    if (a->mask == SPX_MASK_MATRIX)
        mark_mask(w, i, 1);
    w->ncols = 0;
    int64_t pe = spx__idx_get(A->offsets, t, i + 1);
    for (int64_t p = spx__idx_get(A->offsets, t, i); p < pe; p++) {
        int64_t k = spx__idx_get(A->indices, t, p);
        int64_t qe = spx__idx_get(B->offsets, t, k + 1);
        for (int64_t q = spx__idx_get(B->offsets, t, k); q < qe; q++) {
            int64_t j = spx__idx_get(B->indices, t, q);
            if (j < lo || j >= hi ||
                (a->mask == SPX_MASK_MATRIX && w->in_mask[j] == (uint8_t)a->complement))
                continue;
            spx__value_slot prod;
            unsigned char *acc = w->val + j * (int64_t)w->vsz;
            if (apply(w, 1, prod.bytes, value_at(w, A, p), value_at(w, B, q)) ||
                (w->occupied[j] && apply(w, 0, acc, acc, prod.bytes))) {
                *bad_j = j;
                return 1;
            }
            if (!w->occupied[j]) {
                w->occupied[j] = 1;
                memcpy(acc, prod.bytes, w->vsz);
                w->cols[w->ncols++] = j;
            }
        }
    }
    qsort(w->cols, (size_t)w->ncols, sizeof *w->cols, cmp_i64);
    return 0;
}

static void clear_row(ref_acc *w, int64_t i)
{
    for (int64_t c = 0; c < w->ncols; c++)
        w->occupied[w->cols[c]] = 0;
    if (w->a->mask == SPX_MASK_MATRIX)
        mark_mask(w, i, 0);
}

/* Merge the accumulated row with accum's row i (dropping identities if
 * asked); write the entries at C[pos...] when C is given. Returns the entry
 * count, or -1 with *bad_j set when an accumulate addition overflows. */
static int64_t emit_row(ref_acc *w, int64_t i, spx_matrix *C, int64_t pos, int64_t *bad_j)
{
    const spx_spgemm_args *a = w->a;
    const spx_matrix *acc = a->accum;
    int64_t r = 0, re = 0, count = 0, c = 0;
    if (acc) {
        r = spx__idx_get(acc->offsets, acc->itype, i);
        re = spx__idx_get(acc->offsets, acc->itype, i + 1);
    }
    while (c < w->ncols || r < re) {
        int64_t jt = c < w->ncols ? w->cols[c] : INT64_MAX;
        int64_t ja = r < re ? spx__idx_get(acc->indices, acc->itype, r) : INT64_MAX;
        int64_t j = jt < ja ? jt : ja;
        const unsigned char *tv = jt == j ? w->val + j * (int64_t)w->vsz : NULL;
        const void *av = ja == j ? value_at(w, acc, r) : NULL;
        c += jt == j;
        r += ja == j;
        if (tv && a->drop_identity && spx__spgemm_is_identity(a, tv, w->identity.bytes))
            tv = NULL;
        if (!tv && !av)
            continue;
        spx__value_slot v;
        if (tv && av) {
            if (apply(w, 0, v.bytes, av, tv)) {
                *bad_j = j;
                return -1;
            }
        } else {
            memcpy(v.bytes, tv ? (const void *)tv : av, w->vsz);
        }
        if (C) {
            spx__idx_set(C->indices, C->itype, pos + count, j);
            memcpy((unsigned char *)C->values + (pos + count) * (int64_t)w->vsz, v.bytes, w->vsz);
        }
        count++;
    }
    return count;
}

/* One pass over the rows: count (C NULL) or fill C. */
static spx_status pass(spx_ctx *ctx, ref_acc *w, spx_matrix *C, int64_t *total)
{
    int64_t pos = 0, bad_j = -1;
    for (int64_t i = 0; i < w->a->A->rows; i++) {
        int bad = product_row(w, i, &bad_j);
        int64_t n = bad ? -1 : emit_row(w, i, C, pos, &bad_j);
        clear_row(w, i);
        if (n < 0)
            return spx__spgemm_overflow(ctx, w->a, i, bad_j);
        pos += n;
        if (C)
            spx__idx_set(C->offsets, C->itype, i + 1, pos);
    }
    *total = pos;
    return SPX_OK;
}

spx_status spx__ref_spgemm(spx_ctx *ctx, const spx_spgemm_args *a)
{
    ref_acc w = {.a = a, .vsz = spx_dtype_size(a->type)};
    int64_t n = a->B->cols;
    int64_t per_col = (int64_t)w.vsz + 2 + (int64_t)sizeof(int64_t);
    int64_t bytes;
    if (spx__mul_overflows(n, per_col, &bytes))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "SpGEMM accumulator for %lld columns overflows",
                         (long long)n);
    if (bytes > spx__spgemm_backend_budget(a))
        return spx__spgemm_budget_error(ctx, a, bytes, "the ref backend's dense row accumulator");
    if (a->workspace) {
        *a->workspace = bytes;
        return SPX_OK;
    }
    unsigned char *arena = NULL;
    spx_status s = spx__alloc_zero(ctx, (void **)&arena, bytes, 1, "SpGEMM row accumulator");
    if (s)
        return s;
    w.cols = (int64_t *)arena;
    w.val = arena + n * (int64_t)sizeof(int64_t);
    w.occupied = w.val + n * (int64_t)w.vsz;
    w.in_mask = w.occupied + n;
    spx__spgemm_one(a, w.one.bytes);
    spx__spgemm_identity(a, w.identity.bytes);

    spx_matrix *C = NULL;
    int64_t nnz = 0;
    if ((s = pass(ctx, &w, NULL, &nnz)) ||
        (s = spx__matrix_create(ctx, SPX_CSR, a->A->rows, n, nnz, spx__spgemm_out_itype(a, nnz),
                                a->type, &C)))
        goto done;
    spx__idx_set(C->offsets, C->itype, 0, 0);
    if ((s = pass(ctx, &w, C, &nnz)))
        goto done;
    C->checked_version = C->version;
    *a->C = C;
    C = NULL;
done:
    spx_matrix_destroy(C);
    spx__free(arena);
    return s;
}

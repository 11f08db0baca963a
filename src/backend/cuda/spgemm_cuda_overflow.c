/* Naming the entry of an overflow found on the device. The kernels only
 * record the lowest row in which an integer operator overflowed; that row is
 * computed again here, serially and in the ref backend's order (products
 * in k order under the mask, then the merge with accum's row after
 * drop_identity), from the operands as staged on the device, so that the
 * message names the same C(i, j) as the ref and cpu backends. An error path:
 * simple rather than fast. */
#include "backend/cuda/spgemm_cuda_host.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *col;
    unsigned char *val; /* NULL: all ones (or not needed) */
    int64_t len;
} host_row;

static void row_free(host_row *r)
{
    spx__free(r->col);
    spx__free(r->val);
    memset(r, 0, sizeof *r);
}

static spx_status fetch(spx_gemm *g, void *dst, const void *src, int64_t bytes)
{
    if (bytes <= 0)
        return SPX_OK;
    spx_status s = spx__cuda_download(g->ctx, dst, src, (size_t)bytes);
    return s ? s : spx__cuda_sync(g->ctx);
}

/* Row r of a staged operand (values too when `values` and it has them). */
static spx_status fetch_row(spx_gemm *g, const spx_gemm_csr *X, int64_t r, int values, host_row *out)
{
    int64_t e[2];
    spx_status s = fetch(g, e, X->ptr + r, sizeof e);
    if (s)
        return s;
    out->len = e[1] - e[0];
    if ((s = spx__alloc(g->ctx, (void **)&out->col, out->len, sizeof(int32_t), "overflow row")) ||
        (s = fetch(g, out->col, X->col + e[0], 4 * out->len)))
        return s;
    if (values && X->val &&
        ((s = spx__alloc(g->ctx, (void **)&out->val, out->len, (size_t)g->vsz, "overflow row")) ||
         (s = fetch(g, out->val, (const char *)X->val + e[0] * g->vsz, out->len * g->vsz))))
        return s;
    return SPX_OK;
}

static int has_col(const host_row *r, int64_t j)
{
    int64_t b = 0, e = r->len;
    while (b < e) {
        int64_t m = b + (e - b) / 2;
        if (r->col[m] < j)
            b = m + 1;
        else
            e = m;
    }
    return b < r->len && r->col[b] == j;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t p = *(const int64_t *)x, q = *(const int64_t *)y;
    return (p > q) - (p < q);
}

static int64_t index_of(const int64_t *sorted, int64_t n, int64_t j)
{
    int64_t b = 0, e = n;
    while (b < e) {
        int64_t m = b + (e - b) / 2;
        if (sorted[m] < j)
            b = m + 1;
        else
            e = m;
    }
    return b;
}

typedef struct {
    host_row A, B, M, acc;
    int64_t *pj;          /* the products' columns, in k order */
    unsigned char *pv;    /* their values */
    int64_t np, cap;
    int64_t *uniq;        /* distinct columns, sorted */
    unsigned char *val;   /* a value per distinct column */
    uint8_t *has;
} replay;

static void replay_free(replay *r)
{
    row_free(&r->A);
    row_free(&r->B);
    row_free(&r->M);
    row_free(&r->acc);
    spx__free(r->pj);
    spx__free(r->pv);
    spx__free(r->uniq);
    spx__free(r->val);
    spx__free(r->has);
}

static spx_status push_product(spx_gemm *g, replay *r, int64_t j, const void *v)
{
    if (r->np == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1024;
        void *pj = spx__realloc(r->pj, (size_t)cap * sizeof(int64_t));
        if (pj)
            r->pj = pj;
        void *pv = pj ? spx__realloc(r->pv, (size_t)(cap * g->vsz)) : NULL;
        if (!pv)
            return spx__fail(g->ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (overflow row)");
        r->pv = pv;
        r->cap = cap;
    }
    r->pj[r->np] = j;
    memcpy(r->pv + r->np * g->vsz, v, (size_t)g->vsz);
    r->np++;
    return SPX_OK;
}

/* The products of row i under the mask, in k order; *first_bad = the
 * position of the first one whose multiplication overflows (np if none). */
static spx_status collect(spx_gemm *g, replay *r, int64_t i, int64_t *first_bad)
{
    const spx_spgemm_args *a = g->a;
    const spx_gemm_dev *d = &g->d;
    const int64_t vsz = g->vsz;
    spx__value_slot one, prod;
    spx__spgemm_one(a, one.bytes);
    int64_t lo, hi;
    spx__spgemm_window(a, i, g->n, &lo, &hi);
    *first_bad = -1;
    spx_status s = fetch_row(g, &d->A, i, 1, &r->A);
    if (!s && d->M.ptr)
        s = fetch_row(g, &d->M, i, 0, &r->M);
    for (int64_t p = 0; !s && p < r->A.len; p++) {
        row_free(&r->B);
        if ((s = fetch_row(g, &d->B, r->A.col[p], 1, &r->B)))
            break;
        const void *av = r->A.val ? r->A.val + p * vsz : one.bytes;
        for (int64_t q = 0; !s && q < r->B.len; q++) {
            const int64_t j = r->B.col[q];
            if (j < lo || j >= hi || (d->M.ptr && has_col(&r->M, j) == (a->complement != 0)))
                continue;
            const void *bv = r->B.val ? r->B.val + q * vsz : one.bytes;
            if (spx__semiring_apply(a->kind, a->type, 1, prod.bytes, av, bv) && *first_bad < 0)
                *first_bad = r->np;
            s = push_product(g, r, j, prod.bytes);
        }
    }
    if (*first_bad < 0)
        *first_bad = r->np;
    return s;
}

spx_status spx__gemm_overflow_column(spx_gemm *g, int64_t i, int64_t *bad_j)
{
    spx_ctx *ctx = g->ctx;
    const spx_spgemm_args *a = g->a;
    const int64_t vsz = g->vsz;
    replay r;
    memset(&r, 0, sizeof r);
    int64_t first_bad = 0, nu = 0;
    spx_status s = collect(g, &r, i, &first_bad);
    if (s)
        goto done;
    /* the distinct columns, then the sums in product order up to the first
     * failing multiplication */
    if ((s = spx__alloc(ctx, (void **)&r.uniq, r.np, sizeof(int64_t), "overflow row")) ||
        (s = spx__alloc(ctx, (void **)&r.val, r.np, (size_t)vsz, "overflow row")) ||
        (s = spx__alloc_zero(ctx, (void **)&r.has, r.np, 1, "overflow row")))
        goto done;
    if (r.np)
        memcpy(r.uniq, r.pj, (size_t)r.np * sizeof(int64_t));
    qsort(r.uniq, (size_t)r.np, sizeof(int64_t), cmp_i64);
    for (int64_t t = 0; t < r.np; t++)
        if (nu == 0 || r.uniq[nu - 1] != r.uniq[t])
            r.uniq[nu++] = r.uniq[t];
    for (int64_t t = 0; t < r.np; t++) {
        const int64_t j = r.pj[t];
        if (t == first_bad) {
            *bad_j = j;
            goto done;
        }
        const int64_t x = index_of(r.uniq, nu, j);
        unsigned char *acc = r.val + x * vsz;
        if (!r.has[x]) {
            memcpy(acc, r.pv + t * vsz, (size_t)vsz);
            r.has[x] = 1;
        } else if (spx__semiring_apply(a->kind, a->type, 0, acc, acc, r.pv + t * vsz)) {
            *bad_j = j;
            goto done;
        }
    }
    /* the merge with accum's row, in column order */
    if (g->d.acc.ptr && (s = fetch_row(g, &g->d.acc, i, 1, &r.acc)))
        goto done;
    spx__value_slot ident, sum;
    spx__spgemm_identity(a, ident.bytes);
    for (int64_t x = 0, y = 0; x < nu || y < r.acc.len;) {
        const int64_t jt = x < nu ? r.uniq[x] : INT64_MAX, ja = y < r.acc.len ? r.acc.col[y] : INT64_MAX;
        const int64_t j = jt < ja ? jt : ja;
        const unsigned char *tv = jt == j ? r.val + x * vsz : NULL;
        const unsigned char *av = ja == j ? r.acc.val + y * vsz : NULL;
        x += jt == j;
        y += ja == j;
        if (tv && a->drop_identity && spx__spgemm_is_identity(a, tv, ident.bytes))
            tv = NULL;
        if (tv && av && spx__semiring_apply(a->kind, a->type, 0, sum.bytes, av, tv)) {
            *bad_j = j;
            goto done;
        }
    }
    s = spx__fail(ctx, SPX_ERR_INTERNAL,
                  "the cuda SpGEMM reported an overflow in row %lld of C, but computing the row "
                  "again finds none",
                  (long long)i);
done:
    replay_free(&r);
    return s;
}

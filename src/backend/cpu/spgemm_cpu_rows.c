/* CPU SpGEMM row kernels: Gustavson's row-by-row product. Row i of C
 * gathers A(i,k) (x) B(k,:) for the k of A(i,:) in increasing order into a
 * dense accumulator (a state byte and a value per column of C) or a hash
 * table sized for the row, whichever is smaller; the mask is applied while
 * accumulating (triangle masks, and a plain matrix mask's column span, cut
 * each row of B to the open column window by binary search). Columns are then
 * sorted and merged with accum's row.
 *
 * One body serves symbolic and numeric phases, every semiring, value type
 * and index width: it is force-inlined into one small wrapper per
 * combination, where the constant arguments fold the operator dispatch of
 * core/semiring.h and the index-width branches away. */
#include "backend/cpu/spgemm_cpu.h"

#define SPX_INLINE static inline __attribute__((always_inline))

/* Accumulator slot states. KEY: a column of the mask row, open; FORBID: a
 * column the complemented mask closes; OCC: holds a value. */
enum { ST_OCC = 1, ST_FORBID = 2, ST_KEY = 4 };

SPX_INLINE int64_t idx_at(const void *p, int wide, int64_t q)
{
    return wide ? ((const int64_t *)p)[q] : (int64_t)((const int32_t *)p)[q];
}

SPX_INLINE void idx_put(void *p, int wide, int64_t q, int64_t v)
{
    if (wide)
        ((int64_t *)p)[q] = v;
    else
        ((int32_t *)p)[q] = (int32_t)v;
}

/* First position in [b, e) of sorted indices whose value is >= v. */
SPX_INLINE int64_t lower_bound(const void *idx, int wide, int64_t b, int64_t e, int64_t v)
{
    while (b < e) {
        int64_t m = b + (e - b) / 2;
        if (idx_at(idx, wide, m) < v)
            b = m + 1;
        else
            e = m;
    }
    return b;
}

/* ---- sorting the row's columns: introsort (quicksort, heapsort past a
 * depth limit, insertion sort for short ranges) ---- */

SPX_INLINE void swap_at(void *x, int wide, int64_t i, int64_t j)
{
    int64_t t = idx_at(x, wide, i);
    idx_put(x, wide, i, idx_at(x, wide, j));
    idx_put(x, wide, j, t);
}

SPX_INLINE void insertion_sort(void *x, int wide, int64_t b, int64_t e)
{
    for (int64_t i = b + 1; i < e; i++) {
        int64_t v = idx_at(x, wide, i), j = i;
        for (; j > b && idx_at(x, wide, j - 1) > v; j--)
            idx_put(x, wide, j, idx_at(x, wide, j - 1));
        idx_put(x, wide, j, v);
    }
}

SPX_INLINE void heap_sort(void *x, int wide, int64_t b, int64_t e)
{
    int64_t n = e - b;
    for (int64_t start = n / 2 - 1, end = n; end > 1;) {
        int64_t root;
        if (start >= 0) {
            root = start--;
        } else {
            swap_at(x, wide, b, b + --end);
            root = 0;
        }
        for (int64_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && idx_at(x, wide, b + child) < idx_at(x, wide, b + child + 1))
                child++;
            if (idx_at(x, wide, b + root) >= idx_at(x, wide, b + child))
                break;
            swap_at(x, wide, b + root, b + child);
        }
    }
}

/* Columns are unique, so a Lomuto partition is safe; its branch-free form
 * avoids the mispredictions that dominate sorting short random rows. */
SPX_INLINE void sort_indices(void *x, int wide, int64_t n)
{
    struct { int64_t b, e; int depth; } stack[64];
    int sp = 0, depth = 2 * (n > 1 ? spx__msb64((uint64_t)n) + 1 : 1);
    int64_t b = 0, e = n;
    for (;;) {
        while (e - b > 16) {
            if (depth-- == 0) {
                heap_sort(x, wide, b, e);
                b = e;
                break;
            }
            /* median of x[b], x[m], x[e-1] to x[e-1], the pivot */
            int64_t m = b + (e - b) / 2;
            if (idx_at(x, wide, m) < idx_at(x, wide, b))
                swap_at(x, wide, m, b);
            if (idx_at(x, wide, e - 1) < idx_at(x, wide, b))
                swap_at(x, wide, e - 1, b);
            if (idx_at(x, wide, m) < idx_at(x, wide, e - 1))
                swap_at(x, wide, m, e - 1);
            int64_t pivot = idx_at(x, wide, e - 1), i = b;
            for (int64_t j = b; j < e - 1; j++) {
                int64_t v = idx_at(x, wide, j);
                idx_put(x, wide, j, idx_at(x, wide, i));
                idx_put(x, wide, i, v);
                i += v < pivot;
            }
            swap_at(x, wide, i, e - 1);
            /* continue with the smaller side, keep the larger for later:
             * the stack never holds more than log2(n) ranges */
            if (i - b < e - (i + 1)) {
                stack[sp].b = i + 1; stack[sp].e = e; stack[sp++].depth = depth;
                e = i;
            } else {
                stack[sp].b = b; stack[sp].e = i; stack[sp++].depth = depth;
                b = i + 1;
            }
        }
        insertion_sort(x, wide, b, e);
        if (sp == 0)
            return;
        sp--;
        b = stack[sp].b;
        e = stack[sp].e;
        depth = stack[sp].depth;
    }
}

/* ---- row setup ---- */

SPX_INLINE void row_info(const cpu_shared *sh, int64_t i, int wide, cpu_row_info *ri)
{
    const spx_spgemm_args *a = sh->a;
    const spx_matrix *A = a->A, *B = a->B, *M = a->M;
    spx__spgemm_window(a, i, sh->n, &ri->lo, &ri->hi);
    ri->mb = ri->me = 0;
    if (a->mask == SPX_MASK_MATRIX) {
        int mw = M->itype == SPX_INDEX_I64;
        ri->mb = idx_at(M->offsets, mw, i);
        ri->me = idx_at(M->offsets, mw, i + 1);
        if (!a->complement) { /* only the columns of M(i,:) are open */
            ri->lo = ri->mb < ri->me ? idx_at(M->indices, mw, ri->mb) : 0;
            ri->hi = ri->mb < ri->me ? idx_at(M->indices, mw, ri->me - 1) + 1 : 0;
        }
    }
    ri->pb = idx_at(A->offsets, wide, i);
    ri->pe = idx_at(A->offsets, wide, i + 1);
    ri->flops = 0;
    for (int64_t p = ri->pb; p < ri->pe; p++) {
        int64_t k = idx_at(A->indices, wide, p);
        ri->flops += idx_at(B->offsets, wide, k + 1) - idx_at(B->offsets, wide, k);
    }
    int64_t window = ri->hi - ri->lo, mask_nnz = ri->me - ri->mb;
    int64_t products = ri->flops < window ? ri->flops : window;
    /* a mask row longer than the products is cheaper to search than to load */
    ri->search = a->mask == SPX_MASK_MATRIX && mask_nnz > ri->flops;
    if (a->mask != SPX_MASK_MATRIX || ri->search)
        ri->need = products;
    else
        ri->need = a->complement ? mask_nnz + products : mask_nnz;
    ri->hsize = 16;
    while (ri->hsize < 2 * ri->need)
        ri->hsize <<= 1;
    ri->dense = ri->hsize > sh->n / 4;
}

void spx__cpu_row_info(const cpu_shared *sh, int64_t i, cpu_row_info *ri)
{
    if (sh->a->A->itype == SPX_INDEX_I64)
        row_info(sh, i, 1, ri);
    else
        row_info(sh, i, 0, ri);
}

int64_t spx__cpu_row_flops(const cpu_shared *sh, int64_t i)
{
    const spx_matrix *A = sh->a->A, *B = sh->a->B;
    spx_index_type t = A->itype;
    int64_t f = 0, pe = spx__idx_get(A->offsets, t, i + 1);
    for (int64_t p = spx__idx_get(A->offsets, t, i); p < pe; p++) {
        int64_t k = spx__idx_get(A->indices, t, p);
        f += spx__idx_get(B->offsets, t, k + 1) - spx__idx_get(B->offsets, t, k);
    }
    return f;
}

/* ---- the accumulator of one row ---- */

typedef struct {
    cpu_acc *w;
    int dense, wide, miss_forbidden, shift;
    uint64_t hmask;
    int64_t nt; /* occupied columns, listed in w->touched */
} row_acc;

SPX_INLINE uint64_t hash_of(int64_t j, int shift)
{
    return ((uint64_t)j * 0x9E3779B97F4A7C15ull) >> shift; /* Fibonacci hashing */
}

/* Load a mask column with state st (KEY or FORBID). */
SPX_INLINE void acc_mark(row_acc *r, int64_t j, uint8_t st)
{
    if (r->dense) {
        r->w->dstate[j] = st;
        return;
    }
    uint64_t s = hash_of(j, r->shift);
    while (idx_at(r->w->hkey, r->wide, (int64_t)s) >= 0)
        s = (s + 1) & r->hmask;
    idx_put(r->w->hkey, r->wide, (int64_t)s, j);
    r->w->hstate[s] = st;
}

/* The slot of column j, occupying it if the mask lets it in; -1 if masked
 * out. *fresh tells whether it was occupied just now. */
SPX_INLINE int64_t acc_take(row_acc *r, int64_t j, int *fresh)
{
    cpu_acc *w = r->w;
    if (r->dense) {
        uint8_t st = w->dstate[j];
        *fresh = !(st & ST_OCC);
        if (!*fresh)
            return j;
        if ((st & ST_FORBID) || (!(st & ST_KEY) && r->miss_forbidden))
            return -1;
        w->dstate[j] = st | ST_OCC;
        idx_put(w->touched, r->wide, r->nt++, j);
        return j;
    }
    for (uint64_t s = hash_of(j, r->shift);; s = (s + 1) & r->hmask) {
        int64_t key = idx_at(w->hkey, r->wide, (int64_t)s);
        if (key == j) {
            uint8_t st = w->hstate[s];
            *fresh = !(st & ST_OCC);
            if (st & ST_FORBID)
                return -1;
            if (*fresh) {
                w->hstate[s] = st | ST_OCC;
                idx_put(w->touched, r->wide, r->nt++, j);
            }
            return (int64_t)s;
        }
        if (key < 0) {
            if (r->miss_forbidden)
                return -1;
            idx_put(w->hkey, r->wide, (int64_t)s, j);
            w->hstate[s] = ST_OCC;
            idx_put(w->touched, r->wide, r->nt++, j);
            *fresh = 1;
            return (int64_t)s;
        }
    }
}

/* The slot holding column j's value, -1 if none. */
SPX_INLINE int64_t acc_find(const row_acc *r, int64_t j)
{
    const cpu_acc *w = r->w;
    if (r->dense)
        return (w->dstate[j] & ST_OCC) ? j : -1;
    for (uint64_t s = hash_of(j, r->shift);; s = (s + 1) & r->hmask) {
        int64_t key = idx_at(w->hkey, r->wide, (int64_t)s);
        if (key == j)
            return (w->hstate[s] & ST_OCC) ? (int64_t)s : -1;
        if (key < 0)
            return -1;
    }
}

/* ---- semiring operations ---- */

/* z = x (+) y (mul 0) or x (x) y (mul 1); nonzero on overflow. z may be x. */
SPX_INLINE int sr_op(const cpu_shared *sh, spx_semiring_kind kind, spx_dtype type, size_t vsz,
                     int mul, void *z, const void *x, const void *y)
{
    if (kind != SPX_SEMIRING_CUSTOM)
        return spx__semiring_apply(kind, type, mul, z, x, y);
    const spx_semiring *c = sh->a->custom;
    spx__value_slot t;
    int r = (mul ? c->mul : c->add)(t.bytes, x, y, c->user);
    memcpy(z, t.bytes, vsz);
    return r;
}

SPX_INLINE int is_identity(const cpu_shared *sh, spx_dtype type, const void *v)
{
    switch (type) {
    case SPX_F32: return *(const float *)v == sh->identity.f32;
    case SPX_F64: return *(const double *)v == sh->identity.f64;
    case SPX_I32: return *(const int32_t *)v == sh->identity.i32;
    case SPX_I64: return *(const int64_t *)v == sh->identity.i64;
    case SPX_BOOL: return *(const uint8_t *)v == sh->identity.u8;
    default: return spx__spgemm_is_identity(sh->a, v, sh->identity.bytes);
    }
}

/* ---- the row ---- */

SPX_INLINE int64_t cpu_row(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                           int64_t *bad_j, const int values, const spx_semiring_kind kind,
                           const spx_dtype type, const size_t vsz, const int wide)
{
    const spx_spgemm_args *a = sh->a;
    const spx_matrix *A = a->A, *B = a->B, *M = a->M, *acc = a->accum;
    const int mw = M && M->itype == SPX_INDEX_I64;
    cpu_row_info ri;
    row_info(sh, i, wide, &ri);
    const int active = ri.flops > 0 && ri.lo < ri.hi;
    const int marked = active && a->mask == SPX_MASK_MATRIX && !ri.search;
    row_acc r = {.w = w, .dense = ri.dense, .wide = wide, .miss_forbidden = marked && !a->complement};
    unsigned char *vals = ri.dense ? w->dval : w->hval;
    int64_t result = -1;

    if (active) {
        if (!ri.dense) {
            r.hmask = (uint64_t)ri.hsize - 1;
            r.shift = 64 - spx__msb64((uint64_t)ri.hsize);
            memset(w->hkey, 0xff, (size_t)ri.hsize * (wide ? 8 : 4)); /* all keys -1 */
            memset(w->hstate, 0, (size_t)ri.hsize);
        }
        for (int64_t p = ri.mb; marked && p < ri.me; p++)
            acc_mark(&r, idx_at(M->indices, mw, p), a->complement ? ST_FORBID : ST_KEY);
        const unsigned char *Av = A->values, *Bv = B->values;
        /* start fetching the rows of B (their offsets are cached by row_info):
         * products are bound by the latency of these random rows */
        for (int64_t p = ri.pb; p < ri.pe; p++) {
            int64_t q = idx_at(B->offsets, wide, idx_at(A->indices, wide, p));
            __builtin_prefetch((const char *)B->indices + q * (wide ? 8 : 4));
            if (values && Bv)
                __builtin_prefetch(Bv + q * vsz);
        }
        const void *annihilator =
            values && kind == SPX_SEMIRING_CUSTOM ? a->custom->mul_annihilator : NULL;
        for (int64_t p = ri.pb; p < ri.pe; p++) {
            int64_t k = idx_at(A->indices, wide, p);
            const void *ap = Av ? Av + p * vsz : sh->one.bytes;
            const int annihilates = annihilator && memcmp(ap, annihilator, vsz) == 0;
            int64_t qb = idx_at(B->offsets, wide, k), qe = idx_at(B->offsets, wide, k + 1);
            if (qb < qe && idx_at(B->indices, wide, qb) < ri.lo)
                qb = lower_bound(B->indices, wide, qb, qe, ri.lo);
            for (int64_t q = qb; q < qe; q++) {
                int64_t j = idx_at(B->indices, wide, q);
                if (j >= ri.hi)
                    break;
                if (ri.search) {
                    int64_t x = lower_bound(M->indices, mw, ri.mb, ri.me, j);
                    if ((x < ri.me && idx_at(M->indices, mw, x) == j) == a->complement)
                        continue;
                }
                int fresh;
                int64_t s = acc_take(&r, j, &fresh);
                if (s < 0 || !values)
                    continue;
                unsigned char *slot = vals + s * vsz;
                const void *bp = Bv ? Bv + q * vsz : sh->one.bytes;
                int bad = 0;
                if (annihilates && fresh) { /* the product is the annihilator: no mul call */
                    memcpy(slot, annihilator, vsz);
                } else if (annihilates) {
                    bad = sr_op(sh, kind, type, vsz, 0, slot, slot, annihilator);
                } else if (fresh) {
                    bad = sr_op(sh, kind, type, vsz, 1, slot, ap, bp);
                } else {
                    spx__value_slot t;
                    bad = sr_op(sh, kind, type, vsz, 1, t.bytes, ap, bp) ||
                          sr_op(sh, kind, type, vsz, 0, slot, slot, t.bytes);
                }
                if (bad) {
                    *bad_j = j;
                    goto done;
                }
            }
        }
        if (!values) {
            /* counting needs no order */
        } else if (ri.dense && r.nt * 8 > ri.hi - ri.lo) { /* many columns: collect in order */
            r.nt = 0;
            for (int64_t j = ri.lo; j < ri.hi; j++)
                if (w->dstate[j] & ST_OCC)
                    idx_put(w->touched, wide, r.nt++, j);
        } else {
            sort_indices(w->touched, wide, r.nt);
        }
    }

    /* merge with accum's row: count, or write C's row */
    int64_t ra = 0, re = 0, c = 0, count = 0;
    const int aw = acc && acc->itype == SPX_INDEX_I64;
    if (acc) {
        ra = idx_at(acc->offsets, aw, i);
        re = idx_at(acc->offsets, aw, i + 1);
    }
    if (!values) {
        count = r.nt;
        for (; ra < re; ra++)
            count += !active || acc_find(&r, idx_at(acc->indices, aw, ra)) < 0;
        result = count;
        goto done;
    }
    spx_matrix *C = sh->C;
    const int ow = C->itype == SPX_INDEX_I64;
    unsigned char *Cv = C->values;
    const unsigned char *accv = acc ? acc->values : NULL;
    while (c < r.nt || ra < re) {
        int64_t jt = c < r.nt ? idx_at(w->touched, wide, c) : INT64_MAX;
        int64_t ja = ra < re ? idx_at(acc->indices, aw, ra) : INT64_MAX;
        int64_t j = jt < ja ? jt : ja;
        const unsigned char *tv = jt == j ? vals + acc_find(&r, j) * vsz : NULL;
        const unsigned char *av = ja == j ? accv + ra * vsz : NULL;
        c += jt == j;
        ra += ja == j;
        if (tv && a->drop_identity && is_identity(sh, type, tv))
            tv = NULL;
        if (!tv && !av)
            continue;
        unsigned char *dst = Cv + (pos + count) * vsz;
        if (tv && av) {
            if (sr_op(sh, kind, type, vsz, 0, dst, av, tv)) {
                *bad_j = j;
                goto done;
            }
        } else {
            memcpy(dst, tv ? tv : av, vsz);
        }
        idx_put(C->indices, ow, pos + count, j);
        count++;
    }
    idx_put(C->offsets, ow, i + 1, pos + count);
    result = count;
done:
    if (active && ri.dense) { /* leave the dense states all 0 for the next row */
        for (int64_t t = 0; t < r.nt; t++)
            w->dstate[idx_at(w->touched, wide, t)] = 0;
        for (int64_t p = ri.mb; marked && p < ri.me; p++)
            w->dstate[idx_at(M->indices, mw, p)] = 0;
    }
    return result;
}

/* ---- one wrapper per (semiring, type, index width) ---- */

#define ROW_WRAPPERS(K, S, T, ADD, MUL)                                                          \
    static int64_t numeric_##K##_##S##_32(const cpu_shared *sh, cpu_acc *w, int64_t i,          \
                                          int64_t pos, int64_t *bad_j)                          \
    {                                                                                            \
        return cpu_row(sh, w, i, pos, bad_j, 1, SPX_SEMIRING_##K, SPX__DT_##S, sizeof(T), 0);   \
    }                                                                                            \
    static int64_t numeric_##K##_##S##_64(const cpu_shared *sh, cpu_acc *w, int64_t i,          \
                                          int64_t pos, int64_t *bad_j)                          \
    {                                                                                            \
        return cpu_row(sh, w, i, pos, bad_j, 1, SPX_SEMIRING_##K, SPX__DT_##S, sizeof(T), 1);   \
    }
SPX__BUILTIN_SEMIRINGS(ROW_WRAPPERS)
#undef ROW_WRAPPERS

static int64_t numeric_custom_32(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                                 int64_t *bad_j)
{
    return cpu_row(sh, w, i, pos, bad_j, 1, SPX_SEMIRING_CUSTOM, sh->a->type, sh->vsz, 0);
}

static int64_t numeric_custom_64(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                                 int64_t *bad_j)
{
    return cpu_row(sh, w, i, pos, bad_j, 1, SPX_SEMIRING_CUSTOM, sh->a->type, sh->vsz, 1);
}

static int64_t symbolic_32(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                           int64_t *bad_j)
{
    return cpu_row(sh, w, i, pos, bad_j, 0, SPX_SEMIRING_CUSTOM, SPX_PATTERN, 0, 0);
}

static int64_t symbolic_64(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                           int64_t *bad_j)
{
    return cpu_row(sh, w, i, pos, bad_j, 0, SPX_SEMIRING_CUSTOM, SPX_PATTERN, 0, 1);
}

cpu_row_fn spx__cpu_symbolic_kernel(const spx_spgemm_args *a)
{
    return a->A->itype == SPX_INDEX_I64 ? symbolic_64 : symbolic_32;
}

cpu_row_fn spx__cpu_numeric_kernel(const spx_spgemm_args *a)
{
    int wide = a->A->itype == SPX_INDEX_I64;
    if (a->kind == SPX_SEMIRING_CUSTOM)
        return wide ? numeric_custom_64 : numeric_custom_32;
#define PICK(K, S, T, ADD, MUL)                                                                  \
    if (a->kind == SPX_SEMIRING_##K && a->type == SPX__DT_##S)                                   \
        return wide ? numeric_##K##_##S##_64 : numeric_##K##_##S##_32;
    SPX__BUILTIN_SEMIRINGS(PICK)
#undef PICK
    return NULL;
}

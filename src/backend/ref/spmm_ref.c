/* Reference SpMM, the oracle: serial, every stored entry of A visited where it
 * is stored (no conversion), products accumulated in double, then
 * C = alpha * acc + beta * C element by element. Never optimised. */
#include "backend/ref/ref.h"
#include "format/dense.h"
#include "format/matrix.h"

typedef struct {
    const spx_spmm_args *a;
    double *acc; /* m x n, row-major */
} ref_spmm;

/* Add the product of the stored entry A(i, j) = v to the accumulator. */
static void add_entry(const ref_spmm *r, int64_t i, int64_t j, double v)
{
    const spx_spmm_args *a = r->a;
    if (a->op == SPX_OP_TRANSPOSE) {
        int64_t t = i;
        i = j;
        j = t;
    }
    const spx_dense *B = a->B;
    for (int64_t c = 0; c < a->n; c++)
        r->acc[i * a->n + c] += v * spx__val_get(B->data, B->dtype, spx__dense_offset(B, j, c));
}

static void visit_entries(const ref_spmm *r)
{
    const spx_matrix *A = r->a->A;
    spx_index_type t = A->itype;
    spx_dtype vt = A->dtype; /* pattern: spx__val_get gives 1 */
    switch (A->format) {
    case SPX_COO:
        for (int64_t p = 0; p < A->nnz; p++)
            add_entry(r, spx__idx_get(A->row_indices, t, p), spx__idx_get(A->indices, t, p),
                      spx__val_get(A->values, vt, p));
        break;
    case SPX_CSR:
    case SPX_CSC: {
        bool csr = A->format == SPX_CSR;
        for (int64_t s = 0; s < (csr ? A->rows : A->cols); s++)
            for (int64_t p = spx__idx_get(A->offsets, t, s); p < spx__idx_get(A->offsets, t, s + 1);
                 p++) {
                int64_t x = spx__idx_get(A->indices, t, p);
                add_entry(r, csr ? s : x, csr ? x : s, spx__val_get(A->values, vt, p));
            }
        break;
    }
    case SPX_BSR:
        for (int64_t bi = 0; bi < spx__bsr_block_rows(A); bi++)
            for (int64_t p = spx__idx_get(A->offsets, t, bi);
                 p < spx__idx_get(A->offsets, t, bi + 1); p++) {
                int64_t bj = spx__idx_get(A->indices, t, p);
                for (int64_t y = 0; y < A->br; y++)
                    for (int64_t x = 0; x < A->bc; x++) {
                        int64_t i = bi * A->br + y, j = bj * A->bc + x;
                        if (i < A->rows && j < A->cols) /* edge blocks: skip the padding */
                            add_entry(r, i, j,
                                      spx__val_get(A->values, vt, (p * A->br + y) * A->bc + x));
                    }
            }
        break;
    case SPX_SELL:
        for (int64_t s = 0; s < A->nslices; s++) {
            int64_t base = spx__idx_get(A->offsets, t, s);
            for (int64_t y = 0; y < A->sell_c; y++) {
                int64_t pos = s * A->sell_c + y;
                int64_t i = spx__idx_get(A->perm, t, pos),
                        len = spx__idx_get(A->row_lengths, t, pos);
                for (int64_t q = 0; q < len; q++) {
                    int64_t slot = base + q * A->sell_c + y;
                    add_entry(r, i, spx__idx_get(A->indices, t, slot),
                              spx__val_get(A->values, vt, slot));
                }
            }
        }
        break;
    default: break;
    }
}

spx_status spx__ref_spmm(spx_ctx *ctx, const spx_spmm_args *a)
{
    if (a->A->memory != SPX_MEM_HOST || a->B->memory != SPX_MEM_HOST ||
        a->C->memory != SPX_MEM_HOST)
        return spx__fail(
            ctx, SPX_ERR_UNSUPPORTED,
            "SpMM operands in device memory need the CUDA backend (this context uses ref)");
    ref_spmm r = {.a = a, .acc = NULL};
    int64_t mn;
    if (spx__mul_overflows(a->m, a->n, &mn))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "SpMM: C of %lld x %lld elements overflows",
                         (long long)a->m, (long long)a->n);
    if (a->alpha != 0) { /* alpha == 0: B is not read */
        spx_status s =
            spx__alloc_zero(ctx, (void **)&r.acc, mn, sizeof(double), "SpMM accumulator");
        if (s)
            return s;
        visit_entries(&r);
    }
    spx_dense *C = a->C;
    for (int64_t i = 0; i < a->m; i++)
        for (int64_t c = 0; c < a->n; c++) {
            int64_t off = spx__dense_offset(C, i, c);
            double v = 0.0;
            if (a->beta != 0) /* beta == 0: C is not read */
                v = a->beta * spx__val_get(C->data, C->dtype, off);
            if (r.acc)
                v = a->beta != 0 ? a->alpha * r.acc[i * a->n + c] + v
                                 : a->alpha * r.acc[i * a->n + c];
            spx__val_set(C->data, C->dtype, off, v);
        }
    spx__free(r.acc);
    return SPX_OK;
}

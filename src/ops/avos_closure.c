/* spx_avos_closure: the transitive closure of a pedigree DAG under the avos
 * semiring, by repeated squaring through spx_spgemm (so it runs on whatever
 * backend the context has). C_0 = A, C_{t+1} = C_t (+) (C_t (x) C_t) under
 * the upper-triangle mask, until an iteration changes nothing. Every step
 * can only lower an entry in the avos order (nonzero minimum) or add one,
 * so it terminates; squaring covers paths of length up to 2^t after t steps. */
#include <string.h>

#include "format/convert.h"

#define LL(x) ((long long)(x))
/* Far more squarings than any DAG that fits in memory needs. */
#define MAX_SQUARINGS 200

static bool same_matrix(const spx_matrix *X, const spx_matrix *Y)
{
    if (X->nnz != Y->nnz)
        return false;
    for (int64_t i = 0; i <= X->rows; i++)
        if (spx__idx_get(X->offsets, X->itype, i) != spx__idx_get(Y->offsets, Y->itype, i))
            return false;
    for (int64_t p = 0; p < X->nnz; p++)
        if (spx__idx_get(X->indices, X->itype, p) != spx__idx_get(Y->indices, Y->itype, p))
            return false;
    return X->nnz == 0 ||
           memcmp(X->values, Y->values, (size_t)X->nnz * spx_dtype_size(X->dtype)) == 0;
}

static spx_status check_upper(spx_ctx *ctx, const spx_matrix *A)
{
    for (int64_t i = 0; i < A->rows; i++) {
        int64_t b = spx__idx_get(A->offsets, A->itype, i);
        if (b == spx__idx_get(A->offsets, A->itype, i + 1))
            continue;
        int64_t j = spx__idx_get(A->indices, A->itype, b); /* the row's smallest column */
        if (j < i)
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "A(%lld, %lld) is below the diagonal: the avos closure needs an "
                             "upper triangular A (a topologically ordered DAG)",
                             LL(i), LL(j));
    }
    return SPX_OK;
}

spx_status spx_avos_closure(spx_ctx *ctx, const spx_matrix *A, spx_matrix **C, int *iterations)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!C)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "output C is NULL");
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")) || (s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    if (A->rows != A->cols)
        return spx__fail(ctx, SPX_ERR_SHAPE, "A is %lld x %lld; the avos closure needs it square",
                         LL(A->rows), LL(A->cols));
    if (A->dtype != SPX_I32 && A->dtype != SPX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "A holds %s values; the avos closure needs i32 or i64",
                         spx_dtype_name(A->dtype));
    spx_matrix *cur = NULL, *next = NULL;
    /* COO duplicates have no avos meaning: refuse them rather than sum them */
    s = A->format == SPX_COO ? spx__coo_compress(ctx, A, SPX_CSR, SPX_DUP_ERROR, &cur)
                             : spx__to_csr(ctx, A, &cur);
    if (s || (s = check_upper(ctx, cur)))
        goto done;
    spx_semiring avos = spx_semiring_builtin(SPX_SEMIRING_AVOS);
    spx_spgemm_options opts = {0};
    opts.mask.kind = SPX_MASK_UPPER;
    int it = 0;
    for (;;) {
        if (it == MAX_SQUARINGS) {
            s = spx__fail(ctx, SPX_ERR_INTERNAL, "avos closure did not converge in %d squarings",
                          it);
            goto done;
        }
        opts.accum = cur;
        if ((s = spx_spgemm(ctx, &avos, cur, cur, &opts, &next)))
            goto done;
        it++;
        bool same = same_matrix(cur, next);
        spx_matrix_destroy(cur);
        cur = next;
        next = NULL;
        if (same)
            break;
    }
    *C = cur;
    cur = NULL;
    if (iterations)
        *iterations = it;
done:
    spx_matrix_destroy(cur);
    return s;
}

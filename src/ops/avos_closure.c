/* spx_avos_closure: the transitive closure of a pedigree DAG under the avos
 * semiring, by repeated squaring. C_0 = A, C_{t+1} = C_t (+) (C_t (x) C_t)
 * under the upper-triangle mask, until an iteration changes nothing. Every
 * step can only lower an entry in the avos order (nonzero minimum) or add
 * one, so it terminates; squaring covers paths of length up to 2^t after t
 * steps.
 *
 * Host backends go through spx_spgemm and compare successive results here.
 * On the cuda backend every iterate stays in device memory: the backend
 * reports whether a step changed anything, so the only host round trips per
 * step are the ones its product needs anyway (sizes and flags). A host A is
 * uploaded once and the closure downloaded once. */
#include <string.h>

#include "format/convert.h"
#include "ops/spgemm_internal.h"

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

/* Square on the device until nothing changes; cur is device CSR, owned
 * when own_cur (it is the caller's A otherwise). */
static spx_status closure_on_device(spx_ctx *ctx, const spx_matrix *cur, int own_cur,
                                    spx_matrix **out, int *iterations)
{
    spx_matrix *owned = own_cur ? (spx_matrix *)cur : NULL;
    spx_status s = SPX_OK;
    int it = 0;
    for (;;) {
        if (it == MAX_SQUARINGS) {
            s = spx__fail(ctx, SPX_ERR_INTERNAL, "avos closure did not converge in %d squarings",
                          it);
            break;
        }
        spx_matrix *next = NULL;
        int changed = 1;
        spx_spgemm_args args = {
            .kind = SPX_SEMIRING_AVOS,
            .type = cur->dtype,
            .A = cur,
            .B = cur,
            .mask = SPX_MASK_UPPER,
            .accum = cur,
            .deterministic = 1,
            .out_memory = SPX_MEM_DEVICE,
            .changed = &changed,
            .C = &next,
        };
        if ((s = ctx->backend->spgemm(ctx, &args)))
            break;
        it++;
        spx_matrix_destroy(owned);
        owned = next;
        cur = next;
        if (!changed)
            break;
    }
    if (s) {
        spx_matrix_destroy(owned);
        return s;
    }
    *out = owned;
    *iterations = it;
    return SPX_OK;
}

spx_status spx_avos_closure(spx_ctx *ctx, const spx_matrix *A, spx_matrix **C, int *iterations)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!C)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "output C is NULL");
    spx_status s = spx__spgemm_check_input(ctx, A, "A");
    if (s)
        return s;
    if (A->rows != A->cols)
        return spx__fail(ctx, SPX_ERR_SHAPE, "A is %lld x %lld; the avos closure needs it square",
                         LL(A->rows), LL(A->cols));
    if (A->dtype != SPX_I32 && A->dtype != SPX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "A holds %s values; the avos closure needs i32 or i64",
                         spx_dtype_name(A->dtype));
    int on_device = ctx->backend->kind == SPX_BACKEND_CUDA;
    spx_matrix *host = NULL, *cur = NULL, *next = NULL;
    const spx_matrix *src = A;
    if (A->memory == SPX_MEM_DEVICE) { /* the checks below read a host copy */
        if ((s = spx_matrix_to_host(ctx, A, &host)))
            return s;
        src = host;
    }
    /* COO duplicates have no avos meaning: refuse them rather than sum them */
    s = src->format == SPX_COO ? spx__coo_compress(ctx, src, SPX_CSR, SPX_DUP_ERROR, &cur)
                               : spx__to_csr(ctx, src, &cur);
    if (s || (s = check_upper(ctx, cur)))
        goto done;
    if (on_device) {
        spx_matrix *dev = NULL, *res = NULL;
        int it = 0;
        int in_place = A->memory == SPX_MEM_DEVICE && A->format == SPX_CSR;
        if ((s = spx__spgemm_check_avos(ctx, cur, SPX_OP_NONE, "A")) ||
            (!in_place && (s = spx_matrix_to_device(ctx, cur, &dev))) ||
            (s = closure_on_device(ctx, in_place ? A : dev, !in_place, &res, &it)))
            goto done;
        if (A->memory == SPX_MEM_DEVICE) {
            *C = res;
        } else {
            s = spx_matrix_to_host(ctx, res, C);
            spx_matrix_destroy(res);
            if (s)
                goto done;
        }
        if (iterations)
            *iterations = it;
        goto done;
    }
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
    spx_matrix_destroy(host);
    return s;
}

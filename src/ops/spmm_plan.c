/* SpMM plans (analyse once, execute many times) and the one-shot call with
 * options. Argument checks are shared with spx_spmm (ops/spmm.c). */
#include "core/core.h"
#include "format/matrix.h"
#include "ops/spmm_check.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

struct spx_spmm_plan {
    const spx_backend_vtable *backend;
    spx_op op;
    const spx_matrix *A;
    uint64_t A_version;
    int64_t m, k, n;
    spx_dtype dtype;
    spx_spmm_options opts;
    void *impl; /* backend plan, NULL when the backend has none */
    char *explain;
    double build_ms;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

spx_status spx_spmm_plan_create(spx_ctx *ctx, spx_op op, const spx_matrix *A, int64_t n,
                                spx_dtype dtype, const spx_spmm_options *opts, spx_spmm_plan **out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (n < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative column count n = %lld", (long long)n);
    double t0 = now_ms();
    spx_status s = spx__spmm_check_matrix(ctx, op, A, dtype, opts);
    if (s)
        return s;
    int64_t m = op == SPX_OP_TRANSPOSE ? A->cols : A->rows, k = op == SPX_OP_TRANSPOSE ? A->rows : A->cols;
    /* shape-only operands: the backend plans from dimensions and type */
    spx_dense B = spx_dense_make(NULL, k, n, n > 0 ? n : 1, dtype, SPX_ROW_MAJOR, A->memory);
    spx_dense C = spx_dense_make(NULL, m, n, n > 0 ? n : 1, dtype, SPX_ROW_MAJOR, A->memory);
    spx_spmm_args shape = {.op = op, .alpha = 1.0, .beta = 0.0, .A = A, .B = &B, .C = &C,
                           .m = m, .k = k, .n = n};
    spx_spmm_plan *P = spx__calloc(1, sizeof *P);
    if (!P)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (plan)");
    P->backend = ctx->backend;
    P->op = op;
    P->A = A;
    P->A_version = A->version;
    P->m = m;
    P->k = k;
    P->n = n;
    P->dtype = dtype;
    P->opts = opts ? *opts : (spx_spmm_options){0};
    shape.opts = &P->opts;
    if (ctx->backend->spmm_plan_create && m > 0 && n > 0 &&
        (s = ctx->backend->spmm_plan_create(ctx, &shape, &P->impl, &P->explain))) {
        spx__free(P);
        return s;
    }
    if (!P->explain) {
        char buf[256];
        snprintf(buf, sizeof buf, "spmm plan (%s): op(A) %lld x %lld, N=%lld, %s; the %s backend runs its own kernels\n",
                 ctx->backend->name, (long long)m, (long long)k, (long long)n, spx_dtype_name(dtype),
                 ctx->backend->name);
        P->explain = spx__malloc(strlen(buf) + 1);
        if (P->explain)
            memcpy(P->explain, buf, strlen(buf) + 1);
    }
    P->build_ms = now_ms() - t0;
    *out = P;
    return SPX_OK;
}

spx_status spx_spmm_plan_execute(spx_ctx *ctx, const spx_spmm_plan *P, double alpha, const spx_dense *B,
                                 double beta, spx_dense *C)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!P)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (P->backend != ctx->backend)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "the plan was made on the %s backend, the context uses %s",
                         P->backend->name, ctx->backend->name);
    if (P->A->version != P->A_version)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "matrix A changed since the plan was made (spx_matrix_touch): make a new plan");
    spx_status s = spx__check_dense(ctx, B, "B");
    if (s || (s = spx__check_dense(ctx, C, "C")))
        return s;
    if (B->cols != P->n || C->cols != P->n)
        return spx__fail(ctx, SPX_ERR_SHAPE, "the plan is for N=%lld columns, B has %lld and C %lld",
                         (long long)P->n, (long long)B->cols, (long long)C->cols);
    if (B->dtype != P->dtype || C->dtype != P->dtype)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "the plan is for %s values, B is %s and C %s",
                         spx_dtype_name(P->dtype), spx_dtype_name(B->dtype), spx_dtype_name(C->dtype));
    spx_spmm_args a;
    if ((s = spx__spmm_prepare(ctx, P->op, alpha, P->A, B, beta, C, &P->opts, &a)))
        return s;
    if (a.m == 0 || a.n == 0)
        return SPX_OK;
    if (P->impl)
        return P->backend->spmm_plan_execute(ctx, P->impl, &a);
    return ctx->backend->spmm ? ctx->backend->spmm(ctx, &a)
                              : spx__fail(ctx, SPX_ERR_UNSUPPORTED, "spmm is not implemented on the %s backend",
                                          ctx->backend->name);
}

const char *spx_spmm_plan_explain(const spx_spmm_plan *P) { return P && P->explain ? P->explain : ""; }

double spx_spmm_plan_build_ms(const spx_spmm_plan *P) { return P ? P->build_ms : 0.0; }

void spx_spmm_plan_destroy(spx_spmm_plan *P)
{
    if (!P)
        return;
    if (P->impl && P->backend->spmm_plan_destroy)
        P->backend->spmm_plan_destroy(P->impl);
    spx__free(P->explain);
    spx__free(P);
}

spx_status spx_spmm_ex(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A, const spx_dense *B,
                       double beta, spx_dense *C, const spx_spmm_options *opts)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_spmm_args a;
    spx_status s = spx__spmm_prepare(ctx, op, alpha, A, B, beta, C, opts, &a);
    if (s || a.m == 0 || a.n == 0)
        return s;
    if (!ctx->backend->spmm)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "spmm is not implemented on the %s backend", ctx->backend->name);
    return ctx->backend->spmm(ctx, &a);
}

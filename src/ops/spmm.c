/* spx_spmm and spx_spmv: argument checks, then the context's backend.
 * Backend-neutral: nothing here reads operand memory, so device operands pass
 * through to backends that can handle them (ref and cpu reject them). */
#include "format/dense.h"
#include "format/matrix.h"
#include "ops/spmm_check.h"

#include <inttypes.h>

#define LL(x) ((long long)(x))

/* The names used in messages: the function and its dense operands (B/C or x/y). */
typedef struct {
    const char *fn, *b, *c;
} spmm_names;

static bool spmm_dtype_supported(spx_dtype t)
{
    return t == SPX_F32 || t == SPX_F64 || t == SPX_F16 || t == SPX_BF16;
}

static spx_status unsupported_dtype(spx_ctx *ctx, spmm_names nm, const char *operand, spx_dtype t)
{
    const char *why = "not a value type";
    if (spx__dtype_is_complex(t))
        why = "complex SpMM is not supported";
    else if (spx__dtype_is_int(t) || t == SPX_BOOL)
        why = "integer and bool SpMM are not supported";
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                     "%s: %s has value type %s (%s; supported: f32, f64, f16, bf16)", nm.fn,
                     operand, spx_dtype_name(t), why);
}

static const char *memory_name(spx_memory m) { return m == SPX_MEM_DEVICE ? "device" : "host"; }

/* First and one-past-last byte of a dense operand (equal when it is empty). */
static void dense_span(const spx_dense *D, uintptr_t *lo, uintptr_t *hi)
{
    int64_t inner = D->layout == SPX_ROW_MAJOR ? D->cols : D->rows;
    int64_t outer = D->layout == SPX_ROW_MAJOR ? D->rows : D->cols;
    *lo = *hi = (uintptr_t)D->data;
    if (inner > 0 && outer > 0) /* spx__check_dense has ruled out overflow */
        *hi += (uintptr_t)(((outer - 1) * D->ld + inner) * (int64_t)spx_dtype_size(D->dtype));
}

static spx_status check_memory(spx_ctx *ctx, spmm_names nm, const spx_matrix *A, const spx_dense *B,
                               const spx_dense *C)
{
    if (B->memory != A->memory || C->memory != A->memory)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: operands in different memories (A: %s, %s: %s, %s: %s); all must be "
                         "in host or all in device memory",
                         nm.fn, memory_name(A->memory), nm.b, memory_name(B->memory), nm.c,
                         memory_name(C->memory));
    uintptr_t blo, bhi, clo, chi;
    dense_span(B, &blo, &bhi);
    dense_span(C, &clo, &chi);
    if (blo < bhi && clo < chi && blo < chi && clo < bhi)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: %s (bytes %#" PRIxPTR "..%#" PRIxPTR ") overlaps %s (bytes %#" PRIxPTR
                         "..%#" PRIxPTR "); the output must not alias an input",
                         nm.fn, nm.c, clo, chi, nm.b, blo, bhi);
    return SPX_OK;
}

/* Whether dense operands of dtype can be multiplied by A. */
static spx_status check_value_types(spx_ctx *ctx, spmm_names nm, const spx_matrix *A,
                                    spx_dtype dtype)
{
    if (A->dtype != SPX_PATTERN && !spmm_dtype_supported(A->dtype))
        return unsupported_dtype(ctx, nm, "A", A->dtype);
    if (!spmm_dtype_supported(dtype))
        return unsupported_dtype(ctx, nm, nm.b, dtype);
    if (A->dtype != SPX_PATTERN && dtype != A->dtype)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "%s: %s has value type %s but A has %s (mixed types are not supported)",
                         nm.fn, nm.b, spx_dtype_name(dtype), spx_dtype_name(A->dtype));
    return SPX_OK;
}

/* The checks that involve A but not B and C: A's handle, op and the value
 * type of the dense operands. */
static spx_status spmm_check_matrix(spx_ctx *ctx, spmm_names nm, spx_op op, const spx_matrix *A,
                                    spx_dtype dtype)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s)
        return s;
    if (op != SPX_OP_NONE && op != SPX_OP_TRANSPOSE)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: invalid op %d", nm.fn, (int)op);
    return check_value_types(ctx, nm, A, dtype);
}

/* Check every argument of C = alpha * op(A) * B + beta * C and fill *out for
 * the backend. out->m == 0 or out->n == 0: nothing to do. */
static spx_status check_options(spx_ctx *ctx, spmm_names nm, const spx_spmm_options *o)
{
    if (!o)
        return SPX_OK;
    if ((int)o->alg < SPX_SPMM_AUTO || (int)o->alg >= SPX_SPMM_ALG_COUNT)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: invalid algorithm %d", nm.fn, (int)o->alg);
    if ((int)o->precision < SPX_PRECISION_EXACT || (int)o->precision > SPX_PRECISION_F16)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: invalid precision %d", nm.fn, (int)o->precision);
    if (o->k_slabs < 0 || o->k_slabs > SPX_SPMM_MAX_K_SLABS)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: k_slabs must be 0 to %d (got %lld)", nm.fn,
                         SPX_SPMM_MAX_K_SLABS, LL(o->k_slabs));
    if (o->k_slabs > 1 && o->alg != SPX_SPMM_AUTO && o->alg != SPX_SPMM_ROW_SPLIT && o->alg != SPX_SPMM_WARP_ROW &&
        o->alg != SPX_SPMM_BLOCK_ROW)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: k_slabs applies to AUTO and the row kernels (row_split, warp_row, block_row), not %s",
                         nm.fn, spx_spmm_alg_name(o->alg));
    for (int i = 0; i < 4; i++)
        if (o->bin_bounds[i] < 0 || (i > 0 && o->bin_bounds[i] && o->bin_bounds[i] < o->bin_bounds[i - 1]))
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "%s: bin bounds must be positive and increasing (bound %d is %lld)", nm.fn, i,
                             LL(o->bin_bounds[i]));
    return SPX_OK;
}

static spx_status spmm_prepare(spx_ctx *ctx, spmm_names nm, spx_op op, double alpha,
                               const spx_matrix *A, const spx_dense *B, double beta, spx_dense *C,
                               const spx_spmm_options *opts, spx_spmm_args *out)
{
    spx_status s = spx__check_dense(ctx, B, nm.b);
    if (s || (s = spx__check_dense(ctx, C, nm.c)) ||
        (s = spmm_check_matrix(ctx, nm, op, A, B->dtype)) || (s = check_options(ctx, nm, opts)))
        return s;
    int64_t m = op == SPX_OP_NONE ? A->rows : A->cols;
    int64_t k = op == SPX_OP_NONE ? A->cols : A->rows;
    int64_t n = C->cols;
    if (B->rows != k || C->rows != m || B->cols != n)
        return spx__fail(ctx, SPX_ERR_SHAPE,
                         "%s: op(A) is %lldx%lld but %s is %lldx%lld and %s is %lldx%lld (need %s "
                         "%lldx%lld and %s %lldx%lld)",
                         nm.fn, LL(m), LL(k), nm.b, LL(B->rows), LL(B->cols), nm.c, LL(C->rows),
                         LL(C->cols), nm.b, LL(k), LL(n), nm.c, LL(m), LL(n));
    if (!spmm_dtype_supported(C->dtype))
        return unsupported_dtype(ctx, nm, nm.c, C->dtype);
    if (C->dtype != B->dtype)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "%s: %s has value type %s but %s has %s (mixed types are not supported)",
                         nm.fn, nm.c, spx_dtype_name(C->dtype), nm.b, spx_dtype_name(B->dtype));
    if ((s = check_memory(ctx, nm, A, B, C)))
        return s;
    /* A device matrix cannot be read here; a backend that accepts one validates it. */
    if (A->memory == SPX_MEM_HOST && (s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    *out = (spx_spmm_args){.op = op, .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C,
                           .m = m, .k = k, .n = n, .opts = opts};
    if (k == 0)
        out->alpha = 0; /* an empty product: C = beta * C, exactly what alpha == 0 means */
    return SPX_OK;
}

static spx_status spmm(spx_ctx *ctx, spmm_names nm, spx_op op, double alpha, const spx_matrix *A,
                       const spx_dense *B, double beta, spx_dense *C)
{
    spx_spmm_args args;
    spx_status s = spmm_prepare(ctx, nm, op, alpha, A, B, beta, C, NULL, &args);
    if (s || args.m == 0 || args.n == 0)
        return s;
    if (!ctx->backend->spmm)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "%s: the %s backend has no SpMM", nm.fn,
                         ctx->backend->name);
    return ctx->backend->spmm(ctx, &args);
}

spx_status spx__spmm_prepare(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A,
                             const spx_dense *B, double beta, spx_dense *C,
                             const spx_spmm_options *opts, spx_spmm_args *out)
{
    return spmm_prepare(ctx, (spmm_names){"spx_spmm", "B", "C"}, op, alpha, A, B, beta, C, opts, out);
}

spx_status spx__spmm_check_matrix(spx_ctx *ctx, spx_op op, const spx_matrix *A, spx_dtype dtype,
                                  const spx_spmm_options *opts)
{
    spmm_names nm = {"spx_spmm_plan_create", "B", "C"};
    spx_status s = spmm_check_matrix(ctx, nm, op, A, dtype);
    if (s || (s = check_options(ctx, nm, opts)))
        return s;
    return A->memory == SPX_MEM_HOST ? spx__matrix_ensure_valid(ctx, A) : SPX_OK;
}

spx_status spx_spmm(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A, const spx_dense *B,
                    double beta, spx_dense *C)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    return spmm(ctx, (spmm_names){"spx_spmm", "B", "C"}, op, alpha, A, B, beta, C);
}

spx_status spx_spmv(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A, const spx_dense *x,
                    double beta, spx_dense *y)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (x && x->cols != 1)
        return spx__fail(ctx, SPX_ERR_SHAPE,
                         "spx_spmv: x must be a vector (k x 1) but is %lldx%lld", LL(x->rows),
                         LL(x->cols));
    if (y && y->cols != 1)
        return spx__fail(ctx, SPX_ERR_SHAPE,
                         "spx_spmv: y must be a vector (m x 1) but is %lldx%lld", LL(y->rows),
                         LL(y->cols));
    return spmm(ctx, (spmm_names){"spx_spmv", "x", "y"}, op, alpha, A, x, beta, y);
}

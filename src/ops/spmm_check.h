/* Argument checks shared by every SpMM entry point (ops/spmm.c). */
#ifndef SPX_OPS_SPMM_CHECK_H
#define SPX_OPS_SPMM_CHECK_H

#include "core/core.h"
#include "format/dense.h"

/* Check C = alpha * op(A) * B + beta * C's arguments (shapes, types, memory,
 * overlap, A's validity) and fill *out. out->m == 0 or out->n == 0 means
 * there is nothing to do. opts may be NULL. */
spx_status spx__spmm_prepare(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A,
                             const spx_dense *B, double beta, spx_dense *C,
                             const spx_spmm_options *opts, spx_spmm_args *out);

/* The parts that do not involve B and C: op, A's handle and validity, and
 * whether dense operands of `dtype` can be multiplied by A. */
spx_status spx__spmm_check_matrix(spx_ctx *ctx, spx_op op, const spx_matrix *A, spx_dtype dtype,
                                  const spx_spmm_options *opts);

#endif

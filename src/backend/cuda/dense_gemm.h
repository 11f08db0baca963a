/* The dense GEMM of the CUDA backend (the SpMM dense path): cuBLASLt, with
 * each shape's descriptors and algorithm found once per context and kept.
 * On small products the host's time to issue the calls is the product's
 * time; cublasGemmEx chose its algorithm on every call and took 1-2 us more
 * of it (docs/PERFORMANCE.md, twenty-seventh round). */
#ifndef SPX_CUDA_DENSE_GEMM_H
#define SPX_CUDA_DENSE_GEMM_H

#include "backend/cuda/cuda_common.h"

#include <stdbool.h>

/* Column-major, no transposes: C (m x n, ldc, c_type) = alpha * A (m x k, lda)
 * * B (k x n, ldb) + beta * C, A and B of ab_type. f64 multiplies in f64;
 * every other type accumulates in f32, with tf32 tensor cores when tf32 is
 * set (f32 operands), else f32 FMA for f32 operands and tensor cores for
 * f16 and bf16 ones. */
typedef struct spx_cuda_gemm {
    int64_t m, n, k;
    spx_dtype ab_type, c_type;
    bool tf32;
    double alpha, beta;
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
} spx_cuda_gemm;

spx_status spx__cuda_gemm(spx_ctx *ctx, const spx_cuda_gemm *g);
/* Create the context's cuBLASLt handle now (plans call it, so that the
 * library's start-up is part of building a plan, not of its first run). */
spx_status spx__cuda_gemm_start(spx_ctx *ctx);
/* Free a context's handle and cached algorithms (spx_cuda_state.gemm). */
void spx__cuda_gemm_release(void *cache);

#endif

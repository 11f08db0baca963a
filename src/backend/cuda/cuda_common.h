/* CUDA backend internals shared by its host C files and its .cu kernel files:
 * per-context state, the device memory pool, checked CUDA calls, transfers.
 * C-compatible (the .cu files include it inside extern "C"). */
#ifndef SPX_CUDA_COMMON_H
#define SPX_CUDA_COMMON_H

#include <cuda_runtime_api.h>

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One cached or live device allocation of the pool. */
typedef struct spx_cuda_block {
    void *ptr;
    size_t size;
    struct spx_cuda_block *next;
} spx_cuda_block;

typedef struct spx_cuda_pool {
    spx_cuda_block *live;   /* handed out */
    spx_cuda_block *cached; /* freed, kept for reuse */
    int64_t in_use, peak, cached_bytes;
} spx_cuda_pool;

/* Streams for kernels that may run side by side, ordered with the
 * context's stream through events. */
#define SPX_CUDA_SIDE_STREAMS 3
typedef struct spx_cuda_side {
    cudaStream_t stream[SPX_CUDA_SIDE_STREAMS];
    cudaEvent_t fork, join[SPX_CUDA_SIDE_STREAMS];
} spx_cuda_side;

typedef struct spx_cuda_state {
    int device;
    cudaStream_t stream;     /* the stream work is issued on */
    cudaStream_t own_stream; /* created by spx (NULL if the caller supplied one) */
    spx_device_info info;
    int cooperative;         /* the device runs cooperative launches (grid-wide barriers) */
    int64_t dense_fix_blocks; /* the most blocks of the dense path's cooperative kernel (spmm_exec.c) */
    int32_t *dense_flags;     /* its column chunks' flags, kept from call to call (dense_flags_len) */
    int64_t dense_flags_len;
    int32_t dense_epoch;      /* the value that marks a flag in the current call */
    spx_cuda_pool pool;
    void *gemm;              /* cuBLASLt handle and algorithms (dense_gemm.c), made on first use */
    spx_cuda_side side;      /* created on first use */
    int has_side;
} spx_cuda_state;

static inline spx_cuda_state *spx__cuda(spx_ctx *ctx) { return (spx_cuda_state *)ctx->backend_state; }
/* Streaming multiprocessors of the context's device (at least 1), for grid sizes. */
static inline int64_t spx__cuda_sm_count(spx_ctx *ctx)
{
    const int sms = spx__cuda(ctx)->info.sm_count;
    return sms > 0 ? sms : 1;
}

/* Turn a CUDA error into an spx status with the CUDA text; SPX_OK on success. */
spx_status spx__cuda_check(spx_ctx *ctx, cudaError_t e, const char *what);
#define SPX_CUDA_TRY(ctx, call, what)                                                     \
    do {                                                                                  \
        spx_status st__ = spx__cuda_check((ctx), (call), (what));                         \
        if (st__)                                                                         \
            return st__;                                                                  \
    } while (0)
/* Check the last kernel launch (configuration errors, and with
 * SPX_CUDA_SYNC_CHECK=1 in the environment, execution errors too). */
spx_status spx__cuda_launch_check(spx_ctx *ctx, const char *kernel);

/* Pool allocation (stream-ordered reuse on the context's single stream). */
spx_status spx__cuda_alloc(spx_ctx *ctx, void **out, size_t bytes, const char *what);
void spx__cuda_free(spx_ctx *ctx, void *p);
/* Bytes the pool counts for a request of `bytes` (its rounding). */
size_t spx__cuda_alloc_size(size_t bytes);
void spx__cuda_pool_release(spx_cuda_pool *pool); /* frees every cached block */

/* Long-lived device arrays not tied to a context (device copies of matrices,
 * plans): plain cudaMalloc / cudaFree. */
spx_status spx__cuda_malloc_persistent(spx_ctx *ctx, void **out, size_t bytes, const char *what);
void spx__cuda_free_persistent(void *p);

/* The arrays of a device result matrix (arrays[i] gets bytes[i]; 0 bytes:
 * NULL), carved from one block (C->block): from the device's result pool
 * where it has memory pools, so that a freed result's memory serves the
 * next one without cudaMalloc, else cudaMalloc. Sets C->release_array to
 * match; on failure C holds nothing. */
spx_status spx__cuda_result_alloc(spx_ctx *ctx, spx_matrix *C, void **arrays[], const size_t bytes[],
                                  int n, const char *what);

/* The context's side streams (created on the first call). */
spx_status spx__cuda_side_streams(spx_ctx *ctx, const spx_cuda_side **out);

spx_status spx__cuda_upload(spx_ctx *ctx, void *dst, const void *src, size_t bytes);
spx_status spx__cuda_download(spx_ctx *ctx, void *dst, const void *src, size_t bytes);
spx_status spx__cuda_sync(spx_ctx *ctx);

/* Host copy of a device matrix (synchronous). */
spx_status spx__cuda_matrix_to_host(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);

#ifdef __cplusplus
}
#endif
#endif

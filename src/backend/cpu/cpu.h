/* Kernels of the CPU (OpenMP) backend, one file per operation. */
#ifndef SPX_BACKEND_CPU_H
#define SPX_BACKEND_CPU_H

#include "core/core.h"

/* Threads to use: ctx->num_threads, or the OpenMP default when it is 0. */
int spx__cpu_threads(const spx_ctx *ctx);

spx_status spx__cpu_spmm(spx_ctx *ctx, const spx_spmm_args *args);

#endif

/* Kernels of the reference backend (one file per operation). */
#ifndef SPX_BACKEND_REF_H
#define SPX_BACKEND_REF_H

#include "core/core.h"

spx_status spx__ref_spmm(spx_ctx *ctx, const spx_spmm_args *args);

#endif

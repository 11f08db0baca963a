/* Streams, synchronisation, device facts, device memory statistics and device
 * copies of matrices: forwarded to the backend, neutral answers on host-only
 * backends. */
#include "core/core.h"
#include "format/matrix.h"

#include <string.h>

void *spx_ctx_stream(const spx_ctx *ctx)
{
    return ctx && ctx->backend->stream ? ctx->backend->stream((spx_ctx *)ctx) : NULL;
}

spx_status spx_ctx_set_stream(spx_ctx *ctx, void *stream)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!ctx->backend->set_stream)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "the %s backend has no streams", ctx->backend->name);
    return ctx->backend->set_stream(ctx, stream);
}

spx_status spx_ctx_synchronize(spx_ctx *ctx)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    return ctx->backend->synchronize ? ctx->backend->synchronize(ctx) : SPX_OK;
}

spx_status spx_ctx_device_info(spx_ctx *ctx, spx_device_info *out)
{
    if (!ctx || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (!ctx->backend->device_info) {
        out->device = -1;
        return SPX_OK;
    }
    return ctx->backend->device_info(ctx, out);
}

spx_status spx_ctx_memory_stats(spx_ctx *ctx, spx_memory_stats *out)
{
    if (!ctx || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    return ctx->backend->memory_stats ? ctx->backend->memory_stats(ctx, out, 0) : SPX_OK;
}

void spx_ctx_reset_peak_memory(spx_ctx *ctx)
{
    if (ctx && ctx->backend->memory_stats)
        ctx->backend->memory_stats(ctx, NULL, 1);
}

spx_status spx_matrix_to_device(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s)
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (!ctx->backend->matrix_to_device)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "the %s backend has no device memory (use the cuda backend)",
                         ctx->backend->name);
    return ctx->backend->matrix_to_device(ctx, A, out);
}

spx_status spx_matrix_to_host(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s)
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (A->memory == SPX_MEM_HOST)
        return spx_matrix_copy(ctx, A, out);
#ifdef SPX_HAVE_CUDA
    /* a device matrix can be brought back whatever backend the context uses */
    return spx__backend_cuda.matrix_to_host(ctx, A, out);
#else
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "device matrix in a build without CUDA");
#endif
}

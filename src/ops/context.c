/* Contexts and backend selection: the one place that knows every backend. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

int spx__stderr_is_tty(void);

static const spx_backend_vtable *backend_table(spx_backend b)
{
    switch (b) {
    case SPX_BACKEND_REF: return &spx__backend_ref;
    case SPX_BACKEND_CPU: return &spx__backend_cpu;
#ifdef SPX_HAVE_CUDA
    case SPX_BACKEND_CUDA: return &spx__backend_cuda;
#endif
    default: return NULL;
    }
}

int spx_backend_available(spx_backend b)
{
    if (b == SPX_BACKEND_AUTO)
        return 1;
    const spx_backend_vtable *t = backend_table(b);
    return t && (!t->available || t->available());
}

spx_status spx_ctx_set_backend(spx_ctx *ctx, spx_backend b)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (b == SPX_BACKEND_AUTO)
        b = spx_backend_available(SPX_BACKEND_CUDA) ? SPX_BACKEND_CUDA : SPX_BACKEND_CPU;
    if ((int)b < SPX_BACKEND_AUTO || (int)b > SPX_BACKEND_CUDA)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid backend %d", (int)b);
    const spx_backend_vtable *t = backend_table(b);
    if (!t)
        return spx__fail(ctx, SPX_ERR_NO_DEVICE,
                         "backend '%s' is not built into this copy of spx (configure with CUDA)",
                         spx_backend_name(b));
    if (t->available && !t->available())
        return spx__fail(ctx, SPX_ERR_NO_DEVICE, "backend '%s' has no usable device",
                         spx_backend_name(b));
    if (t == ctx->backend)
        return SPX_OK;
    void *state = NULL;
    if (t->init) {
        spx_status s = t->init(ctx, &state);
        if (s)
            return s;
    }
    if (ctx->backend && ctx->backend->fini)
        ctx->backend->fini(ctx->backend_state);
    ctx->backend = t;
    ctx->backend_state = state;
    spx__log(ctx, SPX_LOG_INFO, "backend: %s", t->name);
    return SPX_OK;
}

spx_backend spx_ctx_backend(const spx_ctx *ctx)
{
    return ctx && ctx->backend ? ctx->backend->kind : SPX_BACKEND_AUTO;
}

spx_status spx_ctx_create(spx_ctx **out)
{
    if (!out)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_ctx *ctx = spx__calloc(1, sizeof *ctx);
    if (!ctx)
        return SPX_ERR_OUT_OF_MEMORY;
    ctx->log_level = SPX_LOG_QUIET;
    ctx->validate = 1;
    ctx->progress = spx__stderr_is_tty();
    const char *lvl = getenv("SPX_LOG_LEVEL");
    if (lvl && *lvl >= '0' && *lvl <= '4' && lvl[1] == '\0')
        ctx->log_level = (spx_log_level)(*lvl - '0');
    spx_backend want = SPX_BACKEND_AUTO;
    const char *env = getenv("SPX_BACKEND");
    if (env && *env && spx_backend_from_name(env, &want) != SPX_OK)
        spx__log(ctx, SPX_LOG_WARN, "ignoring unknown SPX_BACKEND '%s'", env);
    spx_status s = spx_ctx_set_backend(ctx, want);
    if (s && want != SPX_BACKEND_AUTO) {
        spx__log(ctx, SPX_LOG_WARN, "SPX_BACKEND=%s unavailable (%s); using auto", env,
                 ctx->last_error);
        s = spx_ctx_set_backend(ctx, SPX_BACKEND_AUTO);
    }
    if (s) {
        spx_status r = s;
        spx_ctx_destroy(ctx);
        return r;
    }
    spx_clear_error(ctx);
    *out = ctx;
    return SPX_OK;
}

void spx_ctx_destroy(spx_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->backend && ctx->backend->fini)
        ctx->backend->fini(ctx->backend_state);
    spx__free(ctx);
}

void spx_ctx_set_log_level(spx_ctx *ctx, spx_log_level level)
{
    if (ctx && level >= SPX_LOG_QUIET && level <= SPX_LOG_DEBUG)
        ctx->log_level = level;
}

void spx_ctx_set_num_threads(spx_ctx *ctx, int n)
{
    if (ctx && n >= 0)
        ctx->num_threads = n;
}

void spx_ctx_set_deterministic(spx_ctx *ctx, int on)
{
    if (ctx)
        ctx->deterministic = on != 0;
}

void spx_ctx_set_validation(spx_ctx *ctx, int on)
{
    if (ctx)
        ctx->validate = on != 0;
}

void spx_ctx_set_progress(spx_ctx *ctx, int on)
{
    if (ctx)
        ctx->progress = on != 0;
}

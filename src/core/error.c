/* Status names, per-context error messages, logging and progress. */
#include "core/core.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *spx_status_name(spx_status s)
{
    switch (s) {
    case SPX_OK: return "SPX_OK";
    case SPX_ERR_INVALID_ARGUMENT: return "SPX_ERR_INVALID_ARGUMENT";
    case SPX_ERR_OUT_OF_MEMORY: return "SPX_ERR_OUT_OF_MEMORY";
    case SPX_ERR_IO: return "SPX_ERR_IO";
    case SPX_ERR_PARSE: return "SPX_ERR_PARSE";
    case SPX_ERR_INVALID_MATRIX: return "SPX_ERR_INVALID_MATRIX";
    case SPX_ERR_SHAPE: return "SPX_ERR_SHAPE";
    case SPX_ERR_UNSUPPORTED: return "SPX_ERR_UNSUPPORTED";
    case SPX_ERR_OVERFLOW: return "SPX_ERR_OVERFLOW";
    case SPX_ERR_BACKEND: return "SPX_ERR_BACKEND";
    case SPX_ERR_NO_DEVICE: return "SPX_ERR_NO_DEVICE";
    case SPX_ERR_CORRUPT: return "SPX_ERR_CORRUPT";
    case SPX_ERR_INTERNAL: return "SPX_ERR_INTERNAL";
    }
    return "SPX_ERR_UNKNOWN";
}

spx_status spx__fail(spx_ctx *ctx, spx_status s, const char *fmt, ...)
{
    if (!ctx)
        return s;
    ctx->last_status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
    va_end(ap);
    spx__log(ctx, SPX_LOG_DEBUG, "%s: %s", spx_status_name(s), ctx->last_error);
    return s;
}

void spx__error_prefix(spx_ctx *ctx, const char *fmt, ...)
{
    if (!ctx)
        return;
    char prefix[SPX_ERROR_MSG_MAX], old[SPX_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, ctx->last_error, sizeof old);
    size_t n = strlen(prefix);
    if (n + 2 >= sizeof ctx->last_error)
        n = sizeof ctx->last_error - 3;
    memcpy(ctx->last_error, prefix, n);
    memcpy(ctx->last_error + n, ": ", 2);
    size_t room = sizeof ctx->last_error - n - 3;
    size_t m = strlen(old);
    if (m > room)
        m = room;
    memcpy(ctx->last_error + n + 2, old, m);
    ctx->last_error[n + 2 + m] = '\0';
}

const char *spx_last_error(const spx_ctx *ctx) { return ctx ? ctx->last_error : ""; }
spx_status spx_last_status(const spx_ctx *ctx) { return ctx ? ctx->last_status : SPX_OK; }

void spx_clear_error(spx_ctx *ctx)
{
    if (!ctx)
        return;
    ctx->last_status = SPX_OK;
    ctx->last_error[0] = '\0';
}

void spx__log(const spx_ctx *ctx, spx_log_level level, const char *fmt, ...)
{
    if (!ctx || level > ctx->log_level)
        return;
    static const char *names[] = {"", "error", "warn", "info", "debug"};
    fprintf(stderr, "spx %s: ", names[level]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void spx__progress(const spx_ctx *ctx, const char *what, int64_t done, int64_t total)
{
    if (!ctx || !ctx->progress || total <= 0)
        return;
    int pct = (int)(100.0 * (double)done / (double)total);
    fprintf(stderr, "\r%s: %3d%%", what, pct > 100 ? 100 : pct);
    if (done >= total)
        fputc('\n', stderr);
    fflush(stderr);
}

int spx__stderr_is_tty(void);
int spx__stderr_is_tty(void) { return isatty(fileno(stderr)); }

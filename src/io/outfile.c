/* Output files written atomically: the bytes go to a temporary file beside
 * the destination, which is renamed over it only when everything has been
 * written, so a failed write never leaves a partial file. */
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define OUT_BUFFER (1u << 20)

static spx_status io_error(spx_ctx *ctx, spx__outfile *o, const char *what, int err)
{
    return spx__fail(ctx, SPX_ERR_IO, "cannot %s '%s': %s", what, o->path, strerror(err));
}

spx_status spx__out_open(spx_ctx *ctx, const char *path, spx__outfile *o)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    size_t n = strlen(path) + 40;
    spx_status s = spx__alloc(ctx, (void **)&o->tmp_path, (int64_t)n, 1, "temporary file name");
    if (!s)
        s = spx__alloc(ctx, (void **)&o->buf, OUT_BUFFER, 1, "write buffer");
    if (s) {
        spx__out_abort(o);
        return s;
    }
    o->cap = OUT_BUFFER;
    /* O_EXCL on a fresh name; the mode is filtered by the umask like any new file */
    static atomic_uint counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(o->tmp_path, n, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
        o->fd = open(o->tmp_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (o->fd >= 0 || errno != EEXIST)
            break;
    }
    if (o->fd < 0) {
        int err = errno;
        spx__free(o->tmp_path);
        o->tmp_path = NULL;
        s = io_error(ctx, o, "create", err);
        spx__out_abort(o);
        return s;
    }
    return SPX_OK;
}

static spx_status flush(spx_ctx *ctx, spx__outfile *o)
{
    size_t done = 0;
    while (done < o->len) {
        ssize_t w = write(o->fd, o->buf + done, o->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return io_error(ctx, o, "write", w < 0 ? errno : EIO);
        done += (size_t)w;
    }
    o->len = 0;
    return SPX_OK;
}

spx_status spx__out_reserve(spx_ctx *ctx, spx__outfile *o, size_t n, char **where)
{
    if (o->cap - o->len < n) {
        spx_status s = flush(ctx, o);
        if (s)
            return s;
    }
    *where = o->buf + o->len;
    return SPX_OK;
}

spx_status spx__out_write(spx_ctx *ctx, spx__outfile *o, const void *p, size_t n)
{
    const char *src = p;
    if (o->hash)
        spx__xxh64_update(o->hash, p, n);
    while (n > 0) {
        if (o->len == o->cap) {
            spx_status s = flush(ctx, o);
            if (s)
                return s;
        }
        size_t take = o->cap - o->len < n ? o->cap - o->len : n;
        memcpy(o->buf + o->len, src, take);
        o->len += take;
        src += take;
        n -= take;
    }
    return SPX_OK;
}

spx_status spx__out_commit(spx_ctx *ctx, spx__outfile *o)
{
    spx_status s = flush(ctx, o);
    if (!s) {
        int fd = o->fd;
        o->fd = -1;
        if (close(fd) != 0)
            s = io_error(ctx, o, "write", errno);
    }
    if (!s && rename(o->tmp_path, o->path) != 0)
        s = io_error(ctx, o, "rename the temporary file onto", errno);
    if (!s) {
        spx__free(o->tmp_path);
        o->tmp_path = NULL;
    }
    spx__out_abort(o);
    return s;
}

void spx__out_abort(spx__outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp_path) {
        unlink(o->tmp_path);
        spx__free(o->tmp_path);
        o->tmp_path = NULL;
    }
    spx__free(o->buf);
    o->buf = NULL;
}

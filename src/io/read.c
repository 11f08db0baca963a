/* spx_matrix_read, spx_matrix_read_buffer and spx_matrix_write: option
 * checks and the choice of format, by extension or else by content. */
#include "io/io.h"

#include <string.h>
#include <strings.h>

const char spx__spx_magic[8] = {'S', 'P', 'X', 'M', 'A', 'T', '\0', '\1'};

typedef enum { KIND_UNKNOWN, KIND_MTX, KIND_SMTX, KIND_SPX } file_kind;

spx_status spx__read_options(spx_ctx *ctx, const spx_read_options *opts, spx_read_options *out)
{
    spx_read_options o = opts ? *opts : (spx_read_options){0};
    if ((int)o.format < SPX_FORMAT_DEFAULT || (int)o.format > SPX_SELL)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid format %d in read options", (int)o.format);
    if ((int)o.dtype < SPX_DTYPE_DEFAULT || (int)o.dtype > SPX_PATTERN)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid value type %d in read options", (int)o.dtype);
    if ((int)o.index_type < SPX_INDEX_DEFAULT || (int)o.index_type > SPX_INDEX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid index type %d in read options",
                         (int)o.index_type);
    if ((int)o.dup < SPX_DUP_SUM || (int)o.dup > SPX_DUP_ERROR)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid duplicate policy %d in read options",
                         (int)o.dup);
    *out = o;
    return SPX_OK;
}

static file_kind kind_of_content(const spx__input *in)
{
    if (in->size >= 8 && memcmp(in->data, spx__spx_magic, 8) == 0)
        return KIND_SPX;
    if (in->size >= 14 && strncasecmp(in->data, "%%MatrixMarket", 14) == 0)
        return KIND_MTX;
    return KIND_SMTX;
}

static spx_status read_kind(spx_ctx *ctx, const spx__input *in, file_kind kind,
                            const spx_read_options *opts, spx_matrix **out)
{
    if (kind == KIND_UNKNOWN) {
        if (in->size >= 2 && (unsigned char)in->data[0] == 0x1f && (unsigned char)in->data[1] == 0x8b)
            return spx__fail(ctx, SPX_ERR_PARSE,
                             "%s: gzip-compressed data; decompress it first (gunzip)", in->name);
        kind = kind_of_content(in);
    }
    switch (kind) {
    case KIND_MTX: return spx__mtx_read(ctx, in, opts, out);
    case KIND_SPX: return spx__spx_read(ctx, in, opts, out);
    default: return spx__smtx_read(ctx, in, opts, out);
    }
}

spx_status spx_matrix_read(spx_ctx *ctx, const char *path, const spx_read_options *opts,
                           spx_matrix **out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!path || !out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s is NULL", path ? "out" : "path");
    spx_read_options o;
    spx_status s = spx__read_options(ctx, opts, &o);
    if (s)
        return s;
    file_kind kind = spx__has_extension(path, ".mtx")    ? KIND_MTX
                     : spx__has_extension(path, ".smtx") ? KIND_SMTX
                     : spx__has_extension(path, ".spx")  ? KIND_SPX
                                                         : KIND_UNKNOWN;
    char *data = NULL;
    size_t size = 0;
    if ((s = spx__file_load(ctx, path, &data, &size)))
        return s;
    spx__input in = {data, size, path};
    s = read_kind(ctx, &in, kind, &o, out);
    spx__free(data);
    return s;
}

spx_status spx_matrix_read_buffer(spx_ctx *ctx, const void *data, size_t size, const char *kind,
                                  const char *name, const spx_read_options *opts, spx_matrix **out)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if (!data && size > 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "data is NULL but size is %zu", size);
    file_kind k = KIND_UNKNOWN;
    if (kind && strcasecmp(kind, "mtx") == 0)
        k = KIND_MTX;
    else if (kind && strcasecmp(kind, "smtx") == 0)
        k = KIND_SMTX;
    else if (kind && strcasecmp(kind, "spx") == 0)
        k = KIND_SPX;
    else if (kind)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "unknown kind '%s' (expected mtx, smtx or spx, or NULL to detect)", kind);
    spx_read_options o;
    spx_status s = spx__read_options(ctx, opts, &o);
    if (s)
        return s;
    spx__input in = {data ? data : "", size, name ? name : "<buffer>"};
    return read_kind(ctx, &in, k, &o, out);
}

spx_status spx_matrix_write(spx_ctx *ctx, const spx_matrix *A, const char *path)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!path)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "path is NULL");
    if ((s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    if (spx__has_extension(path, ".mtx"))
        return spx__mtx_write(ctx, A, path);
    if (spx__has_extension(path, ".spx"))
        return spx__spx_write(ctx, A, path);
    return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                     "cannot tell the file format of '%s' from its extension (use .mtx or .spx)", path);
}

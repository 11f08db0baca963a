/* Names and sizes of the public enums. */
#include "core/core.h"

#include <strings.h>

size_t spx_dtype_size(spx_dtype t)
{
    switch (t) {
    case SPX_F32: return 4;
    case SPX_F64: return 8;
    case SPX_F16: return 2;
    case SPX_BF16: return 2;
    case SPX_I32: return 4;
    case SPX_I64: return 8;
    case SPX_BOOL: return 1;
    case SPX_C64: return 8;
    case SPX_C128: return 16;
    default: return 0;
    }
}

static const char *const dtype_names[] = {"default", "f32", "f64", "f16", "bf16", "i32",
                                          "i64", "bool", "c64", "c128", "pattern"};
static const char *const format_names[] = {"default", "coo", "csr", "csc", "bsr", "sell"};
static const char *const backend_names[] = {"auto", "ref", "cpu", "cuda"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *spx_dtype_name(spx_dtype t)
{
    return (int)t >= 0 && (int)t < COUNT(dtype_names) ? dtype_names[t] : "invalid";
}

const char *spx_format_name(spx_format f)
{
    return (int)f >= 0 && (int)f < COUNT(format_names) ? format_names[f] : "invalid";
}

const char *spx_backend_name(spx_backend b)
{
    return (int)b >= 0 && (int)b < COUNT(backend_names) ? backend_names[b] : "invalid";
}

static int lookup(const char *name, const char *const *names, int n)
{
    if (!name)
        return -1;
    for (int i = 1; i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

spx_status spx_dtype_from_name(const char *name, spx_dtype *out)
{
    int i = lookup(name, dtype_names, COUNT(dtype_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_dtype)i;
    return SPX_OK;
}

spx_status spx_format_from_name(const char *name, spx_format *out)
{
    int i = lookup(name, format_names, COUNT(format_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_format)i;
    return SPX_OK;
}

spx_status spx_backend_from_name(const char *name, spx_backend *out)
{
    if (name && out && strcasecmp(name, "auto") == 0) {
        *out = SPX_BACKEND_AUTO;
        return SPX_OK;
    }
    int i = lookup(name, backend_names, COUNT(backend_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_backend)i;
    return SPX_OK;
}

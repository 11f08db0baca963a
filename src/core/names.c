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
static const char *const alg_names[] = {"auto", "row_split", "warp_row", "block_row", "merge_path",
                                        "sell", "bsr", "outer", "gather_tc", "tiled", "dense", "band",
                                        "row_batches"};
_Static_assert(sizeof alg_names / sizeof alg_names[0] == SPX_SPMM_ALG_COUNT, "a name for every SpMM algorithm");
static const char *const precision_names[] = {"exact", "tf32", "bf16", "f16"};

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

static int lookup_all(const char *name, const char *const *names, int n);

spx_status spx_backend_from_name(const char *name, spx_backend *out)
{
    int i = lookup_all(name, backend_names, COUNT(backend_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_backend)i;
    return SPX_OK;
}

const char *spx_spmm_alg_name(spx_spmm_alg a)
{
    return (int)a >= 0 && (int)a < COUNT(alg_names) ? alg_names[a] : "invalid";
}

const char *spx_precision_name(spx_precision p)
{
    return (int)p >= 0 && (int)p < COUNT(precision_names) ? precision_names[p] : "invalid";
}

/* Names where index 0 is a real value, not a default. */
static int lookup_all(const char *name, const char *const *names, int n)
{
    for (int i = 0; name && i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

spx_status spx_spmm_alg_from_name(const char *name, spx_spmm_alg *out)
{
    int i = lookup_all(name, alg_names, COUNT(alg_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_spmm_alg)i;
    return SPX_OK;
}

spx_status spx_precision_from_name(const char *name, spx_precision *out)
{
    int i = lookup_all(name, precision_names, COUNT(precision_names));
    if (i < 0 || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    *out = (spx_precision)i;
    return SPX_OK;
}

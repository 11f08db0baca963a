/* Host helpers shared by the SpGEMM kernels of every backend: the column
 * window a mask leaves to a row, the value 1 and the add identity as bytes,
 * the output index type, and the overflow message. */
#ifndef SPX_BACKEND_SPGEMM_COMMON_H
#define SPX_BACKEND_SPGEMM_COMMON_H

#include <string.h>

#include "core/semiring.h"
#include "format/matrix.h"

spx_status spx__ref_spgemm(spx_ctx *ctx, const spx_spgemm_args *args);
spx_status spx__cpu_spgemm(spx_ctx *ctx, const spx_spgemm_args *args);

/* Scratch for one value of any type a semiring can run over (c128 is the
 * largest), aligned for every one of them. */
typedef union {
    unsigned char bytes[16];
    float f32;
    double f64;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
} spx__value_slot;

/* Columns [*lo, *hi) of row i that the triangle masks (or a complemented
 * empty mask) leave open; the whole row [0, n) otherwise. */
static inline void spx__spgemm_window(const spx_spgemm_args *a, int64_t i, int64_t n,
                                      int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = n;
    switch (a->mask) {
    case SPX_MASK_NONE: h = a->complement ? 0 : n; break;
    case SPX_MASK_UPPER: l = i; break;
    case SPX_MASK_STRICT_UPPER: l = i + 1; break;
    case SPX_MASK_LOWER: h = i + 1; break;
    case SPX_MASK_STRICT_LOWER: h = i; break;
    default: break;
    }
    if (h > n)
        h = n;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* The value 1 of the semiring's type (what a pattern operand contributes). */
static inline void spx__spgemm_one(const spx_spgemm_args *a, void *out)
{
    spx__val_set(out, a->type, 0, 1.0);
}

/* The add identity as bytes (drop_identity compares against it). */
static inline void spx__spgemm_identity(const spx_spgemm_args *a, void *out)
{
    if (a->kind == SPX_SEMIRING_CUSTOM)
        memcpy(out, a->custom->add_identity, spx_dtype_size(a->type));
    else
        spx__semiring_identity(a->kind, a->type, out);
}

/* Nonzero if value v equals the add identity: by value for floating-point
 * types (so -0 equals 0 and NaN equals nothing), bytewise otherwise. */
static inline int spx__spgemm_is_identity(const spx_spgemm_args *a, const void *v,
                                          const void *identity)
{
    switch (a->type) {
    case SPX_C64:
        return ((const float *)v)[1] == ((const float *)identity)[1] &&
               ((const float *)v)[0] == ((const float *)identity)[0];
    case SPX_C128:
        return ((const double *)v)[1] == ((const double *)identity)[1] &&
               ((const double *)v)[0] == ((const double *)identity)[0];
    case SPX_F32: case SPX_F64: case SPX_F16: case SPX_BF16:
        return spx__val_get(v, a->type, 0) == spx__val_get(identity, a->type, 0);
    default:
        return memcmp(v, identity, spx_dtype_size(a->type)) == 0;
    }
}

/* int32 indices when every input uses them and the nnz fits, else int64. */
static inline spx_index_type spx__spgemm_out_itype(const spx_spgemm_args *a, int64_t nnz)
{
    bool wide = a->A->itype == SPX_INDEX_I64 || a->B->itype == SPX_INDEX_I64 ||
                (a->accum && a->accum->itype == SPX_INDEX_I64) || nnz > INT32_MAX;
    return wide ? SPX_INDEX_I64 : SPX_INDEX_I32;
}

/* The error for an operator that reported overflow while computing C(i, j). */
static inline spx_status spx__spgemm_overflow(spx_ctx *ctx, const spx_spgemm_args *a, int64_t i,
                                              int64_t j)
{
    if (a->kind == SPX_SEMIRING_CUSTOM)
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "custom semiring operator over %s reported failure computing C(%lld, %lld)",
                         spx_dtype_name(a->type), (long long)i, (long long)j);
    return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s over %s overflows computing C(%lld, %lld)",
                     spx_semiring_name(a->kind), spx_dtype_name(a->type), (long long)i,
                     (long long)j);
}

/* Bytes of the memory budget left to the backend (INT64_MAX when unlimited). */
static inline int64_t spx__spgemm_backend_budget(const spx_spgemm_args *a)
{
    return a->memory_budget ? a->memory_budget - a->operand_bytes : INT64_MAX;
}

/* The error for a memory_budget below the backend_minimum bytes the backend
 * needs at least (what says for what). */
static inline spx_status spx__spgemm_budget_error(spx_ctx *ctx, const spx_spgemm_args *a,
                                                  int64_t backend_minimum, const char *what)
{
    return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY,
                     "memory_budget of %lld bytes is below the %lld bytes of working memory this "
                     "product needs at least (%lld for converted operands, %lld for %s)",
                     (long long)a->memory_budget, (long long)(a->operand_bytes + backend_minimum),
                     (long long)a->operand_bytes, (long long)backend_minimum, what);
}

#endif

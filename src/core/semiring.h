/* The arithmetic of the built-in semirings, in one place for every backend.
 *
 * Plain C with no host-only dependencies: a .cu file can include it and gets
 * __host__ __device__ functions. Definitions and rationale: docs/SEMIRINGS.md.
 *
 * Every operator has the shape `int op(T *z, T x, T y)`: it stores x op y in
 * *z and returns nonzero when the result does not fit T (integer types only;
 * *z is then unspecified). Integer arithmetic is checked rather than wrapped,
 * so an overflow is reported (SPX_ERR_OVERFLOW) instead of giving a wrong
 * value. Float arithmetic is plain IEEE in the value type. */
#ifndef SPX_CORE_SEMIRING_H
#define SPX_CORE_SEMIRING_H

#include <math.h>
#include <stdint.h>

#include "spx.h"

#ifdef __CUDACC__
#define SPX_HD static __host__ __device__ __forceinline__
#else
#define SPX_HD static inline
#endif

/* ---- checked integer arithmetic ---- */

SPX_HD int spx__i32_plus(int32_t *z, int32_t x, int32_t y)
{
    int64_t r = (int64_t)x + y;
    if (r < INT32_MIN || r > INT32_MAX)
        return 1;
    *z = (int32_t)r;
    return 0;
}

SPX_HD int spx__i32_times(int32_t *z, int32_t x, int32_t y)
{
    int64_t r = (int64_t)x * y;
    if (r < INT32_MIN || r > INT32_MAX)
        return 1;
    *z = (int32_t)r;
    return 0;
}

/* Portable 64-bit versions (no compiler builtins); the host uses the builtins
 * below, and the tests check that both agree. */
SPX_HD int spx__i64_plus_portable(int64_t *z, int64_t x, int64_t y)
{
    if ((y > 0 && x > INT64_MAX - y) || (y < 0 && x < INT64_MIN - y))
        return 1;
    *z = x + y;
    return 0;
}

SPX_HD int spx__i64_times_portable(int64_t *z, int64_t x, int64_t y)
{
    if (x > 0 ? (y > 0 ? x > INT64_MAX / y : y < INT64_MIN / x)
              : (y > 0 ? x < INT64_MIN / y : (x != 0 && y < INT64_MAX / x)))
        return 1;
    *z = x * y;
    return 0;
}

SPX_HD int spx__i64_plus(int64_t *z, int64_t x, int64_t y)
{
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
    return __builtin_add_overflow(x, y, z);
#else
    return spx__i64_plus_portable(z, x, y);
#endif
}

SPX_HD int spx__i64_times(int64_t *z, int64_t x, int64_t y)
{
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
    return __builtin_mul_overflow(x, y, z);
#else
    return spx__i64_times_portable(z, x, y);
#endif
}

/* ---- avos (pedigree) operators ---- */

/* Position of the most significant set bit of v > 0. */
SPX_HD int spx__msb64(uint64_t v)
{
    int b = 0;
    if (v >> 32) { v >>= 32; b += 32; }
    if (v >> 16) { v >>= 16; b += 16; }
    if (v >> 8) { v >>= 8; b += 8; }
    if (v >> 4) { v >>= 4; b += 4; }
    if (v >> 2) { v >>= 2; b += 2; }
    if (v >> 1) b += 1;
    return b;
}

/* Non-zero minimum: 0 is "no relationship" and the identity. */
SPX_HD int64_t spx__avos_sum(int64_t x, int64_t y)
{
    if (x == 0)
        return y;
    if (y == 0)
        return x;
    return y < x ? y : x;
}

/* x (x) y for x, y >= -1 (callers check; values below -1 are not avos
 * values). Returns 1 when the result needs more than bits - 1 value bits. */
SPX_HD int spx__avos_product(int64_t *z, int64_t x, int64_t y, int bits)
{
    if (x == 0 || y == 0) { /* annihilator */
        *z = 0;
        return 0;
    }
    if (y == -1 || y == 1) {
        if (x == -1 || x == 1) /* two self markers: equal parity keeps it */
            *z = x == y ? x : 0;
        else /* y = -1 keeps an even x, y = 1 keeps an odd x */
            *z = (x & 1) == (y == 1) ? x : 0;
        return 0;
    }
    if (x == -1 || x == 1) { /* a self marker on the left is the identity for y >= 2 */
        *z = y;
        return 0;
    }
    /* append the bits of y below its leading 1 to x */
    int b = spx__msb64((uint64_t)y);
    if (spx__msb64((uint64_t)x) + b > bits - 2)
        return 1;
    *z = (y & ((INT64_C(1) << b) - 1)) | (x << b);
    return 0;
}

/* ---- per-type building blocks: plus, times, min, max, pair, lor, land, avos ---- */

#define SPX__REAL_OPS(S, T)                                                                      \
    SPX_HD int spx__min_##S(T *z, T x, T y) { *z = y < x ? y : x; return 0; }                   \
    SPX_HD int spx__max_##S(T *z, T x, T y) { *z = y > x ? y : x; return 0; }                   \
    SPX_HD int spx__pair_##S(T *z, T x, T y) { (void)x; (void)y; *z = 1; return 0; }           \
    SPX_HD T spx__ident_plus_##S(void) { return 0; }

/* Float sums and products rounded one at a time. In device code nvcc would
 * otherwise contract a product followed by a sum into one fused multiply-add
 * (a single rounding), and results would differ from the host backends. */
#ifdef __CUDA_ARCH__
#define SPX__ADD_RN_f32(x, y) __fadd_rn(x, y)
#define SPX__MUL_RN_f32(x, y) __fmul_rn(x, y)
#define SPX__ADD_RN_f64(x, y) __dadd_rn(x, y)
#define SPX__MUL_RN_f64(x, y) __dmul_rn(x, y)
#else
#define SPX__ADD_RN_f32(x, y) ((x) + (y))
#define SPX__MUL_RN_f32(x, y) ((x) * (y))
#define SPX__ADD_RN_f64(x, y) ((x) + (y))
#define SPX__MUL_RN_f64(x, y) ((x) * (y))
#endif

#define SPX__FLOAT_OPS(S, T)                                                                     \
    SPX__REAL_OPS(S, T)                                                                          \
    SPX_HD int spx__plus_##S(T *z, T x, T y) { *z = SPX__ADD_RN_##S(x, y); return 0; }          \
    SPX_HD int spx__times_##S(T *z, T x, T y) { *z = SPX__MUL_RN_##S(x, y); return 0; }         \
    SPX_HD T spx__ident_min_##S(void) { return (T)INFINITY; }                                   \
    SPX_HD T spx__ident_max_##S(void) { return -(T)INFINITY; }

#define SPX__INT_OPS(S, T, TMIN, TMAX)                                                           \
    SPX__REAL_OPS(S, T)                                                                          \
    SPX_HD int spx__plus_##S(T *z, T x, T y) { return spx__##S##_plus(z, x, y); }               \
    SPX_HD int spx__times_##S(T *z, T x, T y) { return spx__##S##_times(z, x, y); }             \
    SPX_HD T spx__ident_min_##S(void) { return TMAX; }                                          \
    SPX_HD T spx__ident_max_##S(void) { return TMIN; }                                          \
    SPX_HD int spx__avos_add_##S(T *z, T x, T y) { *z = (T)spx__avos_sum(x, y); return 0; }     \
    SPX_HD int spx__avos_mul_##S(T *z, T x, T y)                                                 \
    {                                                                                            \
        int64_t r = 0;                                                                           \
        if (spx__avos_product(&r, x, y, (int)sizeof(T) * 8))                                     \
            return 1;                                                                            \
        *z = (T)r;                                                                               \
        return 0;                                                                                \
    }                                                                                            \
    SPX_HD T spx__ident_avos_add_##S(void) { return 0; }

SPX__FLOAT_OPS(f32, float)
SPX__FLOAT_OPS(f64, double)
SPX__INT_OPS(i32, int32_t, INT32_MIN, INT32_MAX)
SPX__INT_OPS(i64, int64_t, INT64_MIN, INT64_MAX)

/* bool: one byte, any nonzero byte is true */
SPX_HD int spx__lor_bool(uint8_t *z, uint8_t x, uint8_t y) { *z = (x != 0) | (y != 0); return 0; }
SPX_HD int spx__land_bool(uint8_t *z, uint8_t x, uint8_t y) { *z = (x != 0) & (y != 0); return 0; }
SPX_HD uint8_t spx__ident_lor_bool(void) { return 0; }

#define SPX__DT_f32 SPX_F32
#define SPX__DT_f64 SPX_F64
#define SPX__DT_i32 SPX_I32
#define SPX__DT_i64 SPX_I64
#define SPX__DT_bool SPX_BOOL

/* Every built-in (semiring, value type) pair, the single list that decides
 * which pairs are valid: X(kind, type suffix, C type, add, multiply). The
 * identity of the add operator is spx__ident_<add>_<suffix>(). */
#define SPX__BUILTIN_SEMIRINGS(X)                                                                \
    X(PLUS_TIMES, f32, float, plus, times)                                                       \
    X(PLUS_TIMES, f64, double, plus, times)                                                      \
    X(PLUS_TIMES, i32, int32_t, plus, times)                                                     \
    X(PLUS_TIMES, i64, int64_t, plus, times)                                                     \
    X(MIN_PLUS, f32, float, min, plus)                                                           \
    X(MIN_PLUS, f64, double, min, plus)                                                          \
    X(MIN_PLUS, i32, int32_t, min, plus)                                                         \
    X(MIN_PLUS, i64, int64_t, min, plus)                                                         \
    X(MAX_PLUS, f32, float, max, plus)                                                           \
    X(MAX_PLUS, f64, double, max, plus)                                                          \
    X(MAX_PLUS, i32, int32_t, max, plus)                                                         \
    X(MAX_PLUS, i64, int64_t, max, plus)                                                         \
    X(MAX_TIMES, f32, float, max, times)                                                         \
    X(MAX_TIMES, f64, double, max, times)                                                        \
    X(MAX_TIMES, i32, int32_t, max, times)                                                       \
    X(MAX_TIMES, i64, int64_t, max, times)                                                       \
    X(MIN_TIMES, f32, float, min, times)                                                         \
    X(MIN_TIMES, f64, double, min, times)                                                        \
    X(MIN_TIMES, i32, int32_t, min, times)                                                       \
    X(MIN_TIMES, i64, int64_t, min, times)                                                       \
    X(OR_AND, bool, uint8_t, lor, land)                                                          \
    X(PLUS_PAIR, f32, float, plus, pair)                                                         \
    X(PLUS_PAIR, f64, double, plus, pair)                                                        \
    X(PLUS_PAIR, i32, int32_t, plus, pair)                                                       \
    X(PLUS_PAIR, i64, int64_t, plus, pair)                                                       \
    X(AVOS, i32, int32_t, avos_add, avos_mul)                                                    \
    X(AVOS, i64, int64_t, avos_add, avos_mul)

/* Nonzero if (k, t) is a built-in pair. */
SPX_HD int spx__semiring_supports(spx_semiring_kind k, spx_dtype t)
{
#define SPX__SUPPORTS(K, S, T, ADD, MUL)                                                         \
    if (k == SPX_SEMIRING_##K && t == SPX__DT_##S)                                               \
        return 1;
    SPX__BUILTIN_SEMIRINGS(SPX__SUPPORTS)
#undef SPX__SUPPORTS
    return 0;
}

/* z = x (+) y (mul == 0) or x (x) y (mul != 0) for the built-in pair (k, t);
 * z, x, y point to values of t. Returns nonzero on overflow, -1 if (k, t) is
 * not a built-in pair. For kernels that do not specialise per pair. */
SPX_HD int spx__semiring_apply(spx_semiring_kind k, spx_dtype t, int mul, void *z,
                               const void *x, const void *y)
{
#define SPX__APPLY(K, S, T, ADD, MUL)                                                            \
    if (k == SPX_SEMIRING_##K && t == SPX__DT_##S)                                               \
        return mul ? spx__##MUL##_##S((T *)z, *(const T *)x, *(const T *)y)                      \
                   : spx__##ADD##_##S((T *)z, *(const T *)x, *(const T *)y);
    SPX__BUILTIN_SEMIRINGS(SPX__APPLY)
#undef SPX__APPLY
    return -1;
}

/* Store the add identity of the built-in pair (k, t) in *out; -1 if (k, t)
 * is not a built-in pair. */
SPX_HD int spx__semiring_identity(spx_semiring_kind k, spx_dtype t, void *out)
{
#define SPX__IDENTITY(K, S, T, ADD, MUL)                                                         \
    if (k == SPX_SEMIRING_##K && t == SPX__DT_##S) {                                             \
        *(T *)out = spx__ident_##ADD##_##S();                                                    \
        return 0;                                                                                \
    }
    SPX__BUILTIN_SEMIRINGS(SPX__IDENTITY)
#undef SPX__IDENTITY
    return -1;
}

#endif

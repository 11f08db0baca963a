/* Internal core: context layout, errors, logging, allocation, small helpers.
 * Every internal symbol is prefixed spx__ (two underscores). */
#ifndef SPX_CORE_H
#define SPX_CORE_H

#include "spx.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

#ifdef SPX_HAVE_OPENMP
#include <omp.h>
#endif

#define SPX_ERROR_MSG_MAX 512

struct spx_ctx {
    const spx_backend_vtable *backend;
    void *backend_state;          /* owned by the backend (CUDA: device, stream, pool) */
    spx_status last_status;
    char last_error[SPX_ERROR_MSG_MAX];
    spx_log_level log_level;
    int num_threads;              /* 0 = OpenMP default */
    int deterministic;
    int validate;
    int progress;
};

/* Record an error on ctx (ctx may be NULL) and return s. printf-style message
 * that names the offending value. */
spx_status spx__fail(spx_ctx *ctx, spx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prefix the current message of ctx with "<prefix>: " (keeps the status). */
void spx__error_prefix(spx_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void spx__log(const spx_ctx *ctx, spx_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Progress on stderr for long work (only when ctx->progress). Call with
 * done == total to finish the line. */
void spx__progress(const spx_ctx *ctx, const char *what, int64_t done, int64_t total);

/* ---- allocation: every host allocation of the library goes through these ---- */
void *spx__malloc(size_t n);
void *spx__calloc(size_t count, size_t size);
void *spx__realloc(void *p, size_t n);
void spx__free(void *p);
/* Allocate count*size bytes or fail on ctx with SPX_ERR_OUT_OF_MEMORY (or
 * SPX_ERR_OVERFLOW if the product overflows). what names the buffer. */
spx_status spx__alloc(spx_ctx *ctx, void **out, int64_t count, size_t size, const char *what);
spx_status spx__alloc_zero(spx_ctx *ctx, void **out, int64_t count, size_t size, const char *what);

/* Testing hooks (not in the public header): make the n-th next allocation
 * fail (n >= 1; 0 disables), and count live allocations. */
void spx__debug_fail_alloc_after(long n);
long spx__debug_live_allocations(void);

/* ---- OpenMP ---- */
/* Threads for a parallel region: ctx->num_threads, or the OpenMP default when
 * it is 0 (ctx may be NULL); 1 without OpenMP. */
static inline int spx__num_threads(const spx_ctx *ctx)
{
#ifdef SPX_HAVE_OPENMP
    return ctx && ctx->num_threads > 0 ? ctx->num_threads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}
/* Index of the calling thread inside a parallel region (0 outside or without OpenMP). */
static inline int spx__thread_id(void)
{
#ifdef SPX_HAVE_OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* ---- checked arithmetic ---- */
static inline bool spx__mul_overflows(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}
static inline bool spx__add_overflows(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}

/* ---- index arrays (int32 or int64) ---- */
static inline size_t spx__index_size(spx_index_type t) { return t == SPX_INDEX_I64 ? 8 : 4; }
static inline int64_t spx__idx_get(const void *p, spx_index_type t, int64_t i)
{
    return t == SPX_INDEX_I64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}
static inline void spx__idx_set(void *p, spx_index_type t, int64_t i, int64_t v)
{
    if (t == SPX_INDEX_I64)
        ((int64_t *)p)[i] = v;
    else
        ((int32_t *)p)[i] = (int32_t)v;
}
/* Narrowest index type able to hold every value up to max_value. */
static inline spx_index_type spx__index_type_for(int64_t max_value)
{
    return max_value <= INT32_MAX ? SPX_INDEX_I32 : SPX_INDEX_I64;
}

/* ---- small-float conversions (round to nearest even) ---- */
float spx__half_to_float(uint16_t h);
uint16_t spx__float_to_half(float f);
static inline float spx__bf16_to_float(uint16_t b)
{
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)b << 16;
    return v.f;
}
uint16_t spx__float_to_bf16(float f);

/* ---- value arrays ---- */
static inline bool spx__dtype_is_float(spx_dtype t)
{
    return t == SPX_F32 || t == SPX_F64 || t == SPX_F16 || t == SPX_BF16;
}
static inline bool spx__dtype_is_int(spx_dtype t) { return t == SPX_I32 || t == SPX_I64; }
static inline bool spx__dtype_is_complex(spx_dtype t) { return t == SPX_C64 || t == SPX_C128; }
static inline bool spx__dtype_valid(spx_dtype t) { return t >= SPX_F32 && t <= SPX_PATTERN; }

/* Value i as double (real part for complex; 1 for pattern, vals may be NULL). */
static inline double spx__val_get(const void *vals, spx_dtype t, int64_t i)
{
    switch (t) {
    case SPX_F32: return ((const float *)vals)[i];
    case SPX_F64: return ((const double *)vals)[i];
    case SPX_F16: return spx__half_to_float(((const uint16_t *)vals)[i]);
    case SPX_BF16: return spx__bf16_to_float(((const uint16_t *)vals)[i]);
    case SPX_I32: return ((const int32_t *)vals)[i];
    case SPX_I64: return (double)((const int64_t *)vals)[i];
    case SPX_BOOL: return ((const uint8_t *)vals)[i] ? 1.0 : 0.0;
    case SPX_C64: return ((const float *)vals)[2 * i];
    case SPX_C128: return ((const double *)vals)[2 * i];
    default: return 1.0;
    }
}
/* Store v into value i (rounded for narrow floats, truncated toward zero for
 * integers: callers check ranges first; imaginary part 0 for complex). */
static inline void spx__val_set(void *vals, spx_dtype t, int64_t i, double v)
{
    switch (t) {
    case SPX_F32: ((float *)vals)[i] = (float)v; break;
    case SPX_F64: ((double *)vals)[i] = v; break;
    case SPX_F16: ((uint16_t *)vals)[i] = spx__float_to_half((float)v); break;
    case SPX_BF16: ((uint16_t *)vals)[i] = spx__float_to_bf16((float)v); break;
    case SPX_I32: ((int32_t *)vals)[i] = (int32_t)v; break;
    case SPX_I64: ((int64_t *)vals)[i] = (int64_t)v; break;
    case SPX_BOOL: ((uint8_t *)vals)[i] = v != 0.0; break;
    case SPX_C64: ((float *)vals)[2 * i] = (float)v; ((float *)vals)[2 * i + 1] = 0.0f; break;
    case SPX_C128: ((double *)vals)[2 * i] = v; ((double *)vals)[2 * i + 1] = 0.0; break;
    default: break;
    }
}

/* ---- reproducible random numbers: splitmix64 ---- */
static inline uint64_t spx__splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Uniform double in [0, 1) with 53 random bits. */
static inline double spx__rand_unit(uint64_t *state)
{
    return (double)(spx__splitmix64(state) >> 11) * 0x1.0p-53;
}
/* Uniform integer in [0, n) (n > 0), unbiased (Lemire). */
static inline uint64_t spx__rand_below(uint64_t *state, uint64_t n)
{
    for (;;) {
        uint64_t x = spx__splitmix64(state);
        __uint128_t m = (__uint128_t)x * n;
        uint64_t lo = (uint64_t)m;
        if (lo >= n || lo >= (uint64_t)(-n) % n)
            return (uint64_t)(m >> 64);
    }
}
/* Independent stream for item i of a seeded computation (thread-count independent). */
static inline uint64_t spx__rand_stream(uint64_t seed, uint64_t i)
{
    uint64_t s = seed ^ (i * 0xD1B54A32D192ED03ull);
    spx__splitmix64(&s);
    return s;
}

#endif

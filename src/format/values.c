/* Value type conversions (see values.h). */
#include "format/values.h"

#include <math.h>
#include <string.h>

#define LL(x) ((long long)(x))

/* One value held exactly: integers, bool and pattern as int64; real floats
 * as double (every f16, bf16 and f32 is exact in double); complex as two
 * doubles. */
typedef struct {
    bool is_int;
    int64_t i;
    double re, im;
} scalar;

static scalar load(const void *v, spx_dtype t, int64_t p)
{
    scalar s = {false, 0, 0.0, 0.0};
    switch (t) {
    case SPX_I32: s.is_int = true; s.i = ((const int32_t *)v)[p]; break;
    case SPX_I64: s.is_int = true; s.i = ((const int64_t *)v)[p]; break;
    case SPX_BOOL: s.is_int = true; s.i = ((const uint8_t *)v)[p] != 0; break;
    case SPX_PATTERN: s.is_int = true; s.i = 1; break;
    case SPX_C64: s.re = ((const float *)v)[2 * p]; s.im = ((const float *)v)[2 * p + 1]; break;
    case SPX_C128: s.re = ((const double *)v)[2 * p]; s.im = ((const double *)v)[2 * p + 1]; break;
    default: s.re = spx__val_get(v, t, p); break;
    }
    return s;
}

static float with_odd_bit(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u |= 1u;
    memcpy(&f, &u, 4);
    return f;
}

/* The value rounded to float by round-to-odd (truncate, then set the last
 * bit if anything was lost). Rounding that float to f16 or bf16, which keep
 * at least two bits fewer, gives the correctly rounded result of the
 * original value: no double rounding. */
static float f32_round_odd(const scalar *s)
{
    float f;
    bool exact, away; /* away: f is farther from zero than the value */
    if (s->is_int) {
        f = (float)s->i;
        if (f >= 0x1p63f) { /* above every int64 */
            exact = false;
            away = true;
        } else {
            int64_t w = (int64_t)f; /* f is integral here */
            exact = w == s->i;
            away = s->i > 0 ? w > s->i : w < s->i;
        }
    } else {
        f = (float)s->re;
        exact = (double)f == s->re || isnan(s->re);
        away = fabs((double)f) > fabs(s->re);
    }
    if (exact)
        return f;
    if (away)
        f = nextafterf(f, 0.0f);
    return with_odd_bit(f);
}

static double as_double(const scalar *s) { return s->is_int ? (double)s->i : s->re; }
static float as_float(const scalar *s) { return s->is_int ? (float)s->i : (float)s->re; }

spx_status spx__values_check(spx_ctx *ctx, const void *src, spx_dtype from, spx_dtype to,
                             int64_t n)
{
    if (to == SPX_PATTERN || from == SPX_PATTERN || from == to)
        return SPX_OK;
    if (spx__dtype_is_complex(from) && !spx__dtype_is_complex(to))
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "%s values cannot become %s: the imaginary parts would be lost",
                         spx_dtype_name(from), spx_dtype_name(to));
    if (!spx__dtype_is_int(to))
        return SPX_OK;
    for (int64_t p = 0; p < n; p++) {
        scalar s = load(src, from, p);
        if (s.is_int) {
            if (to == SPX_I32 && (s.i > INT32_MAX || s.i < INT32_MIN))
                return spx__fail(ctx, SPX_ERR_OVERFLOW,
                                 "value %lld at entry %lld is outside the range of i32", LL(s.i),
                                 LL(p));
            continue;
        }
        if (isnan(s.re) || (isfinite(s.re) && s.re != trunc(s.re)))
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "value %.17g at entry %lld is not an integer (%s holds integers only)",
                             s.re, LL(p), spx_dtype_name(to));
        bool in_range = to == SPX_I32 ? s.re >= -0x1p31 && s.re < 0x1p31
                                      : s.re >= -0x1p63 && s.re < 0x1p63;
        if (!in_range)
            return spx__fail(ctx, SPX_ERR_OVERFLOW,
                             "value %.17g at entry %lld is outside the range of %s", s.re, LL(p),
                             spx_dtype_name(to));
    }
    return SPX_OK;
}

void spx__value_convert(const void *src, spx_dtype from, int64_t p, void *dst, spx_dtype to,
                        int64_t q)
{
    scalar s = load(src, from, p);
    switch (to) {
    case SPX_I32: ((int32_t *)dst)[q] = (int32_t)(s.is_int ? s.i : (int64_t)s.re); break;
    case SPX_I64: ((int64_t *)dst)[q] = s.is_int ? s.i : (int64_t)s.re; break;
    case SPX_BOOL: ((uint8_t *)dst)[q] = s.is_int ? s.i != 0 : (s.re != 0 || s.im != 0); break;
    case SPX_F64: ((double *)dst)[q] = as_double(&s); break;
    case SPX_F32: ((float *)dst)[q] = as_float(&s); break;
    case SPX_F16: ((uint16_t *)dst)[q] = spx__float_to_half(f32_round_odd(&s)); break;
    case SPX_BF16: ((uint16_t *)dst)[q] = spx__float_to_bf16(f32_round_odd(&s)); break;
    case SPX_C64:
        ((float *)dst)[2 * q] = as_float(&s);
        ((float *)dst)[2 * q + 1] = (float)s.im;
        break;
    case SPX_C128:
        ((double *)dst)[2 * q] = as_double(&s);
        ((double *)dst)[2 * q + 1] = s.im;
        break;
    default: break; /* pattern: no value */
    }
}

/* IEEE binary16 and bfloat16 conversions, round to nearest even, NaN kept. */
#include "core/core.h"

#include <string.h>

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Both directions shift the fields in place and let one FP add or subtract
 * round or normalize the subnormals, so that the usual path has no branch
 * on the data (the bench narrows and widens operands of 10^8 values): the
 * results are bit for bit those of the field-by-field reading, checked over
 * every input. */
float spx__half_to_float(uint16_t h)
{
    uint32_t o = ((uint32_t)h & 0x7fffu) << 13; /* exponent and mantissa in place */
    const uint32_t exp = o & 0x0f800000u;
    o += 0x38000000u; /* exponent bias 15 -> 127 */
    if (exp == 0x0f800000u) /* inf or nan: the exponent all ones */
        o += 0x38000000u;
    else if (exp == 0) /* zero or subnormal: mant * 2^-24, exact */
        o = float_bits(bits_float(o + 0x00800000u) - bits_float(0x38800000u));
    return bits_float(o | ((uint32_t)h & 0x8000u) << 16);
}

uint16_t spx__float_to_half(float f)
{
    const uint32_t u = float_bits(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x47800000u) /* 2^16 and up: inf; nan stays nan (quiet) */
        return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a < 0x38800000u) { /* below 2^-14: adding 0.5 (ulp 2^-24) rounds to a subnormal half */
        const uint32_t half = 0x3f000000u;
        return (uint16_t)(sign | (float_bits(bits_float(a) + bits_float(half)) - half));
    }
    /* exponent bias 127 -> 15, then round to nearest even at bit 13; a carry
     * into the exponent is right, up to inf from 65520 */
    a += 0xc8000fffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (a >> 13));
}

uint16_t spx__float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet nan */
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7fffu + lsb;
    return (uint16_t)(u >> 16);
}

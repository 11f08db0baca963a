/* Number parsing for the text readers. Integers are parsed by hand with
 * overflow detection. Reals take an exact fast path (Clinger: a mantissa of
 * at most 2^53 (2^24 for float) times an exactly representable power of ten
 * is one correctly rounded IEEE operation), then an exact integer path for
 * up to 19 digits and |exp10| <= 27 (the %.17g text of any double), and
 * otherwise fall back to strtod/strtof on a NUL-terminated copy of the
 * token, so every result is correctly rounded. */
#include "io/io.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int spx__parse_i64(const char *p, const char *end, const char **endp, int64_t *out)
{
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    const char *digits = p;
    uint64_t v = 0;
    bool overflow = false;
    /* 19 digits always fit in uint64; only longer numbers need checks */
    const char *easy = end - p > 19 ? p + 19 : end;
    while (p < easy && (unsigned)(*p - '0') < 10u)
        v = v * 10u + (unsigned)(*p++ - '0');
    while (p < end && (unsigned)(*p - '0') < 10u) {
        unsigned d = (unsigned)(*p++ - '0');
        overflow |= v > (UINT64_MAX - d) / 10u;
        v = v * 10u + d;
    }
    *endp = p;
    if (p == digits)
        return SPX__NUM_SYNTAX;
    if (overflow || v > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return SPX__NUM_RANGE;
    *out = neg ? (int64_t)(0u - v) : (int64_t)v;
    return SPX__NUM_OK;
}

static bool match_word(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) < n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((p[i] | 0x20) != word[i])
            return false;
    return true;
}

static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const float exact_pow10f[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                     1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

static const uint64_t pow5[28] = {
    1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull,
    9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
    152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
    476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
    298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull};

static int bit_length(unsigned __int128 x)
{
    uint64_t hi = (uint64_t)(x >> 64);
    return hi ? 128 - __builtin_clzll(hi) : x ? 64 - __builtin_clzll((uint64_t)x) : 0;
}

/* (q + sticky) * 2^e rounded to `bits` significant bits (nearest, ties to
 * even), where sticky says that a nonzero fraction below q was cut off.
 * False if the result would leave the normal range of the type. */
static bool round_scaled(unsigned __int128 q, bool sticky, int e, int bits, double *out)
{
    int len = bit_length(q), cut = len - bits - 1; /* keep bits + 1 (the round bit) */
    if (cut > 0) {
        sticky |= (q & (((unsigned __int128)1 << cut) - 1)) != 0;
        q >>= cut;
        e += cut;
    }
    uint64_t m = (uint64_t)q, r = m >> 1;
    if (len > bits && (m & 1) && (sticky || (r & 1)))
        r++;
    if (len <= bits) {
        r = m;
    } else {
        e += 1;
    }
    int top = e + bit_length(r) - 1; /* exponent of the leading bit */
    int lo = bits == 53 ? -1022 : -126, hi = bits == 53 ? 1023 : 127;
    if (top < lo || top > hi)
        return false;
    *out = ldexp((double)r, e);
    return true;
}

/* w * 10^exp10 for w < 2^64, |exp10| <= 27, exactly: with 10^k = 5^k * 2^k,
 * multiplying is an exact 128-bit product; dividing by 5^k keeps at least
 * 64 quotient bits and a sticky bit for the remainder. */
static bool scaled_exact(uint64_t w, int64_t exp10, int bits, double *out)
{
    if (exp10 >= 0)
        return round_scaled((unsigned __int128)w * pow5[exp10], false, (int)exp10, bits, out);
    int k = (int)-exp10, sh = 127 - bit_length(w);
    unsigned __int128 n = (unsigned __int128)w << sh;
    unsigned __int128 q = n / pow5[k];
    return round_scaled(q, n % pow5[k] != 0, -sh - k, bits, out);
}

/* strtod/strtof on a NUL-terminated copy of [s, e). The copy's '.' becomes
 * the locale's decimal point, so the result does not depend on setlocale. */
static int parse_slow(const char *s, const char *e, bool single, double *out)
{
    char small[128];
    size_t n = (size_t)(e - s);
    char *buf = n < sizeof small ? small : spx__malloc(n + 1);
    if (!buf)
        return SPX__NUM_NOMEM; /* only for tokens over 127 characters */
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *dot = memchr(buf, '.', n);
        if (dot)
            *dot = dp[0];
    }
    errno = 0;
    char *stop;
    double v = single ? (double)strtof(buf, &stop) : strtod(buf, &stop);
    int rc = SPX__NUM_OK;
    if (stop != buf + n)
        rc = SPX__NUM_SYNTAX; /* cannot happen for text the caller validated */
    else if (errno == ERANGE && isinf(v))
        rc = SPX__NUM_RANGE;
    if (buf != small)
        spx__free(buf);
    *out = v;
    return rc;
}

int spx__parse_real(const char *p, const char *end, bool single, const char **endp, double *out)
{
    const char *s = p;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p < end && ((*p | 0x20) == 'i' || (*p | 0x20) == 'n')) {
        if (match_word(p, end, "infinity"))
            p += 8, *out = neg ? -INFINITY : INFINITY;
        else if (match_word(p, end, "inf"))
            p += 3, *out = neg ? -INFINITY : INFINITY;
        else if (match_word(p, end, "nan"))
            p += 3, *out = neg ? -NAN : NAN;
        else {
            *endp = p;
            return SPX__NUM_SYNTAX;
        }
        *endp = p;
        return SPX__NUM_OK;
    }
    /* mantissa: up to 19 significant digits in w, the rest only move exp10 */
    uint64_t w = 0;
    int sig = 0, ndigits = 0;
    int64_t exp10 = 0;
    bool truncated = false;
    for (; p < end && (unsigned)(*p - '0') < 10u; p++, ndigits++) {
        if (sig < 19) {
            w = w * 10u + (unsigned)(*p - '0');
            sig += w != 0;
        } else {
            exp10++;
            truncated |= *p != '0';
        }
    }
    if (p < end && *p == '.') {
        p++;
        for (; p < end && (unsigned)(*p - '0') < 10u; p++, ndigits++) {
            if (sig < 19) {
                w = w * 10u + (unsigned)(*p - '0');
                sig += w != 0;
                exp10--;
            } else {
                truncated |= *p != '0';
            }
        }
    }
    if (ndigits == 0) {
        *endp = s;
        return SPX__NUM_SYNTAX;
    }
    if (p < end && (*p | 0x20) == 'e') {
        const char *q = p + 1;
        bool eneg = false;
        if (q < end && (*q == '+' || *q == '-'))
            eneg = *q++ == '-';
        if (q < end && (unsigned)(*q - '0') < 10u) {
            int64_t e = 0;
            for (; q < end && (unsigned)(*q - '0') < 10u; q++)
                if (e < 100000000)
                    e = e * 10 + (*q - '0');
            exp10 += eneg ? -e : e;
            p = q;
        } /* else the 'e' is not part of the number: the caller sees it */
    }
    *endp = p;
#if FLT_EVAL_METHOD == 0
    if (!truncated) {
        if (w == 0) {
            *out = neg ? -0.0 : 0.0;
            return SPX__NUM_OK;
        }
        if (!single && w <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
            double d = (double)w;
            d = exp10 >= 0 ? d * exact_pow10[exp10] : d / exact_pow10[-exp10];
            *out = neg ? -d : d;
            return SPX__NUM_OK;
        }
        if (single && w <= (1ull << 24) && exp10 >= -10 && exp10 <= 10) {
            float f = (float)w;
            f = exp10 >= 0 ? f * exact_pow10f[exp10] : f / exact_pow10f[-exp10];
            *out = neg ? -f : f;
            return SPX__NUM_OK;
        }
    }
#endif
    double v;
    if (!truncated && w != 0 && exp10 >= -27 && exp10 <= 27 && scaled_exact(w, exp10, single ? 24 : 53, &v)) {
        *out = neg ? -v : v;
        return SPX__NUM_OK;
    }
    return parse_slow(s, p, single, out);
}

const char *spx__token_text(const char *p, const char *end, char *buf, size_t n)
{
    size_t k = 0;
    while (p < end && !spx__is_space(*p) && *p != '\n' && k + 4 < n) {
        unsigned char c = (unsigned char)*p++;
        buf[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (p < end && !spx__is_space(*p) && *p != '\n' && k + 4 >= n)
        buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = '\0';
    return buf;
}

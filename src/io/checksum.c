/* XXH64 (Yann Collet's xxHash, 64-bit variant), streaming and one-shot.
 * The .spx container ends with the XXH64 (seed 0) of every byte before it,
 * so `xxhsum -H1` (XXH64) on those bytes reproduces it. */
#include "io/io.h"

#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t read64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) /* little-endian on every host */
        v = (v << 8) | p[i];
    return v;
}

static inline uint32_t read32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t round64(uint64_t acc, uint64_t input)
{
    acc += input * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

static inline uint64_t merge_round(uint64_t acc, uint64_t val)
{
    acc ^= round64(0, val);
    return acc * P1 + P4;
}

void spx__xxh64_init(spx__xxh64 *h, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->v[0] = seed + P1 + P2;
    h->v[1] = seed + P2;
    h->v[2] = seed;
    h->v[3] = seed - P1;
}

static void stripes(uint64_t v[4], const unsigned char *p, size_t nstripes)
{
    for (size_t s = 0; s < nstripes; s++, p += 32)
        for (int i = 0; i < 4; i++)
            v[i] = round64(v[i], read64(p + 8 * i));
}

void spx__xxh64_update(spx__xxh64 *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    h->total += n;
    if (h->buflen) {
        size_t take = 32 - h->buflen < n ? 32 - h->buflen : n;
        memcpy(h->buf + h->buflen, p, take);
        h->buflen += take;
        p += take;
        n -= take;
        if (h->buflen < 32)
            return;
        stripes(h->v, h->buf, 1);
        h->buflen = 0;
    }
    stripes(h->v, p, n / 32);
    p += n / 32 * 32;
    n %= 32;
    memcpy(h->buf, p, n);
    h->buflen = n;
}

uint64_t spx__xxh64_digest(const spx__xxh64 *h)
{
    uint64_t acc;
    if (h->total >= 32) {
        acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
        for (int i = 0; i < 4; i++)
            acc = merge_round(acc, h->v[i]);
    } else {
        acc = h->v[2] + P5; /* v[2] holds the seed */
    }
    acc += h->total;
    const unsigned char *p = h->buf;
    size_t n = h->buflen;
    for (; n >= 8; n -= 8, p += 8) {
        acc ^= round64(0, read64(p));
        acc = rotl(acc, 27) * P1 + P4;
    }
    if (n >= 4) {
        acc ^= (uint64_t)read32(p) * P1;
        acc = rotl(acc, 23) * P2 + P3;
        p += 4;
        n -= 4;
    }
    for (; n > 0; n--, p++) {
        acc ^= *p * P5;
        acc = rotl(acc, 11) * P1;
    }
    acc ^= acc >> 33;
    acc *= P2;
    acc ^= acc >> 29;
    acc *= P3;
    acc ^= acc >> 32;
    return acc;
}

uint64_t spx__xxh64_once(const void *data, size_t n, uint64_t seed)
{
    spx__xxh64 h;
    spx__xxh64_init(&h, seed);
    spx__xxh64_update(&h, data, n);
    return spx__xxh64_digest(&h);
}

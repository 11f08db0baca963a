/* Semiring names and the public avos operators (the arithmetic itself is in
 * core/semiring.h, shared with every backend). */
#include <strings.h>

#include "core/core.h"
#include "core/semiring.h"

static const char *const semiring_names[] = {"plus_times", "min_plus", "max_plus",
                                              "max_times",  "min_times", "or_and",
                                              "plus_pair",  "avos",     "custom"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *spx_semiring_name(spx_semiring_kind k)
{
    return (int)k >= 0 && (int)k < COUNT(semiring_names) ? semiring_names[k] : "invalid";
}

spx_status spx_semiring_from_name(const char *name, spx_semiring_kind *out)
{
    if (!name || !out)
        return SPX_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < COUNT(semiring_names); i++) {
        if (strcasecmp(name, semiring_names[i]) == 0) {
            *out = (spx_semiring_kind)i;
            return SPX_OK;
        }
    }
    return SPX_ERR_INVALID_ARGUMENT;
}

int64_t spx_avos_sum(int64_t x, int64_t y) { return spx__avos_sum(x, y); }

spx_status spx_avos_product(int64_t x, int64_t y, int bits, int64_t *out)
{
    if (!out || (bits != 32 && bits != 64))
        return SPX_ERR_INVALID_ARGUMENT;
    int64_t max = bits == 32 ? INT32_MAX : INT64_MAX;
    if (x < -1 || y < -1 || x > max || y > max)
        return SPX_ERR_INVALID_ARGUMENT;
    int64_t z;
    if (spx__avos_product(&z, x, y, bits))
        return SPX_ERR_OVERFLOW;
    *out = z;
    return SPX_OK;
}

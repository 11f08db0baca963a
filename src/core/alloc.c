/* Host allocation. Every allocation of the library passes here so that the
 * failure-injection test can fail each allocation site in turn and count what
 * is still live. */
#include "core/core.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_long fail_countdown; /* 0: never fail */
static atomic_long live_allocations;

void spx__debug_fail_alloc_after(long n) { atomic_store(&fail_countdown, n); }
long spx__debug_live_allocations(void) { return atomic_load(&live_allocations); }

static bool injected_failure(void)
{
    long c = atomic_load(&fail_countdown);
    while (c > 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
            return c == 1;
    }
    return false;
}

void *spx__malloc(size_t n)
{
    if (injected_failure())
        return NULL;
    void *p = malloc(n ? n : 1);
    if (p)
        atomic_fetch_add(&live_allocations, 1);
    return p;
}

void *spx__calloc(size_t count, size_t size)
{
    if (injected_failure())
        return NULL;
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p)
        atomic_fetch_add(&live_allocations, 1);
    return p;
}

void *spx__realloc(void *p, size_t n)
{
    if (!p)
        return spx__malloc(n);
    if (injected_failure())
        return NULL;
    return realloc(p, n ? n : 1);
}

void spx__free(void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&live_allocations, 1);
    free(p);
}

static spx_status alloc_impl(spx_ctx *ctx, void **out, int64_t count, size_t size,
                             const char *what, bool zero)
{
    int64_t bytes;
    if (count < 0 || spx__mul_overflows(count, (int64_t)size, &bytes))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: %lld elements of %zu bytes overflow",
                         what, (long long)count, size);
    void *p = zero ? spx__calloc((size_t)count, size) : spx__malloc((size_t)bytes);
    if (!p)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory allocating %s (%lld bytes)",
                         what, (long long)bytes);
    *out = p;
    return SPX_OK;
}

spx_status spx__alloc(spx_ctx *ctx, void **out, int64_t count, size_t size, const char *what)
{
    return alloc_impl(ctx, out, count, size, what, false);
}

spx_status spx__alloc_zero(spx_ctx *ctx, void **out, int64_t count, size_t size, const char *what)
{
    return alloc_impl(ctx, out, count, size, what, true);
}

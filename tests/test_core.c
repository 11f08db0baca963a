/* Context, status names, error messages, small-float conversions, allocation hooks. */
#include "core/core.h"
#include "testutil.h"

static void test_context(void)
{
    spx_ctx *ctx = NULL;
    CHECK(spx_ctx_create(&ctx) == SPX_OK, "context");
    CHECK(spx_ctx_backend(ctx) == SPX_BACKEND_CPU || spx_ctx_backend(ctx) == SPX_BACKEND_CUDA,
          "auto backend is %s", spx_backend_name(spx_ctx_backend(ctx)));
    CHECK_OK(ctx, spx_ctx_set_backend(ctx, SPX_BACKEND_REF));
    CHECK(spx_ctx_backend(ctx) == SPX_BACKEND_REF, "ref selected");
    if (!spx_backend_available(SPX_BACKEND_CUDA)) {
        CHECK_FAILS(ctx, spx_ctx_set_backend(ctx, SPX_BACKEND_CUDA), SPX_ERR_NO_DEVICE, "cuda");
        CHECK(spx_ctx_backend(ctx) == SPX_BACKEND_REF, "backend kept after failed switch");
    }
    CHECK_FAILS(ctx, spx_ctx_set_backend(ctx, (spx_backend)42), SPX_ERR_INVALID_ARGUMENT, "42");
    spx_clear_error(ctx);
    CHECK(spx_last_status(ctx) == SPX_OK && spx_last_error(ctx)[0] == '\0', "cleared");
    spx_ctx_destroy(ctx);
}

static void test_names(void)
{
    for (int s = 0; s <= SPX_ERR_INTERNAL; s++)
        CHECK(strncmp(spx_status_name((spx_status)s), "SPX_", 4) == 0, "status %d", s);
    spx_dtype t;
    CHECK(spx_dtype_from_name("BF16", &t) == SPX_OK && t == SPX_BF16, "bf16");
    CHECK(spx_dtype_from_name("nope", &t) == SPX_ERR_INVALID_ARGUMENT, "unknown dtype");
    spx_format f;
    CHECK(spx_format_from_name("sell", &f) == SPX_OK && f == SPX_SELL, "sell");
    CHECK(spx_dtype_size(SPX_C128) == 16 && spx_dtype_size(SPX_PATTERN) == 0, "sizes");
}

/* The value of half h from its fields (inf past the largest finite). */
static float half_value(uint32_t h)
{
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    const float v = e == 0x1f ? INFINITY : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(1024 + m), (int)e - 25);
    return h & 0x8000u ? -v : v;
}

static void test_half(void)
{
    /* every half against its fields, and its round trip */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = spx__half_to_float((uint16_t)h);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) {
            CHECK(isnan(f), "half 0x%04x is nan", h);
            continue;
        }
        CHECK(f == half_value(h) && signbit(f) == signbit(half_value(h)), "half 0x%04x -> %g, not %g", h,
              f, half_value(h));
        if ((h & 0x7c00u) != 0x7c00u)
            CHECK(spx__float_to_half(f) == (uint16_t)h, "half 0x%04x -> %g -> 0x%04x", h, f,
                  spx__float_to_half(f));
    }
    /* every rounding boundary, both signs: the midpoint of two neighbours
     * goes to the even one, a float either side of it to the nearer */
    for (uint32_t h = 0; h < 0x7c00u; h++)
        for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
            const float lo = half_value(sign | h), hi = half_value(sign | (h + 1)),
                        mid = h + 1 == 0x7c00u ? (sign ? -65520.0f : 65520.0f) : (lo + hi) / 2;
            const uint16_t even = (uint16_t)(sign | (h & 1u ? h + 1 : h));
            CHECK(spx__float_to_half(mid) == even, "tie %g -> 0x%04x", mid, spx__float_to_half(mid));
            CHECK(spx__float_to_half(nextafterf(mid, 0.0f)) == (uint16_t)(sign | h), "below %g", mid);
            CHECK(spx__float_to_half(nextafterf(mid, sign ? -INFINITY : INFINITY)) == (uint16_t)(sign | (h + 1)),
                  "above %g", mid);
        }
    CHECK(spx__float_to_half(65520.0f) == 0x7c00u, "overflow to inf");
    CHECK(spx__float_to_half(-1e30f) == 0xfc00u && spx__float_to_half(INFINITY) == 0x7c00u, "inf");
    CHECK(spx__float_to_half(1.0f + 0x1p-11f) == 0x3c00u, "tie to even (down)");
    CHECK(spx__float_to_half(1.0f + 3 * 0x1p-11f) == 0x3c02u, "tie to even (up)");
    CHECK(spx__half_to_float(0x0001u) == 0x1p-24f, "smallest subnormal");
    CHECK(isnan(spx__half_to_float(spx__float_to_half(NAN))), "nan kept");
    CHECK(spx__float_to_bf16(1.0f) == 0x3f80u, "bf16 one");
    CHECK(spx__bf16_to_float(spx__float_to_bf16(3.140625f)) == 3.140625f, "bf16 exact");
    CHECK(isnan(spx__bf16_to_float(spx__float_to_bf16(NAN))), "bf16 nan kept");
}

static void test_alloc_hooks(void)
{
    long live = spx__debug_live_allocations();
    spx__debug_fail_alloc_after(2);
    void *a = spx__malloc(8), *b = spx__malloc(8), *c = spx__malloc(8);
    CHECK(a && !b && c, "second allocation fails");
    spx__free(a);
    spx__free(c);
    CHECK(spx__debug_live_allocations() == live, "live count back");
    spx__debug_fail_alloc_after(0);
}

static void test_random(void)
{
    uint64_t s1 = spx__rand_stream(test_seed, 5), s2 = spx__rand_stream(test_seed, 5);
    CHECK(spx__splitmix64(&s1) == spx__splitmix64(&s2), "streams reproducible");
    int hist[7] = {0};
    uint64_t st = test_seed;
    for (int i = 0; i < 70000; i++)
        hist[spx__rand_below(&st, 7)]++;
    for (int i = 0; i < 7; i++)
        CHECK(hist[i] > 9000 && hist[i] < 11000, "bucket %d has %d", i, hist[i]);
}

int main(void)
{
    test_init();
    test_context();
    test_names();
    test_half();
    test_alloc_hooks();
    test_random();
    return test_finish("test_core");
}

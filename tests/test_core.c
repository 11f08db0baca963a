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

static void test_half(void)
{
    /* exhaustive round trip of every finite half */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7c00u) == 0x7c00u)
            continue;
        float f = spx__half_to_float((uint16_t)h);
        CHECK(spx__float_to_half(f) == (uint16_t)h, "half 0x%04x -> %g -> 0x%04x", h, f,
              spx__float_to_half(f));
    }
    CHECK(spx__float_to_half(65520.0f) == 0x7c00u, "overflow to inf");
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

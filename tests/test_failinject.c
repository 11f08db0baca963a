/* Failure injection over one whole user path: create a context, read a real
 * matrix, convert it to every format, multiply on the cpu and ref backends.
 * Every allocation of the path is made to fail in turn; each run must end in
 * SPX_ERR_OUT_OF_MEMORY (never a crash or another status) with nothing leaked. */
#include "core/core.h"
#include "testutil.h"

static spx_status run_path(int threads, spx_status *where)
{
    spx_ctx *ctx = NULL;
    spx_matrix *A = NULL, *F = NULL;
    spx_dense B = {0}, C = {0};
    spx_status s = spx_ctx_create(&ctx);
    if (s)
        return *where = s;
    spx_ctx_set_num_threads(ctx, threads);
    spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
    spx_read_options ro = {.dtype = SPX_F32};
    if ((s = spx_matrix_read(ctx, SPX_SOURCE_DIR "/data/1138_bus.mtx", &ro, &A)))
        goto done;
    spx_matrix_info in;
    spx_matrix_info_get(A, &in);
    if ((s = spx_dense_alloc(ctx, in.cols, 5, SPX_F32, SPX_ROW_MAJOR, &B)) ||
        (s = spx_dense_alloc(ctx, in.rows, 5, SPX_F32, SPX_ROW_MAJOR, &C)) ||
        (s = spx_dense_fill_random(ctx, &B, 7)))
        goto done;
    static const spx_format formats[] = {SPX_COO, SPX_CSR, SPX_CSC, SPX_BSR, SPX_SELL};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        spx_format_params p = {.block_rows = 3, .block_cols = 2, .sell_c = 8, .sell_sigma = 32};
        if ((s = spx_matrix_convert(ctx, A, formats[f], &p, &F)))
            goto done;
        for (int op = 0; op < 2 && !s; op++) {
            spx_ctx_set_backend(ctx, SPX_BACKEND_CPU);
            s = spx_spmm(ctx, (spx_op)op, 1.0, F, &B, 0.0, &C);
            if (!s) {
                spx_ctx_set_backend(ctx, SPX_BACKEND_REF);
                s = spx_spmm(ctx, (spx_op)op, 1.0, F, &B, 0.5, &C);
            }
        }
        spx_matrix_destroy(F);
        F = NULL;
        if (s)
            goto done;
    }
done:
    CHECK(s != SPX_ERR_OUT_OF_MEMORY || !ctx || strstr(spx_last_error(ctx), "memory"),
          "out-of-memory message does not say so: %s", spx_last_error(ctx));
    *where = s;
    spx_matrix_destroy(F);
    spx_matrix_destroy(A);
    spx_dense_free(&B);
    spx_dense_free(&C);
    spx_ctx_destroy(ctx);
    return s;
}

static void sweep(int threads)
{
    long base = spx__debug_live_allocations();
    spx_status where;
    CHECK(run_path(threads, &where) == SPX_OK, "the path itself fails: %s", spx_status_name(where));
    CHECK(spx__debug_live_allocations() == base, "leak on success: %ld", spx__debug_live_allocations() - base);
    long n;
    for (n = 1; n < 100000; n++) {
        spx__debug_fail_alloc_after(n);
        spx_status s = run_path(threads, &where);
        spx__debug_fail_alloc_after(0);
        if (s == SPX_OK)
            break; /* n passed the last allocation of the path */
        CHECK(s == SPX_ERR_OUT_OF_MEMORY, "allocation %ld failed: status %s instead of out of memory", n,
              spx_status_name(s));
        long live = spx__debug_live_allocations();
        CHECK(live == base, "allocation %ld failed: %ld allocations leaked", n, live - base);
        if (test_failures > 20)
            break;
    }
    printf("threads %d: %ld allocation sites failed in turn\n", threads, n - 1);
    CHECK(n > 50, "suspiciously few allocations (%ld) on the path", n - 1);
}

int main(void)
{
    test_init();
    sweep(1);
    sweep(2);
    return test_finish("test_failinject");
}

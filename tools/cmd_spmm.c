/* spx spmm: C = alpha * op(A) * B + beta * C on a file matrix, timed, optionally
 * checked against the reference backend. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double element(const spx_dense *D, int64_t i, int64_t j)
{
    int64_t o = D->layout == SPX_ROW_MAJOR ? i * D->ld + j : j * D->ld + i;
    return D->dtype == SPX_F64 ? ((const double *)D->data)[o] : ((const float *)D->data)[o];
}

/* Relative Frobenius error of X against R (host, f32 or f64, same shape). */
static double rel_error(const spx_dense *X, const spx_dense *R)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < X->rows; i++)
        for (int64_t j = 0; j < X->cols; j++) {
            double x = element(X, i, j), r = element(R, i, j);
            if (!isfinite(x) && isfinite(r))
                return INFINITY;
            num += (x - r) * (x - r);
            den += r * r;
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Relative error allowed against the reference: by value type, and by the
 * tensor-core precision when one is asked for. */
static double bound_for(spx_dtype t, spx_precision p)
{
    if (p == SPX_PRECISION_TF32)
        return 5e-3;
    if (p != SPX_PRECISION_EXACT)
        return 2e-2;
    switch (t) {
    case SPX_F64: return 1e-10;
    case SPX_F32: return 1e-4;
    default: return 2e-2;
    }
}

int cmd_spmm(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "check|explain|deterministic",
                        "n|b|seed|out|backend|op|alpha|beta|dtype|index|format|block|sell-c|sigma|repeat|threads|"
                        "alg|precision|panel|k-slabs",
                        1, "expected one matrix file A", &a);
    if (r)
        return r;
    int64_t n, repeat, threads;
    uint64_t seed;
    double alpha, beta;
    spx_format fmt;
    spx_format_params fp;
    spx_read_options ro = {0};
    const char *bfile = cli_str(&a, "b", NULL), *out = cli_str(&a, "out", NULL);
    const char *ops = cli_str(&a, "op", "n");
    if (!cli_i64(&a, "n", 0, &n) || !cli_u64(&a, "seed", 1, &seed) || !cli_f64(&a, "alpha", 1, &alpha) ||
        !cli_f64(&a, "beta", 0, &beta) || !cli_i64(&a, "repeat", 1, &repeat) ||
        !cli_i64(&a, "threads", 0, &threads) || !cli_dtype(&a, "dtype", &ro.dtype) ||
        !cli_index_type(&a, &ro.index_type) || !cli_format_params(&a, &fmt, &fp))
        return CLI_USAGE;
    bool check = cli_flag(&a, "check"), explain = cli_flag(&a, "explain");
    bool deterministic = cli_flag(&a, "deterministic");
    spx_spmm_options so = {0};
    const char *algname = cli_str(&a, "alg", "auto"), *precname = cli_str(&a, "precision", "exact");
    if (spx_spmm_alg_from_name(algname, &so.alg) != SPX_OK) {
        cli_usage_error("unknown algorithm '%s' (auto, row_split, warp_row, block_row, merge_path, sell, bsr, "
                        "outer, gather_tc, tiled, dense, band, row_batches)", algname);
        return CLI_USAGE;
    }
    if (spx_precision_from_name(precname, &so.precision) != SPX_OK) {
        cli_usage_error("unknown precision '%s' (exact, tf32, bf16, f16)", precname);
        return CLI_USAGE;
    }
    if (!cli_i64(&a, "panel", 0, &so.panel_cols) || !cli_i64(&a, "k-slabs", 0, &so.k_slabs))
        return CLI_USAGE;
    if ((bfile != NULL) == (n > 0)) {
        cli_usage_error("give either --n N (random B with N columns) or --b B.mtx");
        return CLI_USAGE;
    }
    if (strcmp(ops, "n") && strcmp(ops, "t")) {
        cli_usage_error("--op expects n or t, got '%s'", ops);
        return CLI_USAGE;
    }
    if (repeat < 1 || threads < 0) {
        cli_usage_error("--repeat must be >= 1 and --threads >= 0");
        return CLI_USAGE;
    }
    spx_op op = ops[0] == 't' ? SPX_OP_TRANSPOSE : SPX_OP_NONE;
    ro.seed = seed;
    ro.format = fmt;
    ro.dup = SPX_DUP_SUM;

    spx_ctx *ctx = NULL, *ref = NULL;
    spx_matrix *A = NULL, *Af = NULL;
    spx_dense B = {0}, C = {0}, Cref = {0}, C0 = {0};
    double *times = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    spx_ctx_set_num_threads(ctx, (int)threads);
    spx_ctx_set_deterministic(ctx, deterministic);
    spx_status s = spx_matrix_read(ctx, a.pos[0], &ro, &A);
    if (s) {
        fprintf(stderr, "spx spmm: %s (%s)\n", spx_last_error(ctx), spx_status_name(s));
        r = CLI_FAILED;
        goto done;
    }
    if (fmt == SPX_BSR || fmt == SPX_SELL) { /* read gives CSR; blocked formats need parameters */
        if ((s = spx_matrix_convert(ctx, A, fmt, &fp, &Af))) {
            r = cli_fail(ctx, s, "conversion");
            goto done;
        }
        spx_matrix_destroy(A);
        A = Af;
        Af = NULL;
    }
    spx_matrix_info in;
    spx_matrix_info_get(A, &in);
    spx_dtype vt = in.dtype == SPX_PATTERN ? (ro.dtype && ro.dtype != SPX_PATTERN ? ro.dtype : SPX_F32) : in.dtype;
    int64_t m = op == SPX_OP_NONE ? in.rows : in.cols, k = op == SPX_OP_NONE ? in.cols : in.rows;
    if (bfile) {
        if ((s = spx_dense_read(ctx, bfile, vt, SPX_ROW_MAJOR, &B))) {
            fprintf(stderr, "spx spmm: %s (%s)\n", spx_last_error(ctx), spx_status_name(s));
            r = CLI_FAILED;
            goto done;
        }
        n = B.cols;
    } else if ((s = spx_dense_alloc(ctx, k, n, vt, SPX_ROW_MAJOR, &B)) ||
               (s = spx_dense_fill_random(ctx, &B, seed + 1))) {
        r = cli_fail(ctx, s, "creating B");
        goto done;
    }
    if ((s = spx_dense_alloc(ctx, m, n, vt, SPX_ROW_MAJOR, &C)) ||
        (s = spx_dense_alloc(ctx, m, n, vt, SPX_ROW_MAJOR, &C0)) ||
        (beta != 0 && (s = spx_dense_fill_random(ctx, &C0, seed + 2)))) {
        r = cli_fail(ctx, s, "creating C");
        goto done;
    }
    size_t cbytes = (size_t)(m * n) * spx_dtype_size(vt);
    times = malloc(sizeof(double) * (size_t)repeat);
    if (!times) {
        fprintf(stderr, "spx spmm: out of memory\n");
        r = CLI_FAILED;
        goto done;
    }
    for (int64_t it = 0; it < repeat; it++) {
        if (cbytes)
            memcpy(C.data, C0.data, cbytes);
        double t0 = cli_now_ms();
        s = spx_spmm_ex(ctx, op, alpha, A, &B, beta, &C, &so);
        times[it] = cli_now_ms() - t0;
        if (s) {
            r = cli_fail(ctx, s, "spmm");
            goto done;
        }
    }
    if (explain) {
        spx_spmm_plan *plan = NULL;
        if ((s = spx_spmm_plan_create(ctx, op, A, n, vt, &so, &plan))) {
            r = cli_fail(ctx, s, "explain");
            goto done;
        }
        printf("%s(plan built in %.2f ms)\n", spx_spmm_plan_explain(plan), spx_spmm_plan_build_ms(plan));
        spx_spmm_plan_destroy(plan);
    }
    qsort(times, (size_t)repeat, sizeof *times, cli_cmp_double);
    double med = times[repeat / 2];
    double gflops = med > 0 ? 2.0 * (double)in.nnz * (double)n / (med * 1e6) : 0;
    printf("spmm: %s (%lld x %lld, nnz %lld, %s %s), op %s, N=%lld, backend %s\n", a.pos[0],
           (long long)in.rows, (long long)in.cols, (long long)in.nnz, spx_format_name(in.format),
           spx_dtype_name(vt), op ? "T" : "N", (long long)n,
           spx_backend_name(spx_ctx_backend(ctx)));
    printf("time: %.3f ms (median of %lld, host clock, includes transfers and, on the first call, planning), "
           "%.2f GFLOP/s\n", med, (long long)repeat, gflops);
    if (check) {
        if (vt != SPX_F32 && vt != SPX_F64) {
            printf("check: the CLI compares f32 and f64 results only\n");
        } else if (spx_ctx_create(&ref) || spx_ctx_set_backend(ref, SPX_BACKEND_REF)) {
            fprintf(stderr, "spx spmm: cannot create the reference context\n");
            r = CLI_FAILED;
            goto done;
        } else {
            if ((s = spx_dense_alloc(ref, m, n, vt, SPX_ROW_MAJOR, &Cref))) {
                r = cli_fail(ref, s, "check");
                goto done;
            }
            if (cbytes)
                memcpy(Cref.data, C0.data, cbytes);
            if ((s = spx_spmm(ref, op, alpha, A, &B, beta, &Cref))) {
                r = cli_fail(ref, s, "reference spmm");
                goto done;
            }
            double err = rel_error(&C, &Cref), bound = bound_for(vt, so.precision);
            printf("check: relative error %.3g vs the ref backend (bound %.0e): %s\n", err, bound,
                   err <= bound ? "ok" : "FAILED");
            if (!(err <= bound))
                r = CLI_FAILED;
        }
    }
    if (out && (s = spx_dense_write(ctx, &C, out))) {
        fprintf(stderr, "spx spmm: %s (%s)\n", spx_last_error(ctx), spx_status_name(s));
        r = CLI_FAILED;
    }
done:
    free(times);
    spx_dense_free(&B);
    spx_dense_free(&C);
    spx_dense_free(&C0);
    spx_dense_free(&Cref);
    spx_matrix_destroy(A);
    spx_ctx_destroy(ref);
    spx_ctx_destroy(ctx);
    return r;
}

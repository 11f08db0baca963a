/* spx info / convert / gen. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int read_matrix(spx_ctx *ctx, const char *path, cli_args *a, spx_matrix **A)
{
    spx_read_options o = {0};
    if (!cli_dtype(a, "dtype", &o.dtype) || !cli_index_type(a, &o.index_type) ||
        !cli_u64(a, "seed", 0, &o.seed))
        return CLI_USAGE;
    spx_status s = spx_matrix_read(ctx, path, &o, A);
    if (s) {
        fprintf(stderr, "spx %s: %s (%s)\n", cli_command, spx_last_error(ctx), spx_status_name(s));
        return CLI_FAILED;
    }
    return CLI_OK;
}

static int unused_options(cli_args *a)
{
    for (int i = 0; i < a->nopt; i++)
        if (!a->opt[i].used) {
            cli_usage_error("option --%s does not apply here", a->opt[i].name);
            return CLI_USAGE;
        }
    return CLI_OK;
}

static void print_hist_text(const spx_matrix_stats *st)
{
    printf("row lengths:   ");
    for (int b = 0; b < SPX_STATS_HIST_BINS; b++) {
        if (!st->row_hist[b])
            continue;
        if (b == 0)
            printf(" [0]:%lld", (long long)st->row_hist[b]);
        else if (b == 1)
            printf(" [1]:%lld", (long long)st->row_hist[b]);
        else
            printf(" [%lld,%lld]:%lld", 1LL << (b - 1), (1LL << b) - 1, (long long)st->row_hist[b]);
    }
    printf("\n");
}

int cmd_info(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "json", "format|dtype|index|seed|block|sell-c|sigma", 1,
                        "expected one matrix file", &a);
    if (r)
        return r;
    bool json = cli_flag(&a, "json");
    spx_format fmt;
    spx_format_params fp;
    if (!cli_format_params(&a, &fmt, &fp))
        return CLI_USAGE;
    spx_ctx *ctx = NULL;
    spx_matrix *A = NULL, *B = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    double t0 = cli_now_ms();
    if ((r = read_matrix(ctx, a.pos[0], &a, &A)) || (r = unused_options(&a)))
        goto done;
    double read_ms = cli_now_ms() - t0;
    if (fmt != SPX_FORMAT_DEFAULT) {
        spx_status s = spx_matrix_convert(ctx, A, fmt, &fp, &B);
        if (s) {
            r = cli_fail(ctx, s, "conversion");
            goto done;
        }
        spx_matrix_destroy(A);
        A = B;
        B = NULL;
    }
    spx_matrix_info in;
    spx_matrix_stats st;
    spx_matrix_info_get(A, &in);
    spx_status s = spx_matrix_stats_compute(ctx, A, &st);
    if (s) {
        r = cli_fail(ctx, s, "statistics");
        goto done;
    }
    const char *itype = in.index_type == SPX_INDEX_I64 ? "i64" : "i32";
    if (json) {
        printf("{\"file\": \"%s\", \"format\": \"%s\", \"index_type\": \"%s\", \"dtype\": \"%s\",\n",
               a.pos[0], spx_format_name(in.format), itype, spx_dtype_name(in.dtype));
        printf(" \"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"density\": %.6g,\n",
               (long long)st.rows, (long long)st.cols, (long long)st.nnz, st.density);
        printf(" \"row_min\": %lld, \"row_max\": %lld, \"row_mean\": %.6g, \"row_median\": %.6g,"
               " \"row_std\": %.6g, \"row_cv\": %.6g,\n",
               (long long)st.row_min, (long long)st.row_max, st.row_mean, st.row_median,
               st.row_std, st.row_cv);
        printf(" \"empty_rows\": %lld, \"empty_cols\": %lld, \"lower_bandwidth\": %lld,"
               " \"upper_bandwidth\": %lld, \"bandwidth\": %lld, \"diagonal_nnz\": %lld,\n",
               (long long)st.empty_rows, (long long)st.empty_cols, (long long)st.lower_bandwidth,
               (long long)st.upper_bandwidth, (long long)st.bandwidth, (long long)st.diagonal_nnz);
        if (in.format == SPX_BSR)
            printf(" \"block_rows\": %lld, \"block_cols\": %lld, \"nblocks\": %lld,\n",
                   (long long)in.block_rows, (long long)in.block_cols, (long long)in.nblocks);
        if (in.format == SPX_SELL)
            printf(" \"sell_c\": %lld, \"sell_sigma\": %lld, \"sell_slots\": %lld,\n",
                   (long long)in.sell_c, (long long)in.sell_sigma, (long long)in.sell_slots);
        printf(" \"row_hist\": [");
        int last = 0;
        for (int b = 0; b < SPX_STATS_HIST_BINS; b++)
            if (st.row_hist[b])
                last = b;
        for (int b = 0; b <= last; b++)
            printf("%s%lld", b ? ", " : "", (long long)st.row_hist[b]);
        printf("],\n \"read_ms\": %.3f}\n", read_ms);
    } else {
        printf("file:          %s (read in %.1f ms)\n", a.pos[0], read_ms);
        printf("format:        %s, %s indices, %s values\n", spx_format_name(in.format), itype,
               spx_dtype_name(in.dtype));
        if (in.format == SPX_BSR)
            printf("blocks:        %lld x %lld, %lld stored\n", (long long)in.block_rows,
                   (long long)in.block_cols, (long long)in.nblocks);
        if (in.format == SPX_SELL)
            printf("slices:        C=%lld sigma=%lld, %lld slots (%.1f%% padding)\n",
                   (long long)in.sell_c, (long long)in.sell_sigma, (long long)in.sell_slots,
                   in.sell_slots ? 100.0 * (double)(in.sell_slots - in.nnz) / (double)in.sell_slots : 0.0);
        printf("shape:         %lld x %lld, nnz %lld, density %.3g\n", (long long)st.rows,
               (long long)st.cols, (long long)st.nnz, st.density);
        printf("entries/row:   min %lld, max %lld, mean %.3f, median %.1f, std %.3f, cv %.3f\n",
               (long long)st.row_min, (long long)st.row_max, st.row_mean, st.row_median, st.row_std,
               st.row_cv);
        printf("empty:         %lld rows, %lld columns\n", (long long)st.empty_rows,
               (long long)st.empty_cols);
        printf("bandwidth:     %lld (lower %lld, upper %lld), diagonal entries %lld\n",
               (long long)st.bandwidth, (long long)st.lower_bandwidth, (long long)st.upper_bandwidth,
               (long long)st.diagonal_nnz);
        print_hist_text(&st);
    }
done:
    spx_matrix_destroy(A);
    spx_ctx_destroy(ctx);
    return r;
}

int cmd_convert(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "", "format|block|sell-c|sigma|dtype|index|seed|to-dtype|to-index",
                        2, "expected IN and OUT files", &a);
    if (r)
        return r;
    spx_format fmt;
    spx_format_params fp;
    if (!cli_format_params(&a, &fmt, &fp))
        return CLI_USAGE;
    spx_ctx *ctx = NULL;
    spx_matrix *A = NULL, *B = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    if ((r = read_matrix(ctx, a.pos[0], &a, &A)) || (r = unused_options(&a)))
        goto done;
    spx_status s = SPX_OK;
    if (fmt != SPX_FORMAT_DEFAULT && (s = spx_matrix_convert(ctx, A, fmt, &fp, &B))) {
        r = cli_fail(ctx, s, "conversion");
        goto done;
    }
    if ((s = spx_matrix_write(ctx, B ? B : A, a.pos[1]))) {
        fprintf(stderr, "spx convert: %s (%s)\n", spx_last_error(ctx), spx_status_name(s));
        r = CLI_FAILED;
    }
done:
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_ctx_destroy(ctx);
    return r;
}

/* spx gen FAMILY ... --out FILE */
int cmd_gen(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "",
                        "out|seed|dtype|index|rows|cols|per-row|scale|edge-factor|a|b|c|dims|grid|"
                        "lower|upper|block|density|sparsity|nm|format|sell-c|sigma",
                        1, "expected one family: uniform, rmat, laplacian, banded, block-sparse, pruned, nm",
                        &a);
    if (r)
        return r;
    const char *fam = a.pos[0], *out = cli_str(&a, "out", NULL);
    if (!out) {
        cli_usage_error("--out FILE is required");
        return CLI_USAGE;
    }
    spx_dtype dt;
    spx_index_type it;
    uint64_t seed;
    int64_t rows, cols;
    spx_format fmt;
    spx_format_params fp;
    if (!cli_dtype(&a, "dtype", &dt) || !cli_index_type(&a, &it) || !cli_u64(&a, "seed", 1, &seed) ||
        !cli_i64(&a, "rows", 1000, &rows) || !cli_i64(&a, "cols", rows, &cols) ||
        !cli_format_params(&a, &fmt, &fp))
        return CLI_USAGE;
    spx_ctx *ctx = NULL;
    spx_matrix *A = NULL, *B = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    spx_status s = SPX_OK;
    r = CLI_USAGE;
    if (strcmp(fam, "uniform") == 0) {
        int64_t k;
        if (cli_i64(&a, "per-row", 8, &k) && !(r = unused_options(&a)))
            s = spx_gen_uniform(ctx, rows, cols, k, seed, dt, it, &A);
    } else if (strcmp(fam, "rmat") == 0) {
        int64_t scale, ef;
        double pa, pb, pc;
        if (cli_i64(&a, "scale", 16, &scale) && cli_i64(&a, "edge-factor", 16, &ef) &&
            cli_f64(&a, "a", 0, &pa) && cli_f64(&a, "b", 0, &pb) && cli_f64(&a, "c", 0, &pc) &&
            !(r = unused_options(&a)))
            s = spx_gen_rmat(ctx, (int)scale, ef, pa, pb, pc, seed, dt, it, &A);
    } else if (strcmp(fam, "laplacian") == 0) {
        int64_t dims, n;
        if (cli_i64(&a, "dims", 2, &dims) && cli_i64(&a, "grid", 100, &n) && !(r = unused_options(&a)))
            s = spx_gen_laplacian(ctx, (int)dims, n, dt, it, &A);
    } else if (strcmp(fam, "banded") == 0) {
        int64_t lo, up;
        if (cli_i64(&a, "lower", 2, &lo) && cli_i64(&a, "upper", 2, &up) && !(r = unused_options(&a)))
            s = spx_gen_banded(ctx, rows, cols, lo, up, seed, dt, it, &A);
    } else if (strcmp(fam, "block-sparse") == 0) {
        double dens;
        int64_t br = fp.block_rows ? fp.block_rows : 16, bc = fp.block_cols ? fp.block_cols : 16;
        if (cli_f64(&a, "density", 0.1, &dens) && !(r = unused_options(&a)))
            s = spx_gen_block_sparse(ctx, rows, cols, br, bc, dens, seed, dt, it, &A);
    } else if (strcmp(fam, "pruned") == 0) {
        double sp;
        if (cli_f64(&a, "sparsity", 0.9, &sp) && !(r = unused_options(&a)))
            s = spx_gen_pruned(ctx, rows, cols, sp, seed, dt, it, &A);
    } else if (strcmp(fam, "nm") == 0) {
        const char *nm = cli_str(&a, "nm", "2:4");
        int n, m;
        char colon;
        if (sscanf(nm, "%d%c%d", &n, &colon, &m) != 3 || colon != ':') {
            cli_usage_error("--nm expects N:M, got '%s'", nm);
        } else if (!(r = unused_options(&a)))
            s = spx_gen_nm(ctx, rows, cols, n, m, seed, dt, it, &A);
    } else {
        cli_usage_error("unknown family '%s' (uniform, rmat, laplacian, banded, block-sparse, pruned, nm)", fam);
    }
    if (r)
        goto done;
    if (s) {
        r = cli_fail(ctx, s, fam);
        goto done;
    }
    if (fmt != SPX_FORMAT_DEFAULT && fmt != SPX_CSR && (s = spx_matrix_convert(ctx, A, fmt, &fp, &B))) {
        r = cli_fail(ctx, s, "conversion");
        goto done;
    }
    if ((s = spx_matrix_write(ctx, B ? B : A, out))) {
        r = cli_fail(ctx, s, "writing");
        goto done;
    }
    spx_matrix_info in;
    spx_matrix_info_get(A, &in);
    fprintf(stderr, "spx gen: %s %lld x %lld, nnz %lld -> %s\n", fam, (long long)in.rows,
            (long long)in.cols, (long long)in.nnz, out);
done:
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_ctx_destroy(ctx);
    return r;
}

/* spx bench: rows, the log's tables, the summary, and the CSV and JSON files. */
#ifdef SPX_HAVE_CUDA
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bench_row *bench_row_new(bench *b, const bench_job *j, const bench_mat *M, int64_t n,
                         const char *impl, const char *alg)
{
    if (b->nrows == b->caprows) {
        size_t cap = b->caprows ? 2 * b->caprows : 64;
        bench_row *grown = realloc(b->rows, cap * sizeof *grown);
        if (!grown) {
            b->broken = true;
            snprintf(b->broken_msg, sizeof b->broken_msg, "out of host memory for result rows");
            return NULL;
        }
        b->rows = grown;
        b->caprows = cap;
    }
    bench_row *r = &b->rows[b->nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", M->c->name);
    r->kind = M->c->kind;
    r->m = M->info.rows;
    r->k = M->info.cols;
    r->nnz = M->info.nnz;
    r->n = n;
    r->impl = impl;
    snprintf(r->alg, sizeof r->alg, "%s", alg ? alg : "?");
    r->precision = "exact";
    r->state = ROW_NA;
    r->build_ms = r->median_ms = r->min_ms = r->host_us = NAN;
    r->gflops = r->gbs = r->pct_copy = r->speedup = NAN;
    r->err_ref = r->err_rows = r->bound = NAN;
    r->bytes = j ? j->bytes : NAN;
    return r;
}

static const char *state_name(row_state s)
{
    return s == ROW_RAN ? "ok" : s == ROW_NA ? "n/a" : "error";
}

static const char *check_name(check_state c)
{
    return c == CHECK_OK ? "ok" : c == CHECK_FAIL ? "FAIL" : "";
}

/* A message on one line. */
static void put_line(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

void bench_progress(const bench_row *r)
{
    if (r->state == ROW_RAN) {
        fprintf(stderr, "spx bench:   %-8s %-14s %10.4f ms  check %s\n", r->impl, r->alg,
                r->median_ms, r->check == CHECK_OK ? "ok" : "FAILED");
        return;
    }
    fprintf(stderr, "spx bench:   %-8s %-14s %s: ", r->impl, r->alg, state_name(r->state));
    put_line(stderr, r->reason);
    fputc('\n', stderr);
}

/* ---- files ---------------------------------------------------------------------- */

/* A CSV field, quoted. */
static void csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
}

static const char csv_header[] =
    "matrix,kind,m,k,nnz,n,impl,alg,precision,status,reason,build_ms,median_ms,min_ms,repeats,"
    "gflops,gbs,pct_copy_bw,speedup_vs_best_cusparse,check,err_vs_cusparse,err_vs_host_rows,"
    "bound,compulsory_bytes,latency_bound,host_us\n";

static void csv_row(FILE *f, const bench_row *r)
{
    csv_str(f, r->matrix);
    fprintf(f, ",%s,%lld,%lld,%lld,%lld,%s,", r->kind, (long long)r->m, (long long)r->k,
            (long long)r->nnz, (long long)r->n, r->impl);
    csv_str(f, r->alg);
    fprintf(f, ",%s,%s,", r->precision, state_name(r->state));
    csv_str(f, r->reason);
    const double nums[] = {r->build_ms, r->median_ms, r->min_ms};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        fputc(',', f);
        csv_num(f, nums[i]);
    }
    fprintf(f, ",%d", r->repeats);
    const double more[] = {r->gflops, r->gbs, r->pct_copy, r->speedup};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        fputc(',', f);
        csv_num(f, more[i]);
    }
    fprintf(f, ",%s", check_name(r->check));
    const double last[] = {r->err_ref, r->err_rows, r->bound, r->bytes};
    for (size_t i = 0; i < sizeof last / sizeof *last; i++) {
        fputc(',', f);
        csv_num(f, last[i]);
    }
    fprintf(f, ",%d,", r->latency_bound ? 1 : 0);
    csv_num(f, r->host_us);
    fputc('\n', f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v)
{
    fprintf(f, ", \"%s\": ", key);
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

static void json_row(FILE *f, const bench_row *r)
{
    fputs("    {\"matrix\": ", f);
    json_str(f, r->matrix);
    fprintf(f, ", \"kind\": \"%s\", \"m\": %lld, \"k\": %lld, \"nnz\": %lld, \"n\": %lld, "
            "\"impl\": \"%s\", \"alg\": ", r->kind, (long long)r->m, (long long)r->k,
            (long long)r->nnz, (long long)r->n, r->impl);
    json_str(f, r->alg);
    fprintf(f, ", \"precision\": \"%s\", \"status\": \"%s\", \"reason\": ", r->precision,
            state_name(r->state));
    json_str(f, r->reason);
    json_num(f, "build_ms", r->build_ms);
    json_num(f, "median_ms", r->median_ms);
    json_num(f, "min_ms", r->min_ms);
    fprintf(f, ", \"repeats\": %d", r->repeats);
    json_num(f, "gflops", r->gflops);
    json_num(f, "gbs", r->gbs);
    json_num(f, "pct_copy_bw", r->pct_copy);
    json_num(f, "speedup_vs_best_cusparse", r->speedup);
    fprintf(f, ", \"check\": \"%s\"", check_name(r->check));
    json_num(f, "err_vs_cusparse", r->err_ref);
    json_num(f, "err_vs_host_rows", r->err_rows);
    json_num(f, "bound", r->bound);
    json_num(f, "compulsory_bytes", r->bytes);
    fprintf(f, ", \"latency_bound\": %s", r->latency_bound ? "true" : "false");
    json_num(f, "host_us", r->host_us);
    fputc('}', f);
}

static double geomean_speedup(const bench *b, bool use_auto, int *count)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < b->nsums; i++) {
        const bench_summary *s = &b->sums[i];
        double t = use_auto ? s->auto_ms : s->best_spx_ms;
        if (isfinite(t) && isfinite(s->best_cusparse_ms) && t > 0 && s->best_cusparse_ms > 0) {
            sum += log(s->best_cusparse_ms / t);
            n++;
        }
    }
    *count = n;
    return n ? exp(sum / n) : NAN;
}

/* The whole JSON file, rewritten after every job so that it is always complete. */
void bench_write_json(const bench *b)
{
    if (!b->o.json)
        return;
    FILE *f = fopen(b->o.json, "w");
    if (!f) {
        fprintf(stderr, "spx bench: cannot write %s\n", b->o.json);
        return;
    }
    int nauto, nbest;
    double gauto = geomean_speedup(b, true, &nauto), gbest = geomean_speedup(b, false, &nbest);
    fputs("{\n  \"tool\": \"spx bench spmm\",\n  \"command\": ", f);
    json_str(f, b->command);
    fprintf(f, ",\n  \"date\": \"%s\",\n  \"device\": {\"name\": ", b->date);
    json_str(f, b->dev.name);
    fprintf(f, ", \"sm_count\": %d, \"cc\": \"%d.%d\", \"l2_bytes\": %lld, \"global_mem_bytes\": %lld}",
            b->dev.sm_count, b->dev.cc_major, b->dev.cc_minor, (long long)b->dev.l2_bytes,
            (long long)b->dev.global_mem_bytes);
    fputs(",\n  \"copy_gbs\": ", f);
    if (b->copy_gbs > 0)
        fprintf(f, "%.6g", b->copy_gbs);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"dtype\": \"%s\", \"precision\": \"%s\", \"repeat\": %lld, \"warmup\": %lld, \"budget_ms\": %g",
            spx_dtype_name(b->o.dtype), spx_precision_name(b->o.precision), (long long)b->o.repeat, (long long)b->o.warmup,
            b->o.budget_ms);
    fputs(",\n  \"rows\": [\n", f);
    for (size_t i = 0; i < b->nrows; i++) {
        json_row(f, &b->rows[i]);
        fputs(i + 1 < b->nrows ? ",\n" : "\n", f);
    }
    fputs("  ],\n  \"summary\": [\n", f);
    for (size_t i = 0; i < b->nsums; i++) {
        const bench_summary *s = &b->sums[i];
        fputs("    {\"matrix\": ", f);
        json_str(f, s->matrix);
        fprintf(f, ", \"n\": %lld, \"best_spx\": ", (long long)s->n);
        json_str(f, s->best_spx);
        json_num(f, "best_spx_ms", s->best_spx_ms);
        json_num(f, "auto_ms", s->auto_ms);
        fputs(", \"best_cusparse\": ", f);
        json_str(f, s->best_cusparse);
        json_num(f, "best_cusparse_ms", s->best_cusparse_ms);
        json_num(f, "dense_tf32_ms", s->dense_tf32_ms);
        fprintf(f, ", \"latency_bound\": %s, \"failed_checks\": %d}%s\n",
                s->latency_bound ? "true" : "false", s->failures, i + 1 < b->nsums ? "," : "");
    }
    fputs("  ]", f);
    json_num(f, "geomean_auto_vs_best_cusparse", gauto);
    fprintf(f, ", \"geomean_auto_cases\": %d", nauto);
    json_num(f, "geomean_best_spx_vs_best_cusparse", gbest);
    fprintf(f, ", \"failed_checks\": %d, \"complete\": %s", b->failures,
            b->broken ? "false" : "true");
    if (b->broken) {
        fputs(", \"stopped\": ", f);
        json_str(f, b->broken_msg);
    }
    fputs("\n}\n", f);
    if (fclose(f) != 0)
        fprintf(stderr, "spx bench: error writing %s\n", b->o.json);
}

bool bench_open_outputs(bench *b)
{
    if (b->o.csv) {
        b->csv = fopen(b->o.csv, "w");
        if (!b->csv) {
            fprintf(stderr, "spx bench: cannot create %s\n", b->o.csv);
            return false;
        }
        fputs(csv_header, b->csv);
        fflush(b->csv);
    }
    if (b->o.json) {
        FILE *f = fopen(b->o.json, "w");
        if (!f) {
            fprintf(stderr, "spx bench: cannot create %s\n", b->o.json);
            return false;
        }
        fclose(f);
        bench_write_json(b);
    }
    return true;
}

void bench_close_outputs(bench *b)
{
    if (b->csv && fclose(b->csv) != 0)
        fprintf(stderr, "spx bench: error writing %s\n", b->o.csv);
    b->csv = NULL;
}

void bench_emit_rows(bench *b, size_t row0)
{
    for (size_t i = row0; b->csv && i < b->nrows; i++)
        csv_row(b->csv, &b->rows[i]);
    if (b->csv)
        fflush(b->csv);
    bench_write_json(b);
}

/* ---- the log ---------------------------------------------------------------------- */

void bench_print_matrix(const bench *b, const bench_mat *M, double load_ms)
{
    (void)b;
    const spx_matrix_info *in = &M->info;
    bool i64 = in->index_type == SPX_INDEX_I64;
    int64_t longest = bench_idx(M->ha.offsets, i64, M->longest_row + 1) -
                      bench_idx(M->ha.offsets, i64, M->longest_row);
    printf("\n== %s (%s)\n   %lld x %lld, nnz %lld (%.2f per row, longest row %lld), %lld nonempty "
           "columns, %s indices\n   values: %s; loaded in %.0f ms\n",
           M->c->name, M->c->kind, (long long)in->rows, (long long)in->cols, (long long)in->nnz,
           (double)in->nnz / (double)in->rows, (long long)longest, (long long)M->nonempty_cols,
           i64 ? "int64" : "int32", M->values, load_ms);
}

static void fmt_num(char *buf, size_t n, double v, const char *fmt)
{
    if (isfinite(v))
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
}

static void print_row(const bench_row *r)
{
    char build[24], med[24], mn[24], host[24], gf[24], gb[24], pct[24], sp[24], check[64];
    fmt_num(build, sizeof build, r->build_ms, "%.3f");
    fmt_num(med, sizeof med, r->median_ms, "%.4f");
    fmt_num(mn, sizeof mn, r->min_ms, "%.4f");
    fmt_num(host, sizeof host, r->host_us, "%.1f");
    fmt_num(gf, sizeof gf, r->gflops, "%.1f");
    fmt_num(gb, sizeof gb, r->gbs, "%.1f");
    fmt_num(pct, sizeof pct, r->pct_copy, "%.1f");
    fmt_num(sp, sizeof sp, r->speedup, "%.2fx");
    if (r->check == CHECK_OK)
        snprintf(check, sizeof check, isfinite(r->err_ref) ? "ok %.1e" : "ok %.1e (host rows)",
                 isfinite(r->err_ref) ? r->err_ref : r->err_rows);
    else if (r->check == CHECK_FAIL)
        snprintf(check, sizeof check, "FAIL %.2g/%.2g > %.0e !!!", r->err_ref, r->err_rows, r->bound);
    else
        snprintf(check, sizeof check, "-");
    printf("  %-8s %-14s %-5s %9s %10s %10s %7s %9s %8s %6s %8s  %s", r->impl, r->alg, r->precision,
           build, med, mn, host, gf, gb, pct, sp, check);
    if (r->state != ROW_RAN) {
        printf("  %s: ", r->state == ROW_NA ? "n/a" : "ERROR");
        put_line(stdout, r->reason);
    }
    printf("\n");
}

/* Fill the derived columns of the job's rows and add its summary line. */
static void derive(bench *b, bench_job *j, int64_t n)
{
    bench_summary s;
    memset(&s, 0, sizeof s);
    snprintf(s.matrix, sizeof s.matrix, "%s", j->mat->c->name);
    s.n = n;
    s.best_spx_ms = s.auto_ms = s.best_cusparse_ms = s.dense_tf32_ms = NAN;
    snprintf(s.best_spx, sizeof s.best_spx, "-");
    snprintf(s.best_cusparse, sizeof s.best_cusparse, "-");
    s.latency_bound = b->copy_gbs > 0 && isfinite(j->bytes) &&
                      j->bytes / (b->copy_gbs * 1e3) < BENCH_LATENCY_US;
    for (size_t i = j->row0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        bool good = r->state == ROW_RAN && r->check == CHECK_OK;
        s.failures += r->check == CHECK_FAIL;
        if (!good)
            continue;
        if (strcmp(r->impl, "cusparse") == 0 && !(r->median_ms >= s.best_cusparse_ms)) {
            s.best_cusparse_ms = r->median_ms;
            snprintf(s.best_cusparse, sizeof s.best_cusparse, "%s", r->alg);
        }
        if (strcmp(r->impl, "spx") == 0 && !(r->median_ms >= s.best_spx_ms)) {
            s.best_spx_ms = r->median_ms;
            snprintf(s.best_spx, sizeof s.best_spx, "%s", r->alg);
        }
        if (strcmp(r->impl, "spx") == 0 && strcmp(r->alg, spx_spmm_alg_name(SPX_SPMM_AUTO)) == 0)
            s.auto_ms = r->median_ms;
        if (strcmp(r->alg, "cublas_tf32") == 0)
            s.dense_tf32_ms = r->median_ms;
    }
    for (size_t i = j->row0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        r->latency_bound = s.latency_bound;
        if (r->state != ROW_RAN || !(r->median_ms > 0))
            continue;
        r->gflops = 2.0 * (double)r->nnz * (double)r->n / (r->median_ms * 1e6);
        r->gbs = r->bytes / (r->median_ms * 1e6);
        r->pct_copy = b->copy_gbs > 0 ? 100.0 * r->gbs / b->copy_gbs : NAN;
        /* a wrong result never counts as a speedup */
        r->speedup = r->check == CHECK_OK ? s.best_cusparse_ms / r->median_ms : NAN;
    }
    if (b->nsums == b->capsums) {
        size_t cap = b->capsums ? 2 * b->capsums : 32;
        bench_summary *grown = realloc(b->sums, cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "spx bench: out of host memory for the summary\n");
            return;
        }
        b->sums = grown;
        b->capsums = cap;
    }
    b->sums[b->nsums++] = s;
}

void bench_finish_job(bench *b, bench_job *j, int64_t n)
{
    derive(b, j, n);
    double floor_ms = b->copy_gbs > 0 ? j->bytes / (b->copy_gbs * 1e6) : NAN;
    printf("\n-- %s, N = %lld: compulsory %.4g MB", j->mat->c->name, (long long)n, j->bytes / 1e6);
    if (isfinite(floor_ms))
        printf(" (floor %.4f ms at the copy bandwidth%s)", floor_ms,
               floor_ms * 1e3 < BENCH_LATENCY_US ? "; latency-bound" : "");
    if (j->nsets)
        printf("; B and C rotated over %d set(s)", j->nsets);
    printf("\n  %-8s %-14s %-5s %9s %10s %10s %7s %9s %8s %6s %8s  %s\n", "impl", "algorithm", "prec",
           "build ms", "median ms", "min ms", "host us", "GFLOP/s", "GB/s", "%copy", "speedup", "check");
    int failed = 0;
    for (size_t i = j->row0; i < b->nrows; i++) {
        print_row(&b->rows[i]);
        failed += b->rows[i].check == CHECK_FAIL;
    }
    if (failed)
        printf("  !!! %d result check(s) FAILED above: those rows count for nothing\n", failed);
    if (j->explain) /* the planner's account may span lines */
        printf("  auto plan:\n    %s\n", j->explain);
    fflush(stdout);
    bench_emit_rows(b, j->row0);
}

void bench_print_summary(bench *b)
{
    int w = 6;
    for (size_t i = 0; i < b->nsums; i++) {
        int len = (int)strlen(b->sums[i].matrix);
        w = len > w ? len : w;
    }
    printf("\n== summary: median ms; speedup = best cuSPARSE ms / ms; only results that passed "
           "their check count\n");
    printf("%-*s %5s  %-14s %9s %9s  %-9s %9s %8s %8s %9s  %s\n", w, "matrix", "N", "best spx",
           "ms", "auto ms", "cuSPARSE", "ms", "best x", "auto x", "tf32 ms", "note");
    for (size_t i = 0; i < b->nsums; i++) {
        const bench_summary *s = &b->sums[i];
        char ms[24], am[24], cm[24], bx[24], ax[24], tm[24];
        fmt_num(ms, sizeof ms, s->best_spx_ms, "%.4f");
        fmt_num(am, sizeof am, s->auto_ms, "%.4f");
        fmt_num(cm, sizeof cm, s->best_cusparse_ms, "%.4f");
        fmt_num(bx, sizeof bx, s->best_cusparse_ms / s->best_spx_ms, "%.2fx");
        fmt_num(ax, sizeof ax, s->best_cusparse_ms / s->auto_ms, "%.2fx");
        fmt_num(tm, sizeof tm, s->dense_tf32_ms, "%.4f");
        printf("%-*s %5lld  %-14s %9s %9s  %-9s %9s %8s %8s %9s  %s%s\n", w, s->matrix,
               (long long)s->n, s->best_spx, ms, am, s->best_cusparse, cm, bx, ax, tm,
               s->latency_bound ? "latency-bound (< 20 us at copy bandwidth) " : "",
               s->failures ? "CHECK FAILED" : "");
    }
    int nauto, nbest;
    double gauto = geomean_speedup(b, true, &nauto), gbest = geomean_speedup(b, false, &nbest);
    if (nauto)
        printf("geometric mean of auto vs best cuSPARSE speedups: %.3fx over %d case(s)\n", gauto,
               nauto);
    else
        printf("geometric mean of auto vs best cuSPARSE speedups: n/a (no case with both)\n");
    if (nbest)
        printf("geometric mean of best spx vs best cuSPARSE speedups: %.3fx over %d case(s)\n",
               gbest, nbest);
    if (b->failures)
        printf("!!! %d result check(s) FAILED: see the rows marked FAIL\n", b->failures);
    if (b->broken)
        printf("!!! the run stopped early: %s\n", b->broken_msg);
    fflush(stdout);
}

#endif /* SPX_HAVE_CUDA */

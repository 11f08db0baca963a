/* spx bench spgemm: C = A * B (B = A, or A^T for rectangular A) with spx's
 * SpGEMM in deterministic and fast mode against cusparseSpGEMM (DEFAULT,
 * ALG2, ALG3) on the same device operands in one process; every result
 * checked against cuSPARSE's; then the avos closure of a generated
 * pedigree. Method and columns: docs/BENCHMARKING.md ("SpGEMM"). */
#include "cli.h"

#include <stdio.h>

#ifdef SPX_HAVE_CUDA
#include "bench_spgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char help_text[] =
    "usage: spx bench spgemm [--suite quick|full] [--data DIR] [--matrix FILE]... [--repeat R]\n"
    "         [--warmup W] [--csv FILE] [--seed S] [--pedigree N] [--no-cusparse] [--no-closure]\n"
    "\n"
    "Times C = A A (A A^T for rectangular A), f32 plus-times, A and B in device memory:\n"
    "spx's SpGEMM in deterministic and fast mode against cusparseSpGEMM (DEFAULT, ALG2,\n"
    "ALG3), checks every result against cuSPARSE's, then times spx_avos_closure on a\n"
    "generated pedigree. Without --matrix (suite full, the default): 3D Laplacian 100^3,\n"
    "uniform 1M x 1M at 8 per row, R-MAT scale 16 (edge factor 16), a pruned 2048 x 8192\n"
    "layer (A A^T), every .mtx of DIR/graphs and DIR/suitesparse and one DLMC transformer\n"
    "layer (A A^T); suite quick leaves out DIR/suitesparse and runs 5 times.\n"
    "  --repeat R     timed runs (default 10, quick 5), --warmup W untimed runs first (2)\n"
    "  --pedigree N   individuals of the closure's pedigree (default 1048576)\n"
    "  --data DIR     the real-matrix folder (default $SPX_DATA_DIR)\n"
    "Progress goes to stderr, the log to stdout. Exit status 1 if a check failed.\n";

bool sg_cuda_ok(cudaError_t e, const char *what, char *msg)
{
    if (e == cudaSuccess)
        return true;
    snprintf(msg, SG_MSG, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return false;
}

void sg_result_free(sg_result *r)
{
    free(r->ptr);
    free(r->col);
    free(r->val);
    memset(r, 0, sizeof *r);
}

void sg_compare(const sg_result *ref, const sg_result *got, sg_row *row)
{
    row->check = 0;
    row->max_err = NAN;
    if (ref->rows != got->rows || ref->nnz != got->nnz) {
        snprintf(row->msg, SG_MSG, "nnz(C) %lld, reference %lld", (long long)got->nnz,
                 (long long)ref->nnz);
        return;
    }
    double worst = 0;
    for (int64_t i = 0; i < ref->rows; i++) {
        if (ref->ptr[i + 1] != got->ptr[i + 1]) {
            snprintf(row->msg, SG_MSG, "row %lld ends at %d, reference at %d", (long long)i,
                     got->ptr[i + 1], ref->ptr[i + 1]);
            return;
        }
        double rowmax = 0;
        for (int32_t p = ref->ptr[i]; p < ref->ptr[i + 1]; p++)
            rowmax = fmax(rowmax, fabs((double)ref->val[p]));
        for (int32_t p = ref->ptr[i]; p < ref->ptr[i + 1]; p++) {
            if (ref->col[p] != got->col[p]) {
                snprintf(row->msg, SG_MSG, "entry %d of row %lld: column %d, reference %d", p,
                         (long long)i, got->col[p], ref->col[p]);
                return;
            }
            double a = got->val[p], r = ref->val[p];
            double scale = fabs(a) + fabs(r) + rowmax, err = scale > 0 ? fabs(a - r) / scale : 0;
            if (!(err <= 1e-5)) {
                snprintf(row->msg, SG_MSG, "C(%lld, %d) = %.9g, reference %.9g", (long long)i,
                         ref->col[p], a, r);
                row->max_err = err;
                return;
            }
            worst = fmax(worst, err);
        }
    }
    row->check = 1;
    row->max_err = worst;
}

/* A device spx result on the host as an sg_result. */
static bool spx_result(sg_bench *b, const spx_matrix *C, sg_result *res, char *msg)
{
    spx_matrix *H = NULL;
    spx_matrix_info in;
    spx_matrix_arrays ar;
    spx_status s = spx_matrix_to_host(b->ctx, C, &H);
    if (s) {
        snprintf(msg, SG_MSG, "copying C: %s", spx_last_error(b->ctx));
        return false;
    }
    spx_matrix_info_get(H, &in);
    spx_matrix_arrays_get(H, &ar);
    res->rows = in.rows;
    res->nnz = in.nnz;
    res->ptr = malloc((size_t)(in.rows + 1) * 4);
    res->col = malloc((size_t)(in.nnz ? in.nnz : 1) * 4);
    res->val = malloc((size_t)(in.nnz ? in.nnz : 1) * 4);
    bool ok = res->ptr && res->col && res->val && in.nnz <= INT32_MAX;
    for (int64_t i = 0; ok && i <= in.rows; i++)
        res->ptr[i] = (int32_t)(in.index_type == SPX_INDEX_I64 ? ((int64_t *)ar.offsets)[i]
                                                              : ((int32_t *)ar.offsets)[i]);
    for (int64_t p = 0; ok && p < in.nnz; p++)
        res->col[p] = (int32_t)(in.index_type == SPX_INDEX_I64 ? ((int64_t *)ar.indices)[p]
                                                              : ((int32_t *)ar.indices)[p]);
    if (ok && in.nnz)
        memcpy(res->val, ar.values, (size_t)in.nnz * 4);
    spx_matrix_destroy(H);
    if (!ok) {
        snprintf(msg, SG_MSG, "cannot hold C on the host as int32 CSR");
        sg_result_free(res);
    }
    return ok;
}

static int64_t c_bytes(const spx_matrix *C)
{
    spx_matrix_info in;
    spx_matrix_info_get(C, &in);
    int64_t isz = in.index_type == SPX_INDEX_I64 ? 8 : 4;
    return (in.rows + 1) * isz + in.nnz * (isz + 4);
}

/* spx in one mode: the first run end to end (and its pool peak), then the
 * timed runs with events; the last result kept. */
static void run_spx(sg_bench *b, const sg_mat *M, spx_spgemm_mode mode, sg_row *row,
                    sg_result *res)
{
    spx_semiring sr = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    spx_spgemm_options o = {0};
    o.mode = mode;
    spx_memory_stats before, after;
    spx_matrix *C = NULL;
    double t[1024];
    int reps = b->o.repeat < 1024 ? b->o.repeat : 1024;
    spx_ctx_memory_stats(b->ctx, &before);
    spx_ctx_reset_peak_memory(b->ctx);
    double t0 = cli_now_ms();
    spx_status s = spx_spgemm(b->ctx, &sr, M->dA, M->dB, &o, &C);
    if (!s)
        s = spx_ctx_synchronize(b->ctx);
    if (s)
        goto fail;
    row->nnz_c = 0;
    spx_matrix_info in;
    spx_matrix_info_get(C, &in);
    row->nnz_c = in.nnz;
    row->c_bytes = (double)c_bytes(C);
    spx_matrix_destroy(C);
    C = NULL;
    row->e2e_ms = cli_now_ms() - t0;
    spx_ctx_memory_stats(b->ctx, &after);
    row->work_bytes = (double)(after.peak - before.in_use);
    for (int w = 0; w < b->o.warmup; w++) {
        if ((s = spx_spgemm(b->ctx, &sr, M->dA, M->dB, &o, &C)))
            goto fail;
        spx_matrix_destroy(C);
        C = NULL;
    }
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        spx_matrix_destroy(C);
        C = NULL;
        if (!sg_cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", row->msg))
            goto fail_msg;
        if ((s = spx_spgemm(b->ctx, &sr, M->dA, M->dB, &o, &C)))
            goto fail;
        if (!sg_cuda_ok(cudaEventRecord(b->ev[1], b->stream), "cudaEventRecord", row->msg) ||
            !sg_cuda_ok(cudaEventSynchronize(b->ev[1]), "cudaEventSynchronize", row->msg) ||
            !sg_cuda_ok(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]), "cudaEventElapsedTime",
                        row->msg))
            goto fail_msg;
        t[r] = ms;
    }
    qsort(t, (size_t)reps, sizeof t[0], cli_cmp_double);
    row->run_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    row->min_ms = t[0];
    row->gflops = 2 * M->products / (row->run_ms * 1e6);
    row->ran = spx_result(b, C, res, row->msg);
    spx_matrix_destroy(C);
    return;
fail:
    snprintf(row->msg, SG_MSG, "%s (%s)", spx_last_error(b->ctx), spx_status_name(s));
fail_msg:
    spx_matrix_destroy(C);
    row->ran = false;
}

/* ---- output ---- */

typedef struct {
    char name[200];
    double products;
    int64_t nnz_c;
    double det_ms, fast_ms, cusp_ms;
    char cusp_alg[16];
    double spx_mem, cusp_mem; /* work + C */
    int failures;
} sg_summary;

static void print_row(const sg_row *r)
{
    if (!r->ran) {
        printf("  %-9s %-8s n/a: %s\n", r->impl, r->alg, r->msg);
        return;
    }
    printf("  %-9s %-8s %10.3f %10.3f %10.3f %9.2f %10.1f %10.1f  %s", r->impl, r->alg, r->run_ms,
           r->min_ms, r->e2e_ms, r->gflops, r->work_bytes / 1e6, r->c_bytes / 1e6,
           r->check == 1 ? "ok" : r->check == 0 ? "DIFFERS" : "-");
    if (r->check == 1 && isfinite(r->max_err))
        printf(" (max err %.1e)", r->max_err);
    if (r->check == 0)
        printf(": %s", r->msg);
    printf("\n");
}

static void csv_row(sg_bench *b, const sg_case *c, const sg_mat *M, const sg_row *r)
{
    if (!b->csv)
        return;
    fprintf(b->csv, "\"%s\",%s,%s,%lld,%lld,%lld,%lld,%lld,%.0f,%lld,%s,", c->name, r->impl,
            r->alg, (long long)M->m, (long long)M->k, (long long)M->n, (long long)M->nnz_a,
            (long long)M->nnz_b, M->products, (long long)r->nnz_c, r->ran ? "ran" : "n/a");
    if (r->ran)
        fprintf(b->csv, "%.4f,%.4f,%.4f,%.3f,%.0f,%.0f,%d,%.3g,", r->run_ms, r->min_ms, r->e2e_ms,
                r->gflops, r->work_bytes, r->c_bytes, r->check, r->max_err);
    else
        fprintf(b->csv, ",,,,,,,,");
    fprintf(b->csv, "\"%s\"\n", r->check == 1 ? "" : r->msg);
    fflush(b->csv);
}

static void run_case(sg_bench *b, const sg_case *c, int index, int total, sg_summary *sum)
{
    sg_mat M;
    char msg[SG_MSG];
    memset(sum, 0, sizeof *sum);
    snprintf(sum->name, sizeof sum->name, "%s", c->name);
    sum->det_ms = sum->fast_ms = sum->cusp_ms = NAN;
    fprintf(stderr, "spx bench spgemm: [%d/%d] %s\n", index, total, c->name);
    if (!sg_load(b, c, &M, msg)) {
        printf("\n[%d/%d] %s: n/a (%s)\n", index, total, c->name, msg);
        sum->products = NAN;
        return;
    }
    printf("\n[%d/%d] %s: A %lld x %lld (%lld nnz), B %lld x %lld (%lld nnz), %.4g products\n",
           index, total, c->name, (long long)M.m, (long long)M.k, (long long)M.nnz_a,
           (long long)M.k, (long long)M.n, (long long)M.nnz_b, M.products);
    printf("  %-9s %-8s %10s %10s %10s %9s %10s %10s  %s\n", "impl", "alg", "run_ms", "min_ms",
           "e2e_ms", "GFLOP/s", "work_MB", "C_MB", "check");
    sg_row rows[5];
    sg_result res[5];
    memset(rows, 0, sizeof rows);
    memset(res, 0, sizeof res);
    static const struct {
        const char *impl, *alg;
        cusparseSpGEMMAlg_t a;
        spx_spgemm_mode mode;
    } impls[5] = {
        {"cusparse", "default", CUSPARSE_SPGEMM_DEFAULT, 0},
        {"cusparse", "alg2", CUSPARSE_SPGEMM_ALG2, 0},
        {"cusparse", "alg3", CUSPARSE_SPGEMM_ALG3, 0},
        {"spx", "determ", 0, SPX_SPGEMM_DETERMINISTIC},
        {"spx", "fast", 0, SPX_SPGEMM_FAST},
    };
    for (int x = 0; x < 5; x++) {
        sg_row *r = &rows[x];
        snprintf(r->impl, sizeof r->impl, "%s", impls[x].impl);
        snprintf(r->alg, sizeof r->alg, "%s", impls[x].alg);
        r->check = -1;
        r->max_err = NAN;
        if (x < 3 && !b->o.cusparse) {
            snprintf(r->msg, SG_MSG, "off (--no-cusparse)");
            continue;
        }
        if (x < 3)
            sg_cusparse(b, &M, impls[x].a, r, &res[x]);
        else
            run_spx(b, &M, impls[x].mode, r, &res[x]);
    }
    /* the reference: the first cuSPARSE result, else spx's deterministic one */
    int ref = rows[0].ran ? 0 : rows[1].ran ? 1 : rows[2].ran ? 2 : 3;
    for (int x = 0; x < 5; x++) {
        if (rows[x].ran && x != ref && res[ref].ptr)
            sg_compare(&res[ref], &res[x], &rows[x]);
        if (rows[x].ran && rows[x].check == 0)
            sum->failures++;
        print_row(&rows[x]);
        csv_row(b, c, &M, &rows[x]);
    }
    b->failures += sum->failures;
    sum->products = M.products;
    sum->nnz_c = rows[3].ran ? rows[3].nnz_c : rows[0].nnz_c;
    sum->det_ms = rows[3].ran ? rows[3].run_ms : NAN;
    sum->fast_ms = rows[4].ran ? rows[4].run_ms : NAN;
    sum->spx_mem = rows[4].ran ? rows[4].work_bytes + rows[4].c_bytes : NAN;
    for (int x = 0; x < 3; x++)
        if (rows[x].ran && !(rows[x].run_ms >= sum->cusp_ms)) {
            sum->cusp_ms = rows[x].run_ms;
            snprintf(sum->cusp_alg, sizeof sum->cusp_alg, "%.15s", rows[x].alg);
        }
    sum->cusp_mem = rows[0].ran ? rows[0].work_bytes + rows[0].c_bytes : NAN;
    if (isfinite(sum->cusp_ms) && isfinite(sum->fast_ms))
        printf("  speedup over cuSPARSE's best (%s): %.2fx fast, %.2fx deterministic; memory "
               "(work + C) %.2fx of cuSPARSE default's\n",
               sum->cusp_alg, sum->cusp_ms / sum->fast_ms, sum->cusp_ms / sum->det_ms,
               sum->spx_mem / sum->cusp_mem);
    for (int x = 0; x < 5; x++)
        sg_result_free(&res[x]);
    sg_mat_free(&M);
}

static void run_closure(sg_bench *b)
{
    spx_matrix *A = NULL, *dA = NULL, *C = NULL;
    char msg[SG_MSG] = "";
    const int64_t n = b->o.pedigree_n;
    fprintf(stderr, "spx bench spgemm: avos closure of a %lld-individual pedigree\n", (long long)n);
    printf("\navos closure, generated pedigree of %lld individuals (16 generations, i64):\n",
           (long long)n);
    spx_status s = sg_pedigree(b->ctx, n, b->o.seed, &A);
    if (!s)
        s = spx_matrix_to_device(b->ctx, A, &dA);
    if (s) {
        printf("  n/a: %s (%s)\n", spx_last_error(b->ctx), spx_status_name(s));
        goto done;
    }
    spx_matrix_info ia, ic;
    spx_matrix_info_get(A, &ia);
    double t[16], wall = 0;
    int reps = b->o.repeat < 3 ? b->o.repeat : 3, it = 0;
    spx_memory_stats before, after;
    spx_ctx_memory_stats(b->ctx, &before);
    spx_ctx_reset_peak_memory(b->ctx);
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        spx_matrix_destroy(C);
        C = NULL;
        double t0 = cli_now_ms();
        if (!sg_cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", msg) ||
            (s = spx_avos_closure(b->ctx, dA, &C, &it)) ||
            !sg_cuda_ok(cudaEventRecord(b->ev[1], b->stream), "cudaEventRecord", msg) ||
            !sg_cuda_ok(cudaEventSynchronize(b->ev[1]), "cudaEventSynchronize", msg) ||
            !sg_cuda_ok(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]), "elapsed", msg)) {
            printf("  n/a: %s\n", msg[0] ? msg : spx_last_error(b->ctx));
            goto done;
        }
        wall = cli_now_ms() - t0;
        t[r] = ms;
    }
    spx_ctx_memory_stats(b->ctx, &after);
    qsort(t, (size_t)reps, sizeof t[0], cli_cmp_double);
    spx_matrix_info_get(C, &ic);
    printf("  A: %lld entries; closure: %lld entries after %d squarings; %.2f ms (median of %d, "
           "device events; last run %.2f ms wall clock); pool peak %.1f MB\n",
           (long long)ia.nnz, (long long)ic.nnz, it, t[reps / 2], reps, wall,
           (double)(after.peak - before.in_use) / 1e6);
    if (b->csv)
        fprintf(b->csv, "\"avos closure %lld\",spx,closure,%lld,%lld,%lld,%lld,%lld,,%lld,ran,%.4f,"
                        "%.4f,%.4f,,%.0f,,,,\"%d squarings\"\n",
                (long long)n, (long long)n, (long long)n, (long long)n, (long long)ia.nnz,
                (long long)ia.nnz, (long long)ic.nnz, t[reps / 2], t[0], wall,
                (double)(after.peak - before.in_use), it);
done:
    spx_matrix_destroy(C);
    spx_matrix_destroy(dA);
    spx_matrix_destroy(A);
}

static void print_summary(const sg_summary *s, int n)
{
    printf("\n== summary (spx bench spgemm): f32 plus-times, device operands; times are medians "
           "of device events; x = cuSPARSE's best time / spx's time; memory = spx fast (work + C) "
           "/ cuSPARSE default (work + C)\n");
    printf("  %-44s %10s %10s %10s %10s %-8s %7s %7s %7s\n", "matrix", "products", "nnz(C)",
           "spx det", "spx fast", "cusparse", "x fast", "x det", "memory");
    double lf = 0, ld = 0, lm = 0;
    int nf = 0, nm = 0;
    for (int i = 0; i < n; i++) {
        double xf = s[i].cusp_ms / s[i].fast_ms, xd = s[i].cusp_ms / s[i].det_ms;
        double mem = s[i].spx_mem / s[i].cusp_mem;
        printf("  %-44.44s %10.4g %10lld %10.3f %10.3f %10.3f %-8s %6.2fx %6.2fx %6.2fx%s\n",
               s[i].name, s[i].products, (long long)s[i].nnz_c, s[i].det_ms, s[i].fast_ms,
               s[i].cusp_ms, s[i].cusp_alg, xf, xd, mem, s[i].failures ? "  CHECK FAILED" : "");
        if (isfinite(xf) && isfinite(xd) && xf > 0 && xd > 0) {
            lf += log(xf);
            ld += log(xd);
            nf++;
        }
        if (isfinite(mem) && mem > 0) {
            lm += log(mem);
            nm++;
        }
    }
    if (nf)
        printf("  geometric mean speedup over cuSPARSE's best: %.2fx fast, %.2fx deterministic "
               "(%d matrices)\n",
               exp(lf / nf), exp(ld / nf), nf);
    if (nm)
        printf("  geometric mean memory (work + C) relative to cuSPARSE default: %.2fx\n",
               exp(lm / nm));
}

static bool setup(sg_bench *b, char *msg)
{
    spx_status s = spx_ctx_create(&b->ctx);
    if (s || (s = spx_ctx_set_backend(b->ctx, SPX_BACKEND_CUDA))) {
        snprintf(msg, SG_MSG, "the CUDA backend is not usable: %s",
                 b->ctx ? spx_last_error(b->ctx) : spx_status_name(s));
        return false;
    }
    b->stream = (cudaStream_t)spx_ctx_stream(b->ctx);
    if (!sg_cuda_ok(cudaEventCreate(&b->ev[0]), "cudaEventCreate", msg) ||
        !sg_cuda_ok(cudaEventCreate(&b->ev[1]), "cudaEventCreate", msg))
        return false;
    if (b->o.cusparse) {
        cusparseStatus_t st = cusparseCreate(&b->sp);
        if (st == CUSPARSE_STATUS_SUCCESS)
            st = cusparseSetStream(b->sp, b->stream);
        if (st != CUSPARSE_STATUS_SUCCESS) {
            fprintf(stderr, "spx bench spgemm: cuSPARSE unavailable (%s)\n",
                    cusparseGetErrorString(st));
            b->o.cusparse = false;
        }
    }
    return true;
}

int cmd_bench_spgemm(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "no-cusparse|no-closure|help",
                        "suite|matrix|data|repeat|warmup|csv|seed|pedigree", 0, NULL, &a);
    if (r)
        return r;
    if (cli_flag(&a, "help")) {
        fputs(help_text, stdout);
        return CLI_OK;
    }
    sg_bench *b = calloc(1, sizeof *b);
    sg_case *cases = calloc(SG_MAX_CASES, sizeof *cases);
    sg_summary *sums = calloc(SG_MAX_CASES, sizeof *sums);
    int64_t repeat, warmup;
    char msg[SG_MSG];
    int n = 0;
    r = CLI_OK;
    if (!b || !cases || !sums) {
        fprintf(stderr, "spx bench spgemm: out of memory\n");
        r = CLI_FAILED;
        goto done;
    }
    const char *suite = cli_str(&a, "suite", "full");
    if (strcmp(suite, "quick") && strcmp(suite, "full")) {
        cli_usage_error("--suite expects quick or full, got '%s'", suite);
        r = CLI_USAGE;
        goto done;
    }
    const bool quick = !strcmp(suite, "quick");
    if (!cli_i64(&a, "repeat", quick ? 5 : 10, &repeat) || !cli_i64(&a, "warmup", 2, &warmup) ||
        !cli_u64(&a, "seed", 1, &b->o.seed) || !cli_i64(&a, "pedigree", 1 << 20, &b->o.pedigree_n)) {
        r = CLI_USAGE;
        goto done;
    }
    if (repeat < 1 || repeat > 1000 || warmup < 0 || warmup > 1000 || b->o.pedigree_n < 1) {
        cli_usage_error("--repeat must be in [1, 1000], --warmup in [0, 1000], --pedigree >= 1");
        r = CLI_USAGE;
        goto done;
    }
    b->o.repeat = (int)repeat;
    b->o.warmup = (int)warmup;
    b->o.cusparse = !cli_flag(&a, "no-cusparse");
    b->o.closure = !cli_flag(&a, "no-closure");
    b->o.csv = cli_str(&a, "csv", NULL);
    b->o.data = cli_str(&a, "data", getenv("SPX_DATA_DIR"));
    for (int i = 0; i < a.nopt; i++)
        if (!strcmp(a.opt[i].name, "matrix")) {
            if (n == SG_MAX_CASES) {
                cli_usage_error("--matrix given more than %d times", SG_MAX_CASES);
                r = CLI_USAGE;
                goto done;
            }
            a.opt[i].used = true;
            snprintf(cases[n].name, sizeof cases[n].name, "%.190s", a.opt[i].value);
            snprintf(cases[n].path, sizeof cases[n].path, "%s", a.opt[i].value);
            n++;
        }
    if (n == 0)
        n = sg_default_cases(b->o.data, !quick, cases, SG_MAX_CASES);
    if (b->o.csv && !(b->csv = fopen(b->o.csv, "w"))) {
        fprintf(stderr, "spx bench spgemm: cannot write %s\n", b->o.csv);
        r = CLI_FAILED;
        goto done;
    }
    if (b->csv)
        fprintf(b->csv, "case,impl,alg,m,k,n,nnz_a,nnz_b,products,nnz_c,state,run_ms,min_ms,"
                        "e2e_ms,gflops,work_bytes,c_bytes,check,max_err,message\n");
    if (!setup(b, msg)) {
        fprintf(stderr, "spx bench spgemm: %s\n", msg);
        r = CLI_FAILED;
        goto done;
    }
    spx_device_info dev;
    spx_ctx_device_info(b->ctx, &dev);
    int spv = 0;
    printf("spx bench spgemm\ndevice: %s (%d SMs, %.1f GB)", dev.name, dev.sm_count,
           (double)dev.global_mem_bytes / 1e9);
    if (b->sp && cusparseGetVersion(b->sp, &spv) == CUSPARSE_STATUS_SUCCESS)
        printf(", cuSPARSE %d.%d.%d", spv / 1000, spv % 1000 / 100, spv % 100);
    printf("\ntiming: run_ms = median (min_ms = min) of %d runs after %d warm-up runs, CUDA "
           "events around the whole product (spx: spx_spgemm with its pool warm and C allocated "
           "by the call; cuSPARSE: every phase, buffers and C kept from the previous run); "
           "e2e_ms = the first run, wall clock, allocating and freeing everything (spx's pool "
           "may already hold blocks); GFLOP/s = 2 x products / run_ms; work_MB = peak extra "
           "device memory besides C (spx: pool peak; cuSPARSE: its buffers)\n",
           b->o.repeat, b->o.warmup);
    for (int i = 0; i < n; i++)
        run_case(b, &cases[i], i + 1, n, &sums[i]);
    if (b->o.closure)
        run_closure(b);
    print_summary(sums, n);
    if (b->o.csv)
        printf("results: %s\n", b->o.csv);
    r = b->failures ? CLI_FAILED : CLI_OK;
done:
    if (b) {
        if (b->csv)
            fclose(b->csv);
        if (b->sp)
            cusparseDestroy(b->sp);
        for (int e = 0; e < 2; e++)
            if (b->ev[e])
                cudaEventDestroy(b->ev[e]);
        spx_ctx_destroy(b->ctx);
    }
    free(b);
    free(cases);
    free(sums);
    return r;
}

#else /* no CUDA */

int cmd_bench_spgemm(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "spx bench spgemm: this build has no CUDA support; configure with a CUDA "
                    "toolkit (-DSPX_ENABLE_CUDA=ON) to benchmark\n");
    return CLI_FAILED;
}

#endif

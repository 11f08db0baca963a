/* spx bench spmm: spx's SpMM plans against cuSPARSE (each CSR algorithm) and
 * dense cuBLAS, on the same device inputs in one process. The method and the
 * columns are described in docs/BENCHMARKING.md. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifdef SPX_HAVE_CUDA
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char help_text[] =
    "usage: spx bench spmm [--suite quick|full] [--matrix FILE]... [--gen SPEC]...\n"
    "         [--n 32,128] [--dlmc-n 1024] [--repeat R] [--warmup W] [--budget-ms MS]\n"
    "         [--algs auto,row_split,...|all] [--precision exact|tf32|bf16|f16]\n"
    "         [--dtype f32|f64|bf16|f16]\n"
    "         [--panel W]  (column panel width of AUTO's row kernels, or TILED's and BAND's column tile;\n"
    "                       0: no panels, the planner's tile for TILED and BAND)\n"
    "         [--k-slabs S]  (slabs of A's columns for AUTO and the row kernels; 0: the planner's choice,\n"
    "                       1: none)\n"
    "         [--csv FILE] [--json FILE] [--data DIR] [--seed S] [--no-dense] [--no-cusparse]\n"
    "\n"
    "Times spx's SpMM (C = A B, A CSR, B and C row-major on the device, values f32 or as\n"
    "--dtype says) for each algorithm against every cuSPARSE CSR algorithm (the same value\n"
    "type, f32 accumulation; f64 in f64) and dense cuBLAS (sgemm, tf32, bf16 for f32 data;\n"
    "the data's type for f16 and bf16; none for f64) on the\n"
    "same inputs, checks every result, and prints a table per matrix and N and a\n"
    "summary. Without --suite, --matrix or --gen the quick suite runs.\n"
    "  --suite quick   uniform 1M x 1M at 8/row, R-MAT scale 18, 3D Laplacian 64^3, the\n"
    "                  data folder's graphs/, one DLMC transformer layer; N 32,128 (DLMC 1024)\n"
    "  --suite full    uniform 1M x 1M at 8/32/128 per row, R-MAT scale 20, Laplacian 100^3,\n"
    "                  banded 1M (8+8), block-sparse 1M (16x16, ~50M nnz), every data-folder\n"
    "                  matrix; N 32,128,256, DLMC layers N 256,1024,4096\n"
    "  --gen SPEC      uniform:rows=R[,cols=C],per_row=K   rmat:scale=S[,ef=E,a=,b=,c=]\n"
    "                  laplacian:grid=N[,dims=D]   banded:rows=R,lower=L[,upper=U,cols=C]\n"
    "                  blocksparse:rows=R,density=P[,cols=C,block=B]\n"
    "                  pruned:rows=R,cols=C,sparsity=S   nm:rows=R,cols=C[,n=2,m=4]\n"
    "                  (all but laplacian take seed=S too)\n"
    "  --data DIR      the real-matrix folder (default $SPX_DATA_DIR)\n"
    "  --repeat R      timed runs (default 50), --warmup W untimed runs first (default 5);\n"
    "  --budget-ms MS  fewer timed runs (at least 10) where R runs would take longer (2000)\n"
    "  --algs LIST     spx algorithms (default all; auto is the planner's choice)\n"
    "Progress goes to stderr, the log to stdout. Exit status 1 if a result check failed.\n";

/* Comma-separated positive integers. */
static bool parse_list(const char *opt, const char *s, int64_t *out, int *count)
{
    int n = 0;
    for (const char *p = s; *p;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 1 || v > (1 << 20) || (*end && *end != ',')) {
            cli_usage_error("--%s expects positive integers separated by commas, got '%s'", opt, s);
            return false;
        }
        if (n == BENCH_MAX_N) {
            cli_usage_error("--%s takes at most %d values", opt, BENCH_MAX_N);
            return false;
        }
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        cli_usage_error("--%s is empty", opt);
        return false;
    }
    *count = n;
    return true;
}

static bool parse_algs(const char *s, bench_opts *o)
{
    o->nalgs = 0;
    if (strcmp(s, "all") == 0) {
        for (int a = SPX_SPMM_AUTO; a < SPX_SPMM_ALG_COUNT; a++)
            o->algs[o->nalgs++] = (spx_spmm_alg)a;
        return true;
    }
    for (const char *p = s; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        spx_spmm_alg alg;
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        if (spx_spmm_alg_from_name(name, &alg) != SPX_OK) {
            cli_usage_error("unknown algorithm '%s' (auto, row_split, warp_row, block_row, "
                            "merge_path, sell, bsr, outer, gather_tc, tiled, dense, band, row_batches, or all)", name);
            return false;
        }
        if (o->nalgs == BENCH_MAX_ALGS) {
            cli_usage_error("--algs lists more than %d algorithms", BENCH_MAX_ALGS);
            return false;
        }
        o->algs[o->nalgs++] = alg;
        p = end ? end + 1 : p + len;
    }
    if (o->nalgs == 0) {
        cli_usage_error("--algs is empty");
        return false;
    }
    return true;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Options into b->o and the list of matrices; CLI_OK, CLI_USAGE or CLI_FAILED. */
static int parse_options(cli_args *a, bench *b, bench_case **cases, int *ncases)
{
    bench_opts *o = &b->o;
    if (!cli_i64(a, "repeat", 50, &o->repeat) || !cli_i64(a, "warmup", 5, &o->warmup) ||
        !cli_u64(a, "seed", 1, &o->seed) || !cli_f64(a, "budget-ms", 2000, &o->budget_ms))
        return CLI_USAGE;
    if (o->repeat < 1 || o->repeat > 100000 || o->warmup < 0 || o->warmup > 100000 ||
        !(o->budget_ms > 0)) {
        cli_usage_error("--repeat must be in [1, 100000], --warmup in [0, 100000] and "
                        "--budget-ms positive");
        return CLI_USAGE;
    }
    if (!cli_i64(a, "panel", 0, &o->panel_cols) || !cli_i64(a, "k-slabs", 0, &o->k_slabs))
        return CLI_USAGE;
    o->dense = !cli_flag(a, "no-dense");
    o->cusparse = !cli_flag(a, "no-cusparse");
    o->csv = cli_str(a, "csv", NULL);
    o->json = cli_str(a, "json", NULL);
    const char *prec = cli_str(a, "precision", "exact");
    if (spx_precision_from_name(prec, &o->precision) != SPX_OK) {
        cli_usage_error("unknown precision '%s' (exact, tf32, bf16 or f16)", prec);
        return CLI_USAGE;
    }
    const char *dtype = cli_str(a, "dtype", "f32");
    if (spx_dtype_from_name(dtype, &o->dtype) != SPX_OK ||
        (o->dtype != SPX_F32 && o->dtype != SPX_F64 && o->dtype != SPX_BF16 && o->dtype != SPX_F16)) {
        cli_usage_error("--dtype expects f32, f64, bf16 or f16, got '%s'", dtype);
        return CLI_USAGE;
    }
    if (!parse_algs(cli_str(a, "algs", "all"), o))
        return CLI_USAGE;

    const char *suite = cli_str(a, "suite", NULL);
    if (suite && strcmp(suite, "quick") && strcmp(suite, "full")) {
        cli_usage_error("--suite expects quick or full, got '%s'", suite);
        return CLI_USAGE;
    }
    const char *data = cli_str(a, "data", NULL);
    if (data && !is_dir(data)) {
        cli_usage_error("--data: '%s' is not a folder", data);
        return CLI_USAGE;
    }
    if (!data && (data = getenv("SPX_DATA_DIR")) && !is_dir(data)) {
        fprintf(stderr, "spx bench: SPX_DATA_DIR '%s' is not a folder: ignored\n", data);
        data = NULL;
    }
    int nextra = 0;
    for (int i = 0; i < a->nopt; i++)
        nextra += !strcmp(a->opt[i].name, "matrix") || !strcmp(a->opt[i].name, "gen");
    if (!suite && nextra == 0)
        suite = "quick";
    bool full = suite && strcmp(suite, "full") == 0;
    int64_t n[BENCH_MAX_N] = {32, 128, 256}, dlmc_n[BENCH_MAX_N] = {256, 1024, 4096};
    int nn = full ? 3 : 2, ndlmc = full ? 3 : 1;
    if (!full)
        dlmc_n[0] = 1024;
    const char *ns = cli_str(a, "n", NULL), *dns = cli_str(a, "dlmc-n", NULL);
    if ((ns && !parse_list("n", ns, n, &nn)) || (dns && !parse_list("dlmc-n", dns, dlmc_n, &ndlmc)))
        return CLI_USAGE;

    if (suite && !bench_add_suite(suite, data, n, nn, dlmc_n, ndlmc, cases, ncases))
        return CLI_FAILED;
    for (int i = 0; i < a->nopt; i++) {
        bool file = !strcmp(a->opt[i].name, "matrix");
        if (!file && strcmp(a->opt[i].name, "gen"))
            continue;
        a->opt[i].used = true;
        const char *v = a->opt[i].value;
        bench_case c;
        memset(&c, 0, sizeof c);
        char err[512];
        if (file) {
            struct stat st;
            if (stat(v, &st) != 0 || !S_ISREG(st.st_mode)) {
                cli_usage_error("--matrix: no file '%s'", v);
                return CLI_USAGE;
            }
            snprintf(c.path, sizeof c.path, "%s", v);
            c.kind = "file";
        } else {
            if (!bench_parse_gen(v, &c.gen, err, sizeof err)) {
                cli_usage_error("--gen: %s", err);
                return CLI_USAGE;
            }
            c.kind = "generated";
        }
        snprintf(c.name, sizeof c.name, "%s", v);
        memcpy(c.n, n, sizeof n);
        c.nn = nn;
        if (!bench_add_case(cases, ncases, &c))
            return CLI_FAILED;
    }
    if (*ncases == 0) {
        cli_usage_error("no matrices to run");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* Context on the CUDA backend, its stream, cuSPARSE and cuBLAS on that stream,
 * and the timing events. False if nothing can run. */
static bool setup(bench *b)
{
    spx_status s = spx_ctx_create(&b->ctx);
    char err[300];
    if (s) {
        snprintf(b->broken_msg, sizeof b->broken_msg, "cannot create a context (%s)",
                 spx_status_name(s));
        return false;
    }
    if ((s = spx_ctx_set_backend(b->ctx, SPX_BACKEND_CUDA)) ||
        (s = spx_ctx_device_info(b->ctx, &b->dev))) {
        snprintf(b->broken_msg, sizeof b->broken_msg, "the CUDA backend is not usable: %s (%s)",
                 spx_last_error(b->ctx), spx_status_name(s));
        return false;
    }
    if (!bench_cuda_ok(cudaSetDevice(b->dev.device), "cudaSetDevice", err, sizeof err)) {
        snprintf(b->broken_msg, sizeof b->broken_msg, "%s", err);
        return false;
    }
    if (b->dev.l2_bytes <= 0) {
        int l2 = 0;
        if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, b->dev.device) == cudaSuccess)
            b->dev.l2_bytes = l2;
    }
    b->stream = (cudaStream_t)spx_ctx_stream(b->ctx);
    b->nev = 2 + 2 * (int)(b->o.repeat > 10 ? b->o.repeat : 10);
    if (!(b->ev = calloc((size_t)b->nev, sizeof *b->ev))) {
        snprintf(b->broken_msg, sizeof b->broken_msg, "out of host memory for events");
        return false;
    }
    for (int i = 0; i < b->nev; i++)
        if (!bench_cuda_ok(cudaEventCreate(&b->ev[i]), "cudaEventCreate", b->broken_msg,
                           sizeof b->broken_msg))
            return false;
    if (!b->o.cusparse) {
        snprintf(b->sparse_na, sizeof b->sparse_na, "off (--no-cusparse)");
    } else {
        cusparseStatus_t st = cusparseCreate(&b->sparse);
        if (st != CUSPARSE_STATUS_SUCCESS)
            b->sparse = NULL;
        else if ((st = cusparseSetStream(b->sparse, b->stream)) != CUSPARSE_STATUS_SUCCESS) {
            (void)cusparseDestroy(b->sparse);
            b->sparse = NULL;
        }
        if (!b->sparse) {
            snprintf(b->sparse_na, sizeof b->sparse_na, "cuSPARSE unavailable: %s (%s)",
                     cusparseGetErrorString(st), cusparseGetErrorName(st));
            fprintf(stderr, "spx bench: %s\n", b->sparse_na);
        }
    }
    if (!b->o.dense) {
        snprintf(b->blas_na, sizeof b->blas_na, "off (--no-dense)");
    } else if (b->o.dtype == SPX_F64) {
        snprintf(b->blas_na, sizeof b->blas_na, "no dense baseline for f64 data");
    } else {
        cublasStatus_t st = cublasCreate(&b->blas);
        if (st != CUBLAS_STATUS_SUCCESS)
            b->blas = NULL;
        else if ((st = cublasSetStream(b->blas, b->stream)) != CUBLAS_STATUS_SUCCESS ||
                 (st = cublasSetMathMode(b->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
            (void)cublasDestroy(b->blas);
            b->blas = NULL;
        }
        if (!b->blas) {
            snprintf(b->blas_na, sizeof b->blas_na, "cuBLAS unavailable: %s",
                     cublasGetStatusString(st));
            fprintf(stderr, "spx bench: %s\n", b->blas_na);
        }
    }
    return true;
}

static void teardown(bench *b)
{
    for (int i = 0; b->ev && i < b->nev; i++)
        if (b->ev[i])
            (void)cudaEventDestroy(b->ev[i]);
    free(b->ev);
    if (b->sparse)
        (void)cusparseDestroy(b->sparse);
    if (b->blas)
        (void)cublasDestroy(b->blas);
    spx_ctx_destroy(b->ctx);
    free(b->rows);
    free(b->sums);
}

static void print_header(const bench *b)
{
    int drv = 0, rt = 0, spv = 0, blv = 0;
    const spx_device_info *d = &b->dev;
    printf("spx bench spmm\ncommand: %s\ndate: %s\n", b->command, b->date);
    printf("device: %s (device %d, compute capability %d.%d, %d SMs, %.1f MB L2, %.1f GB)\n",
           d->name, d->device, d->cc_major, d->cc_minor, d->sm_count, (double)d->l2_bytes / 1e6,
           (double)d->global_mem_bytes / 1e9);
    if (cudaDriverGetVersion(&drv) == cudaSuccess && cudaRuntimeGetVersion(&rt) == cudaSuccess)
        printf("CUDA driver %d.%d, runtime %d.%d", drv / 1000, drv % 1000 / 10, rt / 1000,
               rt % 1000 / 10);
    if (b->sparse && cusparseGetVersion(b->sparse, &spv) == CUSPARSE_STATUS_SUCCESS)
        printf(", cuSPARSE %d.%d.%d", spv / 1000, spv % 1000 / 100, spv % 100);
    if (b->blas && cublasGetVersion(b->blas, &blv) == CUBLAS_STATUS_SUCCESS)
        printf(", cuBLAS %d", blv);
    printf("\ntiming: CUDA events on the spx context's stream around each run; %lld warm-up "
           "run(s), then the median and min of %lld runs (at least 10 when %.0f ms would not "
           "hold them), queued up to %d at a time while the stream waits (after warm-up runs), so "
           "that they run back to back (host us: the host's time to queue one); B and C rotated "
           "through copies when they total under 2x L2\n",
           (long long)b->o.warmup, (long long)b->o.repeat, b->o.budget_ms, BENCH_GATED_RUNS);
    printf("values: %s; spx: precision %s, algorithms", spx_dtype_name(b->o.dtype), spx_precision_name(b->o.precision));
    for (int i = 0; i < b->o.nalgs; i++)
        printf("%s %s", i ? "," : "", spx_spmm_alg_name(b->o.algs[i]));
    printf("\nchecks: each result against cuSPARSE's (relative Frobenius error; bound 1e-4 for f32 and f64 (C rounded to f32), "
           "1e-2 for tf32/bf16/f16 precision, 2e-2 for f16/bf16 data) and against a float64 host product on sampled rows\n");
    fflush(stdout);
}

static void describe_run(bench *b, int argc, char **argv)
{
    size_t used = (size_t)snprintf(b->command, sizeof b->command, "spx bench");
    for (int i = 0; i < argc && used < sizeof b->command; i++)
        used += (size_t)snprintf(b->command + used, sizeof b->command - used, " %s", argv[i]);
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(b->date, sizeof b->date, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 1 && (!strcmp(argv[0], "help") || !strcmp(argv[0], "--help"))) {
        fputs(help_text, stdout);
        return CLI_OK;
    }
    if (argc >= 1 && !strcmp(argv[0], "spgemm"))
        return cmd_bench_spgemm(argc - 1, argv + 1);
    if (argc < 1 || strcmp(argv[0], "spmm") != 0) {
        cli_usage_error("expected 'spx bench spmm [OPTIONS]' or 'spx bench spgemm [OPTIONS]' "
                        "('spx bench help', 'spx bench spgemm --help' list them)");
        return CLI_USAGE;
    }
    cli_args a;
    int r = cli_parse_n(argc - 1, argv + 1, "no-dense|no-cusparse|help",
                        "suite|matrix|gen|n|dlmc-n|repeat|warmup|budget-ms|algs|precision|csv|json|"
                        "data|seed|panel|k-slabs|dtype",
                        0, NULL, &a);
    if (r)
        return r;
    if (cli_flag(&a, "help")) {
        fputs(help_text, stdout);
        return CLI_OK;
    }
    bench *b = calloc(1, sizeof *b);
    bench_case *cases = NULL;
    int ncases = 0;
    if (!b) {
        fprintf(stderr, "spx bench: out of memory\n");
        return CLI_FAILED;
    }
    if ((r = parse_options(&a, b, &cases, &ncases)))
        goto done;
    describe_run(b, argc, argv);
    if (!bench_open_outputs(b)) {
        r = CLI_FAILED;
        goto done;
    }
    if (!setup(b)) {
        fprintf(stderr, "spx bench: %s\n", b->broken_msg);
        b->broken = true;
        bench_write_json(b);
        r = CLI_FAILED;
        goto done;
    }
    print_header(b);
    b->copy_gbs = bench_copy_bandwidth(b);
    for (int i = 0; i < ncases && !b->broken; i++)
        bench_run_matrix(b, &cases[i], i + 1, ncases);
    bench_print_summary(b);
    bench_write_json(b);
    if (b->o.csv || b->o.json)
        printf("results: %s%s%s\n", b->o.csv ? b->o.csv : "", b->o.csv && b->o.json ? ", " : "",
               b->o.json ? b->o.json : "");
    r = b->broken || b->failures ? CLI_FAILED : CLI_OK;
done:
    bench_close_outputs(b);
    teardown(b);
    free(b);
    free(cases);
    return r;
}

#else /* no CUDA */

int cmd_bench(int argc, char **argv)
{
    if (argc >= 1 && !strcmp(argv[0], "spgemm"))
        return cmd_bench_spgemm(argc - 1, argv + 1);
    fprintf(stderr, "spx bench: this build has no CUDA support; configure with a CUDA toolkit "
                    "(-DSPX_ENABLE_CUDA=ON) to benchmark\n");
    return CLI_FAILED;
}

#endif

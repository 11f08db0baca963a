/* spx bench: one matrix at each N. Rotated device operands, the float64 host
 * reference, event timing, result checks, and the spx algorithms. */
#ifdef SPX_HAVE_CUDA
#include "bench.h"
#include "core/core.h" /* the library's f16 and bf16 conversions */

#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Rows of the float64 host check (plus the longest row). */
#define SAMPLE_ROWS 512
/* Repeats never drop below this when the time budget cuts them. */
#define MIN_REPEATS 10

bool bench_cuda_ok(cudaError_t e, const char *what, char *err, size_t en)
{
    if (e == cudaSuccess)
        return true;
    snprintf(err, en, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return false;
}

bool bench_healthy(bench *b)
{
    if (b->broken)
        return false;
    /* an error that survives clearing and a second synchronisation is sticky */
    (void)cudaGetLastError();
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        e = cudaDeviceSynchronize();
    }
    if (e == cudaSuccess)
        return true;
    b->broken = true;
    snprintf(b->broken_msg, sizeof b->broken_msg, "the CUDA context is unusable (%s: %s)",
             cudaGetErrorName(e), cudaGetErrorString(e));
    fprintf(stderr, "spx bench: %s; nothing more can run\n", b->broken_msg);
    return false;
}

double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cli_cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ---- value types ----------------------------------------------------------------- */

cudaDataType bench_cuda_type(spx_dtype t)
{
    return t == SPX_F16 ? CUDA_R_16F : t == SPX_BF16 ? CUDA_R_16BF : t == SPX_F64 ? CUDA_R_64F : CUDA_R_32F;
}

cudaDataType bench_compute_type(spx_dtype t) { return t == SPX_F64 ? CUDA_R_64F : CUDA_R_32F; }

/* f32 values (B and A are drawn in f32) in the run's type: 16-bit types
 * round, f64 widens exactly. */
void bench_narrow(spx_dtype t, const float *x, void *y, size_t n)
{
    uint16_t *h = y;
    double *w = y;
    if (t == SPX_F32)
        memcpy(y, x, n * sizeof *x);
    else if (t == SPX_F64)
        for (size_t i = 0; i < n; i++)
            w[i] = x[i];
    else
        for (size_t i = 0; i < n; i++)
            h[i] = t == SPX_BF16 ? spx__float_to_bf16(x[i]) : spx__float_to_half(x[i]);
}

/* The run's values back in f32 for the checks (f64 C rounds: the checks'
 * bounds are 1e-4 and up). */
static void widen(spx_dtype t, const void *x, float *y, size_t n)
{
    const uint16_t *h = x;
    const double *w = x;
    if (t == SPX_F32)
        memcpy(y, x, n * sizeof *y);
    else if (t == SPX_F64)
        for (size_t i = 0; i < n; i++)
            y[i] = (float)w[i];
    else
        for (size_t i = 0; i < n; i++)
            y[i] = t == SPX_BF16 ? spx__bf16_to_float(h[i]) : spx__half_to_float(h[i]);
}

static float round_to(spx_dtype t, float x)
{
    return t == SPX_BF16 ? spx__bf16_to_float(spx__float_to_bf16(x))
           : t == SPX_F16 ? spx__half_to_float(spx__float_to_half(x))
                          : x;
}

static bool elapsed_ms(cudaEvent_t from, cudaEvent_t to, double *ms, char *err, size_t en)
{
    float f = 0;
    if (!bench_cuda_ok(cudaEventElapsedTime(&f, from, to), "cudaEventElapsedTime", err, en))
        return false;
    *ms = f;
    return true;
}

bool bench_time_once(bench *b, bench_step fn, bench_job *j, void *arg, double *ms, char *err,
                     size_t en)
{
    return bench_cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", err, en) &&
           fn(b, j, arg, 0, err, en) &&
           bench_cuda_ok(cudaEventRecord(b->ev[1], b->stream), "cudaEventRecord", err, en) &&
           bench_cuda_ok(cudaEventSynchronize(b->ev[1]), "waiting for the run", err, en) &&
           elapsed_ms(b->ev[0], b->ev[1], ms, err, en);
}

/* A host function in the stream: the stream waits until the gate opens (or the
 * timeout passes, which the gate records). */
static void CUDART_CB gate_wait(void *arg)
{
    bench_gate *g = arg;
    const double t0 = cli_now_ms();
    while (!atomic_load(&g->open)) {
        if (cli_now_ms() - t0 > 1e3 * BENCH_GATE_TIMEOUT_S) {
            atomic_store(&g->timed_out, 1);
            return;
        }
        sched_yield();
    }
}

/* The set the next run takes, moving the job's rotation on (a failed run too:
 * the next implementation starts past whatever this one touched). */
static int take_set(bench_job *j)
{
    const int s = j->next_set;
    j->next_set = (s + 1) % j->nsets;
    return s;
}

bool bench_time(bench *b, bench_job *j, bench_step fn, void *arg, bench_row *r)
{
    char *err = r->reason;
    size_t en = sizeof r->reason;
    cudaEvent_t *ev = b->ev;
    int64_t reps = b->o.repeat;
    if (b->o.warmup > 0) {
        double ms = 0;
        if (!bench_cuda_ok(cudaEventRecord(ev[0], b->stream), "cudaEventRecord", err, en))
            return false;
        for (int64_t w = 0; w < b->o.warmup; w++)
            if (!fn(b, j, arg, take_set(j), err, en))
                return false;
        if (!bench_cuda_ok(cudaEventRecord(ev[1], b->stream), "cudaEventRecord", err, en) ||
            !bench_cuda_ok(cudaEventSynchronize(ev[1]), "warm-up runs", err, en) ||
            !elapsed_ms(ev[0], ev[1], &ms, err, en))
            return false;
        /* keep slow implementations inside the time budget */
        double per_run = ms / (double)b->o.warmup;
        if (per_run > 0 && per_run * (double)reps > b->o.budget_ms) {
            int64_t fit = (int64_t)(b->o.budget_ms / per_run);
            int64_t least = reps < MIN_REPEATS ? reps : MIN_REPEATS;
            reps = fit > least ? fit : least;
        }
    }
    /* The timed runs are queued while the stream waits at a gate, then the gate
     * opens and the GPU runs them back to back. Queued one by one instead, a run
     * the host queues more slowly than the GPU finishes the one before would count
     * the GPU's wait for it: on products of 5-20 us, two runs of one program
     * differed by up to 2x. The host's time to queue them is reported on its own.
     * Without warm-up runs there is no gate: a first run may set up what makes it
     * wait for the stream (memory, lazily loaded kernels). */
    const bool gated = b->o.warmup > 0;
    double host_ms = 0;
    for (int64_t i0 = 0; i0 < reps; i0 += BENCH_GATED_RUNS) {
        const int64_t runs = reps - i0 < BENCH_GATED_RUNS ? reps - i0 : BENCH_GATED_RUNS;
        bench_gate *g = &b->gate;
        atomic_store(&g->open, 0);
        atomic_store(&g->timed_out, 0);
        if (gated && !bench_cuda_ok(cudaLaunchHostFunc(b->stream, gate_wait, g), "cudaLaunchHostFunc", err, en))
            return false;
        bool queued = true;
        double q0 = cli_now_ms();
        for (int64_t i = i0; queued && i < i0 + runs; i++)
            queued = bench_cuda_ok(cudaEventRecord(ev[2 + 2 * i], b->stream), "cudaEventRecord", err, en) &&
                     fn(b, j, arg, take_set(j), err, en) &&
                     bench_cuda_ok(cudaEventRecord(ev[3 + 2 * i], b->stream), "cudaEventRecord", err, en);
        host_ms += cli_now_ms() - q0;
        atomic_store(&g->open, 1);
        if (!bench_cuda_ok(cudaStreamSynchronize(b->stream), "timed runs", err, en) || !queued)
            return false;
        if (atomic_load(&g->timed_out)) {
            snprintf(err, en,
                     "%lld timed runs were not queued within %.0f s: a run waited for the stream, which waited "
                     "for the host to queue them",
                     (long long)runs, BENCH_GATE_TIMEOUT_S);
            return false;
        }
    }
    double *t = malloc(sizeof *t * (size_t)reps);
    if (!t) {
        snprintf(err, en, "out of host memory for %lld times", (long long)reps);
        return false;
    }
    bool ok = true;
    for (int64_t i = 0; ok && i < reps; i++)
        ok = elapsed_ms(ev[2 + 2 * i], ev[3 + 2 * i], &t[i], err, en);
    if (ok) {
        r->median_ms = bench_median(t, (int)reps);
        r->min_ms = t[0];
        r->host_us = 1e3 * host_ms / (double)reps;
        r->repeats = (int)reps;
    }
    free(t);
    return ok;
}

/* ---- result checks ----------------------------------------------------------- */

/* Relative Frobenius error of x against ref; infinite where x is not finite. */
static double rel_error(const float *x, const float *ref, size_t count)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < count; i++) {
        double xi = x[i], ri = ref[i];
        if (!isfinite(xi))
            return INFINITY;
        num += (xi - ri) * (xi - ri);
        den += ri * ri;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The same on the sampled rows, against the float64 host product. */
static double rel_error_rows(const bench_job *j)
{
    double num = 0, den = 0;
    for (int r = 0; r < j->nsample; r++) {
        const float *x = j->cwork + (size_t)j->sample[r] * (size_t)j->n;
        const double *ref = j->ref_rows + (size_t)r * (size_t)j->n;
        for (int64_t c = 0; c < j->n; c++) {
            if (!isfinite(x[c]))
                return INFINITY;
            num += (x[c] - ref[c]) * (x[c] - ref[c]);
            den += ref[c] * ref[c];
        }
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

void bench_check(bench *b, bench_job *j, bench_step fn, void *arg, bench_row *r, bool reference)
{
    char *err = r->reason;
    size_t en = sizeof r->reason, count = (size_t)j->m * (size_t)j->n;
    r->check = CHECK_FAIL;
    /* An element the run does not write fails the check. spx promises that
     * beta = 0 overwrites NaN, so its C is poisoned with NaN (0xFF bytes); the
     * libraries do not document that, so theirs gets 0x7E bytes, 8.4e37. */
    int poison = strcmp(r->impl, "spx") == 0 ? 0xFF : 0x7E;
    const size_t es = spx_dtype_size(b->o.dtype);
    void *raw = j->craw ? j->craw : (void *)j->cwork; /* f32 lands in cwork directly */
    if (!bench_cuda_ok(cudaMemsetAsync(j->dC[0], poison, count * es, b->stream), "poisoning C", err, en) ||
        !fn(b, j, arg, 0, err, en) ||
        !bench_cuda_ok(cudaStreamSynchronize(b->stream), "check run", err, en) ||
        !bench_cuda_ok(cudaMemcpy(raw, j->dC[0], count * es, cudaMemcpyDeviceToHost), "copying C to the host",
                       err, en)) {
        r->state = ROW_ERROR;
        b->failures++;
        bench_healthy(b);
        return;
    }
    if (j->craw)
        widen(b->o.dtype, j->craw, j->cwork, count);
    r->err_rows = rel_error_rows(j);
    r->err_ref = j->has_ref ? rel_error(j->cwork, j->cref, count) : NAN;
    bool ok = r->err_rows <= r->bound && (!j->has_ref || r->err_ref <= r->bound);
    r->check = ok ? CHECK_OK : CHECK_FAIL;
    if (ok && reference && !j->has_ref) { /* the first good cuSPARSE result is the reference */
        float *t = j->cref;
        j->cref = j->cwork;
        j->cwork = t;
        j->has_ref = true;
    }
    if (!ok) {
        b->failures++;
        fprintf(stderr,
                "spx bench: CHECK FAILED: %s %s on %s, N=%lld: relative error %.3g against "
                "cuSPARSE, %.3g against float64 host rows (bound %.0e)\n",
                r->impl, r->alg, r->matrix, (long long)r->n, r->err_ref, r->err_rows, r->bound);
    }
}

/* ---- one matrix at one N ----------------------------------------------------- */

static void job_free(bench_job *j)
{
    for (int s = 0; s < j->nsets; s++) {
        if (j->dB && j->dB[s])
            (void)cudaFree(j->dB[s]);
        if (j->dC && j->dC[s])
            (void)cudaFree(j->dC[s]);
    }
    free(j->dB);
    free(j->dC);
    free(j->hB);
    free(j->sample);
    free(j->ref_rows);
    free(j->cref);
    free(j->cwork);
    free(j->craw);
    free(j->explain);
    memset(j, 0, sizeof *j);
}

/* Row i of A*B (set 0) in float64 on the host, into out (N values), from A's
 * values as the run's value type stores them (B's host copies are rounded
 * already). */
static void host_row(const bench_job *j, spx_dtype dtype, int64_t i, double *out)
{
    const bench_mat *M = j->mat;
    const bool i64 = M->info.index_type == SPX_INDEX_I64;
    const float *val = M->ha.values;
    for (int64_t c = 0; c < j->n; c++)
        out[c] = 0;
    for (int64_t p = bench_idx(M->ha.offsets, i64, i); p < bench_idx(M->ha.offsets, i64, i + 1); p++) {
        const float *brow = j->hB + (size_t)bench_idx(M->ha.indices, i64, p) * (size_t)j->n;
        for (int64_t c = 0; c < j->n; c++)
            out[c] += (double)round_to(dtype, val[p]) * brow[c];
    }
}

/* Sampled rows of A*B (set 0), the reference of the checks. */
static bool job_reference(bench_job *j, spx_dtype dtype, char *err, size_t en)
{
    const bench_mat *M = j->mat;
    int ns = j->m <= SAMPLE_ROWS ? (int)j->m : SAMPLE_ROWS + 1;
    j->sample = malloc(sizeof *j->sample * (size_t)ns);
    j->ref_rows = calloc((size_t)ns * (size_t)j->n, sizeof *j->ref_rows);
    if (!j->sample || !j->ref_rows) {
        snprintf(err, en, "out of host memory for the reference rows");
        return false;
    }
    for (int r = 0; r < ns; r++)
        j->sample[r] = j->m <= SAMPLE_ROWS ? r : r < SAMPLE_ROWS ? r * j->m / SAMPLE_ROWS
                                                                   : M->longest_row;
    j->nsample = ns;
    for (int r = 0; r < ns; r++)
        host_row(j, dtype, j->sample[r], j->ref_rows + (size_t)r * (size_t)j->n);
    return true;
}

/* Whether every element of A*B (set 0) stays finite in the run's type: a
 * row whose |A| sum times B's largest magnitude passes the type's largest
 * value is computed on the host (f16 ends at 65504; olm1000 holds values of
 * up to 4.6e4, four a row). Past the range C holds infinities, whatever
 * computes it. */
static bool product_fits(const bench_job *j, spx_dtype dtype, char *err, size_t en)
{
    if (dtype == SPX_F64)
        return true;
    const bench_mat *M = j->mat;
    const bool i64 = M->info.index_type == SPX_INDEX_I64;
    const float *val = M->ha.values;
    const double top = dtype == SPX_F16 ? 65504.0 : FLT_MAX;
    double bmax = 0;
    for (size_t i = 0; i < (size_t)j->k * (size_t)j->n; i++)
        bmax = fmax(bmax, fabs(j->hB[i]));
    double *out = NULL;
    bool fits = true;
    for (int64_t i = 0; i < j->m && fits; i++) {
        const int64_t p0 = bench_idx(M->ha.offsets, i64, i), p1 = bench_idx(M->ha.offsets, i64, i + 1);
        double bound = 0;
        for (int64_t p = p0; p < p1; p++)
            bound += fabs(round_to(dtype, val[p]));
        if (bound * bmax <= top)
            continue;
        if (!out && !(out = malloc(sizeof *out * (size_t)j->n))) {
            snprintf(err, en, "out of host memory for the overflow check");
            return false;
        }
        host_row(j, dtype, i, out);
        for (int64_t c = 0; c < j->n && fits; c++)
            if (isfinite(out[c]) && !isfinite(round_to(dtype, (float)out[c]))) {
                snprintf(err, en, "A*B overflows %s (%.3g in row %lld); the case is not run in that type",
                         spx_dtype_name(dtype), out[c], (long long)i);
                fits = false;
            }
    }
    free(out);
    return fits;
}

/* Device sets of B (random) and C, host copies of B, and the references. */
static bool job_setup(bench *b, bench_mat *M, int64_t n, bench_job *j, char *err, size_t en)
{
    memset(j, 0, sizeof *j);
    j->mat = M;
    j->m = M->info.rows;
    j->k = M->info.cols;
    j->nnz = M->info.nnz;
    j->n = n;
    const spx_dtype dtype = b->o.dtype;
    const size_t es = spx_dtype_size(dtype);
    j->bytes = (double)j->nnz * (4.0 + (double)es) + (double)(j->m + 1) * 4 +
               (double)M->nonempty_cols * n * es + (double)j->m * n * es;
    size_t bcount = (size_t)j->k * (size_t)n, ccount = (size_t)j->m * (size_t)n;
    double set_bytes = (double)(bcount + ccount) * es;
    double l2 = b->dev.l2_bytes > 0 ? (double)b->dev.l2_bytes : 50e6;
    /* rotate enough sets that a set is out of L2 by the time it comes round again */
    j->nsets = set_bytes >= 2 * l2 ? 1 : (int)fmin(BENCH_MAX_SETS, ceil(4 * l2 / set_bytes));
    j->dB = calloc((size_t)j->nsets, sizeof *j->dB);
    j->dC = calloc((size_t)j->nsets, sizeof *j->dC);
    j->hB = malloc(sizeof *j->hB * bcount * (size_t)j->nsets);
    j->cref = malloc(sizeof *j->cref * ccount);
    j->cwork = malloc(sizeof *j->cwork * ccount);
    if (dtype != SPX_F32) /* C read back in its type, and B in it on its way to the device */
        j->craw = malloc(es * (ccount > bcount ? ccount : bcount));
    if (!j->dB || !j->dC || !j->hB || !j->cref || !j->cwork || (dtype != SPX_F32 && !j->craw)) {
        snprintf(err, en, "out of host memory (%.2f GB for the B sets and two copies of C)",
                 ((double)bcount * j->nsets + 2.0 * (double)ccount) * 4 / 1e9);
        return false;
    }
    for (int s = 0; s < j->nsets; s++) {
        spx_dense D = spx_dense_make(j->hB + bcount * (size_t)s, j->k, n, n, SPX_F32,
                                     SPX_ROW_MAJOR, SPX_MEM_HOST);
        spx_status st = spx_dense_fill_random(b->ctx, &D, b->o.seed + 1 + (uint64_t)s);
        if (st) {
            snprintf(err, en, "filling B: %s (%s)", spx_last_error(b->ctx), spx_status_name(st));
            return false;
        }
    }
    size_t free_bytes = 0, total_bytes = 0;
    if (!bench_cuda_ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", err, en))
        return false;
    for (int s = 0; s < j->nsets; s++) {
        cudaError_t e = cudaMalloc(&j->dB[s], bcount * es);
        if (e == cudaSuccess)
            e = cudaMalloc(&j->dC[s], ccount * es);
        if (e != cudaSuccess) {
            snprintf(err, en, "out of device memory: B and C (%d set(s)) need %.2f GB, %.2f GB "
                     "were free (%s)", j->nsets, set_bytes * j->nsets / 1e9, free_bytes / 1e9,
                     cudaGetErrorString(e));
            return false;
        }
        float *hb = j->hB + bcount * (size_t)s;
        if (j->craw) { /* B in the type, and the host copy rounded to it for the reference (f64: exact) */
            bench_narrow(dtype, hb, j->craw, bcount);
            widen(dtype, j->craw, hb, bcount);
        }
        if (!bench_cuda_ok(cudaMemcpy(j->dB[s], j->craw ? j->craw : (const void *)hb, bcount * es,
                                      cudaMemcpyHostToDevice),
                           "copying B to the device", err, en) ||
            !bench_cuda_ok(cudaMemset(j->dC[s], 0, ccount * es), "cudaMemset", err, en))
            return false;
    }
    /* pageable copies may still be in flight for streams that do not sync with them */
    return bench_cuda_ok(cudaDeviceSynchronize(), "setting up B and C", err, en) &&
           job_reference(j, dtype, err, en) && product_fits(j, dtype, err, en);
}

/* ---- spx ------------------------------------------------------------------------- */

typedef struct {
    const spx_spmm_plan *plan;
    spx_status status;
} spx_run;

static bool spx_step(bench *b, bench_job *j, void *arg, int s, char *err, size_t en)
{
    spx_run *p = arg;
    spx_dense B = spx_dense_make(j->dB[s], j->k, j->n, j->n, b->o.dtype, SPX_ROW_MAJOR, SPX_MEM_DEVICE);
    spx_dense C = spx_dense_make(j->dC[s], j->m, j->n, j->n, b->o.dtype, SPX_ROW_MAJOR, SPX_MEM_DEVICE);
    p->status = spx_spmm_plan_execute(b->ctx, p->plan, 1.0, &B, 0.0, &C);
    if (p->status) {
        snprintf(err, en, "spx_spmm_plan_execute: %s (%s)", spx_last_error(b->ctx),
                 spx_status_name(p->status));
        return false;
    }
    return true;
}

static void run_spx(bench *b, bench_job *j, spx_spmm_alg alg)
{
    bench_row *r = bench_row_new(b, j, j->mat, j->n, "spx", spx_spmm_alg_name(alg));
    if (!r)
        return;
    r->precision = spx_precision_name(b->o.precision);
    r->bound = bench_data16(b->o.dtype) ? 2e-2 : b->o.precision == SPX_PRECISION_EXACT ? 1e-4 : 1e-2;
    const bool row_kernels = alg == SPX_SPMM_AUTO || alg == SPX_SPMM_ROW_SPLIT || alg == SPX_SPMM_WARP_ROW ||
                             alg == SPX_SPMM_BLOCK_ROW; /* the algorithms that take k_slabs */
    spx_spmm_options opts = {.alg = alg, .precision = b->o.precision, .panel_cols = b->o.panel_cols,
                             .k_slabs = row_kernels ? b->o.k_slabs : 0};
    spx_spmm_plan *plan = NULL;
    spx_status s = spx_spmm_plan_create(b->ctx, SPX_OP_NONE, j->mat->dA, j->n, b->o.dtype, &opts, &plan);
    if (s) {
        r->state = s == SPX_ERR_UNSUPPORTED ? ROW_NA : ROW_ERROR;
        snprintf(r->reason, sizeof r->reason, "%s%s (%s)", s == SPX_ERR_UNSUPPORTED ? "" : "plan: ",
                 spx_last_error(b->ctx), spx_status_name(s));
        if (s != SPX_ERR_UNSUPPORTED)
            bench_healthy(b);
        bench_progress(r);
        return;
    }
    r->build_ms = spx_spmm_plan_build_ms(plan);
    if (alg == SPX_SPMM_AUTO) {
        const char *text = spx_spmm_plan_explain(plan);
        free(j->explain);
        j->explain = strdup(text ? text : "");
    }
    spx_run p = {plan, SPX_OK};
    if (bench_time(b, j, spx_step, &p, r)) {
        r->state = ROW_RAN;
        bench_check(b, j, spx_step, &p, r, false);
    } else {
        r->state = p.status == SPX_ERR_UNSUPPORTED ? ROW_NA : ROW_ERROR;
        if (r->state == ROW_ERROR)
            bench_healthy(b);
    }
    spx_spmm_plan_destroy(plan);
    bench_progress(r);
}

/* ---- one matrix ------------------------------------------------------------------ */

static void run_job(bench *b, bench_mat *M, int64_t n)
{
    bench_job J;
    char err[BENCH_MSG];
    size_t row0 = b->nrows;
    fprintf(stderr, "spx bench: %s, N=%lld\n", M->c->name, (long long)n);
    if (!job_setup(b, M, n, &J, err, sizeof err)) {
        bench_row *r = bench_row_new(b, NULL, M, n, "-", "setup");
        if (r)
            snprintf(r->reason, sizeof r->reason, "%s", err);
        bench_healthy(b);
    } else {
        bench_cusparse(b, &J);
        for (int i = 0; i < b->o.nalgs && !b->broken; i++)
            run_spx(b, &J, b->o.algs[i]);
        if (!b->broken)
            bench_dense(b, &J);
    }
    J.row0 = row0;
    bench_finish_job(b, &J, n);
    job_free(&J);
}

static void mat_free(bench_mat *M)
{
    bench_free_dense(M);
    if (M->spA)
        (void)cusparseDestroySpMat(M->spA);
    spx_matrix_destroy(M->dA);
    spx_matrix_destroy(M->A);
    memset(M, 0, sizeof *M);
}

/* Whether A's values stay finite in the run's type (f16 ends at 65504:
 * stiffness matrices such as bcsstk13 reach 1e12); rounding past the range
 * gives infinities, so the products would compare infinities, not kernels. */
static bool values_fit(spx_dtype dtype, const bench_mat *M, char *err, size_t en)
{
    const float *val = M->ha.values;
    for (int64_t p = 0; p < M->info.nnz; p++)
        if (isfinite(val[p]) && !isfinite(round_to(dtype, val[p]))) {
            snprintf(err, en, "A's value %.3g (entry %lld) overflows %s; the matrix is not run in that type",
                     val[p], (long long)p, spx_dtype_name(dtype));
            return false;
        }
    return true;
}

void bench_run_matrix(bench *b, const bench_case *c, int index, int total)
{
    bench_mat M;
    memset(&M, 0, sizeof M);
    M.c = c;
    char err[BENCH_MSG];
    fprintf(stderr, "spx bench: [%d/%d] %s: loading\n", index, total, c->name);
    double t0 = cli_now_ms();
    bool ok = bench_load(b, c, &M, err, sizeof err);
    double load_ms = cli_now_ms() - t0;
    if (ok) {
        spx_matrix *typed = NULL; /* A in the run's value type, when not f32 */
        spx_status s = b->o.dtype == SPX_F32 ? SPX_OK
                                             : spx_matrix_astype(b->ctx, M.A, b->o.dtype, M.info.index_type, &typed);
        if (!s)
            s = spx_matrix_to_device(b->ctx, typed ? typed : M.A, &M.dA);
        spx_matrix_destroy(typed);
        if (!s)
            s = spx_matrix_arrays_get(M.dA, &M.da);
        if (s) {
            snprintf(err, sizeof err, "copying A to the device: %s (%s)", spx_last_error(b->ctx),
                     spx_status_name(s));
            ok = false;
            bench_healthy(b);
        } else {
            ok = values_fit(b->o.dtype, &M, err, sizeof err);
        }
    }
    if (!ok) {
        size_t row0 = b->nrows;
        printf("\n== %s: skipped: %s\n", c->name, err);
        fprintf(stderr, "spx bench: %s: skipped: %s\n", c->name, err);
        for (int i = 0; i < c->nn; i++) {
            bench_row *r = bench_row_new(b, NULL, &M, c->n[i], "-", "load");
            if (r)
                snprintf(r->reason, sizeof r->reason, "%s", err);
        }
        bench_emit_rows(b, row0);
        mat_free(&M);
        return;
    }
    bench_print_matrix(b, &M, load_ms);
    bench_cusparse_matrix(b, &M);
    for (int i = 0; i < c->nn && !b->broken; i++)
        run_job(b, &M, c->n[i]);
    mat_free(&M);
}

#endif /* SPX_HAVE_CUDA */

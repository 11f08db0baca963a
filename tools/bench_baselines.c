/* spx bench: the baselines. cuSPARSE SpMM with each CSR algorithm on the same
 * device CSR, cuBLAS GEMM (fp32, tf32, bf16) on A densified, and the device
 * copy bandwidth that the effective bandwidths are measured against. */
#ifdef SPX_HAVE_CUDA
#include "bench.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- copy bandwidth ---------------------------------------------------------- */

double bench_copy_bandwidth(bench *b)
{
    enum { WARMUP = 2, REPS = 10 };
    const size_t bytes = (size_t)1 << 30;
    void *src = NULL, *dst = NULL;
    char err[300] = "";
    double t[REPS], gbs = 0;
    bool ok = bench_cuda_ok(cudaMalloc(&src, bytes), "cudaMalloc", err, sizeof err) &&
              bench_cuda_ok(cudaMalloc(&dst, bytes), "cudaMalloc", err, sizeof err) &&
              bench_cuda_ok(cudaMemsetAsync(src, 1, bytes, b->stream), "cudaMemsetAsync", err, sizeof err) &&
              bench_cuda_ok(cudaMemsetAsync(dst, 0, bytes, b->stream), "cudaMemsetAsync", err, sizeof err);
    for (int i = 0; ok && i < WARMUP; i++)
        ok = bench_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b->stream),
                           "cudaMemcpyAsync", err, sizeof err);
    for (int i = 0; ok && i < REPS; i++)
        ok = bench_cuda_ok(cudaEventRecord(b->ev[2 + 2 * i], b->stream), "cudaEventRecord", err, sizeof err) &&
             bench_cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b->stream),
                           "cudaMemcpyAsync", err, sizeof err) &&
             bench_cuda_ok(cudaEventRecord(b->ev[3 + 2 * i], b->stream), "cudaEventRecord", err, sizeof err);
    ok = ok && bench_cuda_ok(cudaStreamSynchronize(b->stream), "copies", err, sizeof err);
    for (int i = 0; ok && i < REPS; i++) {
        float ms = 0;
        ok = bench_cuda_ok(cudaEventElapsedTime(&ms, b->ev[2 + 2 * i], b->ev[3 + 2 * i]),
                           "cudaEventElapsedTime", err, sizeof err);
        t[i] = ms;
    }
    if (ok) {
        double med = bench_median(t, REPS);
        gbs = med > 0 ? 2.0 * (double)bytes / (med * 1e-3) / 1e9 : 0;
        printf("device copy bandwidth: %.0f GB/s (bytes read + written; 1 GiB device-to-device "
               "copy, median of %d: %.3f ms)\n", gbs, REPS, med);
    } else {
        printf("device copy bandwidth: not measured (%s); %%-of-copy columns are n/a\n", err);
        bench_healthy(b);
    }
    if (src)
        (void)cudaFree(src);
    if (dst)
        (void)cudaFree(dst);
    return gbs;
}

/* ---- cuSPARSE ------------------------------------------------------------------ */

void bench_cusparse_matrix(bench *b, bench_mat *M)
{
    if (!b->sparse) {
        snprintf(M->spA_na, sizeof M->spA_na, "%s", b->sparse_na);
        return;
    }
    /* spx stores int64 indices only when int32 cannot hold the counts */
    cusparseIndexType_t it = M->info.index_type == SPX_INDEX_I64 ? CUSPARSE_INDEX_64I
                                                                  : CUSPARSE_INDEX_32I;
    cusparseStatus_t st = cusparseCreateCsr(&M->spA, M->info.rows, M->info.cols, M->info.nnz,
                                            M->da.offsets, M->da.indices, M->da.values, it, it,
                                            CUSPARSE_INDEX_BASE_ZERO, bench_cuda_type(b->o.dtype));
    if (st != CUSPARSE_STATUS_SUCCESS) {
        M->spA = NULL;
        snprintf(M->spA_na, sizeof M->spA_na, "cusparseCreateCsr: %s (%s)",
                 cusparseGetErrorString(st), cusparseGetErrorName(st));
    }
}

typedef struct {
    cusparseSpMatDescr_t A;
    cusparseDnMatDescr_t B, C;
    cusparseSpMMAlg_t alg;
    void *buffer;
    cusparseStatus_t status;
} sparse_run;

static bool sparse_fail(sparse_run *p, cusparseStatus_t st, const char *what, char *err, size_t en)
{
    p->status = st;
    snprintf(err, en, "%s: %s (%s)", what, cusparseGetErrorString(st), cusparseGetErrorName(st));
    return false;
}

/* Point the dense descriptors at set s: one pair of descriptors serves every
 * set, so preprocessing and runs see the same descriptor objects. */
static bool sparse_set(sparse_run *p, bench_job *j, int s, char *err, size_t en)
{
    cusparseStatus_t st;
    if ((st = cusparseDnMatSetValues(p->B, j->dB[s])) != CUSPARSE_STATUS_SUCCESS ||
        (st = cusparseDnMatSetValues(p->C, j->dC[s])) != CUSPARSE_STATUS_SUCCESS)
        return sparse_fail(p, st, "cusparseDnMatSetValues", err, en);
    return true;
}

/* alpha = 1 or beta = 0 in cuSPARSE's compute type (bench_compute_type) */
static const void *sparse_scalar(const bench *b, int one)
{
    static const float f[2] = {0, 1};
    static const double d[2] = {0, 1};
    return b->o.dtype == SPX_F64 ? (const void *)&d[one] : (const void *)&f[one];
}

static bool sparse_step(bench *b, bench_job *j, void *arg, int s, char *err, size_t en)
{
    sparse_run *p = arg;
    const void *one = sparse_scalar(b, 1), *zero = sparse_scalar(b, 0);
    if (!sparse_set(p, j, s, err, en))
        return false;
    cusparseStatus_t st = cusparseSpMM(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       CUSPARSE_OPERATION_NON_TRANSPOSE, one, p->A, p->B, zero,
                                       p->C, bench_compute_type(b->o.dtype), p->alg, p->buffer);
    return st == CUSPARSE_STATUS_SUCCESS || sparse_fail(p, st, "cusparseSpMM", err, en);
}

static bool sparse_preprocess(bench *b, bench_job *j, void *arg, int s, char *err, size_t en)
{
    sparse_run *p = arg;
    const void *one = sparse_scalar(b, 1), *zero = sparse_scalar(b, 0);
    if (!sparse_set(p, j, s, err, en))
        return false;
    cusparseStatus_t st = cusparseSpMM_preprocess(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                  CUSPARSE_OPERATION_NON_TRANSPOSE, one, p->A, p->B,
                                                  zero, p->C, bench_compute_type(b->o.dtype), p->alg, p->buffer);
    return st == CUSPARSE_STATUS_SUCCESS || sparse_fail(p, st, "cusparseSpMM_preprocess", err, en);
}

static void sparse_alg(bench *b, bench_job *j, sparse_run *p, bool preprocess, bench_row *r)
{
    const void *one = sparse_scalar(b, 1), *zero = sparse_scalar(b, 0);
    size_t size = 0;
    char *err = r->reason;
    size_t en = sizeof r->reason;
    p->buffer = NULL;
    p->status = CUSPARSE_STATUS_SUCCESS;
    cusparseStatus_t st;
    bool ok = sparse_set(p, j, 0, err, en);
    if (ok && (st = cusparseSpMM_bufferSize(b->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            CUSPARSE_OPERATION_NON_TRANSPOSE, one, p->A, p->B,
                                            zero, p->C, bench_compute_type(b->o.dtype), p->alg, &size)) !=
                  CUSPARSE_STATUS_SUCCESS)
        ok = sparse_fail(p, st, "cusparseSpMM_bufferSize", err, en);
    if (ok && size > 0)
        ok = bench_cuda_ok(cudaMalloc(&p->buffer, size), "cudaMalloc (cuSPARSE buffer)", err, en);
    /* preprocessing is timed once and reported apart from the per-call time;
     * where cuSPARSE refuses it, the algorithm runs without */
    if (ok && preprocess && !bench_time_once(b, sparse_preprocess, j, p, &r->build_ms, err, en)) {
        ok = p->status == CUSPARSE_STATUS_NOT_SUPPORTED;
        r->build_ms = NAN;
        if (ok) {
            snprintf(err, en, "preprocessing not supported: ran without it");
            p->status = CUSPARSE_STATUS_SUCCESS;
        }
    }
    if (ok && (ok = bench_time(b, j, sparse_step, p, r))) {
        r->state = ROW_RAN;
        bench_check(b, j, sparse_step, p, r, true);
    }
    if (!ok) {
        r->state = p->status == CUSPARSE_STATUS_NOT_SUPPORTED ? ROW_NA : ROW_ERROR;
        if (r->state == ROW_ERROR)
            bench_healthy(b);
    }
    if (p->buffer)
        (void)cudaFree(p->buffer);
    p->buffer = NULL;
}

void bench_cusparse(bench *b, bench_job *j)
{
    /* every CSR algorithm; those that refuse row-major B and C report
     * CUSPARSE_STATUS_NOT_SUPPORTED and are listed as n/a */
    static const struct {
        cusparseSpMMAlg_t alg;
        const char *name;
        bool preprocess;
    } algs[] = {
        {CUSPARSE_SPMM_ALG_DEFAULT, "default", false},
        {CUSPARSE_SPMM_CSR_ALG1, "csr_alg1", true},
        {CUSPARSE_SPMM_CSR_ALG2, "csr_alg2", false},
        {CUSPARSE_SPMM_CSR_ALG3, "csr_alg3", true},
    };
    if (!b->o.cusparse)
        return;
    bench_mat *M = j->mat;
    sparse_run p = {M->spA, NULL, NULL, CUSPARSE_SPMM_ALG_DEFAULT, NULL, CUSPARSE_STATUS_SUCCESS};
    char na[320] = "";
    cusparseStatus_t st;
    if (!M->spA)
        snprintf(na, sizeof na, "%s", M->spA_na);
    else if ((st = cusparseCreateDnMat(&p.B, j->k, j->n, j->n, j->dB[0], bench_cuda_type(b->o.dtype),
                                       CUSPARSE_ORDER_ROW)) != CUSPARSE_STATUS_SUCCESS ||
             (st = cusparseCreateDnMat(&p.C, j->m, j->n, j->n, j->dC[0], bench_cuda_type(b->o.dtype),
                                       CUSPARSE_ORDER_ROW)) != CUSPARSE_STATUS_SUCCESS)
        snprintf(na, sizeof na, "cusparseCreateDnMat: %s (%s)", cusparseGetErrorString(st),
                 cusparseGetErrorName(st));
    for (size_t i = 0; i < sizeof algs / sizeof *algs && !b->broken; i++) {
        bench_row *r = bench_row_new(b, j, M, j->n, "cusparse", algs[i].name);
        if (!r)
            break;
        r->bound = bench_data16(b->o.dtype) ? 2e-2 : 1e-4; /* CSR_ALG1/2 measured up to 0.8 % off on 16-bit data */
        if (na[0]) {
            snprintf(r->reason, sizeof r->reason, "%s", na);
        } else {
            p.alg = algs[i].alg;
            sparse_alg(b, j, &p, algs[i].preprocess, r);
        }
        bench_progress(r);
    }
    if (p.B)
        (void)cusparseDestroyDnMat(p.B);
    if (p.C)
        (void)cusparseDestroyDnMat(p.C);
}

/* ---- cuBLAS on A densified ------------------------------------------------------- */

void bench_free_dense(bench_mat *M)
{
    if (M->dense)
        (void)cudaFree(M->dense);
    if (M->dense16)
        (void)cudaFree(M->dense16);
    M->dense = NULL;
    M->dense16 = NULL;
}

/* The 16-bit type of the cuBLAS GEMMs: f16 data's own, else bf16. */
static spx_dtype dense16_type(const bench *b) { return b->o.dtype == SPX_F16 ? SPX_F16 : SPX_BF16; }

/* A densified on the host (spx_matrix_to_dense), copied as f32 and in 16 bits
 * (dense16_type). */
static void densify(bench *b, bench_mat *M)
{
    M->dense_tried = true;
    int64_t m = M->info.rows, k = M->info.cols;
    double f32_bytes = (double)m * (double)k * 4;
    size_t free_bytes = 0, total_bytes = 0, count = (size_t)m * (size_t)k;
    char *na = M->dense_na;
    size_t nn = sizeof M->dense_na;
    if (!bench_cuda_ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", na, nn))
        return;
    if (f32_bytes >= 4.0 * (1 << 30) || 1.5 * f32_bytes >= (double)free_bytes / 4 ||
        m > INT_MAX || k > INT_MAX) {
        snprintf(na, nn, "dense A would take %.3g GB in f32 + %.3g GB in 16 bits (limits: under "
                 "4 GiB, and a quarter of the %.3g GB free)", f32_bytes / 1e9, f32_bytes / 2e9,
                 (double)free_bytes / 1e9);
        return;
    }
    spx_dense D = {0};
    uint16_t *h16 = NULL;
    spx_status s = spx_dense_alloc(b->ctx, m, k, SPX_F32, SPX_ROW_MAJOR, &D);
    if (!s)
        s = spx_matrix_to_dense(b->ctx, M->A, &D);
    if (s) {
        snprintf(na, nn, "densifying A: %s (%s)", spx_last_error(b->ctx), spx_status_name(s));
    } else if (!(h16 = malloc(count * sizeof *h16))) {
        snprintf(na, nn, "out of host memory for A in 16 bits (%.3g GB)", f32_bytes / 2e9);
    } else {
        bench_narrow(dense16_type(b), D.data, h16, count);
        bool ok = bench_cuda_ok(cudaMalloc((void **)&M->dense, count * sizeof(float)), "cudaMalloc (dense A)", na, nn) &&
                  bench_cuda_ok(cudaMalloc((void **)&M->dense16, count * sizeof *h16), "cudaMalloc (dense A)", na, nn) &&
                  bench_cuda_ok(cudaMemcpy(M->dense, D.data, count * sizeof(float), cudaMemcpyHostToDevice),
                                "copying dense A", na, nn) &&
                  bench_cuda_ok(cudaMemcpy(M->dense16, h16, count * sizeof *h16, cudaMemcpyHostToDevice),
                                "copying dense A", na, nn) &&
                  bench_cuda_ok(cudaDeviceSynchronize(), "copying dense A", na, nn);
        if (!ok) {
            bench_free_dense(M);
            bench_healthy(b);
        }
    }
    free(h16);
    spx_dense_free(&D);
}

/* f32 data: SGEMM, TF32 and BF16 (B rounded to bf16 ahead of the timed runs,
 * C in f32); f16 and bf16 data: DATA16, every operand in the data's type */
typedef enum { DENSE_SGEMM, DENSE_TF32, DENSE_BF16, DENSE_DATA16 } dense_mode;

typedef struct {
    dense_mode mode;
    uint16_t **b16; /* bf16 copies of the B sets (DENSE_BF16) */
} dense_run;

/* Row-major C = A B is column-major C^T = B^T A^T: cuBLAS computes the
 * N x m product of B^T (N x k, ld N) and A^T (k x m, ld k) into ld N. */
static bool dense_step(bench *b, bench_job *j, void *arg, int s, char *err, size_t en)
{
    const dense_run *d = arg;
    const float one = 1, zero = 0;
    int n = (int)j->n, m = (int)j->m, k = (int)j->k;
    const bench_mat *M = j->mat;
    cublasStatus_t st;
    switch (d->mode) {
    case DENSE_SGEMM:
        st = cublasSgemm(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, j->dB[s], n, M->dense, k,
                         &zero, j->dC[s], n);
        break;
    case DENSE_TF32:
        st = cublasGemmEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, j->dB[s], CUDA_R_32F, n,
                          M->dense, CUDA_R_32F, k, &zero, j->dC[s], CUDA_R_32F, n,
                          CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        break;
    case DENSE_BF16:
        st = cublasGemmEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, d->b16[s], CUDA_R_16BF, n,
                          M->dense16, CUDA_R_16BF, k, &zero, j->dC[s], CUDA_R_32F, n,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        break;
    default: {
        const cudaDataType t = bench_cuda_type(b->o.dtype);
        st = cublasGemmEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, j->dB[s], t, n, M->dense16, t, k,
                          &zero, j->dC[s], t, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        break;
    }
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, en, "cuBLAS GEMM: %s", cublasGetStatusString(st));
        return false;
    }
    return true;
}

/* bf16 copies of the job's B sets on the device. */
static bool dense_b16(bench_job *j, dense_run *d, char *err, size_t en)
{
    size_t count = (size_t)j->k * (size_t)j->n;
    uint16_t *h16 = malloc(count * sizeof *h16);
    d->b16 = calloc((size_t)j->nsets, sizeof *d->b16);
    bool ok = h16 && d->b16;
    if (!ok)
        snprintf(err, en, "out of host memory for B in bf16");
    for (int s = 0; ok && s < j->nsets; s++) {
        bench_narrow(SPX_BF16, j->hB + count * (size_t)s, h16, count);
        ok = bench_cuda_ok(cudaMalloc((void **)&d->b16[s], count * sizeof *h16), "cudaMalloc (bf16 B)", err, en) &&
             bench_cuda_ok(cudaMemcpy(d->b16[s], h16, count * sizeof *h16, cudaMemcpyHostToDevice),
                           "copying bf16 B", err, en);
    }
    free(h16);
    return ok && bench_cuda_ok(cudaDeviceSynchronize(), "copying bf16 B", err, en);
}

void bench_dense(bench *b, bench_job *j)
{
    typedef struct {
        const char *name, *precision;
        dense_mode mode;
        double bound;
    } dense_kind;
    static const dense_kind f32_kinds[] = {
        {"cublas_sgemm", "exact", DENSE_SGEMM, 1e-4},
        {"cublas_tf32", "tf32", DENSE_TF32, 1e-2},
        {"cublas_bf16", "bf16", DENSE_BF16, 1e-2},
    };
    /* 16-bit data: the GEMM in the data's type with f32 accumulation, as spx's exact precision */
    static const dense_kind f16_kind = {"cublas_f16", "exact", DENSE_DATA16, 2e-2},
                            bf16_kind = {"cublas_bf16", "exact", DENSE_DATA16, 2e-2};
    if (!b->o.dense || b->o.dtype == SPX_F64) /* no dense baseline for f64 data */
        return;
    const bool data16 = bench_data16(b->o.dtype);
    const dense_kind *kinds = !data16 ? f32_kinds : b->o.dtype == SPX_F16 ? &f16_kind : &bf16_kind;
    const size_t nkinds = data16 ? 1 : sizeof f32_kinds / sizeof *f32_kinds;
    bench_mat *M = j->mat;
    dense_run d = {DENSE_SGEMM, NULL};
    char na[320] = "";
    if (!b->blas) {
        snprintf(na, sizeof na, "%s", b->blas_na);
    } else {
        if (!M->dense_tried) {
            fprintf(stderr, "spx bench: densifying %s for cuBLAS\n", M->c->name);
            densify(b, M);
        }
        if (!M->dense)
            snprintf(na, sizeof na, "%s", M->dense_na);
        else if (!data16 && !dense_b16(j, &d, na, sizeof na))
            bench_healthy(b);
    }
    for (size_t i = 0; i < nkinds && !b->broken; i++) {
        bench_row *r = bench_row_new(b, j, M, j->n, "cublas", kinds[i].name);
        if (!r)
            break;
        r->precision = kinds[i].precision;
        r->bound = kinds[i].bound;
        if (na[0]) {
            snprintf(r->reason, sizeof r->reason, "%s", na);
        } else {
            d.mode = kinds[i].mode;
            if (bench_time(b, j, dense_step, &d, r)) {
                r->state = ROW_RAN;
                bench_check(b, j, dense_step, &d, r, false);
            } else {
                r->state = ROW_ERROR;
                bench_healthy(b);
            }
        }
        bench_progress(r);
    }
    for (int s = 0; d.b16 && s < j->nsets; s++)
        if (d.b16[s])
            (void)cudaFree(d.b16[s]);
    free(d.b16);
}

#endif /* SPX_HAVE_CUDA */

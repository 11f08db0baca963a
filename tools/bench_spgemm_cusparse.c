/* spx bench spgemm: the cusparseSpGEMM baseline (the generic API, CSR with
 * int32 indices, f32), one algorithm at a time, on spx's stream.
 *
 * A product is the documented sequence: workEstimation (size query, run),
 * for ALG2/ALG3 getNumProducts and estimateMemory (its buffer3 freed right
 * after, as NVIDIA's example does; chunk_fraction 0.2 for ALG3), compute
 * (DEFAULT: size query, run), C's size, its arrays, copy. The end-to-end
 * time allocates and frees every buffer and C; the timed runs keep them
 * (buffers grow if a run asks for more). Memory: the largest sum of live
 * work buffers, and C. */
#ifdef SPX_HAVE_CUDA
#include "bench_spgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_FRACTION 0.2f

typedef struct {
    void *buf[4]; /* index 1..3 as cuSPARSE numbers them */
    size_t size[4];
    int32_t *cptr, *ccol;
    float *cval;
    int64_t ccap, nnz;
    double live, peak; /* work buffers */
    bool keep;         /* timed runs: keep buffers between runs */
} cs_state;

static bool sp_ok(cusparseStatus_t s, const char *what, char *msg)
{
    if (s == CUSPARSE_STATUS_SUCCESS)
        return true;
    snprintf(msg, SG_MSG, "%s: %s (%s)", what, cusparseGetErrorString(s), cusparseGetErrorName(s));
    return false;
}

/* Buffer x of at least `size` bytes. */
static bool buffer(cs_state *s, int x, size_t size, char *msg)
{
    if (s->buf[x] && s->size[x] >= size)
        return true;
    if (s->buf[x]) {
        cudaFree(s->buf[x]);
        s->live -= (double)s->size[x];
        s->buf[x] = NULL;
    }
    if (!sg_cuda_ok(cudaMalloc(&s->buf[x], size ? size : 1), "cudaMalloc (cuSPARSE buffer)", msg))
        return false;
    s->size[x] = size;
    s->live += (double)size;
    if (s->live > s->peak)
        s->peak = s->live;
    return true;
}

static void drop_buffer(cs_state *s, int x)
{
    if (!s->buf[x])
        return;
    cudaFree(s->buf[x]);
    s->live -= (double)s->size[x];
    s->buf[x] = NULL;
    s->size[x] = 0;
}

static void cs_free(cs_state *s)
{
    for (int x = 1; x <= 3; x++)
        drop_buffer(s, x);
    cudaFree(s->cptr);
    cudaFree(s->ccol);
    cudaFree(s->cval);
    memset(s, 0, sizeof *s);
}

/* One product into s (C's arrays in s->cptr/ccol/cval). */
static bool product(sg_bench *b, const sg_mat *M, cusparseSpGEMMAlg_t alg, cs_state *s, char *msg)
{
    spx_matrix_arrays a, bb;
    spx_matrix_arrays_get(M->dA, &a);
    spx_matrix_arrays_get(M->dB, &bb);
    const float alpha = 1.0f, beta = 0.0f;
    const cusparseOperation_t N = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseSpMatDescr_t mA = NULL, mB = NULL, mC = NULL;
    cusparseSpGEMMDescr_t d = NULL;
    bool ok = false;
    size_t s1 = 0, s2 = 0, s3 = 0;
    int64_t rows, cols, nnz;
    if (!s->cptr &&
        !sg_cuda_ok(cudaMalloc((void **)&s->cptr, (size_t)(M->m + 1) * 4), "cudaMalloc (C)", msg))
        return false;
    if (!sp_ok(cusparseCreateCsr(&mA, M->m, M->k, M->nnz_a, a.offsets, a.indices, a.values,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                 CUDA_R_32F), "cusparseCreateCsr", msg) ||
        !sp_ok(cusparseCreateCsr(&mB, M->k, M->n, M->nnz_b, bb.offsets, bb.indices, bb.values,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                 CUDA_R_32F), "cusparseCreateCsr", msg) ||
        !sp_ok(cusparseCreateCsr(&mC, M->m, M->n, 0, s->cptr, NULL, NULL, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
               "cusparseCreateCsr", msg) ||
        !sp_ok(cusparseSpGEMM_createDescr(&d), "cusparseSpGEMM_createDescr", msg))
        goto done;
    if (!sp_ok(cusparseSpGEMM_workEstimation(b->sp, N, N, &alpha, mA, mB, &beta, mC, CUDA_R_32F,
                                             alg, d, &s1, NULL), "workEstimation", msg) ||
        !buffer(s, 1, s1, msg) ||
        !sp_ok(cusparseSpGEMM_workEstimation(b->sp, N, N, &alpha, mA, mB, &beta, mC, CUDA_R_32F,
                                             alg, d, &s1, s->buf[1]), "workEstimation", msg))
        goto done;
    if (alg == CUSPARSE_SPGEMM_ALG2 || alg == CUSPARSE_SPGEMM_ALG3) {
        int64_t nprod = 0;
        if (!sp_ok(cusparseSpGEMM_getNumProducts(d, &nprod), "getNumProducts", msg) ||
            !sp_ok(cusparseSpGEMM_estimateMemory(b->sp, N, N, &alpha, mA, mB, &beta, mC,
                                                 CUDA_R_32F, alg, d, CHUNK_FRACTION, &s3, NULL,
                                                 NULL), "estimateMemory", msg) ||
            !buffer(s, 3, s3, msg) ||
            !sp_ok(cusparseSpGEMM_estimateMemory(b->sp, N, N, &alpha, mA, mB, &beta, mC,
                                                 CUDA_R_32F, alg, d, CHUNK_FRACTION, &s3,
                                                 s->buf[3], &s2), "estimateMemory", msg))
            goto done;
        if (!s->keep)
            drop_buffer(s, 3);
    } else if (!sp_ok(cusparseSpGEMM_compute(b->sp, N, N, &alpha, mA, mB, &beta, mC, CUDA_R_32F,
                                             alg, d, &s2, NULL), "compute", msg)) {
        goto done;
    }
    if (!buffer(s, 2, s2, msg) ||
        !sp_ok(cusparseSpGEMM_compute(b->sp, N, N, &alpha, mA, mB, &beta, mC, CUDA_R_32F, alg, d,
                                      &s2, s->buf[2]), "compute", msg) ||
        !sp_ok(cusparseSpMatGetSize(mC, &rows, &cols, &nnz), "cusparseSpMatGetSize", msg))
        goto done;
    if (nnz > s->ccap) {
        cudaFree(s->ccol);
        cudaFree(s->cval);
        s->ccol = NULL;
        s->cval = NULL;
        if (!sg_cuda_ok(cudaMalloc((void **)&s->ccol, (size_t)(nnz ? nnz : 1) * 4), "cudaMalloc (C)", msg) ||
            !sg_cuda_ok(cudaMalloc((void **)&s->cval, (size_t)(nnz ? nnz : 1) * 4), "cudaMalloc (C)", msg))
            goto done;
        s->ccap = nnz;
    }
    s->nnz = nnz;
    ok = sp_ok(cusparseCsrSetPointers(mC, s->cptr, s->ccol, s->cval), "cusparseCsrSetPointers",
               msg) &&
         sp_ok(cusparseSpGEMM_copy(b->sp, N, N, &alpha, mA, mB, &beta, mC, CUDA_R_32F, alg, d),
               "copy", msg);
done:
    if (d)
        cusparseSpGEMM_destroyDescr(d);
    if (mA)
        cusparseDestroySpMat(mA);
    if (mB)
        cusparseDestroySpMat(mB);
    if (mC)
        cusparseDestroySpMat(mC);
    return ok;
}

static double wall_ms(void) { return cli_now_ms(); }

static int cmp_double(const void *x, const void *y) { return cli_cmp_double(x, y); }

void sg_cusparse(sg_bench *b, const sg_mat *M, cusparseSpGEMMAlg_t alg, sg_row *row,
                 sg_result *res)
{
    cs_state s;
    memset(&s, 0, sizeof s);
    double t[1024];
    int reps = b->o.repeat < 1024 ? b->o.repeat : 1024;
    /* end to end (fresh buffers and C), which also measures the memory */
    double t0 = wall_ms();
    bool ok = product(b, M, alg, &s, row->msg) &&
              sg_cuda_ok(cudaStreamSynchronize(b->stream), "synchronize", row->msg);
    double work_peak = s.peak;
    row->nnz_c = s.nnz;
    cs_free(&s);
    ok = ok && sg_cuda_ok(cudaDeviceSynchronize(), "synchronize", row->msg);
    row->e2e_ms = wall_ms() - t0;
    if (!ok)
        goto fail;
    row->work_bytes = work_peak;
    row->c_bytes = (double)(M->m + 1) * 4 + (double)row->nnz_c * 8;
    s.keep = true;
    for (int w = 0; w < b->o.warmup; w++)
        if (!product(b, M, alg, &s, row->msg))
            goto fail;
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        if (!sg_cuda_ok(cudaEventRecord(b->ev[0], b->stream), "cudaEventRecord", row->msg) ||
            !product(b, M, alg, &s, row->msg) ||
            !sg_cuda_ok(cudaEventRecord(b->ev[1], b->stream), "cudaEventRecord", row->msg) ||
            !sg_cuda_ok(cudaEventSynchronize(b->ev[1]), "cudaEventSynchronize", row->msg) ||
            !sg_cuda_ok(cudaEventElapsedTime(&ms, b->ev[0], b->ev[1]), "cudaEventElapsedTime",
                        row->msg))
            goto fail;
        t[r] = ms;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    row->run_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    row->min_ms = t[0];
    row->gflops = 2 * M->products / (row->run_ms * 1e6);
    /* the last run's C, for the comparisons */
    res->rows = M->m;
    res->nnz = s.nnz;
    res->ptr = malloc((size_t)(M->m + 1) * 4);
    res->col = malloc((size_t)(s.nnz ? s.nnz : 1) * 4);
    res->val = malloc((size_t)(s.nnz ? s.nnz : 1) * 4);
    if (!res->ptr || !res->col || !res->val) {
        snprintf(row->msg, SG_MSG, "out of host memory for cuSPARSE's result");
        sg_result_free(res);
        goto fail;
    }
    if (!sg_cuda_ok(cudaMemcpy(res->ptr, s.cptr, (size_t)(M->m + 1) * 4, cudaMemcpyDeviceToHost),
                    "copying C", row->msg) ||
        !sg_cuda_ok(cudaMemcpy(res->col, s.ccol, (size_t)s.nnz * 4, cudaMemcpyDeviceToHost),
                    "copying C", row->msg) ||
        !sg_cuda_ok(cudaMemcpy(res->val, s.cval, (size_t)s.nnz * 4, cudaMemcpyDeviceToHost),
                    "copying C", row->msg)) {
        sg_result_free(res);
        goto fail;
    }
    row->ran = true;
    cs_free(&s);
    return;
fail:
    row->ran = false;
    cs_free(&s);
    (void)cudaGetLastError();
    (void)cudaDeviceSynchronize();
    (void)cudaGetLastError();
}

#endif

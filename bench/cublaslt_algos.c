/* How far cuBLASLt's first heuristic algorithm is from the fastest of the
 * first 16 it proposes, on the dense path's GEMM shapes (the DLMC layers'
 * m x k at N = 256-4096), for f32 operands and C (no tf32), the same at tf32,
 * and bf16 operands and C, all with f32 accumulation: the GEMM spx's dense
 * path runs (dense_gemm.c takes the first algorithm). Each product is laid
 * out as spmm_exec.c lays it: C (m x N) = A (m x k) B (k x N) row-major, run
 * as the column-major N x m product, with the 256-byte alignment
 * dense_gemm.c tells cuBLASLt for pooled operands. Operands are zeros, the
 * same every run (in L2 where they fit); each algorithm runs 3 times untimed,
 * then 15 times, each between two CUDA events; the median is printed. An
 * algorithm that refuses the operands is skipped ("-" where it is the first).
 *
 *   nvcc -O2 -o cublaslt_algos bench/cublaslt_algos.c -lcublasLt && ./cublaslt_algos
 */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "cublaslt_algos: %s failed (line %d)\n", #x, __LINE__);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int by_value(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    static const int shapes[][3] = {/* m, k, N */
                                    {2048, 512, 256},  {2048, 512, 1024}, {2048, 512, 4096}, {512, 512, 256},
                                    {512, 512, 1024},  {512, 512, 4096},  {512, 2048, 256},  {512, 2048, 1024},
                                    {512, 2048, 4096}, {512, 4608, 1024}, {512, 4608, 4096}, {256, 1024, 4096},
                                    {128, 1152, 4096}};
    static const char *names[] = {"f32", "tf32", "bf16"};
    const size_t ws_bytes = (size_t)32 << 20;
    size_t bytes = 0; /* the largest operand, at 4 bytes an element */
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const size_t m = (size_t)shapes[si][0], k = (size_t)shapes[si][1], n = (size_t)shapes[si][2];
        const size_t most = m * k > k * n ? (m * k > m * n ? m * k : m * n) : (k * n > m * n ? k * n : m * n);
        if (4 * most > bytes)
            bytes = 4 * most;
    }
    cublasLtHandle_t lt;
    void *ws, *A, *B, *C;
    cudaEvent_t e0, e1;
    CHECK(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
    CHECK(cudaMalloc(&ws, ws_bytes) == cudaSuccess && cudaMalloc(&A, bytes) == cudaSuccess &&
          cudaMalloc(&B, bytes) == cudaSuccess && cudaMalloc(&C, bytes) == cudaSuccess);
    CHECK(cudaMemset(A, 0, bytes) == cudaSuccess && cudaMemset(B, 0, bytes) == cudaSuccess);
    CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
    printf("%-5s %5s %5s %5s  first_us  best_us  first/best  best_index  algorithms\n", "type", "m", "k", "N");
    for (int t = 0; t < 3; t++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const int m = shapes[si][0], k = shapes[si][1], n = shapes[si][2];
            const cublasComputeType_t comp = t == 0   ? CUBLAS_COMPUTE_32F_PEDANTIC
                                             : t == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                      : CUBLAS_COMPUTE_32F;
            const cudaDataType type = t == 2 ? CUDA_R_16BF : CUDA_R_32F;
            cublasLtMatmulDesc_t op;
            cublasLtMatrixLayout_t la, lb, lc;
            cublasLtMatmulPreference_t pref;
            cublasLtMatmulHeuristicResult_t found[16];
            int count = 0;
            CHECK(cublasLtMatmulDescCreate(&op, comp, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatrixLayoutCreate(&la, type, n, k, n) == CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatrixLayoutCreate(&lb, type, k, m, k) == CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatrixLayoutCreate(&lc, type, n, m, n) == CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                       sizeof ws_bytes) == CUBLAS_STATUS_SUCCESS);
            const uint32_t align = 256;
            CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align, 4) ==
                      CUBLAS_STATUS_SUCCESS &&
                  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align, 4) ==
                      CUBLAS_STATUS_SUCCESS &&
                  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align, 4) ==
                      CUBLAS_STATUS_SUCCESS &&
                  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align, 4) ==
                      CUBLAS_STATUS_SUCCESS);
            CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 16, found, &count) ==
                      CUBLAS_STATUS_SUCCESS &&
                  count > 0);
            const float alpha = 1, beta = 0;
            float first = 0, best = 0;
            int best_index = -1;
            for (int a = 0; a < count; a++) {
                float ms[15];
                int ok = 1;
                for (int r = 0; r < 18 && ok; r++) {
                    CHECK(cudaEventRecord(e0, 0) == cudaSuccess);
                    ok = cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &found[a].algo, ws,
                                        found[a].workspaceSize, 0) == CUBLAS_STATUS_SUCCESS;
                    CHECK(cudaEventRecord(e1, 0) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess);
                    if (r >= 3)
                        CHECK(cudaEventElapsedTime(&ms[r - 3], e0, e1) == cudaSuccess);
                }
                if (!ok)
                    continue; /* an algorithm that refuses the operands */
                qsort(ms, 15, sizeof ms[0], by_value);
                const float us = ms[7] * 1000;
                if (a == 0)
                    first = us;
                if (best_index < 0 || us < best)
                    best = us, best_index = a;
            }
            if (best_index < 0)
                printf("%-5s %5d %5d %5d  no algorithm ran\n", names[t], m, k, n);
            else if (first == 0)
                printf("%-5s %5d %5d %5d  %8s %8.2f  %10s  %10d  %10d\n", names[t], m, k, n, "-", best, "-",
                       best_index, count);
            else
                printf("%-5s %5d %5d %5d  %8.2f %8.2f  %10.2f  %10d  %10d\n", names[t], m, k, n, first, best,
                       first / best, best_index, count);
            cublasLtMatmulPreferenceDestroy(pref);
            cublasLtMatrixLayoutDestroy(la);
            cublasLtMatrixLayoutDestroy(lb);
            cublasLtMatrixLayoutDestroy(lc);
            cublasLtMatmulDescDestroy(op);
        }
    return 0;
}

/* Internals of `spx bench spgemm`: spx's SpGEMM (deterministic and fast
 * modes) against cusparseSpGEMM's algorithms on the same device CSR
 * operands, plus the avos closure of a generated pedigree. CUDA builds
 * only. The method: docs/BENCHMARKING.md ("SpGEMM"). */
#ifndef SPX_BENCH_SPGEMM_H
#define SPX_BENCH_SPGEMM_H
#ifdef SPX_HAVE_CUDA

#include "cli.h"

#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SG_MAX_CASES 64
#define SG_MSG 256

/* One product C = A * B (B = A, or A^T for rectangular A). */
typedef struct sg_case {
    char name[200];
    char path[4096]; /* file, or "" for generated */
    char gen[64];    /* "laplacian3d", "uniform", "rmat", "pruned" for generated */
    int64_t p1, p2, p3; /* generator parameters */
    double x1;
} sg_case;

typedef struct sg_opts {
    int repeat, warmup;
    bool cusparse, closure;
    int64_t pedigree_n;
    uint64_t seed;
    const char *csv, *data;
} sg_opts;

/* Host and device operands of one case. */
typedef struct sg_mat {
    spx_matrix *A, *B;   /* host CSR f32 int32 (B may be A) */
    spx_matrix *dA, *dB; /* device copies (dB may be dA) */
    int64_t m, k, n, nnz_a, nnz_b;
    double products;     /* intermediate products: sum over A(i,k) of |B(k,:)| */
} sg_mat;

/* One implementation on one case. NAN where it does not apply. */
typedef struct sg_row {
    char impl[16], alg[16];
    bool ran;
    char msg[SG_MSG];   /* why it did not run, or what failed */
    double run_ms, min_ms, e2e_ms, gflops;
    int64_t nnz_c;
    double work_bytes;  /* peak extra device memory besides C */
    double c_bytes;
    int check;          /* 1 same as the reference, 0 differs, -1 not checked */
    double max_err;
} sg_row;

typedef struct sg_bench {
    sg_opts o;
    spx_ctx *ctx;
    cudaStream_t stream;
    cusparseHandle_t sp;
    cudaEvent_t ev[2];
    FILE *csv;
    int failures;
} sg_bench;

/* A result on the host for comparisons (CSR, int32, f32). */
typedef struct sg_result {
    int64_t rows, nnz;
    int32_t *ptr, *col;
    float *val;
} sg_result;

void sg_result_free(sg_result *r);
/* Compare with the reference: same pattern, values within 1e-5 of the
 * entry's size (|a| + |b| + the row's largest |b|). Sets row->check and
 * row->max_err. */
void sg_compare(const sg_result *ref, const sg_result *got, sg_row *row);
bool sg_cuda_ok(cudaError_t e, const char *what, char *msg);

/* bench_spgemm_cases.c */
bool sg_load(sg_bench *b, const sg_case *c, sg_mat *M, char *msg);
void sg_mat_free(sg_mat *M);
/* The default products; `all` adds DATA/suitesparse. */
int sg_default_cases(const char *data, bool all, sg_case *cases, int max);
/* Pedigree of n individuals (see the function). */
spx_status sg_pedigree(spx_ctx *ctx, int64_t n, uint64_t seed, spx_matrix **out);

/* bench_spgemm_cusparse.c: one cuSPARSE algorithm (CUSPARSE_SPGEMM_DEFAULT,
 * _ALG2, _ALG3) timed, its memory counted, its result kept in *res. */
void sg_cusparse(sg_bench *b, const sg_mat *M, cusparseSpGEMMAlg_t alg, sg_row *row,
                 sg_result *res);

#endif
#endif

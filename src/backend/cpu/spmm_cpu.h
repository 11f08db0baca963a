/* CPU SpMM internals shared by the driver (spmm_cpu.c) and the kernels
 * (spmm_cpu_kernels.c). */
#ifndef SPX_BACKEND_CPU_SPMM_H
#define SPX_BACKEND_CPU_SPMM_H

#include "core/core.h"

/* Shapes of A the kernels read. CSR rows: offsets/indices/values of the rows
 * of op(A) (CSR of A, CSC of A for A^T, or a converted copy). */
typedef enum { CPU_KIND_CSR = 0, CPU_KIND_BSR = 1, CPU_KIND_SELL = 2 } cpu_kind;

/* Accumulator widths: a row of C is computed in panels of at most this many
 * columns, held in a local array (256 bytes) the compiler can vectorise over. */
#define CPU_PANEL_F32 64
#define CPU_PANEL_F64 32
#define CPU_PANEL_BYTES 256

/* One SpMM, ready for the kernels. B is row-major in the compute type (f64
 * when C is f64, else f32). C(i, j) is C[i * c_rs + j * c_cs] of type c_dtype
 * (the compute type, or f16/bf16 converted on store). */
typedef struct cpu_spmm_job {
    const void *offsets, *indices, *values, *perm, *row_lengths;
    int64_t units; /* what the work is split over: rows, block rows or slices */
    int64_t m, k, n;
    int64_t br, bc, sell_c;
    const void *B;
    int64_t ldb;
    void *C;
    int64_t c_rs, c_cs;
    spx_dtype c_dtype;
    double alpha, beta;
} cpu_spmm_job;

/* Compute units [u0, u1): every element of the rows of C they cover is written
 * once, by this call. scratch: CPU_PANEL_BYTES * br bytes (BSR), else unused. */
typedef void (*cpu_spmm_kernel)(const cpu_spmm_job *job, int64_t u0, int64_t u1, void *scratch);

/* How A's values are read: as f32 (f32, f16, bf16 or pattern values) or f64. */
typedef enum {
    CPU_LOAD_F32 = 0, CPU_LOAD_F16 = 1, CPU_LOAD_BF16 = 2, CPU_LOAD_ONE_F32 = 3,
    CPU_LOAD_F64 = 4, CPU_LOAD_ONE_F64 = 5, CPU_LOAD_COUNT = 6
} cpu_load;

/* The kernel for a kind of A, its index type and how its values are read. */
cpu_spmm_kernel spx__cpu_spmm_kernel(cpu_kind kind, spx_index_type itype, cpu_load load);
/* C = beta * C over rows (job->alpha must be 0; A and B are not read), in
 * f64 or f32 arithmetic. */
cpu_spmm_kernel spx__cpu_spmm_scale_kernel(bool f64);

#endif

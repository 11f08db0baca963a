/* The host side of one CUDA SpGEMM: its state, shared by the driver
 * (spgemm_cuda.c: plan, memory, phases), the operands and results
 * (spgemm_cuda_io.c) and the overflow report (spgemm_cuda_overflow.c). */
#ifndef SPX_SPGEMM_CUDA_HOST_H
#define SPX_SPGEMM_CUDA_HOST_H

#include "backend/cuda/spgemm_cuda.h"
#include "backend/cuda/spmm_cuda.h" /* row sort, index conversions */
#include "backend/spgemm_common.h"

#define SPX_GEMM_MAX_BLOCKS 24

typedef struct spx_gemm {
    spx_ctx *ctx;
    const spx_spgemm_args *a;
    cudaStream_t stream;
    const spx_cuda_side *side; /* the context's side streams */
    int64_t m, n, vsz;
    int ordered;    /* numeric kernels combine in k order */
    spx_gemm_dev d; /* operands, per-row arrays, flags */

    /* working memory: every pool block of the call, counted as the pool does */
    void *block[SPX_GEMM_MAX_BLOCKS];
    int64_t block_bytes[SPX_GEMM_MAX_BLOCKS];
    int nblocks;
    int64_t live, peak;
    int64_t fixed; /* operands and per-row arrays: held from start to end */

    /* per-row arrays besides those in d */
    unsigned char *bin;
    int32_t *rows;   /* row ids grouped by bin */
    void *sort_tmp, *scan_tmp;
    size_t sort_bytes, scan_bytes;
    unsigned long long *stats;
    int64_t *ranges; /* per-chunk bin ranges (2 per bin) */

    /* plan */
    spx_gemm_bins sym, num;
    unsigned long long hstats[SPX_GEMM_NSTATS]; /* the symbolic binning's statistics */
    int64_t start[SPX_GEMM_MAX_BINS + 1];       /* bin starts of the current binning */
    unsigned char *regions; /* tables of rows too large for shared memory */
    int64_t region_bytes;
    int nregions;
    int64_t total;   /* entries of C as counted (an upper bound with drop) */
    int stage;       /* the result passes through a staging buffer */
    int64_t cap;     /* its capacity in entries */
    void *stage_col, *stage_val;
    int64_t *hoff;   /* host copy of off (m + 1), when needed */
} spx_gemm;

/* Working memory of the call (pool blocks, counted in live/peak). */
spx_status spx__gemm_alloc(spx_gemm *g, void **p, int64_t bytes, const char *what);
void spx__gemm_free(spx_gemm *g, void *p);

/* A, B, M and accum on the device as int64-offset, int32-column CSR: in
 * place where they already are, else uploaded or converted. */
spx_status spx__gemm_stage_operands(spx_gemm *g);
/* Run the numeric phase and build the result in the memory args ask for
 * (its checks of overflow and change included); sets *g->a->C. */
spx_status spx__gemm_output(spx_gemm *g);
/* Launch the numeric kernels for rows [r0, r1) (ranges: the bins' full
 * ranges when the chunk is every row). */
spx_status spx__gemm_numeric_rows(spx_gemm *g, int64_t r0, int64_t r1);
/* Read the device flags; a raised overflow becomes SPX_ERR_OVERFLOW naming
 * the entry (found again on the host). */
spx_status spx__gemm_check_status(spx_gemm *g, int *changed);
/* The column of row i's first failing operation, in the ref backend's
 * order; SPX_ERR_INTERNAL if none fails. */
spx_status spx__gemm_overflow_column(spx_gemm *g, int64_t i, int64_t *j);

#endif

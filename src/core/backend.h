/* The backend seam: one table of per-operation function pointers per backend.
 * src/ops/ checks arguments, then calls ctx->backend->op. A NULL entry means
 * the backend does not implement that operation (SPX_ERR_UNSUPPORTED). */
#ifndef SPX_BACKEND_H
#define SPX_BACKEND_H

#include "spx.h"

/* Arguments of C = alpha * op(A) * B + beta * C, already checked by ops/spmm.c:
 * shapes agree (op(A) is m x k, B k x n, C m x n), dtypes are supported,
 * A is valid. */
typedef struct spx_spmm_args {
    spx_op op;
    double alpha, beta;
    const spx_matrix *A;
    const spx_dense *B;
    spx_dense *C;
    int64_t m, k, n;
    const spx_spmm_options *opts; /* NULL: defaults */
} spx_spmm_args;

/* Arguments of C<mask> = [accum (+)] A (+.x) B, prepared by ops/spgemm.c:
 * A (m x k) and B (k x n) are valid CSR matrices, any transposition already
 * applied; their values are of `type` or SPX_PATTERN (every entry 1). For
 * AVOS every value is >= -1. The product applies mul(A(i,k), B(k,j)) in
 * that operand order, reducing each C(i,j) in increasing k (the first
 * product is taken as is, later ones added). Host backends get host
 * matrices with one index type; the cuda backend may get A, B, M and accum
 * in device memory and with any index types. */
typedef struct spx_spgemm_args {
    spx_semiring_kind kind;
    spx_dtype type;             /* value type of the arithmetic and of C */
    const spx_semiring *custom; /* CUSTOM: the user's operators over `type` */
    const spx_matrix *A, *B;
    spx_mask_kind mask;         /* NONE, MATRIX or a triangle (complements folded in) */
    const spx_matrix *M;        /* MATRIX: valid CSR, m x n, pattern only */
    int complement;             /* MATRIX: keep what M excludes; NONE: keep nothing */
    const spx_matrix *accum;    /* NULL or valid CSR, m x n, of `type` */
    int drop_identity;
    int64_t memory_budget;      /* the caller's limit on working memory (0: none) */
    int64_t operand_bytes;      /* working memory ops already holds (converted operands) */
    int64_t *workspace;         /* non-NULL: only store the working memory the call would use */
    int deterministic;          /* reduce in k order even where a backend could reorder sums */
    spx_memory out_memory;      /* where C goes: device when A and B are in device memory */
    int *changed;               /* non-NULL (cuda, with accum): store whether C differs from
                                   accum in pattern or values (the avos closure's test) */
    spx_matrix **C;             /* the result, set only on success */
} spx_spgemm_args;

typedef struct spx_backend_vtable {
    spx_backend kind;
    const char *name;
    /* Nonzero if usable in this process. */
    int (*available)(void);
    /* Set up per-context state (may be NULL). */
    spx_status (*init)(spx_ctx *ctx, void **state);
    void (*fini)(void *state);
    spx_status (*spgemm)(spx_ctx *ctx, const spx_spgemm_args *args);
    spx_status (*spmm)(spx_ctx *ctx, const spx_spmm_args *args);
    /* Explicit SpMM plans. shape carries op, A, m, k, n, the dtype in
     * shape->B->dtype, and no data. NULL entries: the plan only records its
     * arguments and execution calls spmm. *explain (may stay NULL) is a
     * spx__malloc'd text owned by the caller. */
    spx_status (*spmm_plan_create)(spx_ctx *ctx, const spx_spmm_args *shape, void **plan,
                                   char **explain);
    spx_status (*spmm_plan_execute)(spx_ctx *ctx, void *plan, const spx_spmm_args *args);
    void (*spmm_plan_destroy)(void *plan);

    /* Device memory and streams (NULL on host-only backends). */
    spx_status (*matrix_to_device)(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
    spx_status (*matrix_to_host)(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
    void *(*stream)(spx_ctx *ctx);
    spx_status (*set_stream)(spx_ctx *ctx, void *stream);
    spx_status (*synchronize)(spx_ctx *ctx);
    spx_status (*device_info)(spx_ctx *ctx, spx_device_info *out);
    spx_status (*memory_stats)(spx_ctx *ctx, spx_memory_stats *out, int reset_peak);
} spx_backend_vtable;

extern const spx_backend_vtable spx__backend_ref;
extern const spx_backend_vtable spx__backend_cpu;
#ifdef SPX_HAVE_CUDA
extern const spx_backend_vtable spx__backend_cuda;
#endif

#endif

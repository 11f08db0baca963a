/* The matrix object's layout and internal helpers shared by format, io, plan,
 * backends and ops. */
#ifndef SPX_FORMAT_MATRIX_H
#define SPX_FORMAT_MATRIX_H

#include "core/core.h"

/* Something derived from a matrix and kept with it (a device copy, a plan),
 * dropped when the matrix is touched or destroyed. */
typedef struct spx_attachment {
    const void *key;
    void *data;
    void (*release)(void *data);
    struct spx_attachment *next;
} spx_attachment;

struct spx_matrix {
    spx_format format;
    spx_index_type itype;
    spx_dtype dtype;
    spx_memory memory;
    int64_t rows, cols, nnz;
    int64_t br, bc, nblocks;                        /* BSR */
    int64_t sell_c, sell_sigma, nslices, sell_slots; /* SELL */
    void *offsets, *indices, *row_indices, *values, *perm, *row_lengths;
    bool owns;                      /* arrays are released with the matrix */
    void (*release_array)(void *p); /* how owned arrays are freed (NULL: spx__free) */
    void *block;                    /* owned arrays carved from this one allocation, released
                                       once instead of each (NULL: each on its own) */
    uint64_t version;               /* bumped by spx_matrix_touch */
    uint64_t checked_version;       /* version that passed spx_matrix_check, 0 if none */
    spx_attachment *attachments;
};

/* Number of slots in the offsets array (rows+1, cols+1, block rows+1, slices+1; 0 for COO). */
int64_t spx__matrix_offsets_len(const spx_matrix *A);
/* Number of entries in the indices (and, times block size for BSR, values) array. */
int64_t spx__matrix_indices_len(const spx_matrix *A);
/* Number of values stored (BSR: nblocks*br*bc; SELL: slots). */
int64_t spx__matrix_values_len(const spx_matrix *A);
/* ceil(n / d) for n >= 0, d >= 1, without overflow for any block or slice size. */
static inline int64_t spx__ceil_div(int64_t n, int64_t d) { return n > 0 ? (n - 1) / d + 1 : 0; }
/* Block rows of a BSR matrix: ceil(rows / br). */
static inline int64_t spx__bsr_block_rows(const spx_matrix *A) { return spx__ceil_div(A->rows, A->br); }
static inline int64_t spx__bsr_block_cols(const spx_matrix *A) { return spx__ceil_div(A->cols, A->bc); }

/* A new owning host matrix with the given header and no arrays yet. Set the
 * count fields (nnz; br/bc/nblocks; sell_*), then call spx__matrix_alloc. */
spx_status spx__matrix_new(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols,
                           spx_index_type itype, spx_dtype dtype, spx_matrix **out);
/* A new owning host matrix with A's format, shape and counts (nnz, blocks,
 * slices) but no arrays; itype/dtype DEFAULT keep A's. */
spx_status spx__matrix_new_like(spx_ctx *ctx, const spx_matrix *A, spx_index_type itype, spx_dtype dtype,
                                spx_matrix **out);
/* Allocate the arrays the header's format and counts call for (uninitialised). */
spx_status spx__matrix_alloc(spx_ctx *ctx, spx_matrix *A);
/* Short form for COO/CSR/CSC: new + nnz + alloc. itype DEFAULT picks by size. */
spx_status spx__matrix_create(spx_ctx *ctx, spx_format f, int64_t rows, int64_t cols, int64_t nnz,
                              spx_index_type itype, spx_dtype dtype, spx_matrix **out);

/* Attachments (see spx_attachment). */
void *spx__matrix_attachment(const spx_matrix *A, const void *key);
spx_status spx__matrix_attach(spx_ctx *ctx, const spx_matrix *A, const void *key, void *data,
                              void (*release)(void *data));
void spx__matrix_drop_attachments(spx_matrix *A);

/* offsets[0] == 0, non-decreasing, offsets[n] == total (check.c); fmt_name
 * starts the message. */
spx_status spx__check_offsets(spx_ctx *ctx, const spx_matrix *A, int64_t n, int64_t total,
                              const char *fmt_name);

/* Validate once per version (used by ops when ctx->validate is on). */
spx_status spx__matrix_ensure_valid(spx_ctx *ctx, const spx_matrix *A);

/* Common argument checks producing clear messages; name is the argument name. */
spx_status spx__check_matrix_arg(spx_ctx *ctx, const spx_matrix *A, const char *name);
spx_status spx__check_host(spx_ctx *ctx, const spx_matrix *A, const char *name);

#endif

/* SpMM on the CUDA backend: the host-side plan (spmm_plan.c) and the kernel
 * launchers it calls (spmm_*.cu). Device kernels see A as CSR with int64 row
 * offsets and int32 column indices whatever the caller's index types (the
 * plan converts once), and B, C row-major. */
#ifndef SPX_SPMM_CUDA_H
#define SPX_SPMM_CUDA_H

#include "backend/cuda/cuda_common.h"
#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entry points of the vtable. */
spx_status spx__cuda_spmm(spx_ctx *ctx, const spx_spmm_args *args);
spx_status spx__cuda_spmm_plan_create(spx_ctx *ctx, const spx_spmm_args *shape, void **plan,
                                      char **explain);
spx_status spx__cuda_spmm_plan_execute(spx_ctx *ctx, void *plan, const spx_spmm_args *args);
void spx__cuda_spmm_plan_destroy(void *plan);

/* A sparse operand on the device, compressed along the output rows (CSR) or,
 * for the outer-product kernel, along the inner dimension. */
typedef struct spx_cuda_csr {
    int64_t rows, cols, nnz;
    int64_t *rowptr;  /* rows + 1 */
    int32_t *colidx;  /* nnz */
    void *vals;       /* nnz values of the plan's dtype; NULL for pattern (all ones) */
    /* A view of one slab of columns (row kernels only): row r's entries are
     * [rowptr[r], row_end[r]). NULL: plain CSR, row_end = rowptr + 1. */
    const int64_t *row_end;
} spx_cuda_csr;

/* SELL-C-sigma on the device. */
typedef struct spx_cuda_sell {
    int64_t rows, cols, nslices, c;
    int64_t *slice_ptr; /* nslices + 1 */
    int32_t *colidx;    /* slots; -1 for padding */
    void *vals;         /* slots */
    int32_t *perm;      /* nslices * c; -1 past the last row */
    int32_t *rowlen;    /* nslices * c */
} spx_cuda_sell;

/* BSR on the device. */
typedef struct spx_cuda_bsr {
    int64_t rows, cols, br, bc, brows, nblocks;
    int64_t *rowptr;   /* brows + 1 */
    int32_t *colidx;   /* nblocks block columns */
    void *vals;        /* nblocks * br * bc, row-major blocks */
    bool full;         /* every cell of every block that lies in the matrix is an entry of A */
} spx_cuda_bsr;

/* Dense operands and scalars common to every launch. */
typedef struct spx_cuda_dense_args {
    spx_dtype dtype;      /* f32, f64, f16, bf16 */
    int64_t n;            /* columns of B and C */
    const void *B;
    int64_t ldb;
    void *C;
    int64_t ldc;
    double alpha, beta;
    int vec;              /* elements per lane per load of B: a 16-byte vector when B and its rows
                             start on 16 bytes, else 1 (the row kernels, and merge path above
                             N = 32, then spread a lane's columns over the tile); 4 for a
                             rounded B (b_round: four values, 8 bytes) */
    int c_vec;            /* C and its rows start on 16 bytes: rows may be stored as 16-byte vectors */
    spx_dtype b_round;    /* 0, or SPX_BF16 / SPX_F16: B holds f32 data's B rounded to that type,
                             ldb a multiple of 8 (the row kernels at those precisions) */
    cudaStream_t stream;
} spx_cuda_dense_args;

/* Row kernels over a list of output rows (rows == NULL: the list is 0, 1, ...).
 * One launch covers up to SPX_CUDA_MAX_SEGMENTS segments of the list (the row
 * bins); segment s gives each row a team of `team` lanes (a power of two up
 * to 32), `group` of which cover the columns with 16-byte loads while the
 * team/group sub-groups split the row's entries. */
#define SPX_CUDA_MAX_SEGMENTS 6
typedef struct spx_cuda_row_segment {
    int64_t offset, nrows;
    int team;
} spx_cuda_row_segment;
cudaError_t spx__cuda_launch_rows(const spx_cuda_csr *A, const int32_t *rows,
                                  const spx_cuda_row_segment *segs, int nsegs, int group,
                                  const spx_cuda_dense_args *d);
/* A warp per column tile of 32 16-byte vectors (at most 65535 tiles) for
 * every row of the list (rows[0 .. nrows), NULL: 0, 1, ...), each warp taking
 * SPX_CUDA_ROW_RUN adjacent rows one after another. */
#define SPX_CUDA_ROW_RUN 4
cudaError_t spx__cuda_launch_row_runs(const spx_cuda_csr *A, const int32_t *rows, int64_t nrows,
                                      const spx_cuda_dense_args *d);
/* f32, f16 and bf16 (not rounded B): a team of SPX_CUDA_BATCH_LANES(batch,
 * cols) lanes per row of the list (rows[0 .. nrows), NULL: 0, 1, ...) and
 * column tile of `cols` (spx__cuda_batch_tile_cols(N)), or, with last_cols
 * < cols, the last tile in a launch of its own after the others, last_cols
 * wide (spx__cuda_batch_tile_cols of N mod cols, where 32 or fewer: teams
 * of fewer lanes, blocks of the same rows), SPX_CUDA_BATCH_LANE_COLS(batch)
 * columns a lane, threads / lanes rows a block, the row's entries staged
 * `batch` at a time in shared memory:
 * 32 rows and 16 entries; 16 rows and 32, 16 or 8 entries. With `slots` (not
 * for 8 entries a batch), the teams take slots[0 .. nrows) instead of rows: a
 * row, or a piece of one whose team adds the next pieces' sums, in order,
 * before it writes the row; a row's pieces lie within one group of
 * SPX_CUDA_BATCH_PIECE_TEAMS teams (aligned), so within a block. */
#define SPX_CUDA_BATCH_COLS 64
/* The batches' column tile for n columns: the narrowest of 16, 32 and
 * SPX_CUDA_BATCH_COLS that holds them (so no lane of a team idles for want of
 * columns where n is 16 or 32). */
static inline int spx__cuda_batch_tile_cols(int64_t n) { return n <= 16 ? 16 : n <= 32 ? 32 : SPX_CUDA_BATCH_COLS; }
#define SPX_CUDA_BATCH_LANE_COLS(batch) ((batch) >= 16 ? 4 : 8)
#define SPX_CUDA_BATCH_LANES(batch, cols) ((cols) / SPX_CUDA_BATCH_LANE_COLS(batch))
#define SPX_CUDA_BATCH_PIECE_TEAMS 16
typedef struct spx_cuda_batch_slot {
    int64_t start, end; /* its entries [start, end) of A */
    int32_t row;        /* C's row; -1 for a row's later pieces (and for slots left empty) */
    int32_t pieces;     /* a row's first piece: the row's pieces, on this team and the next ones; later pieces 0 */
} spx_cuda_batch_slot;
/* Blocks of the batches an SM: 512 threads an SM with up to 16 entries a
 * batch (128 registers), 256 with 32 (up to 255), whatever the tile: a
 * narrower tile's block is the widest's with fewer lanes a team, and the SM
 * holds more of them. */
#define SPX_CUDA_BATCH_BLOCKS_PER_SM(threads, batch) (((batch) >= 32 ? 256 : 512) / (threads))
cudaError_t spx__cuda_launch_row_batches(const spx_cuda_csr *A, const int32_t *rows,
                                         const spx_cuda_batch_slot *slots, int64_t nrows, int threads, int batch,
                                         int cols, int last_cols, const spx_cuda_dense_args *d);
/* Several warps per row (rows[offset .. offset + nrows)), fixed-order reduction. */
cudaError_t spx__cuda_launch_block_rows(const spx_cuda_csr *A, const int32_t *rows, int64_t offset,
                                        int64_t nrows, int warps, int group,
                                        const spx_cuda_dense_args *d);
/* Every row of a SELL matrix, group lanes per row. */
cudaError_t spx__cuda_launch_sell(const spx_cuda_sell *A, int group, const spx_cuda_dense_args *d);

/* TILED: each block of `threads` (256, or 512 with tiles of 8 vectors) owns
 * `rows` slots (a multiple of SPX_CUDA_TILED_ROW_QUANTUM) and `cols` columns
 * (8, 16 or 32 16-byte vectors) and holds kc rows of B's column tile in
 * shared memory at a time (kc >= k: all of k, in one chunk);
 * any k. A slot is a row's entries [range[2i], range[2i + 1]) or nothing (row
 * -1); every row has one slot, or 2, 4 or 8 adjacent ones starting at a
 * multiple of their count (pieces, added in the kernel), all among the
 * slots of one warp. count: blocks x rows. */
#define SPX_CUDA_TILED_ROW_QUANTUM 64
/* TILED: entries a team loads at once (the plan cuts no piece shorter, but
 * in wide blocks, where every row is cut in two at least), and
 * lanes per team for tiles of 8, 16 or 32 vectors (4 lanes x 2 vectors for 8,
 * else 8 lanes): a warp has 32 / lanes slots at a time. */
#define SPX_CUDA_TILED_BATCH 32
static inline int spx__cuda_tiled_team_lanes(int64_t vectors) { return vectors == 8 ? 4 : 8; }
typedef struct spx_cuda_tiled_shape {
    int64_t cols, rows, kc;
    int threads;
} spx_cuda_tiled_shape;
typedef struct spx_cuda_tiled_slots {
    const int32_t *row;
    const int64_t *range; /* 16-byte aligned */
    int64_t count;
} spx_cuda_tiled_slots;
/* Dynamic shared memory a TILED block of this shape takes for k rows of B. */
size_t spx__cuda_tiled_smem(const spx_cuda_tiled_shape *s, int64_t k, spx_dtype dtype);
cudaError_t spx__cuda_launch_tiled(const spx_cuda_csr *A, const spx_cuda_tiled_slots *slots,
                                   const spx_cuda_tiled_shape *s, const spx_cuda_dense_args *d);

/* BAND: a block walks a strip of `strip` consecutive rows, `rows` at a time,
 * for one column tile of `group` 16-byte vectors (group lanes per row); B's
 * rows [r - halo, r + rows + halo) of the tile wait in a shared-memory ring
 * of `ring` slots (a power of two >= 2 (rows + halo)) while rows r .. r +
 * rows - 1 use them; entries farther from the diagonal read B in global
 * memory. Any matrix; fast where most entries lie near the diagonal. */
typedef struct spx_cuda_band_shape {
    int group;
    int64_t halo, rows, ring, strip;
} spx_cuda_band_shape;
/* Shared memory a BAND block takes (16-byte vectors), and how many such
 * blocks an SM holds (0 on error). */
size_t spx__cuda_band_smem(const spx_cuda_band_shape *s);
int spx__cuda_band_blocks_per_sm(const spx_cuda_band_shape *s, spx_dtype dtype);
cudaError_t spx__cuda_launch_band(const spx_cuda_csr *A, const spx_cuda_band_shape *s, const spx_cuda_dense_args *d);

/* Merge path: per-warp start coordinates (nwarps + 1 of each) computed once.
 * row_aligned: starts inside a row move back to its start (no row is cut) and
 * *longest (zeroed by the caller) receives the largest move in entries;
 * otherwise it receives the most warps past its first that a cut row reaches. */
cudaError_t spx__cuda_merge_partition(const spx_cuda_csr *A, int64_t items_per_warp,
                                      int64_t nwarps, int row_aligned, int64_t *start_row,
                                      int64_t *start_nnz, unsigned long long *longest,
                                      cudaStream_t stream);
/* items: rows + entries per warp (the partition's); carry_rows: 2*nwarps ints;
 * carry_vals: 2*nwarps*n accumulators (float, or double for f64); both NULL
 * for a row-aligned partition (no carries, no fix-up launch). group > 0: rows
 * cut into more than `group` pieces are added in groups of that many first
 * (one more launch). */
cudaError_t spx__cuda_launch_merge(const spx_cuda_csr *A, int64_t nwarps, int64_t items, int64_t group,
                                   const int64_t *start_row, const int64_t *start_nnz,
                                   int32_t *carry_rows, void *carry_vals, const spx_cuda_dense_args *d);

/* Outer products: At is compressed along k (its "rows" are k, indices are
 * output rows). C must already hold beta*C. f32 and f64 only (atomics). */
cudaError_t spx__cuda_launch_outer(const spx_cuda_csr *At, int group, const spx_cuda_dense_args *d);

/* BSR: CUDA cores (precision exact) or tensor cores (16 x bc blocks; tf32,
 * bf16 or f16 operands for f32 data as asked, the data's own type for 16-bit
 * data). */
cudaError_t spx__cuda_launch_bsr(const spx_cuda_bsr *A, spx_precision prec,
                                 const spx_cuda_dense_args *d);
int spx__cuda_bsr_tc_supported(const spx_cuda_bsr *A, spx_dtype dtype, spx_precision prec);
/* The 16 x 16 blocks of a device CSR whose rows are sorted, values of dtype
 * (NULL: pattern, blocks of ones). count != 0: counts[b] = the blocks of
 * block row b, and *broken = 1 unless every cell of them that lies in the
 * matrix is an entry (the counts are then not to be used). Else, with browptr
 * the exclusive scan of counts: the block columns and the values into bvals,
 * which must hold zeros. */
cudaError_t spx__cuda_csr_blocks(const spx_cuda_csr *A, spx_dtype dtype, int count, int64_t *counts, int *broken,
                                 const int64_t *browptr, int32_t *bcol, void *bvals, cudaStream_t stream);

/* Gather-GEMM on tensor cores: rows in groups of 16, each stored densely over
 * the union of its columns in steps of 16 slots per chunk of kc rows of B. A
 * block of SPX_CUDA_GATHER_WARPS warps (one group each; fewer warps per block
 * were no faster) holds a chunk x tile_bytes of B's columns in shared memory,
 * rows at a stride of tile_bytes + 16 bytes (f16/bf16 operands) or + 32
 * (tf32): consecutive runs of 8 (f16/bf16) or 4 (tf32) slots name rows of
 * distinct residues mod 8 or 4 where the union allows, so that an ldmatrix or
 * shared load of a run touches distinct banks. */
#define SPX_CUDA_GATHER_WARPS 8
typedef struct spx_cuda_gather {
    int64_t ngroups, k, kc; /* kc: rows of B a chunk, a multiple of 8 */
    int tile_bytes;         /* bytes of a B row a block holds: 128 or 256 */
    int32_t *group_rows;    /* ngroups * 16 output rows, -1 for padding */
    int64_t *step_ptr;      /* ngroups * chunks + 1: steps of group g in chunk c at [g * chunks + c] */
    int32_t *slot_cols;     /* 16 columns of B a step (padding slots hold zeros in the fragments) */
    void *frags;            /* per step, the A fragments of mma.sync in lane order: 16 x 16 values of the
                               operand type (f16/bf16, or f32 for tf32) */
} spx_cuda_gather;
/* Dynamic shared memory of a GATHER_TC block. */
size_t spx__cuda_gather_smem(int64_t kc, int tile_bytes, size_t operand_size);
cudaError_t spx__cuda_launch_gather_tc(const spx_cuda_gather *G, spx_precision prec,
                                       const spx_cuda_dense_args *d);

/* Dense path: op(A) stored densely (row-major, m x ld, in the GEMM's input
 * type: f16 or bf16 for f32 data at those precisions, else the data's type);
 * the GEMM itself is cuBLASLt's (dense_gemm.c). The kernels that multiply zeros
 * A does not hold (dense, BSR, gather_tc) run on a copy of B without its
 * non-finite values, whose terms are added afterwards, or (the dense path
 * with beta = 0) on B itself, with the columns it got wrong computed again
 * (spmm_dense.cu). */
typedef struct spx_cuda_densified {
    spx_dtype type; /* the GEMM's input type */
    int64_t ld;     /* elements per row (k rounded up to 16 bytes) */
    void *vals;
} spx_cuda_densified;
/* Elements of a row of `cols` values of type t, rounded up so that rows
 * start on 16 bytes. */
static inline int64_t spx__cuda_row16(int64_t cols, spx_dtype t)
{
    const int64_t v = 16 / (int64_t)spx_dtype_size(t);
    return (cols + v - 1) / v * v;
}
/* Columns of B per flag of the dense path's copy of B, and the flags a row
 * of n columns has. */
#define SPX_DENSE_CHUNK 256
static inline int64_t spx__cuda_dense_chunks(int64_t n) { return (n + SPX_DENSE_CHUNK - 1) / SPX_DENSE_CHUNK; }
/* out (m x ld, zeroed here) = op(A) from its CSR with values of dtype. */
cudaError_t spx__cuda_dense_fill(const spx_cuda_csr *A, spx_dtype dtype, spx_dtype gemm, void *out, int64_t ld,
                                 cudaStream_t stream);
/* out (k x ldo, type gemm if as_gemm, else B's) = B with zeros for its
 * values that are not finite as gemm; bad[r * chunks + c] tells whether chunk
 * c of SPX_DENSE_CHUNK columns of row r had one (chunks = ceil(n /
 * SPX_DENSE_CHUNK)). */
cudaError_t spx__cuda_dense_take_b(const spx_cuda_dense_args *d, int64_t k, spx_dtype gemm, int as_gemm,
                                   void *out, int64_t ldo, int32_t *bad);
/* C += alpha * op(A)(:, r) * B(r, j) for the non-finite B(r, j) the flags
 * name; At is op(A) compressed along k (as for OUTER). */
cudaError_t spx__cuda_dense_add_nonfinite(const spx_cuda_csr *At, spx_dtype gemm, const int32_t *bad,
                                          const spx_cuda_dense_args *d);
/* After a GEMM on B itself with beta = 0: C(:, chunk c) = alpha * op(A) *
 * B(:, chunk c), from A's rows (CSR of op(A)), for each chunk c of B's
 * columns that holds a non-finite value (bad: chunks + 1 flags, set to epoch
 * where marked; the caller keeps them from call to call, epoch new each call), the
 * columns the GEMM got wrong. One cooperative launch of at most *blocks
 * blocks (SPX_DENSE_FIX_BLOCKS_PER_SM an SM are always resident); where fewer
 * fit (the context has fewer SMs than the device: MPS, green contexts), the
 * grid is halved until one does, and *blocks becomes that grid. B is k x n. */
#define SPX_DENSE_FIX_BLOCKS_PER_SM 4
cudaError_t spx__cuda_dense_fix_in_place(const spx_cuda_csr *A, int32_t *bad, int32_t epoch, int64_t *blocks,
                                         const spx_cuda_dense_args *d, int64_t k);
/* The same by C: after a GEMM on B itself with beta = 0, each chunk of
 * SPX_DENSE_CHUNK columns of a row of C that holds Inf or NaN is computed
 * again from A's row (a sum that met B's Inf or NaN is not finite; one that
 * did not is right). It reads C (m x n) where the above reads B (k x n), and
 * needs no cooperative launch. */
cudaError_t spx__cuda_dense_fix_from_c(const spx_cuda_csr *A, const spx_cuda_dense_args *d);

/* The dense path's own GEMM (spmm_dense_mma.cu): C = alpha * D * B + beta *
 * C in one launch, D the densified op(A) in f16 or bf16 (A its CSR, for the
 * elements whose sum is not finite: B's Inf and NaN make them so), B k x n.
 * fits: whether it takes these operands (D 16-bit, the data D's type or f32,
 * B's rows on 16 bytes); sms picks the tile width. */
bool spx__cuda_dense_mma_fits(const spx_cuda_densified *D, const spx_cuda_dense_args *d, int64_t m);
cudaError_t spx__cuda_dense_mma(const spx_cuda_csr *A, const spx_cuda_densified *D, const spx_cuda_dense_args *d,
                                int64_t k, int64_t sms);
/* The same with wgmma (spmm_dense_wgmma.cu), for the same operands, on
 * devices of compute capability 9.0, in builds with SPX_HAVE_WGMMA (sm_90a
 * code). Its blocks take tiles of bm x bn of C, and where the tiles are too
 * few for the SMs, k in `splits` parts of `part` steps of 64: each part's
 * block writes its sums to `partial` (tiles x splits x bm x bn floats), and
 * the tile's last block to finish adds them in the parts' order (bit-exact
 * from run to run) and stores C. `arrived` (tiles counters) must be zero
 * before the first launch; each launch leaves them so. `rounded`: f32 B,
 * which the blocks round (fewer of them fit an SM). */
typedef struct spx_cuda_wgmma_shape {
    int bm, bn, splits, part;
    int64_t tiles;
} spx_cuda_wgmma_shape;
spx_cuda_wgmma_shape spx__cuda_dense_wgmma_shape(int64_t m, int64_t n, int64_t k, int64_t sms, bool rounded);
cudaError_t spx__cuda_dense_wgmma(const spx_cuda_csr *A, const spx_cuda_densified *D, const spx_cuda_dense_args *d,
                                  int64_t k, const spx_cuda_wgmma_shape *shape, float *partial, int *arrived);

/* Helpers. */
/* C[r, :] = beta * C[r, :] for every row (beta == 0 writes zeros). */
cudaError_t spx__cuda_scale(const spx_cuda_dense_args *d, int64_t m);
/* dst (cols x rows, ld dst_ld) = src^T (rows x cols, ld src_ld), element type by dtype. */
cudaError_t spx__cuda_transpose(spx_dtype dtype, const void *src, int64_t src_ld, void *dst,
                                int64_t dst_ld, int64_t rows, int64_t cols, cudaStream_t stream);
/* out (k x n, ld ldo: a multiple of 8) = d's f32 B rounded to `to` (SPX_BF16
 * or SPX_F16), to nearest even; Inf and NaN stay so. */
cudaError_t spx__cuda_round_b(const spx_cuda_dense_args *d, int64_t k, spx_dtype to, void *out, int64_t ldo);
/* Row lengths and bin of every row: bin[i] in 0..5 by the bounds; stats
 * (13 values, zeroed by the caller) accumulates 6 row counts, 6 entry counts
 * per bin, then the longest row's length. */
cudaError_t spx__cuda_row_bins(const spx_cuda_csr *A, const int64_t bounds[4], unsigned char *bin,
                               unsigned long long *stats, cudaStream_t stream);
/* Stable partition of rows by bin (ids below 2^key_bits, key_bits <= 8): rows_out[] lists
 * rows of bin 0, then 1, ... in increasing order within each bin. tmp: workspace of
 * tmp_bytes (query with tmp == NULL). */
cudaError_t spx__cuda_sort_rows_by_bin(const unsigned char *bin, int64_t m, int key_bits, int32_t *rows_out,
                                       void *tmp, size_t *tmp_bytes, cudaStream_t stream);
/* Distances of A's entries from the diagonal (stats: 2 * SPX_CUDA_DIAGONAL_BUCKETS
 * + 1 values, zeroed by the caller): stats[b] counts the entries whose
 * |col - row| has bit length b (0: on the diagonal), stats[BUCKETS + b] is
 * the largest such distance, and the last value the longest row's length. */
#define SPX_CUDA_DIAGONAL_BUCKETS 32
cudaError_t spx__cuda_diagonal_profile(const spx_cuda_csr *A, unsigned long long *stats, cudaStream_t stream);
/* Slabs of A's columns: starts[(s - 1) * rows + r] = the first entry of row
 * r in a column >= s * cols / slabs, for s = 1 .. slabs - 1 (columns sorted). */
cudaError_t spx__cuda_slab_starts(const spx_cuda_csr *A, int slabs, int64_t *starts, cudaStream_t stream);
/* *shared (zeroed by the caller) += the entries of A whose column the row
 * before also holds. */
cudaError_t spx__cuda_shared_columns(const spx_cuda_csr *A, unsigned long long *shared, cudaStream_t stream);
/* Convert index arrays on the device. */
cudaError_t spx__cuda_widen_i32(const int32_t *src, int64_t *dst, int64_t n, cudaStream_t stream);
cudaError_t spx__cuda_narrow_i64(const int64_t *src, int32_t *dst, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif

/* The CUDA SpMM plan: its layout and the helpers shared by plan construction
 * (spmm_plan.c), the forced-format preparations (spmm_plan_formats.c) and
 * execution (spmm_exec.c). */
#ifndef SPX_SPMM_PLAN_H
#define SPX_SPMM_PLAN_H

#include "backend/cuda/spmm_cuda.h"
#include "format/matrix.h"

#define NBINS 6
#define MAX_OWNED 24
/* merge path: rows + entries per warp, between these bounds so that small
 * products still give every SM two full sets of warps. The floor is lower
 * when every row is short: a tiny product's warps then wait on half as many
 * loads one after another, while a long row cut in more pieces costs more in
 * the fix-up, which adds its pieces one after another (docs/PERFORMANCE.md). */
#define MERGE_ITEMS_MIN 32
#define MERGE_ITEMS_MIN_SHORT_ROWS 16
#define MERGE_ITEMS_MAX 256
/* merge path: where some cut row reaches more than this many warps past its
 * first, the rows cut into more pieces than a group (about the square root of
 * that most) are added in two levels, two fix-up launches (prepare_merge);
 * otherwise one fix-up warp adds each cut row in one launch. 64 rather than 32
 * saved the 10 % 512 x 2048 transformer layer at N = 256 (rows cut in up to 38
 * pieces) a launch: 28.8-29.6 -> 26.2-26.7 us (H100, docs/PERFORMANCE.md) */
#define MERGE_FIXUP_SERIAL 64
#define HUGE_ROW_WARPS 8
/* The row kernels' medium bin keeps a team of one column group a row where
 * its rows times the group's lanes come to at least this share of the
 * threads the GPU holds at once; fewer rows are split over a warp each
 * (choose_bin_kernels in spmm_plan.c) */
#define MEDIUM_ROWS_GROUP_FILL 0.375
/* AUTO takes merge path at N of half a warp of 16-byte loads or less where
 * the row kernels' warp on the longest row would run MERGE_LONG_ROW_MIN_ROUNDS
 * rounds of loads or more, and that row holds over MERGE_LONG_ROW_SM_SHARE
 * of an SM's equal share of the entries (merge_pays in spmm_plan.c) */
#define MERGE_LONG_ROW_MIN_ROUNDS 128
#define MERGE_LONG_ROW_SM_SHARE 0.25
/* AUTO gives every row a warp instead of merge path (warp_rows_pay in
 * spmm_plan.c), for f32, f16 and bf16 data, when rows hold at least
 * WARP_ROWS_MIN_AVG entries on average and at most WARP_ROWS_MAX_ROW, and
 * those warps give every SM at least WARP_ROWS_MIN_PER_SM and at most
 * WARP_ROWS_MAX_PER_SM (one wave; WARP_ROWS_MAX_PER_SM_16BIT on f16 and bf16
 * data where merge path may cut rows);
 * on f16 and bf16 data also in place of the sparse batches (and of TILED)
 * past their two waves (merge_place_first), and within those two waves where
 * the warps give every SM WARP_ROWS_OVER_BATCHES_MIN_PER_SM or more */
/* (and, on f16 and bf16 data at N of half a warp of 16-byte loads or less,
 * where rows hold BLOCK_ROWS_MIN_AVG entries or more on average, the longest
 * at most BLOCK_ROWS_MAX_SPREAD times that, however long and with any number
 * of warps from WARP_ROWS_MIN_PER_SM an SM: warp_rows_pay in spmm_plan.c) */
#define WARP_ROWS_MIN_AVG 12
#define WARP_ROWS_MAX_ROW 128
#define WARP_ROWS_MIN_PER_SM 8
#define WARP_ROWS_MAX_PER_SM 64
#define WARP_ROWS_MAX_PER_SM_16BIT 128
#define WARP_ROWS_OVER_BATCHES_MIN_PER_SM 12
/* Where merge path would be taken and a warp per row does not pay, AUTO gives
 * every row a block of W warps (block_rows_pay in spmm_plan.c) when rows hold
 * at least BLOCK_ROWS_MIN_AVG entries on average and the longest at most
 * BLOCK_ROWS_MAX_SPREAD times that; W (2 to HUGE_ROW_WARPS) brings the warps
 * to BLOCK_ROWS_PER_SM per SM or gives each about BLOCK_ROWS_ENTRIES entries
 * of a row, whichever is more */
#define BLOCK_ROWS_MIN_AVG 48
#define BLOCK_ROWS_MAX_SPREAD 2.5
#define BLOCK_ROWS_PER_SM 24
#define BLOCK_ROWS_ENTRIES 64
/* Where merge path would be taken and neither of the above pays, AUTO gives
 * every row a warp that takes SPX_CUDA_ROW_RUN adjacent rows one after
 * another (row_runs_pay in spmm_plan.c) when rows hold at most
 * ROW_RUNS_MAX_ROW entries and those warps fill the GPU ROW_RUNS_MIN_WAVES
 * times */
#define ROW_RUNS_MAX_ROW 32
#define ROW_RUNS_MIN_WAVES 4
/* AUTO gives rows of f32, f16 and bf16 data teams that stage their entries in
 * batches (row_batches_pay in spmm_plan.c), at every precision, where N >=
 * ROW_BATCHES_MIN_N; k >= ROW_BATCHES_MIN_K, or k >= ROW_BATCHES_SMALL_K and
 * either m <= ROW_BATCHES_FEW_ROWS or TILED would run one block an SM at
 * most; A holds ROW_BATCHES_MIN_DENSITY of its cells; a column tile's slice
 * of B takes at most ROW_BATCHES_L2_SHARE of the L2 cache (not where the
 * tiles of N <= 32 below take merge path's place). Blocks of 512
 * threads where they make ROW_BATCHES_MIN_WAVES waves, else of 256 (of 128
 * in teams of 8 lanes on short rows, below). Where the
 * blocks make at most ROW_BATCHES_FILL_MAX_WAVES waves, rows over a bound are
 * cut into equal pieces within it (not in the short-row shape below): the
 * bound starts at ROW_BATCHES_FILL_MIN_CAP entries or a 16th of the longest
 * row, whichever is more, and is doubled while the grid over the pieces
 * would make more than one wave (rows of at most ROW_BATCHES_FILL_MIN_CAP
 * entries stay whole): */
#define ROW_BATCHES_MIN_N 256
#define ROW_BATCHES_MIN_K 1024
/* ... and for ROW_BATCHES_SMALL_N_MIN <= N < ROW_BATCHES_MIN_N whatever A's
 * density, where the blocks make at most ROW_BATCHES_SMALL_N_MAX_WAVES
 * waves, or ROW_BATCHES_NARROW_N_MAX_WAVES where N leaves part of the one
 * column tile's lanes idle (32 < N < SPX_CUDA_BATCH_COLS). In the tiles of
 * 16 or 32 columns of N <= 32 (narrow_tile_pays in spmm_plan.c): where the
 * longest row would hold a row kernels' warp (merge path's place), if the
 * SPX_CUDA_BATCH_PIECE_TEAMS pieces the tail cut makes of it at most hold
 * ROW_BATCHES_NARROW_PIECE_TAILS times the tail bound below, the tail cut's
 * grid then making up to ROW_BATCHES_NARROW_CUT_GROWTH times the whole rows'
 * waves; elsewhere within ROW_BATCHES_SMALL_N_MAX_WAVES waves, at any waves
 * on rows of ROW_BATCHES_NARROW_LONG_AVG entries on average where B's slice
 * takes at most ROW_BATCHES_NARROW_L1_SLICE bytes, and up to
 * ROW_BATCHES_NARROW_TILE_MAX_WAVES where rows hold
 * ROW_BATCHES_NARROW_LONG_AVG entries on average, or
 * ROW_BATCHES_NARROW_SKEWED_AVG with the longest ROW_BATCHES_NARROW_SKEW
 * times that */
#define ROW_BATCHES_SMALL_N_MIN 8
#define ROW_BATCHES_SMALL_N_MAX_WAVES 1.0
#define ROW_BATCHES_NARROW_N_MAX_WAVES 0.75
#define ROW_BATCHES_NARROW_TILE_MAX_WAVES 4.0
#define ROW_BATCHES_NARROW_LONG_AVG 32.0
#define ROW_BATCHES_NARROW_SKEWED_AVG 12.0
#define ROW_BATCHES_NARROW_SKEW 4.0
#define ROW_BATCHES_NARROW_L1_SLICE (128.0 * 1024.0)
#define ROW_BATCHES_NARROW_PIECE_TAILS 4.0
#define ROW_BATCHES_NARROW_CUT_GROWTH 1.25
/* ... and, on f32 data in the tile of SPX_CUDA_BATCH_COLS (N >= 64), at any
 * waves where k >= ROW_BATCHES_WIDE_MIN_K and A holds at least
 * ROW_BATCHES_WIDE_MIN_DENSITY of its cells (wide_tile_batches_pay in
 * spmm_plan.c) */
#define ROW_BATCHES_WIDE_MIN_K 2048
#define ROW_BATCHES_WIDE_MIN_DENSITY 0.02
/* Where N leaves 32 columns or fewer past its tiles of SPX_CUDA_BATCH_COLS,
 * the batches' last tile runs as narrow as those columns, in a launch of its
 * own, where that makes fewer rounds of blocks and A's longest row holds at
 * most ROW_BATCHES_LAST_TILE_MAX_SKEW times the entries of the average
 * (spx__batches_last_cols in spmm_plan.c) */
#define ROW_BATCHES_LAST_TILE_MAX_SKEW 4.0
#define ROW_BATCHES_SMALL_K 128
#define ROW_BATCHES_FEW_ROWS 128
#define ROW_BATCHES_MIN_DENSITY 0.04
/* ... or under it, with k >= ROW_BATCHES_MIN_K, where the blocks make at most
 * ROW_BATCHES_SPARSE_MAX_WAVES waves (ROW_BATCHES_SPARSE_MAX_WAVES_16BIT on
 * f16 and bf16 data: measured), or, on f32 data, rows hold
 * ROW_BATCHES_SPARSE_MIN_AVG entries on average and A
 * ROW_BATCHES_SPARSE_LONG_MIN_DENSITY of its cells; either way A holds
 * ROW_BATCHES_SPARSE_MIN_DENSITY of its cells (sparse_batches_pay in
 * spmm_plan.c) */
#define ROW_BATCHES_SPARSE_MAX_WAVES 2.0
#define ROW_BATCHES_SPARSE_MAX_WAVES_16BIT 8.0
#define ROW_BATCHES_SPARSE_MIN_AVG 48
/* ... on f16 and bf16 data, past ROW_BATCHES_SPARSE_MAX_WAVES waves, rows of
 * fewer entries than this on average go to merge path's place instead
 * (merge_place_first in spmm_plan.c; measured at 7 and 14) */
#define ROW_BATCHES_SPARSE_16BIT_MIN_AVG 12
#define ROW_BATCHES_SPARSE_LONG_MIN_DENSITY 0.01
#define ROW_BATCHES_SPARSE_MIN_DENSITY 0.006
#define ROW_BATCHES_L2_SHARE 0.25
#define ROW_BATCHES_MIN_WAVES 0.9
#define ROW_BATCHES_FILL_MAX_WAVES 0.5
#define ROW_BATCHES_FILL_MIN_CAP 16
/* ... elsewhere, a row that holds more than ROW_BATCHES_MAX_TAIL times a
 * team's share of the entries and more than ROW_BATCHES_NO_TAIL_ROW entries
 * is a tail: */
#define ROW_BATCHES_MAX_TAIL 3
#define ROW_BATCHES_NO_TAIL_ROW 128
/* ... where the longest row is one, rows are cut into pieces of at most
 * ROW_BATCHES_PIECE_SHARE times a team's share (at least
 * ROW_BATCHES_NO_TAIL_ROW entries), up to SPX_CUDA_BATCH_PIECE_TEAMS of them,
 * that bound doubled while the grid over the pieces would make more than
 * ROW_BATCHES_PIECE_MAX_WAVES waves (where no bound gets there, AUTO does not
 * take the batches) */
#define ROW_BATCHES_PIECE_SHARE 0.75
#define ROW_BATCHES_PIECE_MAX_WAVES 2.5
/* ... else, where the rows are of about equal length (the longest at most
 * ROW_BATCHES_ROUNDS_MAX_SPREAD times the average) and the grid's last round
 * of blocks would leave SMs idle, rows are cut into up to q equal pieces (q
 * = 2 to ROW_BATCHES_ROUNDS_MAX_PIECES; rows over the longest's q-th part)
 * where the rows the busiest SM runs times a piece's time (the average
 * row's entries over q plus ROW_BATCHES_PIECE_COST entries' worth) falls
 * under the uncut grid's */
#define ROW_BATCHES_ROUNDS_MAX_SPREAD 1.5
#define ROW_BATCHES_ROUNDS_MAX_PIECES 8
#define ROW_BATCHES_PIECE_COST 64
/* ... or, instead of the k and density conditions above, on short rows
 * (under ROW_BATCHES_MIN_DENSITY with ROW_BATCHES_SMALL_K <= k <
 * ROW_BATCHES_MIN_K), with 8 entries a batch where A holds
 * ROW_BATCHES_SHORT_MIN_DENSITY of its cells, no row holds more than
 * ROW_BATCHES_SHORT_ROW_MAX entries and the blocks number at most
 * ROW_BATCHES_SHORT_MAX_BLOCKS_PER_SM an SM */
#define ROW_BATCHES_SHORT_MIN_DENSITY 0.015
#define ROW_BATCHES_SHORT_ROW_MAX 48
#define ROW_BATCHES_SHORT_MAX_BLOCKS_PER_SM 16
/* the dense path (dense_pays in spmm_plan.c): the GEMM's useful flop rate
 * over the sparse kernels', on CUDA cores (exact f32), on tensor cores at
 * tf32 and at twice that rate with 16-bit operands (bf16 and f16 precisions;
 * f16 and bf16 data), the least N and the least nnz x N */
#define DENSE_SHARE_F32 4
#define DENSE_SHARE_TF32 32
#define DENSE_SHARE_16 64
#define DENSE_MIN_N 256
#define DENSE_MIN_WORK_F32 5e7
#define DENSE_MIN_WORK_TC 2.5e7
#define DENSE_MIN_WORK_16_OVER_TILED 4e7 /* f16 and bf16 data where TILED would run instead */
/* ... and where spx's own GEMM runs it in one launch with mma.sync (its wgmma
 * kernel takes DENSE_SHARE_16; the least work per row of k: 16-bit data, and
 * f32 data whose blocks also round B) */
#define DENSE_SHARE_OWN_GEMM 25
#define DENSE_MIN_WORK_OWN_GEMM_PER_K 8e3
#define DENSE_MIN_WORK_OWN_GEMM_ROUNDED_PER_K 2.4e4
/* TILED in AUTO (tiled_pays in spmm_plan.c): the least N and shares of A's cells */
#define TILED_MIN_N 256
#define TILED_MIN_DENSITY 0.015
#define TILED_CHUNKED_MIN_DENSITY 0.15
/* ... and, chunked, with tiles of 16 vectors (tiled_double_tile) */
#define TILED_DOUBLE_TILE_MIN_N 2048
#define TILED_DOUBLE_TILE_MIN_DENSITY 0.08
/* BAND in AUTO (band_pays in spmm_plan.c): its bytes through L2 at most this
 * share of the row kernels', and B's window at most this share of k */
#define BAND_MAX_TRAFFIC_SHARE 0.6
#define BAND_MAX_WINDOW_SHARE 0.125
#define BAND_MAX_ROW 256 /* entries in the longest row */
#define BAND_MIN_N 17    /* over half its narrowest column tile (32 f32 columns) */

/* Slabs of A's columns (slabs_pay in spmm_plan.c): each launch's slice of B,
 * a column tile of SLAB_TILE_BYTES of its k / S rows, takes SLAB_L2_SHARE of
 * the L2 cache; AUTO cuts A when B is at least SLAB_MIN_B_OVER_L2 times the L2
 * cache, rows hold SLAB_MIN_ENTRIES entries per slab on average, at most
 * SLAB_MAX_SHARED of the entries lie in a column the row before also holds,
 * and each launch reads SLAB_MIN_LAUNCH_BYTES of B rows or more */
#define SLAB_TILE_BYTES 128
#define SLAB_L2_SHARE 0.4
#define SLAB_MIN_B_OVER_L2 4
#define SLAB_MIN_ENTRIES 8
#define SLAB_MAX_SHARED 0.25
#define SLAB_MIN_LAUNCH_BYTES 32e6

/* f32 B rounded to 16 bits for the row kernels in AUTO at the bf16 and f16
 * precisions (row_kernels_round_b in spmm_plan.c): from N = ROUND_B_MIN_N,
 * where A holds at least ROUND_B_MIN_FAR_PER_COLUMN entries a column too far
 * from the diagonal for their B rows to stay in the L2 cache */
#define ROUND_B_MIN_N 64
#define ROUND_B_MIN_FAR_PER_COLUMN 2

typedef struct plan_bin {
    spx_spmm_alg alg; /* ROW_SPLIT, WARP_ROW or BLOCK_ROW */
    int team, warps; /* lanes per row (row kernels), or warps per row (BLOCK_ROW) */
    int64_t nrows, nnz, offset; /* rows_sorted[offset .. offset + nrows) */
} plan_bin;

typedef struct cuda_plan {
    spx_op op;
    spx_dtype dtype;
    int64_t m, k, n;
    spx_spmm_alg alg; /* forced algorithm, or AUTO (binned) */
    spx_precision precision;
    int deterministic;
    spx_cuda_csr csr;   /* op(A) compressed by output rows */
    spx_cuda_csr outer; /* op(A) compressed along k (OUTER) */
    spx_cuda_sell sell;
    spx_cuda_bsr bsr;
    spx_cuda_gather gather;
    spx_cuda_densified dense;
    bool dense_mma;       /* DENSE: the GEMM is spx's own where B's rows start on 16 bytes */
    bool dense_wgmma;     /* ... its wgmma kernel (spmm_dense_wgmma.cu), else spmm_dense_mma.cu's */
    spx_cuda_wgmma_shape wgmma; /* ... its tiles and parts of k */
    float *wgmma_partial;       /* ... the parts' sums (more than one part) */
    int *wgmma_arrived;         /* ... a counter per tile, zero between launches */
    int32_t *rows_sorted; /* rows grouped by bin; NULL: 0, 1, ... */
    plan_bin bins[NBINS];
    int group;                  /* lanes covering the columns in the row kernels (group x 16 bytes) */
    int row_warps;              /* AUTO, every bin: 1 a warp per row (warp_rows_pay), W > 1 W warps (block_rows_pay) */
    bool row_runs;              /* AUTO, every bin: warps take SPX_CUDA_ROW_RUN adjacent rows (row_runs_pay) */
    int row_batches;            /* every row: 0, or the threads a block (512 down to 32) of teams staging
                                   their entries in batches (spx__batches_shape_of) */
    int row_batch;              /* ... the entries a batch (8, 16 or 32) */
    int row_batch_cols;         /* ... and the columns a tile (SPX_CUDA_BATCH_COLS, 32 or 16) */
    int row_batch_last_cols;    /* ... and the last tile's, in a launch of its own where narrower */
    spx_cuda_batch_slot *batch_slots; /* ... the teams' slots where long rows are cut (cut_batch_rows;
                                         NULL: rows_sorted) */
    int64_t batch_nslots;
    int64_t panel;              /* columns per tile of the row kernels (0: as wide as the group allows) */
    int slabs;                  /* slabs of A's columns (0: none); each column tile of `panel` runs slab by slab */
    spx_dtype b_round;          /* row kernels: 0, or SPX_BF16 / SPX_F16: they read B rounded to that type */
    int64_t *slab_starts;       /* (slabs - 1) x m: where each row's entries of slabs 1 .. slabs - 1 start */
    spx_cuda_tiled_shape tiled; /* TILED: block shape and chunk of k */
    int32_t *tiled_row;         /* TILED: slots (spx_cuda_tiled_slots) */
    int64_t *tiled_range, tiled_slots;
    spx_cuda_band_shape band;   /* BAND: strips, steps, ring */
    double band_near;           /* BAND: share of the entries its ring serves */
    int64_t max_row;            /* entries in the longest row of op(A) */
    bool has_diagonal;          /* diagonal[] is computed */
    unsigned long long diagonal[2 * SPX_CUDA_DIAGONAL_BUCKETS + 1]; /* op(A)'s diagonal profile
                                   (spx__cuda_diagonal_profile; diagonal_profile in spmm_plan.c) */
    int64_t mp_items, mp_nwarps; /* merge path: items (rows + entries) per warp, warps per column tile */
    int64_t mp_share;            /* merge path: the equal share mp_items was raised from (0: not raised) */
    int64_t *mp_row, *mp_nnz;
    int mp_row_aligned; /* merge path: warps start at row starts (no carries) */
    int64_t mp_group;   /* merge path: pieces per first-level group of the fix-up (0: one level) */
    void *owned[MAX_OWNED];
    int nowned;
} cuda_plan;

/* The batches' grid over `slots` teams' rows (the rows, or the slots where
 * long rows are cut), in tiles of `cols` columns (64, or 32 or 16 where N is
 * no wider: the threads below then a half or a quarter, the blocks an SM
 * twice or four times): blocks of 512 threads, 32 slots; of 256, 16 slots,
 * where 512 would not make ROW_BATCHES_MIN_WAVES waves; of 128 in teams of 8
 * lanes, 16 slots, where the rows are short; the entries a batch (16 in
 * blocks of 512, one an SM; in blocks of 256, 32 where they number at most
 * the SMs, one an SM, else 16, two an SM; 8 in blocks of 128, four an SM),
 * the blocks an SM, the bytes of a column tile's slice of B (k rows of
 * `cols` columns of the data's type), A's share of its cells
 * (0 where m or k is 0), and whether the rows are short: under
 * ROW_BATCHES_MIN_DENSITY with k < ROW_BATCHES_MIN_K, so under 41 entries on
 * average. */
typedef struct batches_shape {
    int threads, batch, blocks_per_sm;
    int64_t rows, cols, tiles, blocks;
    double slice_bytes, density;
    bool short_rows;
} batches_shape;
batches_shape spx__batches_shape_of(spx_ctx *ctx, const cuda_plan *P, int64_t slots);

/* Where the batches cut rows: spx__row_batches_cut in spmm_plan.c says what
 * the fields hold and how they are chosen. */
typedef enum batch_cut_kind { BATCH_CUT_FILL, BATCH_CUT_TAIL, BATCH_CUT_ROUNDS } batch_cut_kind;
typedef struct batch_cut {
    int64_t cap, limit, pieces, sm_rows;
    double waves;
    batch_cut_kind kind;
} batch_cut;
batch_cut spx__row_batches_cut(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b);
/* The slots of cut c over op(A)'s row offsets `rowptr` (host) in the order
 * `order` (rows_sorted's, NULL: 0, 1, ...), and the grid over them
 * (*shape); *slots (the caller frees it) is NULL where none are laid
 * (spmm_plan.c, the host part of cut_batch_rows). The planner's host tests
 * call these three. */
spx_status spx__lay_cut_slots(spx_ctx *ctx, const cuda_plan *P, const int64_t *rowptr, const int32_t *order,
                              bool forced, batches_shape *shape, batch_cut *c, int64_t *cut,
                              spx_cuda_batch_slot **slots, int64_t *nslots);
/* The columns of the batches' last tile in grid b (b->cols, or 16 or 32 in a
 * launch of its own): spmm_plan.c says where. The host tests call it too. */
int64_t spx__batches_last_cols(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b);

/* Persistent device array owned by the plan (freed with it). */
spx_status spx__plan_alloc(spx_ctx *ctx, cuda_plan *P, void **out, size_t bytes, const char *what);
spx_status spx__plan_upload(spx_ctx *ctx, cuda_plan *P, void **out, const void *src, size_t bytes,
                            const char *what);
/* Host matrix whose arrays are the CSR of op(A) (outer = 0) or of op(A)^T
 * (outer = 1); *tmp is set when a conversion or copy was made (caller frees). */
spx_status spx__plan_host_operand(spx_ctx *ctx, const spx_matrix *A, spx_op op, int outer,
                                  const spx_matrix **csr, spx_matrix **tmp);
/* A genuine host CSR matrix of op(A) (shape m x k), for conversions to
 * other formats; *tmp as above. */
spx_status spx__plan_host_csr(spx_ctx *ctx, const spx_matrix *A, spx_op op, const spx_matrix **csr,
                              spx_matrix **tmp);
/* Upload compressed arrays (offsets over `rows`, indices, values) as kernel CSR. */
spx_status spx__plan_upload_compressed(spx_ctx *ctx, cuda_plan *P, const spx_matrix *H, int64_t rows,
                                       int64_t cols, spx_cuda_csr *out);
/* Lanes per row so that one group covers N columns with 16-byte loads. */
int spx__plan_group_for_n(int64_t n, spx_dtype dtype);

/* Forced algorithms that need their own operand form; why receives a note for
 * the explanation. */
spx_status spx__plan_prepare_bsr(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen);
/* AUTO's BSR: P->csr's 16 x 16 blocks, built on the device into P->bsr
 * where every cell of them that lies in the matrix is an entry (*full);
 * else nothing is kept. */
spx_status spx__plan_bsr_from_csr(spx_ctx *ctx, cuda_plan *P, bool *full);
spx_status spx__plan_prepare_sell(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen);
spx_status spx__plan_prepare_outer(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A);
spx_status spx__plan_prepare_gather(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen);
/* DENSE: the dense copy of op(A) (from P->csr, which must be prepared) and
 * its CSC in P->outer. */
spx_status spx__plan_prepare_dense(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen);
/* The type B's values are multiplied in: f16 or bf16 for f32 data at those
 * precisions, else the data's (tf32 is f32 storage). */
spx_dtype spx__plan_operand_type(const cuda_plan *P);
/* Whether the dense path reads B in place when beta = 0 (spmm_exec.c): B
 * already in the GEMM's type. Then its fix-up after the GEMM reads C where C
 * is at most B's size (m <= k) or the device runs no cooperative launches
 * (spx__plan_dense_fix_from_c), else B. */
bool spx__plan_dense_in_place(const cuda_plan *P);
bool spx__plan_dense_fix_from_c(spx_ctx *ctx, const cuda_plan *P);
/* Bytes of the dense path's copy of op(A). */
int64_t spx__plan_dense_bytes(const cuda_plan *P);
/* Whether the dense path's GEMM is spx's own (spmm_dense_mma.cu or, see
 * below, spmm_dense_wgmma.cu), where B's rows start on 16 bytes: 16-bit
 * operands and a small product. */
bool spx__plan_dense_mma_pays(spx_ctx *ctx, const cuda_plan *P);
/* Whether spx's own GEMM would run on wgmma: 16-bit operands (f32 data
 * rounded to them, or data of their type) on a device of compute capability
 * 9.0, in a build with its sm_90a code. */
bool spx__plan_dense_wgmma(spx_ctx *ctx, const cuda_plan *P);

#endif

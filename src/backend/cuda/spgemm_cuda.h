/* SpGEMM on the CUDA backend: what the host driver (spgemm_cuda*.c) and the
 * kernels (spgemm_*.cu) share. The design is described in docs/SPGEMM.md
 * ("The GPU kernel").
 *
 * Kernels read A, B, the mask M and accum as CSR with int64 offsets and
 * int32 columns. Every row of C is computed by a group of threads (8 lanes,
 * a warp, or a block of 256) with a table of its columns: a hash table, or a dense
 * array over the row's column range when that is no larger. Tables live in
 * shared memory; a row too large for it is computed in column windows with a
 * dense table each (spx__gemm_windowed) or, when its columns are too sparse
 * for that, in a region of device memory, one per block of a persistent
 * grid. Rows are binned by the size their
 * table needs (an upper bound for the symbolic phase, the exact count for
 * the numeric phase). C-compatible: .cu files include it inside extern "C". */
#ifndef SPX_SPGEMM_CUDA_H
#define SPX_SPGEMM_CUDA_H

#include "backend/cuda/cuda_common.h"
#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define SPX_GEMM_HD __host__ __device__
#else
#define SPX_GEMM_HD
#endif

/* Entry point of the vtable. */
spx_status spx__cuda_spgemm(spx_ctx *ctx, const spx_spgemm_args *args);

/* A CSR operand on the device (ptr NULL: absent). val NULL: every entry 1. */
typedef struct spx_gemm_csr {
    const int64_t *ptr;
    const int32_t *col;
    const void *val;
} spx_gemm_csr;

/* Flags the kernels raise, in device memory. */
typedef struct spx_gemm_status {
    long long bad_row; /* lowest row where an operator overflowed; LLONG_MAX if none */
    int changed;       /* an entry of the product was new to accum or changed its value */
    int internal;      /* a row's table filled up: the counts are wrong (a bug) */
} spx_gemm_status;

/* Row bins: 0 holds rows of size 0; 1..nsorted (numeric only) rows of few
 * products, sorted in registers; up to nshared rows whose table fits shared
 * memory; then the rows too large for it: spx__gemm_bin_window (computed in
 * column windows, see spx__gemm_windowed) and spx__gemm_bin_global (tables
 * in device memory). */
#define SPX_GEMM_MAX_BINS 16 /* bin ids sort in 4 bits */

/* Statistics the binning kernel gathers (unsigned long long each). */
enum {
    SPX_GEMM_STAT_ROWS = 0,                         /* rows per bin */
    SPX_GEMM_STAT_SYM_SLOTS = SPX_GEMM_MAX_BINS,    /* largest table of a symbolic row in device memory */
    SPX_GEMM_STAT_NUM_SLOTS,   /* largest table a numeric row in device memory can need */
    SPX_GEMM_STAT_NUM_ROWS,    /* rows whose numeric table may need device memory */
    SPX_GEMM_STAT_ROW_BOUND,   /* largest bound on a row of C (product bound + accum row) */
    SPX_GEMM_STAT_FEW_ROWS,    /* rows of SPX_GEMM_SORT_MIN + 1 to SPX_GEMM_SORT_MAX products */
    SPX_GEMM_STAT_A_MAX,       /* entries of A's longest row */
    SPX_GEMM_STAT_C_ENTRIES,   /* numeric binning: entries of C, off[m] */
    SPX_GEMM_NSTATS
};

/* The numeric phase sorts rows of SPX_GEMM_SORT_MIN + 1 to SPX_GEMM_SORT_MAX
 * products in a warp's registers instead of using a table: a key is the
 * column relative to the row's first (rlo) above the product's position in
 * k order (SPX_GEMM_SORT_SHIFT bits), so the row's column span must stay
 * below SPX_GEMM_SORT_RANGE. spx__gemm_sorted_row says which rows. */
#define SPX_GEMM_SORT_SHIFT 7
#define SPX_GEMM_SORT_MIN 32
#define SPX_GEMM_SORT_MAX (1 << SPX_GEMM_SORT_SHIFT)
#define SPX_GEMM_SORT_RANGE ((1 << (32 - SPX_GEMM_SORT_SHIFT)) - 1)
/* Fewer such rows than this take tables: their kernel is a launch of its
 * own, which costs small products more than sorting saves (H200: citeseer
 * and cora squared, 2.7K-3.3K rows, lost 10 us of 0.15-0.2 ms). */
#define SPX_GEMM_SORT_MIN_ROWS 8192

/* Products of at most this many rows bin in one block (spx__cuda_gemm_bin_small). */
#define SPX_GEMM_SMALL_ROWS 8192

/* Everything a kernel needs about one product, passed by value. */
typedef struct spx_gemm_dev {
    spx_gemm_csr A, B, M, acc; /* M: a matrix mask; acc: accum */
    int64_t m, n;              /* rows of A, columns of B and C */
    int mask;                  /* spx_mask_kind, complements of triangles folded in */
    int complement;            /* MATRIX: keep what M excludes; NONE: keep nothing */
    int drop;                  /* drop product entries equal to the add identity */
    int track_changed;         /* set status->changed (accum given and the caller asks) */
    int out_wide;              /* C's column indices are int64 (else int32) */
    /* per row */
    int32_t *cap;  /* bound on the entries of the product's row (work pass) */
    int32_t *prod; /* products of the row under the mask's window, at most INT32_MAX (work pass) */
    int32_t *rlo;  /* first column any product of the row reaches (work pass) */
    int32_t *rhi;  /* last one + 1 (rlo = rhi = 0 without products) */
    int32_t *cnt;  /* entries of the product's row (symbolic) */
    int64_t *tot;  /* entries of C's row, m + 1 (symbolic; later reused) */
    const int64_t *off; /* start of each row of C, m + 1 (the scan of tot) */
    int64_t *act;  /* entries written per row when drop is set (else NULL) */
    /* output: rows are written at off[i] - base */
    int64_t base;
    void *out_col, *out_val;
    spx_gemm_status *status;
} spx_gemm_dev;

typedef struct spx_gemm_bins {
    int nsorted, nshared;
    int sort_every; /* numeric: sort every row of 33-128 products (spx__gemm_sorted_row) */
    /* bin b <= nsorted: products in (max_size[b-1], max_size[b]] (a column span below
     * SPX_GEMM_SORT_RANGE); other bins: sizes in (max_size[b-1], max_size[b]] */
    int64_t max_size[SPX_GEMM_MAX_BINS];
    int group[SPX_GEMM_MAX_BINS];        /* threads per row: 8, 32 or 256 */
    uint32_t slots[SPX_GEMM_MAX_BINS];   /* table slots per row group (sorted bins: products) */
    int64_t num_smax;                    /* symbolic binning: the numeric phase's shared limit */
    uint32_t window_slots;               /* slots of a window's table; 0: no windows */
} spx_gemm_bins;

static inline SPX_GEMM_HD int spx__gemm_bin_window(const spx_gemm_bins *b) { return b->nshared + 1; }
static inline SPX_GEMM_HD int spx__gemm_bin_global(const spx_gemm_bins *b) { return b->nshared + 2; }

/* One launch of the row kernels over the rows rows[lo[b]..hi[b]) of each bin. */
typedef struct spx_gemm_launch {
    const int32_t *rows; /* row ids grouped by bin, increasing within a bin */
    int64_t lo[SPX_GEMM_MAX_BINS], hi[SPX_GEMM_MAX_BINS];
    spx_gemm_bins bins;
    unsigned char *regions; /* tables in device memory: nregions of region_bytes */
    int64_t region_bytes;
    int nregions;
    int ordered; /* numeric: combine each column's products in k order */
    int sorted_blocks; /* of the sorted bins' kernel at most (SPX_GEMM_SORTED_BLOCKS_PER_SM) */
    cudaStream_t stream;
    const spx_cuda_side *side; /* for the block kernels, beside the others */
} spx_gemm_launch;

/* Blocks per SM of the sorted bins' kernel at most: a few waves, over which
 * its warps loop, so that their set-up (mostly the sorting network's lane
 * masks: 41 % of the kernel's instructions with a warp per row) is paid once
 * per warp, not once per row (H100, uniform 1M at 8 per row squared: 1.73 ->
 * 1.49 ms). Not for the table kernels: their groups of 8 drift apart over
 * several rows, and a warp then runs its groups' paths one after another
 * (3D Laplacian squared: numeric 1.01 -> 1.85 ms, symbolic 0.37 -> 0.54). */
#define SPX_GEMM_SORTED_BLOCKS_PER_SM 16

/* Threads per block of every row kernel. */
#define SPX_GEMM_BLOCK 256

/* Table slots of a row of `size` entries: a hash table of at least twice
 * the size (64 at least, a power of two), or the row's column range when
 * that is no larger (a dense table). Never above 2^31: a row's range is
 * below 2^31. Monotone in size for a fixed range, so a bound on the size
 * bounds the slots. */
static inline SPX_GEMM_HD int64_t spx__gemm_hash_slots(int64_t size)
{
    int64_t s = 64;
    while (s < 2 * size)
        s <<= 1;
    return s;
}
static inline SPX_GEMM_HD int64_t spx__gemm_row_slots(int64_t size, int64_t range)
{
    int64_t h = spx__gemm_hash_slots(size);
    return range > 0 && range <= h ? range : h;
}

/* Whether a row too large for the shared-memory bins is computed in column
 * windows of `window` slots, each with a dense table in shared memory (the
 * row's products cut to the window, its entries written window by window),
 * rather than with a hash table in device memory: when its column span is
 * at most SPX_GEMM_WINDOW_SPAN times the hash table its bound `cap` would
 * need, and reading its `alen` entries of A once per window costs no more
 * than its `prod` products (else a long row of A over short rows of B
 * would cost windows x alen). Scanning a dense span costs far less than
 * sorting a large hash row in device memory (R-MAT scale 16 squared, H200:
 * 101 ms with hash tables there, 18.6 ms with dense ones), and shared
 * memory spares the device memory traffic of clearing and scanning the
 * span. Decided by the same quantities in both phases, so that a row takes
 * the same kind of table in both. */
#define SPX_GEMM_WINDOW_SPAN 16
static inline SPX_GEMM_HD int spx__gemm_windowed(int64_t cap, int64_t range, int64_t prod,
                                                 int64_t alen, int64_t window)
{
    return window > 0 && range > 0 && range <= SPX_GEMM_WINDOW_SPAN * spx__gemm_hash_slots(cap) &&
           (range + window - 1) / window * alen <= prod;
}
/* Largest table of a window (fewer slots where the device's shared memory
 * per block does not hold it). */
#define SPX_GEMM_WINDOW_SLOTS 8192

/* Whether a numeric row of `size` entries, `prod` products and a column span
 * of `range` is sorted (its bin then holds P = 64 or 128 products). every:
 * every such row (on the ordered path with warp tables, whose rounds cost
 * more than the sort); otherwise only rows whose hash table would have more
 * slots than P (when a row's products are mostly distinct columns, the
 * table's compaction and sort cost more than sorting the products; measured
 * on the H200, 3D Laplacian squared, about two products per entry: the
 * table is faster). */
static inline SPX_GEMM_HD int spx__gemm_sorted_row(int64_t size, int64_t prod, int64_t range,
                                                   int every)
{
    if (prod <= SPX_GEMM_SORT_MIN || prod > SPX_GEMM_SORT_MAX || range >= SPX_GEMM_SORT_RANGE)
        return 0;
    const int64_t P = prod <= 2 * SPX_GEMM_SORT_MIN ? 2 * SPX_GEMM_SORT_MIN : SPX_GEMM_SORT_MAX;
    return every || P < spx__gemm_hash_slots(size);
}

/* Bytes of a table of S slots (values of vsz bytes when numeric; with the
 * per-slot owner and has-value arrays when ordered), each array 16-aligned. */
static inline SPX_GEMM_HD int64_t spx__gemm_round16(int64_t b) { return (b + 15) & ~(int64_t)15; }
static inline SPX_GEMM_HD int64_t spx__gemm_table_bytes(int64_t S, int64_t vsz, int numeric,
                                                        int ordered)
{
    int64_t b = spx__gemm_round16(4 * S); /* keys */
    if (numeric)
        b += spx__gemm_round16(vsz * S);
    if (numeric && ordered)
        b += spx__gemm_round16(4 * S) + spx__gemm_round16(S);
    return b;
}
/* Bytes of a group's staging: G prefix ends, G offsets and (block groups)
 * 32 scan slots (int64), G values of vsz bytes. */
static inline SPX_GEMM_HD int64_t spx__gemm_stage_scan_bytes(int G)
{
    return spx__gemm_round16(8 * (2 * (int64_t)G + (G > 32 ? 32 : 0)));
}
static inline SPX_GEMM_HD int64_t spx__gemm_stage_bytes(int G, int64_t vsz)
{
    return spx__gemm_stage_scan_bytes(G) + spx__gemm_round16(vsz * G);
}

/* ---- launchers (spgemm_phases.cu) ---- */

/* cap, prod, rlo and rhi of every row (nnz_a: A's entries, to size the lanes
 * per row); also sets status to "nothing raised" and tot[m] (act[m]) to 0,
 * so it runs for m = 0 too. */
cudaError_t spx__cuda_gemm_work(const spx_gemm_dev *d, int64_t nnz_a, cudaStream_t stream);
/* bin[i] of every row by size[i]. Symbolic binning (numeric == 0) also sets
 * cnt = 0 and tot = |accum row| for rows of size 0 and gathers every
 * statistic; numeric binning counts rows and reads C's size from off. stats
 * (SPX_GEMM_NSTATS) must be zeroed by the caller. */
cudaError_t spx__cuda_gemm_bin(const spx_gemm_dev *d, const int32_t *size,
                               const spx_gemm_bins *bins, int numeric, unsigned char *bin,
                               unsigned long long *stats, cudaStream_t stream);
/* For 1 <= m <= SPX_GEMM_SMALL_ROWS, in one launch: numeric, off = the
 * exclusive sums of tot[0..m] first; bin as spx__cuda_gemm_bin; rows = the
 * row ids grouped by bin, increasing within a bin. Writes every statistic
 * (stats need no zeroing). */
cudaError_t spx__cuda_gemm_bin_small(const spx_gemm_dev *d, const int32_t *size,
                                     const spx_gemm_bins *bins, int numeric, unsigned char *bin,
                                     unsigned long long *stats, int32_t *rows, int64_t *off,
                                     cudaStream_t stream);
/* The symbolic row kernels: cnt and tot of the launch's rows. */
cudaError_t spx__cuda_gemm_symbolic(const spx_gemm_dev *d, const spx_gemm_launch *L);
/* out[0..n) = exclusive prefix sums of in[0..n) (int64); tmp as for CUB
 * (query with tmp == NULL). */
cudaError_t spx__cuda_gemm_scan(const int64_t *in, int64_t *out, int64_t n, void *tmp,
                                size_t *tmp_bytes, cudaStream_t stream);
/* For rows [r0, r1): out[2b], out[2b+1] = the positions in rows of bin b's
 * first row >= r0 and >= r1 (bin b spans rows[start[b]..start[b+1])). */
cudaError_t spx__cuda_gemm_chunk_ranges(const int32_t *rows, const int64_t *start, int nbins,
                                        int64_t r0, int64_t r1, int64_t *out,
                                        cudaStream_t stream);
/* Move rows [r0, r1) of C down after drop_identity: row i's act[i] entries
 * go from src (the chunk's entries as written, starting at off[r0]) to
 * noff[i] of col/val. */
cudaError_t spx__cuda_gemm_compact(const int64_t *off, const int64_t *noff, const int64_t *act,
                                   int64_t r0, int64_t r1, const void *src_col,
                                   const void *src_val, void *col, void *val, int wide,
                                   int64_t vsz, cudaStream_t stream);

/* Rows rows[0..n) have no products: copy their accum row to their place
 * (values of vsz bytes) and set act. */
cudaError_t spx__cuda_gemm_copy_rows(const spx_gemm_dev *d, const int32_t *rows, int64_t n,
                                     int64_t vsz, cudaStream_t stream);

/* ---- numeric launchers (spgemm_numeric*.cu) ---- */

/* The numeric row kernels of semiring (kind, type) for the launch's rows
 * (rows of bin 0 copy their accum row); cudaErrorInvalidValue for a pair
 * without kernels. */
cudaError_t spx__cuda_gemm_numeric(spx_semiring_kind kind, spx_dtype type, const spx_gemm_dev *d,
                                   const spx_gemm_launch *L);
cudaError_t spx__cuda_gemm_numeric_f32(spx_semiring_kind kind, const spx_gemm_dev *d,
                                       const spx_gemm_launch *L);
cudaError_t spx__cuda_gemm_numeric_f64(spx_semiring_kind kind, const spx_gemm_dev *d,
                                       const spx_gemm_launch *L);
cudaError_t spx__cuda_gemm_numeric_i32(spx_semiring_kind kind, const spx_gemm_dev *d,
                                       const spx_gemm_launch *L);
cudaError_t spx__cuda_gemm_numeric_i64(spx_semiring_kind kind, const spx_gemm_dev *d,
                                       const spx_gemm_launch *L);
cudaError_t spx__cuda_gemm_numeric_bool(spx_semiring_kind kind, const spx_gemm_dev *d,
                                        const spx_gemm_launch *L);

#ifdef __cplusplus
}
#endif
#endif

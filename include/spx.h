/*
 * spx: sparse matrix kernels for NVIDIA GPUs, with a CPU backend.
 *
 * One header, C11. Conventions:
 *   - Every fallible call returns spx_status; SPX_OK is 0. On error, a message
 *     naming the offending value is available from spx_last_error(ctx), and
 *     outputs are left untouched (functions returning a new object set *out
 *     only on success).
 *   - Nothing aborts or exits the process.
 *   - Options structs are zero-initialised for defaults: `spx_read_options o = {0};`
 *   - Sizes and indices in the API are int64_t; matrices store int32 or int64
 *     indices (spx_index_type).
 *   - A context is not safe for concurrent use from several threads; use one
 *     context per thread. Matrices are immutable once created and may be shared.
 */
#ifndef SPX_H
#define SPX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(SPX_SHARED_BUILD)
#define SPX_API __declspec(dllexport)
#elif defined(__GNUC__)
#define SPX_API __attribute__((visibility("default")))
#else
#define SPX_API
#endif

#define SPX_VERSION_MAJOR 0
#define SPX_VERSION_MINOR 1
#define SPX_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

typedef enum spx_status {
    SPX_OK = 0,
    SPX_ERR_INVALID_ARGUMENT = 1, /* null pointer, negative size, bad enum value */
    SPX_ERR_OUT_OF_MEMORY = 2,    /* host or device allocation failed */
    SPX_ERR_IO = 3,               /* file could not be opened, read or written */
    SPX_ERR_PARSE = 4,            /* malformed file content (message names line) */
    SPX_ERR_INVALID_MATRIX = 5,   /* structure breaks the format's invariants */
    SPX_ERR_SHAPE = 6,            /* operand dimensions do not match */
    SPX_ERR_UNSUPPORTED = 7,      /* valid request this backend/dtype/format does not do */
    SPX_ERR_OVERFLOW = 8,         /* a count, index or value does not fit its type */
    SPX_ERR_BACKEND = 9,          /* CUDA runtime/driver error (message has its text) */
    SPX_ERR_NO_DEVICE = 10,       /* CUDA backend requested but not built or no GPU */
    SPX_ERR_CORRUPT = 11,         /* binary file failed its checksum or version check */
    SPX_ERR_INTERNAL = 12         /* a bug in spx: please report it */
} spx_status;

/* Static name of a status ("SPX_ERR_PARSE"); never NULL. */
SPX_API const char *spx_status_name(spx_status s);

/* ------------------------------------------------------------------------ */
/* Element, index and storage types                                          */
/* ------------------------------------------------------------------------ */

/* Value types. SPX_DTYPE_DEFAULT (0) means "choose for me" in option structs. */
typedef enum spx_dtype {
    SPX_DTYPE_DEFAULT = 0,
    SPX_F32 = 1,
    SPX_F64 = 2,
    SPX_F16 = 3,     /* IEEE binary16, stored as uint16_t */
    SPX_BF16 = 4,    /* bfloat16, stored as uint16_t */
    SPX_I32 = 5,
    SPX_I64 = 6,
    SPX_BOOL = 7,    /* one byte per value, 0 or 1 */
    SPX_C64 = 8,     /* complex: two floats (re, im) */
    SPX_C128 = 9,    /* complex: two doubles (re, im) */
    SPX_PATTERN = 10 /* no value array; every stored entry has value 1 */
} spx_dtype;

typedef enum spx_index_type {
    SPX_INDEX_DEFAULT = 0, /* int32 when every count fits, else int64 */
    SPX_INDEX_I32 = 1,
    SPX_INDEX_I64 = 2
} spx_index_type;

typedef enum spx_format {
    SPX_FORMAT_DEFAULT = 0, /* CSR where a format is to be chosen */
    SPX_COO = 1,  /* coordinate; may be unsorted and hold duplicates */
    SPX_CSR = 2,  /* compressed rows; columns sorted and unique within each row */
    SPX_CSC = 3,  /* compressed columns; rows sorted and unique within each column */
    SPX_BSR = 4,  /* block CSR, any block shape r x c, blocks row-major, edge blocks padded */
    SPX_SELL = 5  /* SELL-C-sigma: slices of C rows, rows sorted by length within sigma windows */
} spx_format;

typedef enum spx_memory {
    SPX_MEM_HOST = 0,
    SPX_MEM_DEVICE = 1 /* CUDA device memory of the context's device */
} spx_memory;

typedef enum spx_layout {
    SPX_ROW_MAJOR = 0,
    SPX_COL_MAJOR = 1
} spx_layout;

typedef enum spx_op {
    SPX_OP_NONE = 0,
    SPX_OP_TRANSPOSE = 1
} spx_op;

/* Size in bytes of one value (0 for SPX_PATTERN and SPX_DTYPE_DEFAULT). */
SPX_API size_t spx_dtype_size(spx_dtype t);
/* "f32", "f64", "f16", "bf16", "i32", "i64", "bool", "c64", "c128", "pattern". */
SPX_API const char *spx_dtype_name(spx_dtype t);
/* "coo", "csr", "csc", "bsr", "sell". */
SPX_API const char *spx_format_name(spx_format f);
/* Parse the names above (case-insensitive); SPX_ERR_INVALID_ARGUMENT if unknown. */
SPX_API spx_status spx_dtype_from_name(const char *name, spx_dtype *out);
SPX_API spx_status spx_format_from_name(const char *name, spx_format *out);

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct spx_ctx spx_ctx;
typedef struct spx_matrix spx_matrix;

typedef enum spx_backend {
    SPX_BACKEND_AUTO = 0, /* CUDA if built and a device is present, else CPU */
    SPX_BACKEND_REF = 1,  /* serial, float64 accumulation: the oracle */
    SPX_BACKEND_CPU = 2,  /* OpenMP */
    SPX_BACKEND_CUDA = 3
} spx_backend;

typedef enum spx_log_level {
    SPX_LOG_QUIET = 0,
    SPX_LOG_ERROR = 1,
    SPX_LOG_WARN = 2,
    SPX_LOG_INFO = 3,
    SPX_LOG_DEBUG = 4
} spx_log_level;

/* Create a context on SPX_BACKEND_AUTO. The environment variables SPX_BACKEND
 * (ref|cpu|cuda|auto) and SPX_LOG_LEVEL (0-4) override the defaults. */
SPX_API spx_status spx_ctx_create(spx_ctx **out);
SPX_API void spx_ctx_destroy(spx_ctx *ctx);

/* Select a backend. SPX_ERR_NO_DEVICE if CUDA is asked for and not available;
 * the context keeps its previous backend then. */
SPX_API spx_status spx_ctx_set_backend(spx_ctx *ctx, spx_backend b);
SPX_API spx_backend spx_ctx_backend(const spx_ctx *ctx);
SPX_API const char *spx_backend_name(spx_backend b);
SPX_API spx_status spx_backend_from_name(const char *name, spx_backend *out);
/* Nonzero if backend b can be selected in this process (CUDA: built and a device present). */
SPX_API int spx_backend_available(spx_backend b);

/* Message for the last error raised on ctx ("" if none). Valid until the next call on ctx. */
SPX_API const char *spx_last_error(const spx_ctx *ctx);
SPX_API spx_status spx_last_status(const spx_ctx *ctx);
SPX_API void spx_clear_error(spx_ctx *ctx);

SPX_API void spx_ctx_set_log_level(spx_ctx *ctx, spx_log_level level);
/* Threads used by the CPU backend and by conversions (0 = OpenMP default). */
SPX_API void spx_ctx_set_num_threads(spx_ctx *ctx, int n);
/* Deterministic mode: results are bit-identical from run to run (no float
 * atomics in reductions). Default off. */
SPX_API void spx_ctx_set_deterministic(spx_ctx *ctx, int on);
/* Validate matrices (spx_matrix_check) the first time an operation sees them.
 * Default on; turn off only for matrices you have checked yourself. */
SPX_API void spx_ctx_set_validation(spx_ctx *ctx, int on);
/* Progress messages on stderr for long work. Default: on when stderr is a terminal. */
SPX_API void spx_ctx_set_progress(spx_ctx *ctx, int on);

/* CUDA stream used by the context (a cudaStream_t; NULL on other backends).
 * With device-memory operands, operations are asynchronous on this stream;
 * with host operands they return when results are in host memory. */
SPX_API void *spx_ctx_stream(const spx_ctx *ctx);
/* Use the caller's stream (cudaStream_t) instead of the context's own. */
SPX_API spx_status spx_ctx_set_stream(spx_ctx *ctx, void *stream);
/* Wait for the context's device work to finish. */
SPX_API spx_status spx_ctx_synchronize(spx_ctx *ctx);

/* Device facts the planner uses (zeros on non-CUDA backends). */
typedef struct spx_device_info {
    char name[128];
    int device, sm_count, cc_major, cc_minor;
    int64_t global_mem_bytes, l2_bytes, smem_per_block_optin, smem_per_sm;
} spx_device_info;
SPX_API spx_status spx_ctx_device_info(spx_ctx *ctx, spx_device_info *out);

/* Device memory held by the context's work pool: in use now, peak since the
 * last reset; cached: memory kept for reuse, the work pool's free blocks and
 * the freed results of the device (on the cuda backend, device results of
 * SpGEMM come from a pool per device that keeps a freed result's memory for
 * the next one; results may outlive their context). Cached memory goes back
 * to the device when an allocation would fail and when a context of the
 * device is destroyed. */
typedef struct spx_memory_stats {
    int64_t in_use, peak, cached;
} spx_memory_stats;
SPX_API spx_status spx_ctx_memory_stats(spx_ctx *ctx, spx_memory_stats *out);
SPX_API void spx_ctx_reset_peak_memory(spx_ctx *ctx);

/* Copy a matrix to device memory of the context's device (CUDA backend), or
 * back to host memory (any backend). The result owns its arrays. */
SPX_API spx_status spx_matrix_to_device(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
SPX_API spx_status spx_matrix_to_host(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);

/* ------------------------------------------------------------------------ */
/* Sparse matrices                                                           */
/* ------------------------------------------------------------------------ */

/* What a matrix is. nnz counts stored scalar entries: for BSR, every slot of
 * every stored block (nblocks * block_rows * block_cols); for SELL, the real
 * entries (padding excluded, see sell_slots). */
typedef struct spx_matrix_info {
    spx_format format;
    spx_index_type index_type;
    spx_dtype dtype;
    spx_memory memory;
    int64_t rows, cols, nnz;
    int64_t block_rows, block_cols, nblocks;     /* BSR */
    int64_t sell_c, sell_sigma, nslices, sell_slots; /* SELL */
    int owns_data; /* 1 if spx frees the arrays with the matrix */
} spx_matrix_info;

/* The arrays of a matrix. Unused members are NULL. Per format:
 *  COO : row_indices[nnz], indices[nnz] (columns), values[nnz]
 *  CSR : offsets[rows+1], indices[nnz] (columns), values[nnz]
 *  CSC : offsets[cols+1], indices[nnz] (rows), values[nnz]
 *  BSR : offsets[brows+1], indices[nblocks] (block columns),
 *        values[nblocks*br*bc] (each block row-major); brows = ceil(rows/br).
 *        Slots of edge blocks outside the matrix hold zero.
 *  SELL: offsets[nslices+1] (start slot of each slice), indices[sell_slots]
 *        (column of each slot, -1 for padding), values[sell_slots],
 *        perm[nslices*C] (perm[p] = original row of the row stored at
 *        position p, or -1 for positions past the last row),
 *        row_lengths[nslices*C] (real entries of the row at position p).
 *        Slice s of width w = (offsets[s+1]-offsets[s])/C stores slot k of
 *        its local row r at offsets[s] + k*C + r (column-major within the slice).
 * values is NULL for SPX_PATTERN. */
typedef struct spx_matrix_arrays {
    void *offsets;
    void *indices;
    void *row_indices;
    void *values;
    void *perm;
    void *row_lengths;
} spx_matrix_arrays;

SPX_API void spx_matrix_destroy(spx_matrix *A);
SPX_API spx_status spx_matrix_info_get(const spx_matrix *A, spx_matrix_info *out);
SPX_API spx_status spx_matrix_arrays_get(const spx_matrix *A, spx_matrix_arrays *out);

/* Owning matrices with uninitialised host arrays of the right sizes, to be
 * filled through spx_matrix_arrays_get. itype SPX_INDEX_DEFAULT picks by size. */
SPX_API spx_status spx_matrix_create_coo(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                         spx_index_type itype, spx_dtype dtype, spx_matrix **out);
SPX_API spx_status spx_matrix_create_csr(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                         spx_index_type itype, spx_dtype dtype, spx_matrix **out);
SPX_API spx_status spx_matrix_create_csc(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                         spx_index_type itype, spx_dtype dtype, spx_matrix **out);

/* Zero-copy wrappers over caller buffers (host or device memory). The caller
 * keeps ownership and must keep the buffers alive while the matrix exists. If
 * the caller changes the buffers' contents afterwards it must call
 * spx_matrix_touch so that cached checks and plans are dropped.
 * Wrapping does not validate; operations validate on first use (see
 * spx_ctx_set_validation) and spx_matrix_check can be called at any time. */
SPX_API spx_status spx_matrix_wrap_coo(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                       void *row_indices, void *col_indices, void *values,
                                       spx_index_type itype, spx_dtype dtype, spx_memory mem,
                                       spx_matrix **out);
SPX_API spx_status spx_matrix_wrap_csr(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                       void *row_offsets, void *col_indices, void *values,
                                       spx_index_type itype, spx_dtype dtype, spx_memory mem,
                                       spx_matrix **out);
SPX_API spx_status spx_matrix_wrap_csc(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz,
                                       void *col_offsets, void *row_indices, void *values,
                                       spx_index_type itype, spx_dtype dtype, spx_memory mem,
                                       spx_matrix **out);
SPX_API spx_status spx_matrix_wrap_bsr(spx_ctx *ctx, int64_t rows, int64_t cols,
                                       int64_t block_rows, int64_t block_cols, int64_t nblocks,
                                       void *block_row_offsets, void *block_col_indices,
                                       void *values, spx_index_type itype, spx_dtype dtype,
                                       spx_memory mem, spx_matrix **out);
SPX_API spx_status spx_matrix_wrap_sell(spx_ctx *ctx, int64_t rows, int64_t cols,
                                        int64_t slice_c, int64_t sigma, int64_t nslices,
                                        void *slice_offsets, void *col_indices, void *values,
                                        void *perm, void *row_lengths, spx_index_type itype,
                                        spx_dtype dtype, spx_memory mem, spx_matrix **out);

/* Tell spx that a wrapped matrix's buffers changed (drops cached checks/plans). */
SPX_API void spx_matrix_touch(spx_matrix *A);

/* Deep copy into spx-owned host memory. */
SPX_API spx_status spx_matrix_copy(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);

/* Validate structure: offsets start at 0, are monotone and end at nnz; indices
 * in range; CSR/CSC sorted and without duplicates; BSR/SELL shape rules; SELL
 * perm a permutation that only moves rows within their sigma window.
 * SPX_ERR_INVALID_MATRIX with the first violation named (row, entry, value). */
SPX_API spx_status spx_matrix_check(spx_ctx *ctx, const spx_matrix *A);

/* Duplicate policy for COO -> compressed conversion and canonicalisation. */
typedef enum spx_dup_policy {
    SPX_DUP_SUM = 0,   /* default */
    SPX_DUP_MIN = 1,
    SPX_DUP_MAX = 2,
    SPX_DUP_LAST = 3,  /* keep the entry that came last in storage order */
    SPX_DUP_ERROR = 4  /* duplicates are an SPX_ERR_INVALID_MATRIX */
} spx_dup_policy;

/* Parameters of the target format; zero members take defaults. */
typedef struct spx_format_params {
    int64_t block_rows, block_cols; /* BSR block shape; default 4 x 4 */
    int64_t sell_c, sell_sigma;     /* SELL slice height (default 32) and sort window (default 256) */
    spx_dup_policy dup;             /* how COO duplicates are combined (default sum) */
} spx_format_params;

/* Convert between formats (any pair; the result is a new owning host matrix,
 * same index and value types). COO results are sorted by (row, column) and
 * without duplicates. CSR -> BSR pads edge blocks with zeros; BSR -> CSR keeps
 * the explicit zeros stored inside blocks except in padding outside the matrix.
 * Every slot of a stored BSR block is an entry: a pattern matrix converted to
 * BSR becomes the pattern of its blocks (convert values first, e.g. with
 * spx_matrix_astype, to keep element-level zeros). params may be NULL. */
SPX_API spx_status spx_matrix_convert(spx_ctx *ctx, const spx_matrix *A, spx_format to,
                                      const spx_format_params *params, spx_matrix **out);
/* Change value and/or index type (SPX_DTYPE_DEFAULT / SPX_INDEX_DEFAULT keep
 * the current one). Narrowing indices that do not fit is SPX_ERR_OVERFLOW;
 * complex to real is SPX_ERR_UNSUPPORTED; values out of range of an integer
 * target are SPX_ERR_OVERFLOW; float narrowing rounds to nearest. Integer
 * targets take integral values only: a fraction or NaN is
 * SPX_ERR_INVALID_ARGUMENT, an infinity SPX_ERR_OVERFLOW (messages name the
 * entry). Real to complex gets zero imaginary parts; bool converts as 0/1
 * (any nonzero, NaN included, becomes true); pattern becomes ones, and any
 * type becomes pattern by dropping its values. */
SPX_API spx_status spx_matrix_astype(spx_ctx *ctx, const spx_matrix *A, spx_dtype dtype,
                                     spx_index_type itype, spx_matrix **out);
/* A^T in the same format (for BSR, with transposed blocks; for SELL, rebuilt). */
SPX_API spx_status spx_matrix_transpose(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
/* Sort and combine duplicates (COO; for other formats returns a sorted copy).
 * dup decides how duplicates combine. */
SPX_API spx_status spx_matrix_canonicalize(spx_ctx *ctx, const spx_matrix *A, spx_dup_policy dup,
                                           spx_matrix **out);

/* Dense operands and results. data points to host or device memory as mem says.
 * Element (i, j) is data[i*ld + j] (row-major) or data[j*ld + i] (column-major). */
typedef struct spx_dense {
    void *data;
    int64_t rows, cols, ld;
    spx_dtype dtype;
    spx_layout layout;
    spx_memory memory;
} spx_dense;

static inline spx_dense spx_dense_make(void *data, int64_t rows, int64_t cols, int64_t ld,
                                       spx_dtype dtype, spx_layout layout, spx_memory mem)
{
    spx_dense d;
    d.data = data; d.rows = rows; d.cols = cols; d.ld = ld;
    d.dtype = dtype; d.layout = layout; d.memory = mem;
    return d;
}

/* Allocate a host dense matrix with a tight leading dimension, zero-filled. */
SPX_API spx_status spx_dense_alloc(spx_ctx *ctx, int64_t rows, int64_t cols, spx_dtype dtype,
                                   spx_layout layout, spx_dense *out);
/* Free what spx_dense_alloc or spx_dense_read allocated; sets d->data to NULL. */
SPX_API void spx_dense_free(spx_dense *d);

/* Build a sparse matrix from the entries of D whose magnitude is > drop_tol
 * (0 keeps every nonzero). format SPX_FORMAT_DEFAULT gives CSR. */
SPX_API spx_status spx_matrix_from_dense(spx_ctx *ctx, const spx_dense *D, double drop_tol,
                                         spx_format format, const spx_format_params *params,
                                         spx_index_type itype, spx_matrix **out);
/* Write A into the caller's dense D (same shape; every element written:
 * zeros, then entries, duplicates summed). D's dtype may differ from A's,
 * converted as spx_matrix_astype does (complex A needs a complex D). */
SPX_API spx_status spx_matrix_to_dense(spx_ctx *ctx, const spx_matrix *A, spx_dense *D);

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct spx_read_options {
    spx_format format;        /* default CSR */
    spx_dtype dtype;          /* default: from the file (real f64, integer i64,
                                 complex c128, pattern pattern; .smtx f32) */
    spx_index_type index_type;/* default: int32 if it fits */
    spx_dup_policy dup;       /* duplicates in coordinate files: default sum */
    uint64_t seed;            /* .smtx carries no values: uniform in [-1, 1) from this seed */
} spx_read_options;

/* Read .mtx (Matrix Market), .smtx (DLMC) or .spx (binary), by extension, or
 * by content if the extension is unknown. opts may be NULL. Symmetric,
 * skew-symmetric and hermitian files are expanded to full storage. Array
 * (dense) Matrix Market files give the sparse matrix of their nonzeros. */
SPX_API spx_status spx_matrix_read(spx_ctx *ctx, const char *path, const spx_read_options *opts,
                                   spx_matrix **out);
/* Read from memory (path-less; `name` is used in messages). kind: "mtx", "smtx" or "spx". */
SPX_API spx_status spx_matrix_read_buffer(spx_ctx *ctx, const void *data, size_t size,
                                          const char *kind, const char *name,
                                          const spx_read_options *opts, spx_matrix **out);
/* Write .mtx (coordinate, general, values printed to round-trip exactly) or
 * .spx (binary, any format), by extension. */
SPX_API spx_status spx_matrix_write(spx_ctx *ctx, const spx_matrix *A, const char *path);

/* Dense Matrix Market array files. dtype SPX_DTYPE_DEFAULT reads as f64.
 * The result is column-major as in the file unless layout says row-major. */
SPX_API spx_status spx_dense_read(spx_ctx *ctx, const char *path, spx_dtype dtype,
                                  spx_layout layout, spx_dense *out);
SPX_API spx_status spx_dense_write(spx_ctx *ctx, const spx_dense *D, const char *path);

/* ------------------------------------------------------------------------ */
/* Statistics (the planner's analysis)                                        */
/* ------------------------------------------------------------------------ */

#define SPX_STATS_HIST_BINS 40

typedef struct spx_matrix_stats {
    int64_t rows, cols, nnz;
    double density;
    int64_t row_min, row_max;      /* entries per row */
    double row_mean, row_median, row_std, row_cv; /* cv = std / mean (0 if mean is 0) */
    int64_t empty_rows, empty_cols;
    int64_t lower_bandwidth;       /* max(i - j) over entries, 0 if none below the diagonal */
    int64_t upper_bandwidth;       /* max(j - i) over entries */
    int64_t bandwidth;             /* lower + upper + 1 (0 for an empty matrix) */
    int64_t diagonal_nnz;          /* entries with i == j */
    /* row_hist[0]: empty rows; row_hist[b], b >= 1: rows with length in [2^(b-1), 2^b)
     * (the last bin also counts longer rows). */
    int64_t row_hist[SPX_STATS_HIST_BINS];
} spx_matrix_stats;

/* Statistics of a host matrix of any format (device matrices:
 * SPX_ERR_UNSUPPORTED). Entries are what the format stores: COO duplicates
 * count once per stored copy; BSR counts every slot of a stored block that
 * lies inside the matrix (explicit zeros included, edge padding excluded), so
 * nnz here can differ from spx_matrix_info's; SELL counts real entries only.
 * row_median is exact (mean of the two middle lengths for an even row count),
 * row_std the population standard deviation. With no rows, or no entries,
 * the fields are zeros (never NaN). O(nnz + rows + cols). */
SPX_API spx_status spx_matrix_stats_compute(spx_ctx *ctx, const spx_matrix *A,
                                            spx_matrix_stats *out);

/* ------------------------------------------------------------------------ */
/* Generators (seeded, reproducible on every platform and thread count)       */
/* ------------------------------------------------------------------------ */
/* Results are canonical CSR (sorted, unique columns), validated by
 * construction. The same seed gives the same bytes on every platform and for
 * every thread count.
 * Values are uniform in [-1, 1) unless stated, stored per dtype:
 *   f32, f64, f16, bf16: the value rounded (never up to 1);
 *   i32, i64: the nonzero integer of the value's sign with magnitude
 *             max(1, ceil(8 |v|)): uniform over {-8..-1, 1..8} for uniform values;
 *   bool: 1; pattern: no values; complex: SPX_ERR_UNSUPPORTED.
 * dtype SPX_DTYPE_DEFAULT is f32. itype SPX_INDEX_DEFAULT is int32 when the
 * shape and entry count fit, else int64; an explicit SPX_INDEX_I32 that
 * cannot hold them is SPX_ERR_OVERFLOW. */

/* Exactly nnz_per_row distinct uniformly random columns in each row. */
SPX_API spx_status spx_gen_uniform(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t nnz_per_row,
                                   uint64_t seed, spx_dtype dtype, spx_index_type itype,
                                   spx_matrix **out);
/* R-MAT power-law graph: 2^scale vertices (scale 1..40), edge_factor * 2^scale
 * edges drawn with quadrant probabilities a, b, c (d = 1 - a - b - c; each in
 * [0, 1], a + b + c <= 1); duplicate edges combined by summing their values
 * (SPX_DUP_SUM, so nnz <= edges). a = b = c = 0 selects Graph500's
 * 0.57/0.19/0.19. No noise and no vertex relabelling: vertex 0 is the
 * heaviest; self loops are kept. SPX_INDEX_DEFAULT gives int32 when the
 * vertex and edge counts fit (the edges are first gathered as COO). */
SPX_API spx_status spx_gen_rmat(spx_ctx *ctx, int scale, int64_t edge_factor, double a, double b,
                                double c, uint64_t seed, spx_dtype dtype, spx_index_type itype,
                                spx_matrix **out);
/* Finite-difference Laplacian on an n^dims grid (dims 1, 2 or 3): 2*dims on
 * the diagonal, -1 for each neighbour (no wrap-around). Point (x, y, z) is
 * row x + n*y + n*n*z. Integer types hold these values exactly; bool 1s. */
SPX_API spx_status spx_gen_laplacian(spx_ctx *ctx, int dims, int64_t n, spx_dtype dtype,
                                     spx_index_type itype, spx_matrix **out);
/* Every entry with -lower <= j - i <= upper (lower, upper >= 0). */
SPX_API spx_status spx_gen_banded(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t lower,
                                  int64_t upper, uint64_t seed, spx_dtype dtype,
                                  spx_index_type itype, spx_matrix **out);
/* Dense br x bc blocks; each block of the grid present with probability
 * block_density. Edge blocks are clipped to the matrix. */
SPX_API spx_status spx_gen_block_sparse(spx_ctx *ctx, int64_t rows, int64_t cols, int64_t br,
                                        int64_t bc, double block_density, uint64_t seed,
                                        spx_dtype dtype, spx_index_type itype, spx_matrix **out);
/* Gaussian-like dense weights magnitude-pruned to the given sparsity (fraction
 * of zeros): the round((1 - sparsity) * rows * cols) largest magnitudes are
 * kept, as in DLMC's global magnitude pruning; ties keep the lower row-major
 * position. Weights are Irwin-Hall sums of 12 uniforms minus 6 (mean 0,
 * variance 1, within [-6, 6]), computed in integers so that every platform
 * gives the same bits. The values are the kept weights. */
SPX_API spx_status spx_gen_pruned(spx_ctx *ctx, int64_t rows, int64_t cols, double sparsity,
                                  uint64_t seed, spx_dtype dtype, spx_index_type itype,
                                  spx_matrix **out);
/* N:M structured sparsity: in each group of m consecutive columns of a row,
 * the n largest-magnitude of m Gaussian weights are kept (2:4 is n=2, m=4;
 * 0 <= n <= m, m >= 1). A last partial group of width w < m keeps min(n, w).
 * The weights are those of spx_gen_pruned with the same seed; ties keep the
 * lower column. */
SPX_API spx_status spx_gen_nm(spx_ctx *ctx, int64_t rows, int64_t cols, int n, int m,
                              uint64_t seed, spx_dtype dtype, spx_index_type itype,
                              spx_matrix **out);
/* Fill a dense matrix with uniform values in [-1, 1) (host memory), stored per
 * dtype as for the generators. Only the rows x cols elements are written.
 * Element (i, j) has its own random stream, so the values do not depend on
 * the layout, the leading dimension or the thread count. */
SPX_API spx_status spx_dense_fill_random(spx_ctx *ctx, spx_dense *D, uint64_t seed);

/* ------------------------------------------------------------------------ */
/* SpMM and SpMV                                                              */
/* ------------------------------------------------------------------------ */

/* C = alpha * op(A) * B + beta * C.
 * Shapes: op(A) is m x k, B is k x n, C is m x n (else SPX_ERR_SHAPE).
 * A: any format; every stored entry counts (BSR: the slots of stored blocks
 * inside the matrix; a pattern A's entries are 1), and duplicate COO entries
 * add their products. B and C: dense, row- or column-major, any ld, of A's
 * value type; if A is SPX_PATTERN, B and C may be any supported type (the
 * same for both). Supported value types: f32, f64, f16, bf16 (f16/bf16
 * accumulate in f32). Integer, bool and complex SpMM, and mixed value types,
 * are SPX_ERR_UNSUPPORTED. A, B and C must all be in host or all in device
 * memory, and C must not overlap B (SPX_ERR_INVALID_ARGUMENT).
 * beta == 0: C is not read (NaN or garbage in C is overwritten).
 * alpha == 0 (or k == 0): C = beta * C and B is not read, as in BLAS.
 * Otherwise IEEE arithmetic applies; alpha and beta need not be finite.
 * m == 0 or n == 0: nothing is done. Elements between a line of C and its ld
 * are never written.
 * Accuracy: the ref backend sums in double. The CPU backend sums f32, f16
 * and bf16 in f32 (alpha and beta rounded to f32) and f64 in f64, each
 * element of C by one thread in a fixed order: its results do not depend on
 * the thread count.
 * CPU backend: CSR and BSR with op none, CSC with op transpose and SELL with
 * op none run natively; other combinations convert A once internally (costing
 * a copy, kept with A until spx_matrix_touch or spx_matrix_destroy).
 * The ref and CPU backends do not accept device memory (SPX_ERR_UNSUPPORTED). */
SPX_API spx_status spx_spmm(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A,
                            const spx_dense *B, double beta, spx_dense *C);
/* y = alpha * op(A) * x + beta * y: spx_spmm with n = 1. x (k x 1) and y
 * (m x 1) are dense with one column, in either layout. */
SPX_API spx_status spx_spmv(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A,
                            const spx_dense *x, double beta, spx_dense *y);

/* ---- plans: analyse once, multiply many times ---- */

/* SpMM algorithms (CUDA backend; the CPU backends run their own kernels
 * whatever is asked). SPX_SPMM_AUTO lets the planner choose per row bin. */
typedef enum spx_spmm_alg {
    SPX_SPMM_AUTO = 0,
    SPX_SPMM_ROW_SPLIT = 1,  /* a group of threads per row, 16-byte loads */
    SPX_SPMM_WARP_ROW = 2,   /* a warp per row, coalesced index loads + shuffles */
    SPX_SPMM_BLOCK_ROW = 3,  /* several warps per row, fixed-order reduction */
    SPX_SPMM_MERGE_PATH = 4, /* equal rows+nnz work per warp, fixed-order carry fix-up */
    SPX_SPMM_SELL = 5,       /* SELL-C-sigma slices */
    SPX_SPMM_BSR = 6,        /* block rows; tensor cores for tf32/bf16/f16 precision when forced */
    SPX_SPMM_OUTER = 7,      /* outer products over k (A^T*B from CSR, A*B from CSC); atomics */
    SPX_SPMM_GATHER_TC = 8,  /* row groups densified over their column union, tensor cores */
    SPX_SPMM_TILED = 9,      /* blocks of many rows, a column tile of B held in shared memory */
    SPX_SPMM_DENSE = 10,     /* op(A) densified once per plan, dense GEMM (cuBLASLt) at the precision */
    SPX_SPMM_BAND = 11,      /* strips of consecutive rows, B rows near the diagonal held in shared memory */
    SPX_SPMM_ROW_BATCHES = 12 /* a team of 16 lanes (8 on short rows) a row and 64 columns, the row's
                                 entries staged 8, 16 or 32 at a time in shared memory, as many B row
                                 segments in flight; f32, f16 and bf16 data (f64: SPX_ERR_UNSUPPORTED),
                                 with f32 FMA on the operands as given at every precision; k_slabs > 1
                                 is refused and panel_cols ignored */
} spx_spmm_alg;
/* The number of algorithms, AUTO included: valid values are 0 to SPX_SPMM_ALG_COUNT - 1. */
#define SPX_SPMM_ALG_COUNT (SPX_SPMM_ROW_BATCHES + 1)

/* Arithmetic of the multiply. EXACT: FMA in the value type (f32 stays f32).
 * TF32/BF16/F16: tensor cores with operands rounded to that type and float
 * accumulation, where the chosen algorithm has a tensor-core kernel. At BF16
 * and F16 the CUDA backend's row kernels (ROW_SPLIT, WARP_ROW, BLOCK_ROW, and
 * AUTO's row bins from N = 64, where B exceeds the L2 cache and A holds 2 or
 * more entries a column too far from the diagonal for their B rows to stay in
 * it, without slabs or panels under 64 columns) read f32 data's B rounded to
 * that type, and A's values rounded alike, with float FMA: half the bytes per
 * gathered row of B. ROW_BATCHES, forced or AUTO's, reads B as given. */
typedef enum spx_precision {
    SPX_PRECISION_EXACT = 0,
    SPX_PRECISION_TF32 = 1,
    SPX_PRECISION_BF16 = 2,
    SPX_PRECISION_F16 = 3
} spx_precision;

typedef struct spx_spmm_options {
    spx_spmm_alg alg;          /* force one algorithm for every row (tests, benchmarks) */
    spx_precision precision;
    /* Row-length bin boundaries for the planner: bins are [0], [1, b0], (b0, b1],
     * (b1, b2], (b2, b3], (b3, inf). Zeros take the defaults 8, 32, 256, 4096. */
    int64_t bin_bounds[4];
    /* Columns of B and C processed together by the row kernels (CUDA), when
     * AUTO ends on them (not on merge path, TILED, BAND or the dense path):
     * narrow panels keep a panel's slice of B in the L2 cache, at the cost of
     * reading A once per panel. Rounded down to a power of two of 16-byte
     * vectors, 1 to 32 (f32: 4 to 128 columns). 0, -1 or N and wider: no
     * panels (on the H100 they never paid: the L2 kept enough of a large B).
     * With SPX_SPMM_TILED forced: the block's column tile, 8, 16 or 32 16-byte
     * vectors of values (0: the planner's, 8, or 16 for f32 at N >= 2048
     * where k needs chunks and the grid stays full). With SPX_SPMM_BAND
     * forced: the same widths (0: the planner's choice). */
    int64_t panel_cols;
    /* Slabs of A's columns (CUDA, AUTO and the row kernels; other forced
     * algorithms refuse a value above 1). With S slabs, each column tile of
     * B and C (128 bytes of a row, or panel_cols) is computed slab by slab:
     * entries in columns [s k / S, (s + 1) k / S) in launch s, C adding up
     * the slabs' sums (beta applies to the first), so that the B rows one
     * launch gathers stay in the L2 cache. Pays when B is several times the
     * L2 cache, rows are long and neighbouring rows share few columns (the
     * planner's rule); costs C's traffic once per slab and (S - 1) x rows
     * offsets of device memory. 0: the planner decides; 1: never; at most
     * SPX_SPMM_MAX_K_SLABS. */
    int64_t k_slabs;
} spx_spmm_options;
#define SPX_SPMM_MAX_K_SLABS 256

SPX_API const char *spx_spmm_alg_name(spx_spmm_alg alg);
SPX_API spx_status spx_spmm_alg_from_name(const char *name, spx_spmm_alg *out);
SPX_API const char *spx_precision_name(spx_precision p);
SPX_API spx_status spx_precision_from_name(const char *name, spx_precision *out);

typedef struct spx_spmm_plan spx_spmm_plan;

/* Analyse A for C = alpha * op(A) * B + beta * C with n columns of dtype
 * values. The plan keeps a reference to A (A must outlive it and not change).
 * opts may be NULL. */
SPX_API spx_status spx_spmm_plan_create(spx_ctx *ctx, spx_op op, const spx_matrix *A, int64_t n,
                                        spx_dtype dtype, const spx_spmm_options *opts,
                                        spx_spmm_plan **out);
/* Run a plan; B and C as for spx_spmm with the plan's n and dtype. A plan
 * keeps device scratch that its runs reuse: runs of one plan from different
 * contexts (threads) must not overlap in time. */
SPX_API spx_status spx_spmm_plan_execute(spx_ctx *ctx, const spx_spmm_plan *plan, double alpha,
                                         const spx_dense *B, double beta, spx_dense *C);
/* Human-readable account of what the plan runs for which rows and why. */
SPX_API const char *spx_spmm_plan_explain(const spx_spmm_plan *plan);
/* Wall time spent building the plan, in milliseconds. */
SPX_API double spx_spmm_plan_build_ms(const spx_spmm_plan *plan);
SPX_API void spx_spmm_plan_destroy(spx_spmm_plan *plan);
/* One-shot SpMM with options; plans are cached on A (dropped on spx_matrix_touch). */
SPX_API spx_status spx_spmm_ex(spx_ctx *ctx, spx_op op, double alpha, const spx_matrix *A,
                               const spx_dense *B, double beta, spx_dense *C,
                               const spx_spmm_options *opts);

static inline spx_dense spx_dense_vector(void *data, int64_t n, spx_dtype dtype, spx_memory mem)
{
    return spx_dense_make(data, n, 1, n > 0 ? n : 1, dtype, SPX_COL_MAJOR, mem);
}


/* ------------------------------------------------------------------------ */
/* SpGEMM over semirings, with masks                                         */
/* ------------------------------------------------------------------------ */

/* Built-in semirings (add monoid . multiply operator), exact definitions in
 * docs/SEMIRINGS.md:
 *  PLUS_TIMES  (+, *, identity 0)           f32 f64 i32 i64
 *  MIN_PLUS    (min, +, identity +inf/max)   f32 f64 i32 i64
 *  MAX_PLUS    (max, +, identity -inf/min)   f32 f64 i32 i64
 *  MAX_TIMES   (max, *, identity -inf/min)   f32 f64 i32 i64
 *  MIN_TIMES   (min, *, identity +inf/max)   f32 f64 i32 i64
 *  OR_AND      (or, and, identity false)     any real input (nonzero is true),
 *                                            types may differ; result bool
 *  PLUS_PAIR   (+, pair(x,y)=1, identity 0)  any real input; counts paths in the
 *                                            operands' numeric type (i64 for
 *                                            pattern/bool input)
 *  AVOS        (avos_sum, avos_product)      i32 i64 (pedigree numbers, >= -1)
 * Pattern inputs take value 1 (as the other operand's type, i64 if both are
 * pattern); otherwise A and B must hold the same value type. f16, bf16 and
 * complex operands are SPX_ERR_UNSUPPORTED for built-in semirings; a
 * semiring over a type it does not list is SPX_ERR_INVALID_ARGUMENT.
 * Integer arithmetic is checked: a sum or product that does not fit is
 * SPX_ERR_OVERFLOW naming the entry of C, never a wrapped value.
 * CUSTOM semirings run on the ref and cpu backends only. */
typedef enum spx_semiring_kind {
    SPX_SEMIRING_PLUS_TIMES = 0,
    SPX_SEMIRING_MIN_PLUS = 1,
    SPX_SEMIRING_MAX_PLUS = 2,
    SPX_SEMIRING_MAX_TIMES = 3,
    SPX_SEMIRING_MIN_TIMES = 4,
    SPX_SEMIRING_OR_AND = 5,
    SPX_SEMIRING_PLUS_PAIR = 6,
    SPX_SEMIRING_AVOS = 7,
    SPX_SEMIRING_CUSTOM = 8
} spx_semiring_kind;

/* A user-defined semiring over one value type (any type with values, f16,
 * bf16 and complex included). z, x, y point to values of that type; z never
 * aliases x or y. add must be associative and commutative with identity
 * add_identity. mul_annihilator (optional, may be NULL): a value a with
 * mul(a, y) == a for every y; when A(i,k) equals it (bytewise) the kernel may
 * take the product to be a without calling mul (add is still applied). mul
 * is always called as mul(A(i,k), B(k,j)). Pattern operands take the value
 * 1 converted to dtype. The cpu backend calls the operators from several
 * threads at once: they must be thread-safe. Return nonzero from an operator
 * to abort the product with SPX_ERR_OVERFLOW (e.g. on overflow). */
typedef struct spx_semiring {
    spx_semiring_kind kind;
    spx_dtype dtype; /* CUSTOM only: the value type of A, B and C */
    int (*add)(void *z, const void *x, const void *y, void *user);
    int (*mul)(void *z, const void *x, const void *y, void *user);
    const void *add_identity;
    const void *mul_annihilator;
    void *user;
} spx_semiring;

static inline spx_semiring spx_semiring_builtin(spx_semiring_kind kind)
{
    spx_semiring s;
    s.kind = kind; s.dtype = SPX_DTYPE_DEFAULT;
    s.add = 0; s.mul = 0; s.add_identity = 0; s.mul_annihilator = 0; s.user = 0;
    return s;
}
SPX_API const char *spx_semiring_name(spx_semiring_kind k);
SPX_API spx_status spx_semiring_from_name(const char *name, spx_semiring_kind *out);

/* The avos operators on 64-bit values (see docs/SEMIRINGS.md). avos_product
 * returns SPX_ERR_INVALID_ARGUMENT for operands below -1 or wider than bits,
 * for bits other than 32 and 64 and for a NULL out, and SPX_ERR_OVERFLOW
 * (out untouched) when the result does not fit in bits. */
SPX_API int64_t spx_avos_sum(int64_t x, int64_t y);
SPX_API spx_status spx_avos_product(int64_t x, int64_t y, int bits, int64_t *out);

typedef enum spx_mask_kind {
    SPX_MASK_NONE = 0,
    SPX_MASK_MATRIX = 1,       /* the pattern of mask.M (structural: values ignored) */
    SPX_MASK_UPPER = 2,        /* j >= i */
    SPX_MASK_STRICT_UPPER = 3, /* j > i */
    SPX_MASK_LOWER = 4,        /* j <= i */
    SPX_MASK_STRICT_LOWER = 5  /* j < i */
} spx_mask_kind;

typedef struct spx_mask {
    spx_mask_kind kind;
    const spx_matrix *M; /* SPX_MASK_MATRIX only: any format, same shape as C */
    int complement;      /* keep the entries the mask excludes instead (the
                            complement of SPX_MASK_NONE excludes everything) */
} spx_mask;

/* The ref and cpu backends are always deterministic (each row is computed
 * by one thread in k order: bit-identical for any run and thread count);
 * the mode matters to backends that can reorder sums. */
typedef enum spx_spgemm_mode {
    SPX_SPGEMM_AUTO = 0,          /* deterministic if the context is, else fast */
    SPX_SPGEMM_DETERMINISTIC = 1, /* bit-identical run to run */
    SPX_SPGEMM_FAST = 2           /* may reorder floating-point sums (and give +0 for -0) */
} spx_spgemm_mode;

typedef struct spx_spgemm_options {
    spx_op op_a, op_b;
    spx_mask mask;
    spx_spgemm_mode mode;
    /* Drop entries of the product whose reduced value equals the add identity
     * (floats by value: -0 equals 0), before accumulating. Default 0: every
     * reachable (i, j) is a structural entry, as in GraphBLAS. */
    int drop_identity;
    /* If set, the result is accum (+) T, where T is the masked product and
     * (+) the semiring's add, over the union of patterns (add(accum, T) where
     * both hold an entry); entries of accum outside the mask are kept
     * unchanged (GraphBLAS accumulate, no replace). accum may be in any
     * format and must have C's shape and value type. */
    const spx_matrix *accum;
    /* Bytes of working memory the call may use beyond inputs and output
     * (0: no limit), converted operands included. The cpu backend then uses
     * fewer threads, then processes rows in chunks; below the minimum (see
     * docs/SPGEMM.md) the call is SPX_ERR_OUT_OF_MEMORY naming it. */
    int64_t memory_budget;
} spx_spgemm_options;

/* C<mask> = [accum (+)] op(A) (+.x) op(B): a new CSR matrix with sorted
 * columns. Each C(i,j) reduces mul(op(A)(i,k), op(B)(k,j)) in increasing k.
 * A, B, mask and accum may be in any format (COO duplicates are an error:
 * no semiring combines them; for pattern-only uses they merge). The output
 * has int32 indices when A, B and accum do and its nnz fits, else int64.
 * On the cuda backend A and B may both be in device memory (the result is
 * then in device memory too), and the mask and accum in either memory; A
 * and B in different memories are SPX_ERR_INVALID_ARGUMENT. The cuda
 * backend reduces in k order (bit-identical to ref) in deterministic mode;
 * in fast mode floating-point sums, min and max may combine in any order.
 * opts may be NULL. Errors leave *C untouched. */
SPX_API spx_status spx_spgemm(spx_ctx *ctx, const spx_semiring *sr, const spx_matrix *A,
                              const spx_matrix *B, const spx_spgemm_options *opts,
                              spx_matrix **C);
/* Peak bytes of working memory spx_spgemm would use beyond inputs and output,
 * under opts' memory_budget: operand copies it must make plus the backend's
 * working memory (exact for ref and cpu; buffers that format conversions
 * free before the product starts are not counted). Fails like spx_spgemm
 * when the budget is below the minimum. */
SPX_API spx_status spx_spgemm_workspace_size(spx_ctx *ctx, const spx_semiring *sr,
                                             const spx_matrix *A, const spx_matrix *B,
                                             const spx_spgemm_options *opts, int64_t *bytes);

/* Transitive closure of a pedigree DAG under avos: repeats C = C (+) C (x) C
 * with the upper-triangle mask until nothing changes (pattern and values).
 * A must be square, upper triangular, i32 or i64 with values >= -1, any
 * format (COO without duplicates). iterations (may be NULL) receives the
 * number of squarings, the last (unchanging) one included. A value that
 * does not fit the type is SPX_ERR_OVERFLOW. On the cuda backend the
 * iterates stay in device memory; A in device memory gives C in device
 * memory. */
SPX_API spx_status spx_avos_closure(spx_ctx *ctx, const spx_matrix *A, spx_matrix **C,
                                    int *iterations);

#ifdef __cplusplus
}
#endif
#endif /* SPX_H */

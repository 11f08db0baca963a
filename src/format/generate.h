/* Internal helpers shared by the matrix generators (generate*.c): argument
 * checks, the value mapping of each dtype, and the two-pass CSR builder. */
#ifndef SPX_FORMAT_GENERATE_H
#define SPX_FORMAT_GENERATE_H

#include "format/matrix.h"

/* ---- value mapping ----
 * Generators draw a real value v (uniform in [-1, 1), or Gaussian) and store
 * it per dtype: floats round v (uniform values that would round up to 1 are
 * kept just below it, so the interval stays half-open); i32/i64 store a
 * nonzero integer of v's sign, ceil(8 |v|) (at least 1), which makes uniform
 * values uniform over {-8..-1, 1..8}; bool stores 1; pattern stores nothing. */

static inline int64_t spx__gen_int(double v)
{
    double a = 8.0 * (v < 0 ? -v : v);
    int64_t m = (int64_t)a;
    if ((double)m < a || m == 0)
        m++;
    return v < 0 ? -m : m;
}
/* Uniform in [-1, 1): exact in double (53-bit grid). */
static inline double spx__gen_sym_unit(uint64_t *state) { return 2.0 * spx__rand_unit(state) - 1.0; }
static inline float spx__gen_f32_below_one(double v)
{
    float f = (float)v;
    return f < 1.0f ? f : 0x1.fffffep-1f;
}
static inline uint16_t spx__gen_f16_below_one(double v)
{
    uint16_t h = spx__float_to_half((float)v);
    return h == 0x3c00u ? (uint16_t)0x3bffu : h;
}
static inline uint16_t spx__gen_bf16_below_one(double v)
{
    uint16_t h = spx__float_to_bf16((float)v);
    return h == 0x3f80u ? (uint16_t)0x3f7fu : h;
}

/* Store the real value v into vals[p] per the mapping (no clamping: for
 * values that are not uniform in [-1, 1), e.g. Gaussian weights). */
void spx__gen_store(void *vals, spx_dtype t, int64_t p, double v);
/* Draw n uniform values from state into vals[p, p+n) per the mapping. */
void spx__gen_uniform_values(void *vals, spx_dtype t, int64_t p, int64_t n, uint64_t *state);

/* ---- argument checks (messages start with `fn`) ---- */

/* DEFAULT -> f32; complex -> SPX_ERR_UNSUPPORTED; unknown -> SPX_ERR_INVALID_ARGUMENT. */
spx_status spx__gen_dtype(spx_ctx *ctx, const char *fn, spx_dtype dtype, spx_dtype *out);
/* Known index type and non-NULL out. */
spx_status spx__gen_common(spx_ctx *ctx, const char *fn, spx_index_type itype, spx_matrix **out);
/* A size argument >= 0. */
spx_status spx__gen_nonneg(spx_ctx *ctx, const char *fn, const char *name, int64_t v);
/* A probability-like argument in [0, 1] (NaN rejected). */
spx_status spx__gen_fraction(spx_ctx *ctx, const char *fn, const char *name, double v);
/* The index type for the result: DEFAULT -> int32 when max_value fits, else
 * int64; a forced int32 that cannot hold max_value -> SPX_ERR_OVERFLOW. */
spx_status spx__gen_itype(spx_ctx *ctx, const char *fn, spx_index_type itype, int64_t max_value,
                          spx_index_type *out);

/* ---- the CSR builder ----
 * Rows are processed in units of unit_rows consecutive rows (a block row for
 * block-sparse, else 1). Pass 1 counts the entries of every row (skipped when
 * row_nnz >= 0: every row has that many), a prefix sum gives the offsets,
 * pass 2 fills columns (sorted, unique) and values of each unit. Both passes
 * run over units in parallel; every callback must depend on its unit only, so
 * the result does not depend on the thread count. */
typedef struct spx__gen_job spx__gen_job;
struct spx__gen_job {
    const char *fn;       /* the public function, for messages */
    const char *what;     /* progress label: "generating <what>" */
    int64_t rows, cols;
    spx_dtype dtype;      /* resolved (not DEFAULT) */
    spx_index_type itype; /* as requested (DEFAULT allowed) */
    int64_t unit_rows;    /* >= 1 */
    int64_t row_nnz;      /* >= 0: fixed count per row; < 0: call count */
    /* Entries of each row of units [u0, u1) into counts[row]. */
    void (*count)(const spx__gen_job *job, int64_t u0, int64_t u1, int64_t *counts);
    /* Columns and values of the rows of units [u0, u1); offsets are set.
     * scratch: scratch_bytes of this thread's own memory. */
    void (*fill)(const spx__gen_job *job, spx_matrix *A, int64_t u0, int64_t u1, void *scratch);
    size_t scratch_bytes;
    const void *params;   /* the generator's own parameters */
};

spx_status spx__gen_build(spx_ctx *ctx, const spx__gen_job *job, spx_matrix **out);

/* body(arg, i0, i1, tid) over [0, n) in parallel tasks of `grain` items; tid
 * is the calling thread, below spx__num_threads(ctx). With `what`, progress
 * is reported between groups of tasks. */
typedef void (*spx__gen_range_fn)(void *arg, int64_t i0, int64_t i1, int tid);
void spx__gen_parallel(spx_ctx *ctx, const char *what, int64_t n, int64_t grain,
                       spx__gen_range_fn body, void *arg);

/* Write columns into A->indices[p, p+n): from an int64 list, or lo..lo+n-1. */
void spx__gen_put_cols(spx_matrix *A, int64_t p, const int64_t *cols, int64_t n);
void spx__gen_put_range(spx_matrix *A, int64_t p, int64_t lo, int64_t n);
static inline int64_t spx__gen_row_start(const spx_matrix *A, int64_t i)
{
    return spx__idx_get(A->offsets, A->itype, i);
}

/* Stream salts that keep the streams of one generator apart. */
#define SPX__GEN_SALT_BLOCKS 0x6a09e667f3bcc909ull

#endif

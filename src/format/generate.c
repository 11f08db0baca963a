/* Shared machinery of the generators: argument checks, the dtype value
 * mapping and the two-pass parallel CSR builder (count, prefix sum, fill). */
#include "format/generate.h"

#include <string.h>

#define LL(x) ((long long)(x))

/* ---- values ---- */

void spx__gen_store(void *vals, spx_dtype t, int64_t p, double v)
{
    switch (t) {
    case SPX_I32: ((int32_t *)vals)[p] = (int32_t)spx__gen_int(v); break;
    case SPX_I64: ((int64_t *)vals)[p] = spx__gen_int(v); break;
    case SPX_BOOL: ((uint8_t *)vals)[p] = 1; break;
    case SPX_PATTERN: break;
    default: spx__val_set(vals, t, p, v); break;
    }
}

#define UNIFORM_VALUES(T, CONV)                                                               \
    do {                                                                                      \
        T *d_ = (T *)vals + p;                                                                \
        for (int64_t q_ = 0; q_ < n; q_++)                                                    \
            d_[q_] = (T)CONV(spx__gen_sym_unit(state));                                       \
    } while (0)
#define AS_IS(v) (v)

void spx__gen_uniform_values(void *vals, spx_dtype t, int64_t p, int64_t n, uint64_t *state)
{
    switch (t) {
    case SPX_F32: UNIFORM_VALUES(float, spx__gen_f32_below_one); break;
    case SPX_F64: UNIFORM_VALUES(double, AS_IS); break;
    case SPX_F16: UNIFORM_VALUES(uint16_t, spx__gen_f16_below_one); break;
    case SPX_BF16: UNIFORM_VALUES(uint16_t, spx__gen_bf16_below_one); break;
    case SPX_I32: UNIFORM_VALUES(int32_t, spx__gen_int); break;
    case SPX_I64: UNIFORM_VALUES(int64_t, spx__gen_int); break;
    case SPX_BOOL:
        if (n > 0)
            memset((uint8_t *)vals + p, 1, (size_t)n);
        break;
    default: break; /* pattern */
    }
}

/* ---- argument checks ---- */

spx_status spx__gen_dtype(spx_ctx *ctx, const char *fn, spx_dtype dtype, spx_dtype *out)
{
    if (dtype == SPX_DTYPE_DEFAULT)
        dtype = SPX_F32;
    if (!spx__dtype_valid(dtype))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: invalid value type %d", fn, (int)dtype);
    if (spx__dtype_is_complex(dtype))
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "%s: complex values (%s) are not generated", fn,
                         spx_dtype_name(dtype));
    *out = dtype;
    return SPX_OK;
}

spx_status spx__gen_common(spx_ctx *ctx, const char *fn, spx_index_type itype, spx_matrix **out)
{
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (itype != SPX_INDEX_DEFAULT && itype != SPX_INDEX_I32 && itype != SPX_INDEX_I64)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: invalid index type %d", fn, (int)itype);
    return SPX_OK;
}

spx_status spx__gen_nonneg(spx_ctx *ctx, const char *fn, const char *name, int64_t v)
{
    if (v < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: %s is negative (%lld)", fn, name, LL(v));
    return SPX_OK;
}

spx_status spx__gen_fraction(spx_ctx *ctx, const char *fn, const char *name, double v)
{
    if (!(v >= 0.0 && v <= 1.0))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "%s: %s %g is outside [0, 1]", fn, name, v);
    return SPX_OK;
}

spx_status spx__gen_itype(spx_ctx *ctx, const char *fn, spx_index_type itype, int64_t max_value,
                          spx_index_type *out)
{
    if (itype == SPX_INDEX_DEFAULT)
        itype = spx__index_type_for(max_value);
    else if (itype == SPX_INDEX_I32 && max_value > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "%s: a size or entry count of %lld does not fit int32 indices; use "
                         "SPX_INDEX_I64 or SPX_INDEX_DEFAULT",
                         fn, LL(max_value));
    *out = itype;
    return SPX_OK;
}

/* ---- columns ---- */

#define PUT_COLS(T)                                                                           \
    do {                                                                                      \
        T *d_ = (T *)A->indices + p;                                                          \
        for (int64_t q_ = 0; q_ < n; q_++)                                                    \
            d_[q_] = (T)cols[q_];                                                             \
    } while (0)
#define PUT_RANGE(T)                                                                          \
    do {                                                                                      \
        T *d_ = (T *)A->indices + p;                                                          \
        for (int64_t q_ = 0; q_ < n; q_++)                                                    \
            d_[q_] = (T)(lo + q_);                                                            \
    } while (0)

void spx__gen_put_cols(spx_matrix *A, int64_t p, const int64_t *cols, int64_t n)
{
    if (A->itype == SPX_INDEX_I64)
        PUT_COLS(int64_t);
    else
        PUT_COLS(int32_t);
}

void spx__gen_put_range(spx_matrix *A, int64_t p, int64_t lo, int64_t n)
{
    if (A->itype == SPX_INDEX_I64)
        PUT_RANGE(int64_t);
    else
        PUT_RANGE(int32_t);
}

/* ---- the builder ---- */

#define UNITS_PER_TASK 64
#define PROGRESS_MIN_NNZ (INT64_C(1) << 22)
#define PROGRESS_STEPS 64
#define SERIAL_MAX_ROWS 65536 /* below this, a parallel region costs more than it saves */

/* One parallel region (starting one costs up to a millisecond on busy
 * machines); thread 0 reports progress as the shared task count advances. */
void spx__gen_parallel(spx_ctx *ctx, const char *what, int64_t n, int64_t grain,
                       spx__gen_range_fn body, void *arg)
{
    const int nt = spx__num_threads(ctx);
    const int64_t ntasks = (n + grain - 1) / grain;
    int64_t done = 0;
    (void)nt; /* only read by OpenMP */
#pragma omp parallel num_threads(nt) if (ntasks > 1)
    {
        const int tid = spx__thread_id();
        int64_t reported = 0;
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < ntasks; t++) {
            body(arg, t * grain, n - t * grain < grain ? n : t * grain + grain, tid);
            if (what) {
                int64_t d;
#pragma omp atomic capture
                d = ++done;
                if (tid == 0 && d < ntasks && d * PROGRESS_STEPS / ntasks > reported) {
                    reported = d * PROGRESS_STEPS / ntasks;
                    spx__progress(ctx, what, d, ntasks);
                }
            }
        }
    }
    if (what)
        spx__progress(ctx, what, ntasks, ntasks);
}

typedef struct {
    const spx__gen_job *job;
    int64_t *counts; /* pass 1 */
    spx_matrix *A;   /* pass 2 */
    char *scratch;
    size_t stride; /* bytes between the threads' scratch areas */
} pass_arg;

static void count_units(void *arg, int64_t u0, int64_t u1, int tid)
{
    (void)tid;
    const pass_arg *a = arg;
    a->job->count(a->job, u0, u1, a->counts);
}

static void fill_units(void *arg, int64_t u0, int64_t u1, int tid)
{
    const pass_arg *a = arg;
    a->job->fill(a->job, a->A, u0, u1,
                 a->scratch ? a->scratch + (size_t)tid * a->stride : NULL);
}

spx_status spx__gen_build(spx_ctx *ctx, const spx__gen_job *job, spx_matrix **out)
{
    const int64_t rows = job->rows, cols = job->cols;
    const int64_t nunits = rows > 0 ? (rows - 1) / job->unit_rows + 1 : 0;
    const int nt = spx__num_threads(ctx);
    int64_t *counts = NULL, nnz = 0;
    char *scratch = NULL;
    spx_matrix *A = NULL;
    spx_index_type itype = job->itype;

    /* an int32 request that cannot even hold the shape fails before any allocation */
    spx_status s = spx__gen_itype(ctx, job->fn, job->itype, rows > cols ? rows : cols, &itype);
    if (s)
        return s;
    if (job->row_nnz >= 0) {
        if (spx__mul_overflows(rows, job->row_nnz, &nnz))
            return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: %lld rows of %lld entries overflow",
                             job->fn, LL(rows), LL(job->row_nnz));
    } else {
        if ((s = spx__alloc(ctx, (void **)&counts, rows + 1, sizeof *counts, "row counts")))
            return s;
        counts[0] = 0;
        pass_arg pa = {job, counts + 1, NULL, NULL, 0};
        spx__gen_parallel(ctx, NULL, nunits, UNITS_PER_TASK, count_units, &pa);
        for (int64_t i = 0; i < rows; i++)
            if (spx__add_overflows(counts[i], counts[i + 1], &counts[i + 1])) {
                s = spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: the entry count overflows int64", job->fn);
                goto done;
            }
        nnz = counts[rows];
    }
    int64_t biggest = rows > cols ? rows : cols;
    if ((s = spx__gen_itype(ctx, job->fn, job->itype, nnz > biggest ? nnz : biggest, &itype)) ||
        (s = spx__matrix_new(ctx, SPX_CSR, rows, cols, itype, job->dtype, &A)))
        goto done;
    A->nnz = nnz;
    if ((s = spx__matrix_alloc(ctx, A)))
        goto done;
    /* whole cache lines per thread: each area as aligned as the block, none shared */
    size_t stride = (job->scratch_bytes + 63) / 64 * 64;
    if (stride && nnz > 0 &&
        (s = spx__alloc(ctx, (void **)&scratch, nt, stride, "generator scratch")))
        goto done;

#pragma omp parallel for num_threads(nt) schedule(static) if (rows > SERIAL_MAX_ROWS)
    for (int64_t i = 0; i <= rows; i++)
        spx__idx_set(A->offsets, itype, i, counts ? counts[i] : i * job->row_nnz);
    pass_arg pa = {job, NULL, A, scratch, stride};
    if (nnz > 0) /* (fill callbacks may assume some entries and their scratch) */
        spx__gen_parallel(ctx, nnz >= PROGRESS_MIN_NNZ ? job->what : NULL, nunits, UNITS_PER_TASK,
                          fill_units, &pa);
    A->checked_version = A->version;
done:
    spx__free(counts);
    spx__free(scratch);
    if (s) {
        spx_matrix_destroy(A);
        return s;
    }
    *out = A;
    return SPX_OK;
}

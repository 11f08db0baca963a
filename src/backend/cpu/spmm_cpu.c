/* CPU SpMM driver: choose how A is read (natively, or a converted copy kept
 * with A), bring B into the compute type if needed, split the work into
 * chunks of rows (block rows, slices) of similar cost, and run the kernels of
 * spmm_cpu_kernels.c over them with OpenMP. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/spmm_cpu.h"
#include "format/dense.h"
#include "format/matrix.h"

#include <string.h>

#ifdef SPX_HAVE_OPENMP
#include <omp.h>
#endif

/* ---- A as rows of op(A), for the combinations without a native kernel ---- */

/* The rows of op(A) in CSR shape, cached on A (see spx__matrix_attach). Either
 * a converted canonical matrix (owner) or, for COO, A's entries grouped by
 * row in storage order with duplicates kept (so that their products add, also
 * for pattern matrices). */
typedef struct cpu_rows {
    const void *offsets, *indices, *values;
    spx_matrix *owner;
    void *own_offsets, *own_indices, *own_values;
} cpu_rows;

static void cpu_rows_release(void *p)
{
    cpu_rows *r = p;
    if (!r)
        return;
    spx_matrix_destroy(r->owner);
    spx__free(r->own_offsets);
    spx__free(r->own_indices);
    spx__free(r->own_values);
    spx__free(r);
}

/* Group COO entries by row (by_cols: by column, giving the rows of A^T):
 * a stable counting sort. */
static spx_status coo_group(spx_ctx *ctx, const spx_matrix *A, bool by_cols, cpu_rows *r)
{
    spx_index_type t = A->itype;
    const void *key = by_cols ? A->indices : A->row_indices;
    const void *other = by_cols ? A->row_indices : A->indices;
    int64_t nrows = by_cols ? A->cols : A->rows, nnz = A->nnz;
    size_t isz = spx__index_size(t), vsz = spx_dtype_size(A->dtype);
    int64_t *next = NULL;
    spx_status s = spx__alloc_zero(ctx, (void **)&next, nrows + 1, sizeof *next, "COO row counts");
    if (!s)
        s = spx__alloc(ctx, &r->own_offsets, nrows + 1, isz, "COO row offsets");
    if (!s)
        s = spx__alloc(ctx, &r->own_indices, nnz, isz, "COO grouped indices");
    if (!s && vsz)
        s = spx__alloc(ctx, &r->own_values, nnz, vsz, "COO grouped values");
    if (s) {
        spx__free(next);
        return s;
    }
    for (int64_t p = 0; p < nnz; p++)
        next[spx__idx_get(key, t, p) + 1]++;
    for (int64_t i = 0; i < nrows; i++)
        next[i + 1] += next[i];
    for (int64_t i = 0; i <= nrows; i++)
        spx__idx_set(r->own_offsets, t, i, next[i]);
    for (int64_t p = 0; p < nnz; p++) {
        int64_t q = next[spx__idx_get(key, t, p)]++;
        spx__idx_set(r->own_indices, t, q, spx__idx_get(other, t, p));
        if (vsz)
            memcpy((char *)r->own_values + q * vsz, (const char *)A->values + p * vsz, vsz);
    }
    spx__free(next);
    r->offsets = r->own_offsets;
    r->indices = r->own_indices;
    r->values = r->own_values;
    return SPX_OK;
}

/* Cache keys: the rows of A and the rows of A^T. */
static const char rows_of_a_key, rows_of_at_key;

static spx_status rows_of_op(spx_ctx *ctx, const spx_matrix *A, spx_op op, const cpu_rows **out)
{
    const void *key = op == SPX_OP_NONE ? &rows_of_a_key : &rows_of_at_key;
    const cpu_rows *cached = spx__matrix_attachment(A, key);
    if (cached) {
        *out = cached;
        return SPX_OK;
    }
    cpu_rows *r = NULL;
    spx_status s = spx__alloc_zero(ctx, (void **)&r, 1, sizeof *r, "SpMM converted matrix");
    if (s)
        return s;
    if (A->format == SPX_COO) {
        s = coo_group(ctx, A, op == SPX_OP_TRANSPOSE, r);
    } else {
        /* rows of A: CSR of A; rows of A^T: CSC of A */
        s = spx_matrix_convert(ctx, A, op == SPX_OP_NONE ? SPX_CSR : SPX_CSC, NULL, &r->owner);
        if (!s) {
            r->offsets = r->owner->offsets;
            r->indices = r->owner->indices;
            r->values = r->owner->values;
        }
    }
    if (!s)
        s = spx__matrix_attach(ctx, A, key, r, cpu_rows_release);
    if (s) {
        cpu_rows_release(r);
        return s;
    }
    spx__log(ctx, SPX_LOG_DEBUG, "SpMM: %s matrix with op %s converted to rows of op(A) and cached",
             spx_format_name(A->format), op == SPX_OP_NONE ? "none" : "transpose");
    *out = r;
    return SPX_OK;
}

/* Point the job at A: natively (CSR op none, CSC op transpose, BSR op none,
 * SELL op none) or at the cached rows of op(A). */
static spx_status prepare_a(spx_ctx *ctx, const spx_spmm_args *a, cpu_spmm_job *job, cpu_kind *kind)
{
    const spx_matrix *A = a->A;
    bool none = a->op == SPX_OP_NONE;
    job->offsets = A->offsets;
    job->indices = A->indices;
    job->values = A->values;
    if ((A->format == SPX_CSR && none) || (A->format == SPX_CSC && !none)) {
        *kind = CPU_KIND_CSR;
        job->units = a->m;
    } else if (A->format == SPX_BSR && none) {
        *kind = CPU_KIND_BSR;
        job->units = spx__bsr_block_rows(A);
        job->br = A->br;
        job->bc = A->bc;
    } else if (A->format == SPX_SELL && none) {
        *kind = CPU_KIND_SELL;
        job->units = A->nslices;
        job->sell_c = A->sell_c;
        job->perm = A->perm;
        job->row_lengths = A->row_lengths;
    } else {
        const cpu_rows *r = NULL;
        spx_status s = rows_of_op(ctx, A, a->op, &r);
        if (s)
            return s;
        *kind = CPU_KIND_CSR;
        job->units = a->m;
        job->offsets = r->offsets;
        job->indices = r->indices;
        job->values = r->values;
    }
    return SPX_OK;
}

static cpu_load load_for(spx_dtype a, bool f64)
{
    switch (a) {
    case SPX_F64: return CPU_LOAD_F64;
    case SPX_F16: return CPU_LOAD_F16;
    case SPX_BF16: return CPU_LOAD_BF16;
    case SPX_PATTERN: return f64 ? CPU_LOAD_ONE_F64 : CPU_LOAD_ONE_F32;
    default: return CPU_LOAD_F32;
    }
}

/* ---- B in the compute type, row-major ---- */

/* Use B in place when it already is row-major (or a single column) of the
 * compute type; else copy it into *packed (k x n, row-major). */
static spx_status prepare_b(spx_ctx *ctx, const spx_spmm_args *a, spx_dtype ct, int nthreads,
                            cpu_spmm_job *job, void **packed)
{
    const spx_dense *B = a->B;
    if (B->dtype == ct && (B->layout == SPX_ROW_MAJOR || a->n == 1)) {
        job->B = B->data;
        job->ldb = B->layout == SPX_ROW_MAJOR ? B->ld : 1;
        return SPX_OK;
    }
    int64_t kn, k = a->k, n = a->n;
    if (spx__mul_overflows(k, n, &kn))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "SpMM: B of %lld x %lld elements overflows",
                         (long long)k, (long long)n);
    size_t esz = spx_dtype_size(ct);
    spx_status s = spx__alloc(ctx, packed, kn, esz, "SpMM: B in row-major compute type");
    if (s)
        return s;
    void *dst = *packed;
    (void)nthreads;
#pragma omp parallel for num_threads(nthreads) schedule(static) if (kn > 65536)
    for (int64_t r = 0; r < k; r++)
        for (int64_t c = 0; c < n; c++) {
            double v = spx__val_get(B->data, B->dtype, spx__dense_offset(B, r, c));
            if (ct == SPX_F64)
                ((double *)dst)[r * n + c] = v;
            else
                ((float *)dst)[r * n + c] = (float)v;
        }
    job->B = dst;
    job->ldb = n;
    return SPX_OK;
}

/* ---- splitting the work ---- */

/* First unit u in [0, units] whose start weight offsets[u] + u reaches target
 * (offsets NULL: weight u). Weights count stored entries (blocks, slots) plus
 * one per unit for its share of C. */
static int64_t unit_at(const void *offsets, spx_index_type t, int64_t units, int64_t target)
{
    int64_t lo = 0, hi = units;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int64_t w = (offsets ? spx__idx_get(offsets, t, mid) : 0) + mid;
        if (w < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int spx__cpu_threads(const spx_ctx *ctx)
{
#ifdef SPX_HAVE_OPENMP
    return ctx->num_threads > 0 ? ctx->num_threads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}

static int thread_id(void)
{
#ifdef SPX_HAVE_OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Chunks per thread: enough for dynamic scheduling to even out skewed rows. */
#define CHUNKS_PER_THREAD 16
/* Below this many multiply-adds a single thread is faster than waking others. */
#define PARALLEL_MIN_WORK 32768

static void run_chunks(const cpu_spmm_job *job, cpu_spmm_kernel kernel, spx_index_type t,
                       int nthreads, char *scratch, size_t scratch_bytes)
{
    const void *offsets = job->offsets;
    const int64_t units = job->units;
    const int64_t total = (offsets ? spx__idx_get(offsets, t, units) : 0) + units;
    int nt = (double)total * (double)job->n < PARALLEL_MIN_WORK ? 1 : nthreads;
    int64_t nchunks = (int64_t)nt * CHUNKS_PER_THREAD;
    if (nchunks > units)
        nchunks = units;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        char *mine = scratch ? scratch + (size_t)thread_id() * scratch_bytes : NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t u0 = unit_at(offsets, t, units, (int64_t)((__int128)total * c / nchunks));
            int64_t u1 = unit_at(offsets, t, units, (int64_t)((__int128)total * (c + 1) / nchunks));
            kernel(job, u0, u1, mine);
        }
    }
}

spx_status spx__cpu_spmm(spx_ctx *ctx, const spx_spmm_args *a)
{
    const spx_matrix *A = a->A;
    const spx_dense *C = a->C;
    if (A->memory != SPX_MEM_HOST || a->B->memory != SPX_MEM_HOST || C->memory != SPX_MEM_HOST)
        return spx__fail(
            ctx, SPX_ERR_UNSUPPORTED,
            "SpMM operands in device memory need the CUDA backend (this context uses cpu)");
    const spx_dtype ct = C->dtype == SPX_F64 ? SPX_F64 : SPX_F32; /* compute type */
    const bool row_major = C->layout == SPX_ROW_MAJOR;
    cpu_spmm_job job = {.m = a->m,
                        .k = a->k,
                        .n = a->n,
                        .C = C->data,
                        .c_rs = row_major ? C->ld : 1,
                        .c_cs = row_major ? 1 : C->ld,
                        .c_dtype = C->dtype,
                        .alpha = a->alpha,
                        .beta = a->beta};
    const int nthreads = spx__cpu_threads(ctx);
    if (a->alpha == 0) { /* C = beta * C; neither A nor B is read */
        if (a->beta != 1) {
            job.units = a->m;
            run_chunks(&job, spx__cpu_spmm_scale_kernel(ct == SPX_F64), A->itype, nthreads, NULL,
                       0);
        }
        return SPX_OK;
    }
    cpu_kind kind;
    void *packed = NULL;
    char *scratch = NULL;
    size_t scratch_bytes = 0;
    spx_status s = prepare_a(ctx, a, &job, &kind);
    if (!s)
        s = prepare_b(ctx, a, ct, nthreads, &job, &packed);
    if (!s && kind == CPU_KIND_BSR) {
        scratch_bytes = (size_t)job.br * CPU_PANEL_BYTES;
        s = spx__alloc(ctx, (void **)&scratch, nthreads, scratch_bytes, "SpMM block accumulators");
    }
    if (!s)
        run_chunks(&job, spx__cpu_spmm_kernel(kind, A->itype, load_for(A->dtype, ct == SPX_F64)),
                   A->itype, nthreads, scratch, scratch_bytes);
    spx__free(scratch);
    spx__free(packed);
    return s;
}

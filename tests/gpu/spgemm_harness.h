/* The GPU SpGEMM test's harness: the backend under test and the ref oracle,
 * operands in host or device memory, running one product on both and
 * comparing the results (bit for bit, or within a bound in fast mode).
 *
 * Fast-mode bound for floating-point sums (PLUS_TIMES): the reference is the
 * ref backend's k-order result R; any other order of the same products
 * differs from it by at most about L * u * Q, where Q is the sum of the
 * products' magnitudes (the same product of |A| and |B|) and L the number of
 * terms; 64 * u * Q (u = 2^-24 or 2^-53) covers reorderings of thousands of
 * terms by a wide margin (rounding errors of random-sign sums grow like
 * sqrt(L)), while a missing, doubled or misplaced product moves its entry by
 * the size of one product, far more for the value ranges used. */
#ifndef SPX_TEST_GPU_SPGEMM_HARNESS_H
#define SPX_TEST_GPU_SPGEMM_HARNESS_H

#include "semiring_oracle.h"

#include <float.h>

static spx_ctx *g_ctx; /* the backend under test */
static spx_ctx *g_ref; /* the ref backend */
static int g_cuda;     /* the backend under test is cuda: device operands too */
static int g_quick;    /* SPX_TEST_QUICK: smaller inputs (compute-sanitizer) */
static int g_verbose;  /* SPX_GPU_TEST_VERBOSE: a line per product */
static uint64_t g_rng;
static int64_t g_products, g_compared;

static int64_t pick(int64_t full, int64_t quick) { return g_quick ? quick : full; }
static uint64_t next_seed(void) { return t_rand(&g_rng); }

/* ---- operands ---- */

/* A device copy on cuda (NULL elsewhere: callers skip device cases). */
static spx_matrix *to_device(const spx_matrix *X)
{
    spx_matrix *D = NULL;
    if (!g_cuda || !X)
        return NULL;
    CHECK_OK(g_ctx, spx_matrix_to_device(g_ctx, X, &D));
    return D;
}

/* A host copy of a result (the result itself when it is on the host). */
static spx_matrix *host_of(spx_matrix *C, int *owned)
{
    spx_matrix_info in;
    *owned = 0;
    if (!C || spx_matrix_info_get(C, &in) != SPX_OK || in.memory == SPX_MEM_HOST)
        return C;
    spx_matrix *H = NULL;
    CHECK_OK(g_ctx, spx_matrix_to_host(g_ctx, C, &H));
    *owned = H != NULL;
    return H;
}

/* X with its values replaced by their magnitudes (host CSR of f32/f64). */
static spx_matrix *magnitudes(const spx_matrix *X)
{
    spx_matrix *Y = NULL;
    spx_matrix_info in;
    spx_matrix_arrays ar;
    if (spx_matrix_copy(g_ref, X, &Y) != SPX_OK)
        return NULL;
    spx_matrix_info_get(Y, &in);
    spx_matrix_arrays_get(Y, &ar);
    for (int64_t p = 0; ar.values && p < in.nnz; p++) {
        if (in.dtype == SPX_F32)
            ((float *)ar.values)[p] = fabsf(((float *)ar.values)[p]);
        else if (in.dtype == SPX_F64)
            ((double *)ar.values)[p] = fabs(((double *)ar.values)[p]);
    }
    return Y;
}

/* ---- comparing results ---- */

typedef enum { CMP_BITS, CMP_VALUE, CMP_BOUND } cmp_kind;

static double value_at(const void *v, spx_dtype t, int64_t p)
{
    return t == SPX_F32 ? (double)((const float *)v)[p] : ((const double *)v)[p];
}

/* C against R: same shape, types and pattern; values bit for bit
 * (CMP_BITS), equal as numbers (CMP_VALUE: -0 equals 0) or within 64 u
 * times the magnitude Q (CMP_BOUND). Prints the first difference. */
static int same_result(const char *what, spx_matrix *Cin, const spx_matrix *R, cmp_kind how,
                       const spx_matrix *Q)
{
    int owned = 0, ok = 1;
    spx_matrix *C = host_of(Cin, &owned);
    spx_matrix_info c, r, q;
    spx_matrix_arrays ca, ra, qa;
    if (!C || !R) {
        CHECK(0, "%s: a result is missing", what);
        return 0;
    }
    spx_matrix_info_get(C, &c);
    spx_matrix_info_get(R, &r);
    spx_matrix_arrays_get(C, &ca);
    spx_matrix_arrays_get(R, &ra);
    if (c.format != SPX_CSR || c.rows != r.rows || c.cols != r.cols || c.nnz != r.nnz ||
        c.dtype != r.dtype || c.index_type != r.index_type) {
        CHECK(0, "%s: %s %lldx%lld nnz %lld %s %s, ref %lldx%lld nnz %lld %s %s", what,
              spx_format_name(c.format), (long long)c.rows, (long long)c.cols, (long long)c.nnz,
              spx_dtype_name(c.dtype), c.index_type == SPX_INDEX_I64 ? "i64" : "i32",
              (long long)r.rows, (long long)r.cols, (long long)r.nnz, spx_dtype_name(r.dtype),
              r.index_type == SPX_INDEX_I64 ? "i64" : "i32");
        ok = 0;
    }
    if (ok && spx_matrix_check(g_ref, C) != SPX_OK) {
        CHECK(0, "%s: the result is not a valid CSR matrix: %s", what, spx_last_error(g_ref));
        ok = 0;
    }
    if (Q) {
        spx_matrix_info_get(Q, &q);
        spx_matrix_arrays_get(Q, &qa);
    }
    const size_t vsz = spx_dtype_size(r.dtype);
    const double u = r.dtype == SPX_F32 ? (double)FLT_EPSILON / 2 : DBL_EPSILON / 2;
    for (int64_t i = 0; ok && i <= r.rows; i++)
        if (t_idx(ca.offsets, c.index_type, i) != t_idx(ra.offsets, r.index_type, i)) {
            CHECK(0, "%s: row %lld starts at %lld, ref at %lld", what, (long long)i,
                  (long long)t_idx(ca.offsets, c.index_type, i),
                  (long long)t_idx(ra.offsets, r.index_type, i));
            ok = 0;
        }
    for (int64_t p = 0; ok && p < r.nnz; p++) {
        int64_t jc = t_idx(ca.indices, c.index_type, p), jr = t_idx(ra.indices, r.index_type, p);
        int same = jc == jr;
        if (same && how == CMP_BITS)
            same = memcmp((const char *)ca.values + p * vsz, (const char *)ra.values + p * vsz,
                          vsz) == 0;
        else if (same && how == CMP_VALUE)
            same = value_at(ca.values, r.dtype, p) == value_at(ra.values, r.dtype, p);
        else if (same) { /* CMP_BOUND: Q has R's pattern */
            double x = value_at(ca.values, r.dtype, p), y = value_at(ra.values, r.dtype, p);
            double bound = 64 * u * (Q ? fabs(value_at(qa.values, q.dtype, p)) : fabs(y));
            same = isfinite(x) && fabs(x - y) <= bound;
        }
        if (!same) {
            tval x = t_load(ca.values, r.dtype, p), y = t_load(ra.values, r.dtype, p);
            CHECK(0, "%s: entry %lld: column %lld value %.17g/%lld, ref column %lld value %.17g/%lld",
                  what, (long long)p, (long long)jc, x.f, (long long)x.i, (long long)jr, y.f,
                  (long long)y.i);
            ok = 0;
        }
    }
    g_compared++;
    if (owned)
        spx_matrix_destroy(C);
    return ok;
}

/* ---- running products ---- */

/* C = spx_spgemm on the backend under test; the status it returned. */
static spx_status product(const spx_semiring *sr, const spx_matrix *A, const spx_matrix *B,
                          const spx_spgemm_options *o, spx_matrix **C)
{
    *C = NULL;
    g_products++;
    return spx_spgemm(g_ctx, sr, A, B, o, C);
}

/* The same product on both backends (A, B, M, accum as given to the one
 * under test; the ref gets host copies) compared with how; Q: magnitudes
 * for CMP_BOUND. Returns the reference (caller frees) or NULL. */
static spx_matrix *both(const char *what, const spx_semiring *sr, const spx_matrix *A,
                        const spx_matrix *B, const spx_spgemm_options *o, const spx_matrix *hA,
                        const spx_matrix *hB, const spx_spgemm_options *ho, cmp_kind how,
                        const spx_matrix *Q)
{
    spx_matrix *C = NULL, *R = NULL;
    spx_status sr_ref = spx_spgemm(g_ref, sr, hA ? hA : A, hB ? hB : B, ho ? ho : o, &R);
    spx_status st = product(sr, A, B, o, &C);
    if (g_verbose)
        fprintf(stderr, "  %s: %s / ref %s\n", what, spx_status_name(st), spx_status_name(sr_ref));
    if (st != sr_ref) {
        CHECK(0, "%s: %s (%s), ref %s (%s)", what, spx_status_name(st), spx_last_error(g_ctx),
              spx_status_name(sr_ref), spx_last_error(g_ref));
    } else if (st == SPX_OK) {
        same_result(what, C, R, how, Q);
    } else {
        CHECK(strcmp(spx_last_error(g_ctx), spx_last_error(g_ref)) == 0,
              "%s: message \"%s\", ref \"%s\"", what, spx_last_error(g_ctx), spx_last_error(g_ref));
    }
    spx_matrix_destroy(C);
    return R;
}

/* Device memory held by the context's pool (0 off cuda). */
static int64_t pool_in_use(void)
{
    spx_memory_stats ms = {0, 0, 0};
    if (g_cuda)
        spx_ctx_memory_stats(g_ctx, &ms);
    return ms.in_use;
}

#endif

/* Dense operands for the GPU SpMM test: host buffers with guard zones, padded
 * leading dimensions, misaligned starts and NaN poison; their device mirrors;
 * and the error measures against a float64 reference.
 *
 * Buffer layout, in elements:
 *   [GUARD sentinel][offset sentinel][outer lines of ld elements][GUARD sentinel]
 * The library sees only the lines; everything else, and the ld padding of each
 * line, must come back bit-identical. */
#ifndef SPX_TEST_GPU_OPERANDS_H
#define SPX_TEST_GPU_OPERANDS_H

#include "core/core.h"
#include "testutil.h"

#ifdef SPX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define TBUF_GUARD 16

/* Two NaN flavours: B's padding and C's padding/poison differ, so a kernel
 * copying B's padding into C's is caught by the bitwise check. */
typedef enum { SENT_B = 0, SENT_C = 1 } sentinel;

typedef struct {
    spx_dtype dtype;
    spx_layout layout;
    int64_t rows, cols, ld, offset;
    int64_t inner, outer;
    size_t esize;
    int64_t total;       /* elements in the whole buffer */
    sentinel sent;
    unsigned char *init; /* contents before a run */
    unsigned char *work; /* what the library reads or writes (host runs), results fetched back */
    void *dev;           /* device mirror of the whole buffer (CUDA), or NULL */
} tbuf;

/* Print a failure with the seed, counted like CHECK. */
#define TFAIL(...)                                                                            \
    do {                                                                                      \
        test_failures++;                                                                      \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                  \
        fprintf(stderr, __VA_ARGS__);                                                         \
        fprintf(stderr, " (SPX_TEST_SEED=%llu)\n", (unsigned long long)test_seed);            \
    } while (0)

#ifdef SPX_HAVE_CUDA
/* Check a CUDA runtime call made by the test itself. */
static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    TFAIL("CUDA call %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return 0;
}

/* Copy bytes of host memory into *dev, allocating it first if NULL. */
static int dev_upload(void **dev, const void *host, size_t bytes)
{
    if (!*dev && !cuda_ok(cudaMalloc(dev, bytes ? bytes : 1), "cudaMalloc"))
        return 0;
    return cuda_ok(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
#endif

static void sentinel_store(unsigned char *p, spx_dtype t, sentinel s)
{
    switch (t) {
    case SPX_F32: {
        uint32_t v = s == SENT_B ? 0xFFFFFFFFu : 0x7FC0BEEFu;
        memcpy(p, &v, 4);
        break;
    }
    case SPX_F64: {
        uint64_t v = s == SENT_B ? 0xFFFFFFFFFFFFFFFFull : 0x7FF80000DEADBEEFull;
        memcpy(p, &v, 8);
        break;
    }
    case SPX_F16: {
        uint16_t v = s == SENT_B ? 0xFFFFu : 0x7E5Au;
        memcpy(p, &v, 2);
        break;
    }
    case SPX_BF16: {
        uint16_t v = s == SENT_B ? 0xFFFFu : 0x7FDAu;
        memcpy(p, &v, 2);
        break;
    }
    default: /* non-float operands only appear in bad-input checks */
        memset(p, s == SENT_B ? 0xFF : 0xA5, spx_dtype_size(t));
        break;
    }
}

static double elem_load(const unsigned char *p, spx_dtype t)
{
    switch (t) {
    case SPX_F32: { float v; memcpy(&v, p, 4); return v; }
    case SPX_F64: { double v; memcpy(&v, p, 8); return v; }
    case SPX_F16: { uint16_t v; memcpy(&v, p, 2); return spx__half_to_float(v); }
    case SPX_BF16: { uint16_t v; memcpy(&v, p, 2); return spx__bf16_to_float(v); }
    default: return NAN;
    }
}

/* Store v rounded to nearest in type t (f16/bf16 through float: v is already
 * a float-exact value in this test's use). */
static void elem_store(unsigned char *p, spx_dtype t, double v)
{
    switch (t) {
    case SPX_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case SPX_F64: memcpy(p, &v, 8); break;
    case SPX_F16: { uint16_t h = spx__float_to_half((float)v); memcpy(p, &h, 2); break; }
    case SPX_BF16: { uint16_t h = spx__float_to_bf16((float)v); memcpy(p, &h, 2); break; }
    default: memset(p, 0, spx_dtype_size(t)); break;
    }
}

/* Element offset of (i, j) inside the whole buffer. */
static int64_t tbuf_index(const tbuf *t, int64_t i, int64_t j)
{
    int64_t o = t->layout == SPX_ROW_MAJOR ? i * t->ld + j : j * t->ld + i;
    return TBUF_GUARD + t->offset + o;
}

/* rows x cols of dtype; ld = max(inner, 1) + pad; data starts offset elements
 * past the head guard. Everything starts as sentinel. Returns 0 if out of memory. */
static int tbuf_init(tbuf *t, int64_t rows, int64_t cols, spx_dtype dtype, spx_layout layout,
                     int64_t pad, int64_t offset, sentinel s)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->layout = layout;
    t->rows = rows;
    t->cols = cols;
    t->inner = layout == SPX_ROW_MAJOR ? cols : rows;
    t->outer = layout == SPX_ROW_MAJOR ? rows : cols;
    t->ld = (t->inner > 1 ? t->inner : 1) + pad;
    t->offset = offset;
    t->esize = spx_dtype_size(dtype);
    t->sent = s;
    t->total = 2 * TBUF_GUARD + offset + t->outer * t->ld;
    t->init = malloc((size_t)t->total * t->esize);
    t->work = malloc((size_t)t->total * t->esize);
    if (!t->init || !t->work) {
        TFAIL("out of host memory for a %lld x %lld operand", (long long)rows, (long long)cols);
        free(t->init);
        free(t->work);
        t->init = t->work = NULL;
        return 0;
    }
    for (int64_t e = 0; e < t->total; e++)
        sentinel_store(t->init + (size_t)e * t->esize, dtype, s);
    memcpy(t->work, t->init, (size_t)t->total * t->esize);
    return 1;
}

static void tbuf_free(tbuf *t)
{
    free(t->init);
    free(t->work);
#ifdef SPX_HAVE_CUDA
    if (t->dev)
        cuda_ok(cudaFree(t->dev), "cudaFree");
#endif
    memset(t, 0, sizeof *t);
}

/* Uniform values in [-1, 1) in the valid region of init (and work). */
static void tbuf_fill_random(tbuf *t, uint64_t *rng)
{
    for (int64_t i = 0; i < t->rows; i++)
        for (int64_t j = 0; j < t->cols; j++)
            elem_store(t->init + (size_t)tbuf_index(t, i, j) * t->esize, t->dtype,
                       2.0 * spx__rand_unit(rng) - 1.0);
    memcpy(t->work, t->init, (size_t)t->total * t->esize);
}

static double tbuf_get(const tbuf *t, const unsigned char *buf, int64_t i, int64_t j)
{
    return elem_load(buf + (size_t)tbuf_index(t, i, j) * t->esize, t->dtype);
}

/* The valid region of init as a tight row-major float64 array. */
static void tbuf_to_f64(const tbuf *t, double *out)
{
    int64_t w = t->cols;
    for (int64_t i = 0; i < t->rows; i++)
        for (int64_t j = 0; j < t->cols; j++)
            out[i * w + j] = tbuf_get(t, t->init, i, j);
}

/* The descriptor the library sees: the host work buffer or the device mirror. */
static spx_dense tbuf_dense(const tbuf *t, spx_memory mem)
{
    unsigned char *base = mem == SPX_MEM_DEVICE ? (unsigned char *)t->dev : t->work;
    return spx_dense_make(base + (size_t)(TBUF_GUARD + t->offset) * t->esize, t->rows, t->cols,
                          t->ld, t->dtype, t->layout, mem);
}

/* Restore the pre-run contents where the library will see them. Returns 0 on
 * a CUDA failure (already reported). */
static int tbuf_reset(tbuf *t, spx_memory mem)
{
    size_t bytes = (size_t)t->total * t->esize;
    if (mem == SPX_MEM_HOST) {
        memcpy(t->work, t->init, bytes);
        return 1;
    }
#ifdef SPX_HAVE_CUDA
    if (!t->dev && !cuda_ok(cudaMalloc(&t->dev, bytes), "cudaMalloc"))
        return 0;
    return cuda_ok(cudaMemcpy(t->dev, t->init, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
#else
    return 0;
#endif
}

/* Bring the device mirror back into work (no-op for host runs). */
static int tbuf_fetch(tbuf *t, spx_memory mem)
{
    if (mem == SPX_MEM_HOST)
        return 1;
#ifdef SPX_HAVE_CUDA
    return cuda_ok(cudaMemcpy(t->work, t->dev, (size_t)t->total * t->esize, cudaMemcpyDeviceToHost),
                   "cudaMemcpy D2H");
#else
    (void)t;
    return 0;
#endif
}

/* First element in [from, to) whose bits differ between work and init, or -1. */
static int64_t first_diff(const tbuf *t, int64_t from, int64_t to)
{
    size_t es = t->esize;
    if (to <= from || !memcmp(t->work + (size_t)from * es, t->init + (size_t)from * es,
                              (size_t)(to - from) * es))
        return -1;
    for (int64_t e = from; e < to; e++)
        if (memcmp(t->work + (size_t)e * es, t->init + (size_t)e * es, es))
            return e;
    return -1;
}

/* Whether anything outside the valid region changed: the guards, the offset
 * gap and the ld padding of every line. *first gets the first such element. */
static int tbuf_outside_changed(const tbuf *t, int64_t *first)
{
    int64_t start = TBUF_GUARD + t->offset, end = start + t->outer * t->ld;
    if ((*first = first_diff(t, 0, start)) >= 0)
        return 1;
    for (int64_t o = 0; o < t->outer && t->ld > t->inner; o++)
        if ((*first = first_diff(t, start + o * t->ld + t->inner, start + (o + 1) * t->ld)) >= 0)
            return 1;
    return (*first = first_diff(t, end, t->total)) >= 0;
}

static int tbuf_unchanged(const tbuf *t)
{
    return memcmp(t->work, t->init, (size_t)t->total * t->esize) == 0;
}

static const char *tbuf_where(const tbuf *t, int64_t e, char *buf, size_t n)
{
    int64_t o = e - TBUF_GUARD - t->offset;
    if (e < TBUF_GUARD + t->offset)
        snprintf(buf, n, "head guard element %lld", (long long)e);
    else if (o >= t->outer * t->ld)
        snprintf(buf, n, "tail guard element %lld", (long long)(o - t->outer * t->ld));
    else
        snprintf(buf, n, "padding of %s %lld at %lld",
                 t->layout == SPX_ROW_MAJOR ? "row" : "column", (long long)(o / t->ld),
                 (long long)(o % t->ld));
    return buf;
}

/* A reference result R (tight row-major m x n doubles) and ||Q||_F, the
 * root-sum-square of the terms that make up each element of C (see
 * spmm_harness.h): the size R has when its sums do not cancel. */
typedef struct {
    double *c;
    double qnorm;
} tref;

/* How far a result is from the reference. */
typedef struct {
    double fro;        /* ||C - R||_F / max(||R||_F, ||Q||_F) (absolute when both are 0) */
    double maxrel;     /* max |C - R| / max(max |R|, rms Q) (likewise) */
    int64_t nonfinite; /* NaN or Inf elements of C */
    int64_t wi, wj;    /* the first non-finite element, else the worst one (tbuf_locate) */
    double got, want;
} terr;

/* Errors of the valid region of work against ref: the aggregates, in
 * parallel. wi/wj/got/want are filled by tbuf_locate, for failure reports. */
static terr tbuf_compare(const tbuf *t, const tref *R)
{
    const double *ref = R->c;
    terr r = {0, 0, 0, -1, -1, 0, 0};
    double num = 0, den = 0, maxd = 0, maxr = 0;
    int64_t nonfinite = 0;
    const unsigned char *base = t->work + (size_t)(TBUF_GUARD + t->offset) * t->esize;
    const int row_major = t->layout == SPX_ROW_MAJOR;
#pragma omp parallel for reduction(+ : num, den, nonfinite) reduction(max : maxd, maxr)
    for (int64_t o = 0; o < t->outer; o++)
        for (int64_t q = 0; q < t->inner; q++) {
            double c = elem_load(base + (size_t)(o * t->ld + q) * t->esize, t->dtype);
            double w = row_major ? ref[o * t->cols + q] : ref[q * t->cols + o];
            if (!isfinite(c) || !isfinite(w)) {
                nonfinite++;
                continue;
            }
            double d = fabs(c - w);
            num += d * d;
            den += w * w;
            maxd = d > maxd ? d : maxd;
            maxr = fabs(w) > maxr ? fabs(w) : maxr;
        }
    r.nonfinite = nonfinite;
    if (nonfinite) {
        r.fro = r.maxrel = INFINITY;
        return r;
    }
    int64_t count = t->rows * t->cols;
    double q2 = R->qnorm * R->qnorm, qrms = count > 0 ? R->qnorm / sqrt((double)count) : 0;
    den = den > q2 ? den : q2;
    maxr = maxr > qrms ? maxr : qrms;
    r.fro = den > 0 ? sqrt(num / den) : sqrt(num);
    r.maxrel = maxr > 0 ? maxd / maxr : maxd;
    return r;
}

/* The first non-finite element, else the one furthest from the reference. */
static void tbuf_locate(const tbuf *t, const tref *R, terr *r)
{
    const double *ref = R->c;
    double maxd = -1;
    for (int64_t i = 0; i < t->rows; i++)
        for (int64_t j = 0; j < t->cols; j++) {
            double c = tbuf_get(t, t->work, i, j), w = ref[i * t->cols + j];
            int bad = !isfinite(c) || !isfinite(w);
            if (bad || fabs(c - w) > maxd) {
                maxd = bad ? INFINITY : fabs(c - w);
                r->wi = i;
                r->wj = j;
                r->got = c;
                r->want = w;
                if (bad)
                    return;
            }
        }
}

#endif

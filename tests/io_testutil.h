/* Helpers shared by the I/O tests (test_io.c, test_io_files.c). */
#ifndef SPX_IO_TESTUTIL_H
#define SPX_IO_TESTUTIL_H

#include "core/core.h"
#include "io/io.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>

#define BANNER "%%MatrixMarket matrix coordinate real general\n"

static spx_ctx *ctx;
static char tmpdir[64];

/* ---- helpers ---- */

static inline const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 512, "%.63s/%.400s", tmpdir, name);
    return b;
}

static inline spx_status read_text(const char *text, const spx_read_options *o, spx_matrix **A)
{
    return spx_matrix_read_buffer(ctx, text, strlen(text), "mtx", "t.mtx", o, A);
}

static inline spx_read_options opts_of(spx_format f, spx_dtype t)
{
    spx_read_options o = {0};
    o.format = f;
    o.dtype = t;
    return o;
}

/* Reading text must fail with status st and a message containing needle. */
static inline void expect_fail(const char *kind, const char *text, size_t len, const spx_read_options *o,
                        spx_status st, const char *needle, int line)
{
    spx_matrix *A = NULL;
    spx_status s = spx_matrix_read_buffer(ctx, text, len, kind, "t.in", o, &A);
    if (s != st || !strstr(spx_last_error(ctx), needle) || A) {
        test_failures++;
        fprintf(stderr, "FAIL test_io.c:%d: got %s \"%s\", expected %s with \"%s\"\n", line,
                spx_status_name(s), spx_last_error(ctx), spx_status_name(st), needle);
    }
    spx_matrix_destroy(A);
}
#define EXPECT_MTX(text, st, needle) expect_fail("mtx", text, strlen(text), NULL, st, needle, __LINE__)
#define EXPECT_MTX_OPT(text, o, st, needle) expect_fail("mtx", text, strlen(text), o, st, needle, __LINE__)
#define EXPECT_SMTX(text, needle) expect_fail("smtx", text, strlen(text), NULL, SPX_ERR_PARSE, needle, __LINE__)

/* Order-independent summary of a matrix: positions hash and value sums. */
typedef struct {
    int64_t rows, cols, nnz;
    uint64_t posh;
    double sum, abssum, wsum, imsum;
} summary;

static inline summary summarize(const spx_matrix *A)
{
    summary r = {0};
    spx_matrix *C = NULL;
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_COO, NULL, &C));
    if (!C)
        return r;
    spx_matrix_info in;
    spx_matrix_arrays ar;
    spx_matrix_info_get(C, &in);
    spx_matrix_arrays_get(C, &ar);
    r.rows = in.rows, r.cols = in.cols, r.nnz = in.nnz;
    const uint64_t m61 = (1ull << 61) - 1;
    for (int64_t k = 0; k < in.nnz; k++) {
        uint64_t i = (uint64_t)spx__idx_get(ar.row_indices, in.index_type, k) + 1;
        uint64_t j = (uint64_t)spx__idx_get(ar.indices, in.index_type, k) + 1;
        r.posh = (uint64_t)(((__uint128_t)r.posh + (__uint128_t)i * j % m61 * j) % m61);
        double re = spx__val_get(ar.values, in.dtype, k);
        double im = in.dtype == SPX_C128 ? ((double *)ar.values)[2 * k + 1]
                    : in.dtype == SPX_C64 ? ((float *)ar.values)[2 * k + 1] : 0;
        r.sum += re, r.abssum += fabs(re), r.wsum += (double)i * re, r.imsum += im;
    }
    spx_matrix_destroy(C);
    return r;
}

/* Two matrices hold the same arrays bit for bit. */
static inline bool same_matrix(const spx_matrix *A, const spx_matrix *B)
{
    spx_matrix_info a, b;
    spx_matrix_arrays x, y;
    spx_matrix_info_get(A, &a), spx_matrix_info_get(B, &b);
    spx_matrix_arrays_get(A, &x), spx_matrix_arrays_get(B, &y);
    a.owns_data = b.owns_data = 0;
    if (memcmp(&a, &b, sizeof a) != 0)
        return false;
    size_t isz = a.index_type == SPX_INDEX_I64 ? 8 : 4, vsz = spx_dtype_size(a.dtype);
    int64_t noff = a.format == SPX_CSR ? a.rows + 1 : a.format == SPX_CSC ? a.cols + 1
                   : a.format == SPX_BSR ? (a.rows + a.block_rows - 1) / a.block_rows + 1
                   : a.format == SPX_SELL ? a.nslices + 1 : 0;
    int64_t nidx = a.format == SPX_BSR ? a.nblocks : a.format == SPX_SELL ? a.sell_slots : a.nnz;
    int64_t nval = a.format == SPX_SELL ? a.sell_slots : a.nnz;
    int64_t nperm = a.format == SPX_SELL ? a.nslices * a.sell_c : 0;
    return (!noff || !memcmp(x.offsets, y.offsets, (size_t)noff * isz)) &&
           (!nidx || !memcmp(x.indices, y.indices, (size_t)nidx * isz)) &&
           (a.format != SPX_COO || !nidx || !memcmp(x.row_indices, y.row_indices, (size_t)nidx * isz)) &&
           (!vsz || !nval || !memcmp(x.values, y.values, (size_t)nval * vsz)) &&
           (!nperm || (!memcmp(x.perm, y.perm, (size_t)nperm * isz) &&
                       !memcmp(x.row_lengths, y.row_lengths, (size_t)nperm * isz)));
}

static inline char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    if (b && fread(b, 1, *n, f) != *n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static inline void spit(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "write %s", path);
    if (f)
        fclose(f);
}

/* A random COO with distinct positions in random order and random values
 * of type t (any bits except NaN, whose payload text does not keep). */
static inline spx_matrix *random_coo(int64_t rows, int64_t cols, int64_t nnz, spx_dtype t, spx_index_type it, uint64_t *st)
{
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_matrix_create_coo(ctx, rows, cols, nnz, it, t, &A));
    if (!A)
        return NULL;
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(A, &ar);
    int64_t total = rows * cols, *pos = malloc((size_t)(total + 1) * sizeof *pos);
    for (int64_t p = 0; p < total; p++)
        pos[p] = p;
    size_t vs = spx_dtype_size(t);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t q = k + (int64_t)spx__rand_below(st, (uint64_t)(total - k)), p = pos[q];
        pos[q] = pos[k];
        spx__idx_set(ar.row_indices, it, k, p / cols);
        spx__idx_set(ar.indices, it, k, p % cols);
        if (!vs)
            continue;
        unsigned char *v = (unsigned char *)ar.values + k * (int64_t)vs;
        for (size_t b = 0; b < vs; b++)
            v[b] = (unsigned char)spx__splitmix64(st);
        for (int c = 0; c < (spx__dtype_is_complex(t) ? 2 : 1); c++) {
            size_t part = spx__dtype_is_complex(t) ? vs / 2 : vs;
            if (t == SPX_BOOL)
                v[0] &= 1;
            else if (spx__dtype_is_int(t))
                break;
            else if (part == 2 && (v[1] & (t == SPX_F16 ? 0x7c : 0x7f)) == (t == SPX_F16 ? 0x7c : 0x7f))
                v[1] &= 0xbf; /* f16 / bf16 NaN or inf: clear an exponent bit */
            else if (part == 4 && isnan(((float *)v)[c]))
                ((float *)v)[c] = k % 2 ? INFINITY : -0.0f;
            else if (part == 8 && isnan(((double *)v)[c]))
                ((double *)v)[c] = k % 2 ? -INFINITY : -0.0;
        }
    }
    free(pos);
    return A;
}

/* A context and a fresh temporary folder for the files a test writes. */
static void io_test_setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/spx_test_io_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot create a temporary folder: %s\n", strerror(errno));
        exit(1);
    }
    CHECK_OK(NULL, spx_ctx_create(&ctx));
    spx_ctx_set_progress(ctx, 0);
}

static void io_test_teardown(void)
{
    spx_ctx_destroy(ctx);
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlink(tmp_path(e->d_name));
    if (d)
        closedir(d);
    rmdir(tmpdir);
}

#endif

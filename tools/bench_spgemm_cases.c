/* spx bench spgemm: the products of a run (generated matrices, the data
 * folder's graphs/ and suitesparse/ files, a rectangular pruned layer and a
 * DLMC layer as A A^T), loading them as f32 CSR with int32 indices on the
 * host and the device, and the pedigree of the closure timing. */
#ifdef SPX_HAVE_CUDA
#include "bench_spgemm.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The .mtx files of DATA/sub, sorted, appended as cases. */
static int add_folder(const char *data, const char *sub, sg_case *cases, int n, int max)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%.3000s/%s", data, sub);
    DIR *d = opendir(dir);
    if (!d)
        return n;
    char *names[256];
    int nn = 0;
    for (struct dirent *e; (e = readdir(d)) && nn < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0 && (names[nn] = strdup(e->d_name)))
            nn++;
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], cmp_name);
    for (int i = 0; i < nn; i++) {
        if (n < max) {
            sg_case *c = &cases[n++];
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%s/%.150s", sub, names[i]);
            snprintf(c->path, sizeof c->path, "%.3000s/%.1000s", dir, names[i]);
        }
        free(names[i]);
    }
    return n;
}

int sg_default_cases(const char *data, bool all, sg_case *cases, int max)
{
    int n = 0;
    sg_case gen[] = {
        {.name = "laplacian 3D 100^3", .gen = "laplacian3d", .p1 = 100},
        {.name = "uniform 1M x 1M, 8 per row", .gen = "uniform", .p1 = 1000000, .p2 = 8},
        {.name = "rmat scale 16, edge factor 16", .gen = "rmat", .p1 = 16, .p2 = 16},
        {.name = "pruned 2048 x 8192 at 90% (A A^T)", .gen = "pruned", .p1 = 2048, .p2 = 8192,
         .x1 = 0.9},
    };
    for (size_t g = 0; g < sizeof gen / sizeof gen[0] && n < max; g++)
        cases[n++] = gen[g];
    if (!data)
        return n;
    n = add_folder(data, "graphs", cases, n, max);
    if (all)
        n = add_folder(data, "suitesparse", cases, n, max);
    char path[4096];
    snprintf(path, sizeof path,
             "%.3000s/dnn/dlmc/transformer_magnitude_0.9/"
             "body_decoder_layer_0_ffn_conv1_fully_connected.smtx",
             data);
    struct stat st;
    if (n < max && stat(path, &st) == 0) {
        sg_case *c = &cases[n++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "dlmc transformer 0.9 ffn_conv1 (A A^T)");
        snprintf(c->path, sizeof c->path, "%s", path);
    }
    return n;
}

void sg_mat_free(sg_mat *M)
{
    if (M->dB != M->dA)
        spx_matrix_destroy(M->dB);
    spx_matrix_destroy(M->dA);
    if (M->B != M->A)
        spx_matrix_destroy(M->B);
    spx_matrix_destroy(M->A);
    memset(M, 0, sizeof *M);
}

static bool spx_ok(spx_ctx *ctx, spx_status s, const char *what, char *msg)
{
    if (s == SPX_OK)
        return true;
    snprintf(msg, SG_MSG, "%s: %s (%s)", what, spx_last_error(ctx), spx_status_name(s));
    return false;
}

bool sg_load(sg_bench *b, const sg_case *c, sg_mat *M, char *msg)
{
    spx_ctx *ctx = b->ctx;
    spx_matrix *X = NULL, *A = NULL;
    spx_status s;
    memset(M, 0, sizeof *M);
    if (c->path[0]) {
        spx_read_options ro = {0};
        ro.seed = b->o.seed;
        s = spx_matrix_read(ctx, c->path, &ro, &X);
    } else if (!strcmp(c->gen, "laplacian3d")) {
        s = spx_gen_laplacian(ctx, 3, c->p1, SPX_F32, SPX_INDEX_I32, &X);
    } else if (!strcmp(c->gen, "uniform")) {
        s = spx_gen_uniform(ctx, c->p1, c->p1, c->p2, b->o.seed, SPX_F32, SPX_INDEX_I32, &X);
    } else if (!strcmp(c->gen, "rmat")) {
        s = spx_gen_rmat(ctx, (int)c->p1, c->p2, 0, 0, 0, b->o.seed, SPX_F32, SPX_INDEX_I32, &X);
    } else {
        s = spx_gen_pruned(ctx, c->p1, c->p2, c->x1, b->o.seed, SPX_F32, SPX_INDEX_I32, &X);
    }
    if (!spx_ok(ctx, s, "loading", msg))
        return false;
    /* f32 CSR with int32 indices (pattern files get ones; complex ones are refused) */
    s = spx_matrix_astype(ctx, X, SPX_F32, SPX_INDEX_I32, &A);
    spx_matrix_destroy(X);
    if (!spx_ok(ctx, s, "converting to f32 with int32 indices", msg))
        return false;
    spx_matrix_info in;
    spx_matrix_info_get(A, &in);
    if (in.format != SPX_CSR) {
        X = A;
        s = spx_matrix_convert(ctx, X, SPX_CSR, NULL, &A);
        spx_matrix_destroy(X);
        if (!spx_ok(ctx, s, "converting to CSR", msg))
            return false;
        spx_matrix_info_get(A, &in);
    }
    M->A = A;
    M->B = A;
    if (in.rows != in.cols || !strcmp(c->gen, "pruned") || strstr(c->name, "A A^T")) {
        if (!spx_ok(ctx, spx_matrix_transpose(ctx, A, &M->B), "transposing", msg))
            goto fail;
    }
    spx_matrix_info ib;
    spx_matrix_info_get(M->B, &ib);
    M->m = in.rows;
    M->k = in.cols;
    M->n = ib.cols;
    M->nnz_a = in.nnz;
    M->nnz_b = ib.nnz;
    spx_matrix_arrays aa, ab;
    spx_matrix_arrays_get(M->A, &aa);
    spx_matrix_arrays_get(M->B, &ab);
    const int32_t *bp = ab.offsets, *ac = aa.indices;
    M->products = 0;
    for (int64_t p = 0; p < in.nnz; p++)
        M->products += (double)(bp[ac[p] + 1] - bp[ac[p]]);
    if (!spx_ok(ctx, spx_matrix_to_device(ctx, M->A, &M->dA), "copying A to the device", msg))
        goto fail;
    M->dB = M->dA;
    if (M->B != M->A &&
        !spx_ok(ctx, spx_matrix_to_device(ctx, M->B, &M->dB), "copying B to the device", msg)) {
        M->dB = NULL;
        goto fail;
    }
    return true;
fail:
    sg_mat_free(M);
    return false;
}

/* n individuals in 16 generations of consecutive indices (parents in the
 * next generation, near the child's place in it, so that lines stay local
 * as in real pedigrees); each parent is known with probability 0.6; sexes
 * are random: the diagonal holds -1 for males and 1 for females (the parity
 * convention of docs/SEMIRINGS.md), A(i, father) = 2, A(i, mother) = 3.
 * Upper triangular, i64; about 1.2^g known ancestors g generations back. */
spx_status sg_pedigree(spx_ctx *ctx, int64_t n, uint64_t seed, spx_matrix **out)
{
    const int64_t gen = (n + 15) / 16;
    uint8_t *female = malloc((size_t)(n > 0 ? n : 1));
    spx_matrix *A = NULL;
    spx_status s = female ? spx_matrix_create_csr(ctx, n, n, 3 * n, SPX_INDEX_I64, SPX_I64, &A)
                          : SPX_ERR_OUT_OF_MEMORY;
    if (s) {
        free(female);
        return s;
    }
    uint64_t r = seed;
    for (int64_t i = 0; i < n; i++)
        female[i] = (uint8_t)(mix(&r) & 1);
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(A, &ar);
    int64_t *ptr = ar.offsets, *col = ar.indices, *val = ar.values, q = 0;
    for (int64_t i = 0; i < n; i++) {
        ptr[i] = q;
        col[q] = i;
        val[q++] = female[i] ? 1 : -1;
        const int64_t first = (i / gen + 1) * gen;
        int64_t par[2] = {-1, -1};
        for (int sex = 0; sex <= 1 && first < n; sex++) {
            if (mix(&r) % 10 >= 6)
                continue; /* unknown parent */
            for (int tries = 0; tries < 8; tries++) {
                int64_t j = first + i % gen + (int64_t)(mix(&r) % 17) - 8;
                j = j < first ? first : j >= n ? n - 1 : j;
                if (female[j] == sex) {
                    par[sex] = j;
                    break;
                }
            }
        }
        int lo = par[0] < par[1] ? 0 : 1; /* columns in order */
        for (int x = 0; x < 2; x++) {
            int sex = x == 0 ? lo : 1 - lo;
            if (par[sex] >= 0) {
                col[q] = par[sex];
                val[q++] = sex ? 3 : 2;
            }
        }
    }
    ptr[n] = q;
    free(female);
    spx_matrix *C = NULL; /* the final entry count, exact */
    s = spx_matrix_wrap_csr(ctx, n, n, q, ptr, col, val, SPX_INDEX_I64, SPX_I64, SPX_MEM_HOST, &C);
    if (!s)
        s = spx_matrix_copy(ctx, C, out);
    spx_matrix_destroy(C);
    spx_matrix_destroy(A);
    return s;
}

#endif

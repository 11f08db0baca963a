/* CPU SpGEMM timing: C = A * A (plus_times f32) for a uniform random
 * 1M x 1M matrix with 8 entries per row and the 3D Laplacian on a 100^3
 * grid, at the thread counts given, median of several runs after a warm-up,
 * and a check that every thread count gives the same bytes.
 *
 *   cmake --build build --target spx_static
 *   cc -O2 -std=c11 -fopenmp -Iinclude bench/spgemm_bench.c build/libspx.a -lm -o spgemm_bench
 *   ./spgemm_bench [threads...]            (default: 1 2)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spx.h"

#define RUNS 5

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* n x n, exactly per_row distinct uniform columns in each row, values in [-1, 1). */
static spx_matrix *uniform(spx_ctx *ctx, int32_t n, int per_row)
{
    spx_matrix *A = NULL;
    if (spx_matrix_create_csr(ctx, n, n, (int64_t)n * per_row, SPX_INDEX_I32, SPX_F32, &A))
        return NULL;
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(A, &ar);
    int32_t *off = ar.offsets, *col = ar.indices;
    float *val = ar.values;
    uint64_t s = 42;
    for (int32_t i = 0; i <= n; i++)
        off[i] = i * per_row;
    for (int32_t i = 0; i < n; i++) {
        int32_t *c = col + (int64_t)i * per_row;
        for (int q = 0; q < per_row; q++) {
            int fresh;
            do {
                c[q] = (int32_t)(next(&s) % (uint64_t)n);
                fresh = 1;
                for (int r = 0; r < q; r++)
                    fresh &= c[r] != c[q];
            } while (!fresh);
        }
        qsort(c, (size_t)per_row, sizeof *c, cmp_i32);
    }
    for (int64_t p = 0; p < (int64_t)n * per_row; p++)
        val[p] = (float)((double)(next(&s) >> 11) * 0x1.0p-52 - 1.0);
    return A;
}

/* The 7-point Laplacian on a g^3 grid: 6 on the diagonal, -1 per neighbour. */
static spx_matrix *laplacian3d(spx_ctx *ctx, int32_t g)
{
    int32_t n = g * g * g;
    int64_t nnz = 7 * (int64_t)n - 6 * (int64_t)g * g;
    spx_matrix *A = NULL;
    if (spx_matrix_create_csr(ctx, n, n, nnz, SPX_INDEX_I32, SPX_F32, &A))
        return NULL;
    spx_matrix_arrays ar;
    spx_matrix_arrays_get(A, &ar);
    int32_t *off = ar.offsets, *col = ar.indices;
    float *val = ar.values;
    int64_t p = 0;
    for (int32_t z = 0; z < g; z++)
        for (int32_t y = 0; y < g; y++)
            for (int32_t x = 0; x < g; x++) {
                int32_t i = (z * g + y) * g + x;
                off[i] = (int32_t)p;
                int32_t nb[7] = {z > 0 ? i - g * g : -1, y > 0 ? i - g : -1, x > 0 ? i - 1 : -1, i,
                                 x < g - 1 ? i + 1 : -1, y < g - 1 ? i + g : -1,
                                 z < g - 1 ? i + g * g : -1};
                for (int k = 0; k < 7; k++)
                    if (nb[k] >= 0) {
                        col[p] = nb[k];
                        val[p++] = nb[k] == i ? 6.0f : -1.0f;
                    }
            }
    off[n] = (int32_t)p;
    return A;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int same(const spx_matrix *X, const spx_matrix *Y)
{
    spx_matrix_info a, b;
    spx_matrix_arrays u, v;
    spx_matrix_info_get(X, &a);
    spx_matrix_info_get(Y, &b);
    spx_matrix_arrays_get(X, &u);
    spx_matrix_arrays_get(Y, &v);
    size_t isz = a.index_type == SPX_INDEX_I64 ? 8 : 4;
    return a.nnz == b.nnz && a.index_type == b.index_type &&
           memcmp(u.offsets, v.offsets, (size_t)(a.rows + 1) * isz) == 0 &&
           memcmp(u.indices, v.indices, (size_t)a.nnz * isz) == 0 &&
           memcmp(u.values, v.values, (size_t)a.nnz * 4) == 0;
}

static void bench(spx_ctx *ctx, const char *name, const spx_matrix *A, const int *threads,
                  int nthreads)
{
    spx_matrix_info in;
    spx_matrix_arrays ar;
    spx_matrix_info_get(A, &in);
    spx_matrix_arrays_get(A, &ar);
    const int32_t *off = ar.offsets, *col = ar.indices;
    int64_t products = 0;
    for (int64_t p = 0; p < in.nnz; p++)
        products += off[col[p] + 1] - off[col[p]];
    spx_semiring sr = spx_semiring_builtin(SPX_SEMIRING_PLUS_TIMES);
    spx_matrix *first = NULL;
    for (int t = 0; t < nthreads; t++) {
        spx_ctx_set_num_threads(ctx, threads[t]);
        double times[RUNS];
        spx_matrix *C = NULL;
        int64_t ws = 0;
        spx_spgemm_workspace_size(ctx, &sr, A, A, NULL, &ws);
        for (int r = -1; r < RUNS; r++) { /* r = -1: warm-up */
            spx_matrix_destroy(C);
            C = NULL;
            double t0 = now();
            spx_status s = spx_spgemm(ctx, &sr, A, A, NULL, &C);
            double dt = now() - t0;
            if (s) {
                fprintf(stderr, "%s: %s\n", name, spx_last_error(ctx));
                exit(1);
            }
            if (r >= 0)
                times[r] = dt;
        }
        qsort(times, RUNS, sizeof times[0], cmp_double);
        spx_matrix_info c;
        spx_matrix_info_get(C, &c);
        double med = times[RUNS / 2];
        printf("%-22s threads %2d  median %8.3f s (min %.3f)  nnz(C) %10lld  products %10lld  "
               "%6.1f Mproducts/s  %5.2f GFLOP/s  workspace %.1f MiB%s\n",
               name, threads[t], med, times[0], (long long)c.nnz, (long long)products,
               (double)products / med * 1e-6, 2.0 * (double)products / med * 1e-9,
               (double)ws / (1 << 20), first && !same(first, C) ? "  RESULT DIFFERS" : "");
        if (!first)
            first = C;
        else
            spx_matrix_destroy(C);
    }
    spx_matrix_destroy(first);
}

int main(int argc, char **argv)
{
    int threads[16] = {1, 2}, nthreads = 2;
    if (argc > 1) {
        nthreads = 0;
        for (int a = 1; a < argc && nthreads < 16; a++)
            threads[nthreads++] = atoi(argv[a]);
    }
    spx_ctx *ctx = NULL;
    if (spx_ctx_create(&ctx) || spx_ctx_set_backend(ctx, SPX_BACKEND_CPU))
        return 1;
    spx_matrix *U = uniform(ctx, 1000000, 8), *L = laplacian3d(ctx, 100);
    if (!U || !L)
        return 1;
    bench(ctx, "uniform 1M x 1M, 8/row", U, threads, nthreads);
    bench(ctx, "laplacian3d 100^3", L, threads, nthreads);
    spx_matrix_destroy(U);
    spx_matrix_destroy(L);
    spx_ctx_destroy(ctx);
    return 0;
}

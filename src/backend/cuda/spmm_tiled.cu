// TILED SpMM for matrices whose rows are dense enough that neighbouring rows
// share most rows of B (pruned weights: a few thousand columns, 2-50 % dense).
// Merge path and the row kernels read one B row segment through L2 per entry
// and are L2-bound there; here a block owns TILED_ROWS rows and a tile of
// G x V columns and walks k in chunks: each chunk of B (KC rows of the tile)
// is copied to shared memory with cp.async while the warps use the previous
// one, so B crosses L2 once per block instead of once per entry.
//
// A sub-group of G lanes owns RL rows of the block; for each it keeps a window
// of the next G entries in registers (one per lane) and per chunk takes the
// window's entries whose column falls in the chunk (columns are sorted, so
// they are consecutive). Each row's entries are added in column order: the
// result is bit-exact from run to run. Exact arithmetic on CUDA cores.
#include <limits.h>

#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

#define TILED_ROWS 32                 /* rows per block */
#define TILED_STAGE_BYTES (32 * 1024) /* one chunk of B; two in flight */
#define TILED_THREADS 256

namespace {

template <typename T> struct tiled_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t m, k;
    dense_ops<T> d;
    int vec_loads; // B and C may be accessed with 16-byte vectors
};

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Copy rows [kr0, kr0 + KC) x columns [c0, c0 + G*V) of B into a stage laid
// out as KC rows of G 16-byte vectors; rows past k and columns past n read as
// zeros. Asynchronous when B allows 16-byte accesses, else element by element.
template <typename T, int V, int G>
__device__ __forceinline__ void load_chunk(T *stage, const tiled_params<T> &p, int64_t kr0, int64_t c0)
{
    constexpr int KC = TILED_STAGE_BYTES / (G * 16);
    for (int e = threadIdx.x; e < KC * G; e += TILED_THREADS) {
        const int r = e / G, cv = e % G;
        const int64_t kr = kr0 + r, cc = c0 + (int64_t)cv * V;
        const int64_t left = kr < p.k ? p.d.n - cc : 0;
        const int cnt = left >= V ? V : (left > 0 ? (int)left : 0);
        T *dst = stage + r * (G * V) + cv * V;
        const T *src = p.d.B + (cnt ? kr * p.d.ldb + cc : 0);
        if (p.vec_loads) {
            cp_async16(dst, src, cnt * (int)sizeof(T));
        } else {
            typename acc_of<T>::type tmp[V];
            load_partial<T, V>(src, cnt, tmp);
#pragma unroll
            for (int t = 0; t < V; t++)
                dst[t] = from_acc<T>(tmp[t]);
        }
    }
}

// The window of G entries of a row starting at entry w (one per lane):
// column INT_MAX and value 0 past the row's end.
template <typename T>
__device__ __forceinline__ void load_window(const tiled_params<T> &p, int64_t w, int64_t end, int glane, int &col,
                                            typename acc_of<T>::type &val)
{
    const int64_t i = w + glane;
    col = i < end ? p.colidx[i] : INT_MAX;
    val = i < end ? a_value(p.vals, i) : typename acc_of<T>::type(0);
}

template <typename T, int V, int G>
__global__ void __launch_bounds__(TILED_THREADS) tiled_kernel(const tiled_params<T> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int S = 32 / G;                                  // rows a warp works on at once
    constexpr int RL = TILED_ROWS / (TILED_THREADS / 32 * S); // rows per sub-group
    constexpr int TN = G * V;                                  // columns per block
    constexpr int KC = TILED_STAGE_BYTES / (TN * (int)sizeof(T));
    constexpr int STAGE = (KC + 1) * TN; // elements per stage: KC rows of B, then a row of zeros
    constexpr int U = SPX_SPMM_IN_FLIGHT;
    static_assert(RL >= 1 && TILED_ROWS % (TILED_THREADS / 32 * S) == 0, "rows per block");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const stages = reinterpret_cast<T *>(smem_raw);

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, glane = lane & (G - 1), sub = lane / G;
    const unsigned gmask = G == 32 ? SPX_FULL_MASK : ((1u << G) - 1) << (sub * G);
    const int64_t c0 = (int64_t)blockIdx.y * TN, col0 = c0 + (int64_t)glane * V;
    const int64_t row0 = (int64_t)blockIdx.x * TILED_ROWS + (int64_t)(warp * S + sub) * RL;
    // slots past a row's entries in this chunk read the zero row, times -0: exact no-ops
    for (int e = threadIdx.x; e < 2 * TN; e += TILED_THREADS)
        stages[(e / TN) * STAGE + KC * TN + e % TN] = from_acc<T>(A(0));

    A acc[RL][V];
    int64_t pos[RL], end[RL], wstart[RL]; // next entry, row end, first entry of the window
    int wcol[RL], ncol[RL];               // the window (entries wstart + lane) and the one after it
    A wval[RL], nval[RL];
#pragma unroll
    for (int r = 0; r < RL; r++) {
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[r][t] = A(0);
        pos[r] = end[r] = 0;
        if (row0 + r < p.m) {
            pos[r] = p.rowptr[row0 + r];
            end[r] = p.rowptr[row0 + r + 1];
        }
        wstart[r] = pos[r];
        load_window(p, pos[r], end[r], glane, wcol[r], wval[r]);
        load_window(p, pos[r] + G, end[r], glane, ncol[r], nval[r]);
    }

    const int64_t nchunks = (p.k + KC - 1) / KC;
    load_chunk<T, V, G>(stages, p, 0, c0);
    cp_async_commit();
    for (int64_t c = 0; c < nchunks; c++) {
        if (c + 1 < nchunks) {
            load_chunk<T, V, G>(stages + ((c + 1) & 1) * STAGE, p, (c + 1) * KC, c0);
            cp_async_commit();
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const T *bs = stages + (c & 1) * STAGE + glane * V;
        const int k0 = (int)(c * KC);
        const int64_t k1 = c * KC + KC;
#pragma unroll
        for (int r = 0; r < RL; r++) {
            for (;;) {
                // the window's entries in this chunk: lanes [first, first + n)
                const int first = (int)(pos[r] - wstart[r]);
                const unsigned in = __ballot_sync(SPX_FULL_MASK, glane >= first && wcol[r] < k1) & gmask;
                const int n = __popc(in);
                const int jmax = (int)__reduce_max_sync(SPX_FULL_MASK, (unsigned)n);
                for (int j0 = 0; j0 < jmax; j0 += U) {
                    A b[U][V], vj[U];
#pragma unroll
                    for (int u = 0; u < U; u++) {
                        const int j = j0 + u, src = (first + j) & (G - 1);
                        const int cj = __shfl_sync(SPX_FULL_MASK, wcol[r], src, G);
                        const A v = __shfl_sync(SPX_FULL_MASK, wval[r], src, G);
                        vj[u] = j < n ? v : A(-0.0);
                        load_plain<T, V>(bs + (j < n ? cj - k0 : KC) * TN, b[u]);
                    }
#pragma unroll
                    for (int u = 0; u < U; u++)
#pragma unroll
                        for (int t = 0; t < V; t++)
                            acc[r][t] = fma(vj[u], b[u][t], acc[r][t]);
                }
                pos[r] += n;
                // window used up and the row goes on: move to the next one (already
                // loaded), fetch the one after; it may still hold entries of this chunk
                const bool more = pos[r] == wstart[r] + G && pos[r] < end[r];
                if (more) {
                    wstart[r] = pos[r];
                    wcol[r] = ncol[r];
                    wval[r] = nval[r];
                    load_window(p, pos[r] + G, end[r], glane, ncol[r], nval[r]);
                }
                if (!__any_sync(SPX_FULL_MASK, more))
                    break;
            }
        }
        __syncthreads(); // the stage is refilled two chunks on
    }
    const int count = p.d.n - col0 >= V ? V : (p.d.n - col0 > 0 ? (int)(p.d.n - col0) : 0);
#pragma unroll
    for (int r = 0; r < RL; r++)
        if (row0 + r < p.m && count > 0)
            store_epilogue<T, V>(p.d.C + (row0 + r) * p.d.ldc + col0, count, acc[r], p.d.alpha, p.d.beta,
                                 p.vec_loads != 0);
}

template <typename T, int V, int G> cudaError_t launch_g(const tiled_params<T> &p, int64_t n, cudaStream_t st)
{
    const int smem = 2 * (TILED_STAGE_BYTES + G * 16); /* two stages, each with its zero row */
    cudaError_t e = cudaFuncSetAttribute(tiled_kernel<T, V, G>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    const int64_t gx = (p.m + TILED_ROWS - 1) / TILED_ROWS, gy = (n + G * V - 1) / (G * V);
    if (gx > 0x7fffffff || gy > 65535)
        return cudaErrorInvalidConfiguration;
    tiled_kernel<T, V, G><<<dim3((unsigned)gx, (unsigned)gy), TILED_THREADS, smem, st>>>(p);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t launch_t(const spx_cuda_csr *A, int64_t tn, const spx_cuda_dense_args *d)
{
    tiled_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.m = A->rows;
    p.k = A->cols;
    p.d = dense_ops_from<T>(d);
    p.vec_loads = d->vec > 1;
    switch (tn / V) {
    case 8: return launch_g<T, V, 8>(p, d->n, d->stream);
    case 16: return launch_g<T, V, 16>(p, d->n, d->stream);
    case 32: return launch_g<T, V, 32>(p, d->n, d->stream);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

extern "C" int64_t spx__cuda_tiled_rows(void) { return TILED_ROWS; }

extern "C" cudaError_t spx__cuda_launch_tiled(const spx_cuda_csr *A, int64_t tn, const spx_cuda_dense_args *d)
{
    if (A->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    /* the shared-memory stages are always laid out in 16-byte vectors */
    switch (d->dtype) {
    case SPX_F32: return launch_t<float, 4>(A, tn, d);
    case SPX_F64: return launch_t<double, 2>(A, tn, d);
    case SPX_F16: return launch_t<__half, 8>(A, tn, d);
    case SPX_BF16: return launch_t<__nv_bfloat16, 8>(A, tn, d);
    default: return cudaErrorInvalidValue;
    }
}

// TILED SpMM for matrices whose rows are dense enough that a block of 64 rows
// touches most rows of B (pruned weights: k of a few thousand, 2-50% dense).
// A block owns 64 rows x one column tile; it walks k in chunks of 64, staging
// B[k0:k0+64, tile] in shared memory (coalesced 16-byte loads), and each warp
// advances its 8 rows through their entries that fall in the chunk, reading B
// from shared memory instead of L2. Exact arithmetic on CUDA cores.
#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

constexpr int TILE_ROWS = 64, ROWS_PER_WARP = 8, KT = 64;

template <typename T> struct tiled_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t m, k, n;
    const T *B;
    int64_t ldb;
    T *C;
    int64_t ldc;
    typename acc_of<T>::type alpha, beta;
};

// V elements from shared memory (one 16-byte load when V * sizeof(T) == 16).
template <typename T, int V>
__device__ __forceinline__ void load_shared(const T *p, typename acc_of<T>::type (&out)[V])
{
    if (V * sizeof(T) == 16) {
        uint4 raw = *reinterpret_cast<const uint4 *>(p);
        const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
        for (int t = 0; t < V; t++)
            out[t] = to_acc(e[t]);
    } else {
#pragma unroll
        for (int t = 0; t < V; t++)
            out[t] = to_acc(p[t]);
    }
}

template <typename T, int V>
__global__ void __launch_bounds__(256) tiled_kernel(const tiled_params<T> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int TN = 32 * V; // columns per tile
    __shared__ __align__(16) T bs[KT][TN];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t row0 = (int64_t)blockIdx.x * TILE_ROWS + warp * ROWS_PER_WARP;
    const int64_t c0 = (int64_t)blockIdx.y * TN, col0 = c0 + lane * V;
    const int count = p.n - col0 >= V ? V : (int)(p.n - col0);

    int64_t pos[ROWS_PER_WARP], end[ROWS_PER_WARP];
    A acc[ROWS_PER_WARP][V];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; r++) {
        const int64_t row = row0 + r;
        pos[r] = row < p.m ? p.rowptr[row] : 0;
        end[r] = row < p.m ? p.rowptr[row + 1] : 0;
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[r][t] = A(0);
    }
    for (int64_t k0 = 0; k0 < p.k; k0 += KT) {
        // stage B[k0 : k0 + KT, c0 : c0 + TN]; zeros outside B
        for (int e = threadIdx.x; e < KT * 32; e += blockDim.x) {
            const int kr = e / 32, v = e % 32;
            const int64_t kk = k0 + kr, cc = c0 + v * V;
            typename acc_of<T>::type tmp[V];
            const int cnt = kk < p.k ? (p.n - cc >= V ? V : (p.n - cc > 0 ? (int)(p.n - cc) : 0)) : 0;
            if (cnt == V)
                load_v<T, V>(p.B + kk * p.ldb + cc, tmp);
            else
                load_partial<T, V>(p.B + kk * p.ldb + cc, cnt, tmp);
#pragma unroll
            for (int t = 0; t < V; t++)
                bs[kr][v * V + t] = from_acc<T>(tmp[t]);
        }
        __syncthreads();
        const int64_t k1 = k0 + KT;
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; r++) {
            // the row's entries with column < k1, 32 at a time
            while (pos[r] < end[r]) {
                const int64_t q = pos[r] + lane;
                int col = q < end[r] ? p.colidx[q] : INT32_MAX;
                const A v = q < end[r] ? a_value(p.vals, q) : A(0);
                const unsigned in_chunk = __ballot_sync(SPX_FULL_MASK, col < k1);
                const int cnt = __popc(in_chunk); // columns are sorted: a prefix
                for (int j = 0; j < cnt; j++) {
                    const int cj = __shfl_sync(SPX_FULL_MASK, col, j) - (int)k0;
                    const A vj = __shfl_sync(SPX_FULL_MASK, v, j);
                    if (count > 0) {
                        A b[V];
                        load_shared<T, V>(&bs[cj][lane * V], b);
#pragma unroll
                        for (int t = 0; t < V; t++)
                            acc[r][t] = fma(vj, b[t], acc[r][t]);
                    }
                }
                pos[r] += cnt;
                if (cnt < 32)
                    break; // the rest of the row lies beyond this chunk
            }
        }
        __syncthreads();
    }
    if (count > 0)
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; r++)
            if (row0 + r < p.m)
                store_epilogue<T, V>(p.C + (row0 + r) * p.ldc + col0, count, acc[r], p.alpha, p.beta);
}

template <typename T, int V>
cudaError_t launch_t(const spx_cuda_csr *A, const spx_cuda_dense_args *d)
{
    tiled_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.m = A->rows;
    p.k = A->cols;
    p.n = d->n;
    p.B = static_cast<const T *>(d->B);
    p.ldb = d->ldb;
    p.C = static_cast<T *>(d->C);
    p.ldc = d->ldc;
    p.alpha = (typename acc_of<T>::type)d->alpha;
    p.beta = (typename acc_of<T>::type)d->beta;
    int64_t gx = (A->rows + TILE_ROWS - 1) / TILE_ROWS, gy = (d->n + 32 * V - 1) / (32 * V);
    if (gx > 0x7fffffff || gy > 65535)
        return cudaErrorInvalidConfiguration;
    tiled_kernel<T, V><<<dim3((unsigned)gx, (unsigned)gy), 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t spx__cuda_launch_tiled(const spx_cuda_csr *A, const spx_cuda_dense_args *d)
{
    if (A->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    /* shared memory holds 16-byte vectors: the vector width is the tile's, whatever B's alignment */
    switch (d->dtype) {
    case SPX_F32: return d->vec > 1 ? launch_t<float, 4>(A, d) : launch_t<float, 1>(A, d);
    case SPX_F64: return d->vec > 1 ? launch_t<double, 2>(A, d) : launch_t<double, 1>(A, d);
    case SPX_F16: return d->vec > 1 ? launch_t<__half, 8>(A, d) : launch_t<__half, 1>(A, d);
    case SPX_BF16: return d->vec > 1 ? launch_t<__nv_bfloat16, 8>(A, d) : launch_t<__nv_bfloat16, 1>(A, d);
    default: return cudaErrorInvalidValue;
    }
}

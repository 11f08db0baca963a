// Row-parallel SpMM kernels: a group of lanes per row (ROW_SPLIT with 1-16
// lanes, WARP_ROW with 32), the same kernel over SELL-C-sigma slices, and
// several warps per row (BLOCK_ROW). Lanes of a group load up to `group`
// (column, value) pairs at once (coalesced), then broadcast them with
// shuffles; each lane owns V consecutive output columns and loads its part of
// the B row as one 16-byte vector.
#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct rows_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    const int32_t *rows; // row list; NULL: slot == row
    int64_t nrows;       // number of row slots
    // SELL layout (sell kernels only)
    const int64_t *slice_ptr;
    const int32_t *perm, *rowlen;
    int64_t slice_c;
    int group;
    int64_t n;
    const T *B;
    int64_t ldb;
    T *C;
    int64_t ldc;
    typename acc_of<T>::type alpha, beta;
};

__device__ __forceinline__ int64_t warp_max(int64_t v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        int64_t u = __shfl_xor_sync(SPX_FULL_MASK, v, o);
        v = u > v ? u : v;
    }
    return v;
}

template <typename T, int V, bool SELL>
__global__ void __launch_bounds__(256) rows_kernel(const rows_params<T> p)
{
    typedef typename acc_of<T>::type A;
    const int G = p.group;
    const int glane = (threadIdx.x & 31) & (G - 1);
    const int64_t slot = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    int64_t row = -1, start = 0, len = 0, stride = 1;
    if (slot < p.nrows) {
        if (SELL) {
            int64_t s = slot / p.slice_c;
            start = p.slice_ptr[s] + (slot - s * p.slice_c);
            stride = p.slice_c;
            row = p.perm[slot];
            len = row >= 0 ? p.rowlen[slot] : 0;
        } else {
            row = p.rows ? p.rows[slot] : slot;
            start = p.rowptr[row];
            len = p.rowptr[row + 1] - start;
        }
    }
    const int64_t chunks = warp_max((len + G - 1) / G);
    const int64_t tile_cols = (int64_t)G * V, ntiles = (p.n + tile_cols - 1) / tile_cols;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t col0 = tile * tile_cols + (int64_t)glane * V;
        const int count = p.n - col0 >= V ? V : (int)(p.n - col0); // <= 0: lane idle
        const T *bcol = p.B + col0;
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t i = c * G + glane;
            int col = 0;
            A v = A(0);
            if (i < len) {
                const int64_t q = start + i * stride;
                col = p.colidx[q];
                v = a_value(p.vals, q);
            }
            const int64_t left = len - c * G;
            const int cnt = left >= G ? G : (left > 0 ? (int)left : 0);
            const int jmax = (int)__reduce_max_sync(SPX_FULL_MASK, (unsigned)cnt);
#pragma unroll 4
            for (int j = 0; j < jmax; j++) {
                const int cj = __shfl_sync(SPX_FULL_MASK, col, j, G);
                const A vj = __shfl_sync(SPX_FULL_MASK, v, j, G);
                if (j < cnt && count > 0)
                    fma_row<T, V>(bcol + (int64_t)cj * p.ldb, count, vj, acc);
            }
        }
        if (row >= 0 && count > 0)
            store_epilogue<T, V>(p.C + row * p.ldc + col0, count, acc, p.alpha, p.beta);
    }
}

// BLOCK_ROW: blockDim.x = 32 * warps, one row per block, warps take chunks of
// 32 entries round-robin, then warp 0 adds the partial sums in warp order.
template <typename T, int V>
__global__ void __launch_bounds__(512) block_rows_kernel(const rows_params<T> p)
{
    typedef typename acc_of<T>::type A;
    extern __shared__ unsigned char smem_raw[];
    A *red = reinterpret_cast<A *>(smem_raw); // [warps][32 * V]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const int64_t row = p.rows ? p.rows[blockIdx.x] : blockIdx.x;
    const int64_t start = p.rowptr[row], len = p.rowptr[row + 1] - start;
    const int64_t ntiles = (p.n + 32 * V - 1) / (32 * V);
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t col0 = tile * 32 * V + (int64_t)lane * V;
        const int count = p.n - col0 >= V ? V : (int)(p.n - col0);
        const T *bcol = p.B + col0;
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        for (int64_t base = (int64_t)warp * 32; base < len; base += (int64_t)nwarps * 32) {
            const int64_t i = base + lane;
            int col = 0;
            A v = A(0);
            if (i < len) {
                col = p.colidx[start + i];
                v = a_value(p.vals, start + i);
            }
            const int cnt = len - base >= 32 ? 32 : (int)(len - base);
#pragma unroll 4
            for (int j = 0; j < cnt; j++) {
                const int cj = __shfl_sync(SPX_FULL_MASK, col, j);
                const A vj = __shfl_sync(SPX_FULL_MASK, v, j);
                if (count > 0)
                    fma_row<T, V>(bcol + (int64_t)cj * p.ldb, count, vj, acc);
            }
        }
#pragma unroll
        for (int t = 0; t < V; t++)
            red[(warp * 32 + lane) * V + t] = acc[t];
        __syncthreads();
        if (warp == 0) {
            for (int w = 1; w < nwarps; w++)
#pragma unroll
                for (int t = 0; t < V; t++)
                    acc[t] += red[(w * 32 + lane) * V + t];
            if (count > 0)
                store_epilogue<T, V>(p.C + row * p.ldc + col0, count, acc, p.alpha, p.beta);
        }
        __syncthreads(); // red is reused by the next tile
    }
}

template <typename T>
rows_params<T> make_params(const spx_cuda_dense_args *d)
{
    rows_params<T> p = {};
    p.n = d->n;
    p.B = static_cast<const T *>(d->B);
    p.ldb = d->ldb;
    p.C = static_cast<T *>(d->C);
    p.ldc = d->ldc;
    p.alpha = (typename acc_of<T>::type)d->alpha;
    p.beta = (typename acc_of<T>::type)d->beta;
    return p;
}

dim3 grid_for(int64_t threads, int64_t tile_cols, int64_t n)
{
    int64_t gx = (threads + 255) / 256, gy = (n + tile_cols - 1) / tile_cols;
    return dim3((unsigned)gx, (unsigned)(gy > 65535 ? 65535 : (gy < 1 ? 1 : gy)));
}

template <typename T, int V>
cudaError_t launch_rows_t(const spx_cuda_csr *A, const int32_t *rows, int64_t nrows, int group,
                          const spx_cuda_dense_args *d)
{
    rows_params<T> p = make_params<T>(d);
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.rows = rows;
    p.nrows = nrows;
    p.group = group;
    rows_kernel<T, V, false><<<grid_for(nrows * group, (int64_t)group * V, d->n), 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t launch_sell_t(const spx_cuda_sell *A, int group, const spx_cuda_dense_args *d)
{
    rows_params<T> p = make_params<T>(d);
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.slice_ptr = A->slice_ptr;
    p.perm = A->perm;
    p.rowlen = A->rowlen;
    p.slice_c = A->c;
    p.nrows = A->nslices * A->c;
    p.group = group;
    rows_kernel<T, V, true><<<grid_for(p.nrows * group, (int64_t)group * V, d->n), 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, int V>
cudaError_t launch_block_rows_t(const spx_cuda_csr *A, const int32_t *rows, int64_t nrows,
                                int warps, const spx_cuda_dense_args *d)
{
    rows_params<T> p = make_params<T>(d);
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.rows = rows;
    p.nrows = nrows;
    int64_t gy = (d->n + 32 * V - 1) / (32 * V);
    dim3 grid((unsigned)nrows, (unsigned)(gy > 65535 ? 65535 : gy));
    size_t smem = (size_t)warps * 32 * V * sizeof(typename acc_of<T>::type);
    block_rows_kernel<T, V><<<grid, 32 * warps, smem, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t spx__cuda_launch_rows(const spx_cuda_csr *A, const int32_t *rows,
                                             int64_t nrows, int group, const spx_cuda_dense_args *d)
{
    if (nrows <= 0 || d->n <= 0)
        return cudaSuccess;
#define CALL(T, V) launch_rows_t<T, V>(A, rows, nrows, group, d)
    SPX_DISPATCH_TV(d->dtype, d->vec, CALL)
#undef CALL
}

extern "C" cudaError_t spx__cuda_launch_sell(const spx_cuda_sell *A, int group,
                                             const spx_cuda_dense_args *d)
{
    if (A->nslices <= 0 || d->n <= 0)
        return cudaSuccess;
#define CALL(T, V) launch_sell_t<T, V>(A, group, d)
    SPX_DISPATCH_TV(d->dtype, d->vec, CALL)
#undef CALL
}

extern "C" cudaError_t spx__cuda_launch_block_rows(const spx_cuda_csr *A, const int32_t *rows,
                                                   int64_t nrows, int warps,
                                                   const spx_cuda_dense_args *d)
{
    if (nrows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (nrows > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
#define CALL(T, V) launch_block_rows_t<T, V>(A, rows, nrows, warps, d)
    SPX_DISPATCH_TV(d->dtype, d->vec, CALL)
#undef CALL
}

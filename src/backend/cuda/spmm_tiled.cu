// TILED SpMM for matrices with a short inner dimension whose rows are dense
// enough that many rows share each row of B (pruned weights: k of a few
// thousand, 2-50% dense). A block copies a column panel of B, all k rows by
// `tn` columns, into shared memory once (coalesced 16-byte loads), then its
// warps run the row team loop over their rows reading B from shared memory
// instead of L2. Exact arithmetic on CUDA cores.
#include "backend/cuda/row_team.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct tiled_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t m, k, tn, rows_per_block;
    dense_ops<T> d;
    int vec_loads; // B and C may be accessed with 16-byte vectors
};

template <typename T, int V>
__global__ void __launch_bounds__(256) tiled_kernel(const tiled_params<T> p)
{
    typedef typename acc_of<T>::type A;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *bs = reinterpret_cast<T *>(smem_raw); // [k][tn]
    const int64_t tn = p.tn, c0 = (int64_t)blockIdx.y * tn, per_row = tn / V;
    for (int64_t e = threadIdx.x; e < p.k * per_row; e += blockDim.x) {
        const int64_t kr = e / per_row, cc = c0 + (e - kr * per_row) * V;
        const int cnt = p.d.n - cc >= V ? V : (p.d.n - cc > 0 ? (int)(p.d.n - cc) : 0);
        A tmp[V];
        if (cnt == V && p.vec_loads)
            load_v<T, V>(p.d.B + kr * p.d.ldb + cc, tmp);
        else
            load_partial<T, V>(p.d.B + kr * p.d.ldb + cc, cnt, tmp);
#pragma unroll
        for (int t = 0; t < V; t++)
            bs[kr * tn + (cc - c0) + t] = from_acc<T>(tmp[t]);
    }
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const int G = (int)per_row, glane = lane & (G - 1), sub = lane / G;
    const int64_t col0 = c0 + (int64_t)glane * V;
    const int count = p.d.n - col0 >= V ? V : (int)(p.d.n - col0);
    const int64_t r_end = ((int64_t)blockIdx.x + 1) * p.rows_per_block < p.m ? ((int64_t)blockIdx.x + 1) * p.rows_per_block : p.m;
    for (int64_t row = (int64_t)blockIdx.x * p.rows_per_block + warp; row < r_end; row += nwarps) {
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        const int64_t start = p.rowptr[row];
        team_accumulate<T, V, true, true>(p.colidx, p.vals, start, p.rowptr[row + 1] - start, 1, 32, G,
                                          bs + glane * V, tn, count, acc);
        if (sub == 0 && count > 0)
            store_epilogue<T, V>(p.d.C + row * p.d.ldc + col0, count, acc, p.d.alpha, p.d.beta, p.vec_loads != 0);
    }
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
    p.tn = tn;
    p.rows_per_block = 64;
    p.vec_loads = d->vec > 1;
    if (tn <= 0 || tn % V || tn / V > 32 || (tn / V & (tn / V - 1)))
        return cudaErrorInvalidValue;
    size_t smem = (size_t)(A->cols * tn) * sizeof(T);
    cudaError_t e = cudaFuncSetAttribute(tiled_kernel<T, V>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    int64_t gx = (A->rows + p.rows_per_block - 1) / p.rows_per_block, gy = (d->n + tn - 1) / tn;
    if (gx > 0x7fffffff || gy > 65535)
        return cudaErrorInvalidConfiguration;
    tiled_kernel<T, V><<<dim3((unsigned)gx, (unsigned)gy), 256, smem, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" int64_t spx__cuda_tiled_columns(int64_t k, int64_t n, spx_dtype dtype, int64_t smem_bytes)
{
    int64_t es = (int64_t)spx_dtype_size(dtype), vec = 16 / es, tn = 32 * vec;
    while (tn > vec && (k * tn * es > smem_bytes || tn / 2 >= n))
        tn /= 2;
    return k * tn * es <= smem_bytes ? tn : 0;
}

extern "C" cudaError_t spx__cuda_launch_tiled(const spx_cuda_csr *A, int64_t tn, const spx_cuda_dense_args *d)
{
    if (A->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    /* the shared-memory panel is always laid out in 16-byte vectors */
    switch (d->dtype) {
    case SPX_F32: return launch_t<float, 4>(A, tn, d);
    case SPX_F64: return launch_t<double, 2>(A, tn, d);
    case SPX_F16: return launch_t<__half, 8>(A, tn, d);
    case SPX_BF16: return launch_t<__nv_bfloat16, 8>(A, tn, d);
    default: return cudaErrorInvalidValue;
    }
}

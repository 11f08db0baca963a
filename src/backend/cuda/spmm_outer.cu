// Outer-product SpMM for operands compressed along the inner dimension (A^T*B
// with A in CSR, A*B with A in CSC): each k loads its B row once and scatters
// alpha * A(k, i) * B(k, :) into C(i, :) with atomics. Not deterministic; the
// planner only uses it when asked. Also the beta pre-scaling it relies on.
#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct outer_params {
    const int64_t *ptr;
    const int32_t *idx;
    const T *vals;
    int64_t nk;
    int group;
    dense_ops<T> d;
};

template <typename T, int V>
__global__ void __launch_bounds__(256) outer_kernel(const outer_params<T> p)
{
    const int G = p.group;
    const int glane = (threadIdx.x & 31) & (G - 1);
    const int64_t k = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    int64_t start = 0, len = 0;
    if (k < p.nk) {
        start = p.ptr[k];
        len = p.ptr[k + 1] - start;
    }
    int64_t chunks = (len + G - 1) / G;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        int64_t u = __shfl_xor_sync(SPX_FULL_MASK, chunks, o);
        chunks = u > chunks ? u : chunks;
    }
    const int64_t tile_cols = (int64_t)G * V, ntiles = (p.d.n + tile_cols - 1) / tile_cols;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t col0 = tile * tile_cols + (int64_t)glane * V;
        const int count = p.d.n - col0 >= V ? V : (int)(p.d.n - col0);
        T b[V];
        if (k < p.nk && count > 0) {
            T tmp[V];
            load_partial<T, V>(p.d.B + k * p.d.ldb + col0, count, tmp);
#pragma unroll
            for (int t = 0; t < V; t++)
                b[t] = p.d.alpha * tmp[t];
        }
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t i = c * G + glane;
            int row = 0;
            T v = T(0);
            if (i < len) {
                row = p.idx[start + i];
                v = a_value(p.vals, start + i);
            }
            const int64_t left = len - c * G;
            const int cnt = left >= G ? G : (left > 0 ? (int)left : 0);
            const int jmax = (int)__reduce_max_sync(SPX_FULL_MASK, (unsigned)cnt);
            for (int j = 0; j < jmax; j++) {
                const int rj = __shfl_sync(SPX_FULL_MASK, row, j, G);
                const T vj = __shfl_sync(SPX_FULL_MASK, v, j, G);
                if (j < cnt)
                    for (int t = 0; t < V && t < count; t++)
                        atomicAdd(p.d.C + (int64_t)rj * p.d.ldc + col0 + t, vj * b[t]);
            }
        }
    }
}

template <typename T>
__global__ void scale_kernel(T *C, int64_t ldc, int64_t m, int64_t n, float beta_f, double beta_d)
{
    const typename acc_of<T>::type beta = (typename acc_of<T>::type)(sizeof(T) == 8 ? beta_d : beta_f);
    for (int64_t r = blockIdx.y; r < m; r += gridDim.y)
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n;
             c += (int64_t)gridDim.x * blockDim.x) {
            T *e = C + r * ldc + c;
            *e = from_acc<T>(beta == 0 ? typename acc_of<T>::type(0) : beta * to_acc(*e));
        }
}

template <typename T, int V>
cudaError_t launch_outer_t(const spx_cuda_csr *At, int group, const spx_cuda_dense_args *d)
{
    outer_params<T> p = {};
    p.ptr = At->rowptr;
    p.idx = At->colidx;
    p.vals = static_cast<const T *>(At->vals);
    p.nk = At->rows;
    p.group = group;
    p.d = dense_ops_from<T>(d);
    int64_t gx = (At->rows * group + 255) / 256, gy = (d->n + (int64_t)group * V - 1) / ((int64_t)group * V);
    dim3 grid((unsigned)gx, (unsigned)(gy > 65535 ? 65535 : gy));
    outer_kernel<T, V><<<grid, 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t spx__cuda_launch_outer(const spx_cuda_csr *At, int group,
                                              const spx_cuda_dense_args *d)
{
    if (At->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    switch (d->dtype) {
    case SPX_F32: return d->vec > 1 ? launch_outer_t<float, 4>(At, group, d) : launch_outer_t<float, 1>(At, group, d);
    case SPX_F64: return d->vec > 1 ? launch_outer_t<double, 2>(At, group, d) : launch_outer_t<double, 1>(At, group, d);
    default: return cudaErrorInvalidValue; /* no float atomics for 16-bit outputs */
    }
}

extern "C" cudaError_t spx__cuda_scale(const spx_cuda_dense_args *d, int64_t m)
{
    if (m <= 0 || d->n <= 0)
        return cudaSuccess;
    int64_t gx = (d->n + 255) / 256;
    dim3 grid((unsigned)(gx > 1024 ? 1024 : gx), (unsigned)(m > 65535 ? 65535 : m));
    switch (d->dtype) {
    case SPX_F32: scale_kernel<float><<<grid, 256, 0, d->stream>>>((float *)d->C, d->ldc, m, d->n, (float)d->beta, d->beta); break;
    case SPX_F64: scale_kernel<double><<<grid, 256, 0, d->stream>>>((double *)d->C, d->ldc, m, d->n, (float)d->beta, d->beta); break;
    case SPX_F16: scale_kernel<__half><<<grid, 256, 0, d->stream>>>((__half *)d->C, d->ldc, m, d->n, (float)d->beta, d->beta); break;
    case SPX_BF16: scale_kernel<__nv_bfloat16><<<grid, 256, 0, d->stream>>>((__nv_bfloat16 *)d->C, d->ldc, m, d->n, (float)d->beta, d->beta); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

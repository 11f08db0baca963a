// Gather-GEMM on tensor cores. The plan cuts the rows into groups of 16 and
// stores each group densely over the union of its columns (16 x U, padded to
// the MMA's k step with column -1). A warp computes a 16 x (8*NT) tile of C:
// per k step it loads the A fragment from the dense tile and gathers the B
// fragment from the B rows named by the union, then issues mma.sync.
// Because the tile is dense, a row multiplies B rows it has no entry in by
// zero: Inf/NaN there propagate (documented for the tensor-core precisions).
#include "backend/cuda/device_types.cuh"
#include "backend/cuda/mma.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T, typename H> struct gather_params {
    const int32_t *group_rows;
    const int64_t *union_ptr;
    const int32_t *union_cols;
    const H *tile;
    int64_t ngroups;
    dense_ops<T> d;
};

template <typename H> __device__ __forceinline__ float h2f(H x) { return (float)to_acc(x); }
template <> __device__ __forceinline__ float h2f<float>(float x) { return x; }

template <typename T, typename H>
__device__ __forceinline__ float gather_b(const gather_params<T, H> &p, int32_t k, int64_t col)
{
    return k >= 0 && col < p.d.n ? (float)to_acc(p.d.B[(int64_t)k * p.d.ldb + col]) : 0.0f;
}

template <typename T, typename H, int NT>
__global__ void __launch_bounds__(128) gather_tc_kernel(const gather_params<T, H> p)
{
    constexpr bool tf32 = sizeof(H) == 4;
    constexpr int KS = tf32 ? 8 : 16;
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3, warp = threadIdx.x >> 5;
    const int64_t grp = blockIdx.x;
    const int64_t u0 = p.union_ptr[grp], U = p.union_ptr[grp + 1] - u0;
    const H *tile = p.tile + 16 * u0;
    const int32_t *ucols = p.union_cols + u0;
    const int64_t ntiles = (p.d.n + 32 * NT - 1) / (32 * NT);
    for (int64_t ct = blockIdx.y; ct < ntiles; ct += gridDim.y) {
        const int64_t cbase = (ct * 4 + warp) * 8 * NT;
        if (cbase >= p.d.n)
            continue;
        float c[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++)
            c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
        for (int64_t kk = 0; kk < U; kk += KS) {
            uint32_t a[4], bf[2];
            if constexpr (tf32) {
                a[0] = to_tf32(h2f(tile[g * U + kk + q]));
                a[1] = to_tf32(h2f(tile[(g + 8) * U + kk + q]));
                a[2] = to_tf32(h2f(tile[g * U + kk + q + 4]));
                a[3] = to_tf32(h2f(tile[(g + 8) * U + kk + q + 4]));
                const int32_t k0 = ucols[kk + q], k1 = ucols[kk + q + 4];
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    const int64_t col = cbase + j * 8 + g;
                    bf[0] = to_tf32(gather_b(p, k0, col));
                    bf[1] = to_tf32(gather_b(p, k1, col));
                    mma_tf32(c[j], a, bf);
                }
            } else {
                a[0] = *reinterpret_cast<const uint32_t *>(tile + g * U + kk + 2 * q);
                a[1] = *reinterpret_cast<const uint32_t *>(tile + (g + 8) * U + kk + 2 * q);
                a[2] = *reinterpret_cast<const uint32_t *>(tile + g * U + kk + 2 * q + 8);
                a[3] = *reinterpret_cast<const uint32_t *>(tile + (g + 8) * U + kk + 2 * q + 8);
                const int32_t k0 = ucols[kk + 2 * q], k1 = ucols[kk + 2 * q + 1];
                const int32_t k2 = ucols[kk + 2 * q + 8], k3 = ucols[kk + 2 * q + 9];
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    const int64_t col = cbase + j * 8 + g;
                    bf[0] = pack2<H>(gather_b(p, k0, col), gather_b(p, k1, col));
                    bf[1] = pack2<H>(gather_b(p, k2, col), gather_b(p, k3, col));
                    mma_16<H>(c[j], a, bf);
                }
            }
        }
        typedef typename acc_of<T>::type A;
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const int32_t row = p.group_rows[grp * 16 + g + (h >= 2 ? 8 : 0)];
            if (row < 0)
                continue;
#pragma unroll
            for (int j = 0; j < NT; j++) {
                const int64_t col = cbase + j * 8 + 2 * q + (h & 1);
                if (col < p.d.n) {
                    T *e = p.d.C + (int64_t)row * p.d.ldc + col;
                    const A v = p.d.alpha * (A)c[j][h];
                    *e = from_acc<T>(p.d.beta != A(0) ? v + p.d.beta * to_acc(*e) : v);
                }
            }
        }
    }
}

template <typename T, typename H>
cudaError_t launch_t(const spx_cuda_gather *G, const spx_cuda_dense_args *d)
{
    const int NT = 4;
    gather_params<T, H> p = {};
    p.group_rows = G->group_rows;
    p.union_ptr = G->union_ptr;
    p.union_cols = G->union_cols;
    p.tile = static_cast<const H *>(G->tile_vals);
    p.ngroups = G->ngroups;
    p.d = dense_ops_from<T>(d);
    int64_t gy = (d->n + 32 * NT - 1) / (32 * NT);
    if (G->ngroups > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)G->ngroups, (unsigned)(gy > 65535 ? 65535 : gy));
    gather_tc_kernel<T, H, NT><<<grid, 128, 0, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t spx__cuda_launch_gather_tc(const spx_cuda_gather *G, spx_precision prec,
                                                  const spx_cuda_dense_args *d)
{
    if (G->ngroups <= 0 || d->n <= 0)
        return cudaSuccess;
    switch (d->dtype) {
    case SPX_F32:
        if (prec == SPX_PRECISION_TF32)
            return launch_t<float, float>(G, d);
        return prec == SPX_PRECISION_F16 ? launch_t<float, __half>(G, d)
                                         : launch_t<float, __nv_bfloat16>(G, d);
    case SPX_F16: return launch_t<__half, __half>(G, d);
    case SPX_BF16: return launch_t<__nv_bfloat16, __nv_bfloat16>(G, d);
    default: return cudaErrorInvalidValue;
    }
}

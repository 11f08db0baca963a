// BSR SpMM. CUDA cores: a warp per (block row, 16-row slice of the block,
// column tile); each B row segment loaded once feeds up to 16 rows of the
// block. Tensor cores (16 x bc blocks): mma.sync m16n8k8 (tf32) or m16n8k16
// (f16/bf16) with the block as the A operand and B rows as the B operand.
#include "backend/cuda/device_types.cuh"
#include "backend/cuda/mma.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct bsr_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t rows, cols, br, bc, brows;
    dense_ops<T> d;
};

template <typename T, int V>
__global__ void __launch_bounds__(256) bsr_kernel(const bsr_params<T> p)
{
    typedef typename acc_of<T>::type A;
    const int lane = threadIdx.x & 31;
    const int64_t brow = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (brow >= p.brows)
        return;
    const int64_t r0 = (int64_t)blockIdx.z * 16; // slice of the block's rows
    const int64_t nr = p.br - r0 < 16 ? p.br - r0 : 16;
    const int64_t ntiles = (p.d.n + 32 * V - 1) / (32 * V);
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t col0 = tile * 32 * V + (int64_t)lane * V;
        const int count = p.d.n - col0 >= V ? V : (int)(p.d.n - col0);
        A acc[16][V];
#pragma unroll
        for (int r = 0; r < 16; r++)
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[r][t] = A(0);
        for (int64_t b = p.rowptr[brow]; b < p.rowptr[brow + 1]; b++) {
            const int64_t kbase = (int64_t)p.colidx[b] * p.bc;
            const T *blk = p.vals + b * p.br * p.bc + r0 * p.bc;
            for (int64_t cc = 0; cc < p.bc && kbase + cc < p.cols; cc++) {
                A bv[V];
                if (count <= 0)
                    break;
                if (count == V)
                    load_v<T, V>(p.d.B + (kbase + cc) * p.d.ldb + col0, bv);
                else
                    load_partial<T, V>(p.d.B + (kbase + cc) * p.d.ldb + col0, count, bv);
#pragma unroll
                for (int r = 0; r < 16; r++)
                    if (r < nr) {
                        const A a = p.vals ? to_acc(blk[r * p.bc + cc]) : A(1);
#pragma unroll
                        for (int t = 0; t < V; t++)
                            acc[r][t] = fma(a, bv[t], acc[r][t]);
                    }
            }
        }
        if (count > 0)
#pragma unroll
            for (int r = 0; r < 16; r++) {
                const int64_t row = brow * p.br + r0 + r;
                if (r < nr && row < p.rows)
                    store_epilogue<T, V>(p.d.C + row * p.d.ldc + col0, count, 1, acc[r], p.d.alpha, p.d.beta, p.d.c_vec);
            }
    }
}

// Element (k, j) of B as float, zero outside the matrix.
template <typename T>
__device__ __forceinline__ float b_at(const bsr_params<T> &p, int64_t k, int64_t j)
{
    return k < p.cols && j < p.d.n ? (float)to_acc(p.d.B[k * p.d.ldb + j]) : 0.0f;
}

template <typename T>
__device__ __forceinline__ float a_at(const bsr_params<T> &p, const T *blk, int r, int64_t c)
{
    return p.vals ? (float)to_acc(blk[r * p.bc + c]) : 1.0f;
}

// A warp computes a 16 x (8*NT) tile of C for one block row. H: the MMA
// operand type (float means tf32).
template <typename T, typename H, int NT>
__global__ void __launch_bounds__(128) bsr_tc_kernel(const bsr_params<T> p)
{
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const int64_t brow = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (brow >= p.brows)
        return;
    constexpr bool tf32 = sizeof(H) == 4;
    constexpr int KS = tf32 ? 8 : 16;
    const int64_t ntiles = (p.d.n + 8 * NT - 1) / (8 * NT);
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t cbase = tile * 8 * NT;
        float c[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++)
            c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
        for (int64_t b = p.rowptr[brow]; b < p.rowptr[brow + 1]; b++) {
            const int64_t kbase = (int64_t)p.colidx[b] * p.bc;
            const T *blk = p.vals + b * 16 * p.bc;
            for (int64_t kk = 0; kk < p.bc; kk += KS) {
                uint32_t a[4], bf[2];
                if constexpr (tf32) {
                    a[0] = to_tf32(a_at(p, blk, g, kk + q));
                    a[1] = to_tf32(a_at(p, blk, g + 8, kk + q));
                    a[2] = to_tf32(a_at(p, blk, g, kk + q + 4));
                    a[3] = to_tf32(a_at(p, blk, g + 8, kk + q + 4));
                } else {
                    a[0] = pack2<H>(a_at(p, blk, g, kk + 2 * q), a_at(p, blk, g, kk + 2 * q + 1));
                    a[1] = pack2<H>(a_at(p, blk, g + 8, kk + 2 * q), a_at(p, blk, g + 8, kk + 2 * q + 1));
                    a[2] = pack2<H>(a_at(p, blk, g, kk + 2 * q + 8), a_at(p, blk, g, kk + 2 * q + 9));
                    a[3] = pack2<H>(a_at(p, blk, g + 8, kk + 2 * q + 8), a_at(p, blk, g + 8, kk + 2 * q + 9));
                }
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    const int64_t col = cbase + j * 8 + g, k = kbase + kk;
                    if constexpr (tf32) {
                        bf[0] = to_tf32(b_at(p, k + q, col));
                        bf[1] = to_tf32(b_at(p, k + q + 4, col));
                        mma_tf32(c[j], a, bf);
                    } else {
                        bf[0] = pack2<H>(b_at(p, k + 2 * q, col), b_at(p, k + 2 * q + 1, col));
                        bf[1] = pack2<H>(b_at(p, k + 2 * q + 8, col), b_at(p, k + 2 * q + 9, col));
                        mma_16<H>(c[j], a, bf);
                    }
                }
            }
        }
        typedef typename acc_of<T>::type A;
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int h = 0; h < 4; h++) {
                const int64_t row = brow * 16 + g + (h >= 2 ? 8 : 0);
                const int64_t col = cbase + j * 8 + 2 * q + (h & 1);
                if (row < p.rows && col < p.d.n) {
                    T *e = p.d.C + row * p.d.ldc + col;
                    const A v = p.d.alpha * (A)c[j][h];
                    *e = from_acc<T>(p.d.beta != A(0) ? v + p.d.beta * to_acc(*e) : v);
                }
            }
    }
}

template <typename T>
bsr_params<T> make_params(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    bsr_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.rows = A->rows;
    p.cols = A->cols;
    p.br = A->br;
    p.bc = A->bc;
    p.brows = A->brows;
    p.d = dense_ops_from<T>(d);
    return p;
}

template <typename T, int V>
cudaError_t launch_bsr_t(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    bsr_params<T> p = make_params<T>(A, d);
    int64_t gy = (d->n + 32 * V - 1) / (32 * V), gz = (A->br + 15) / 16;
    if (gz > 65535)
        return cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)((A->brows * 32 + 255) / 256), (unsigned)(gy > 65535 ? 65535 : gy), (unsigned)gz);
    bsr_kernel<T, V><<<grid, 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, typename H>
cudaError_t launch_bsr_tc_t(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    const int NT = 4;
    bsr_params<T> p = make_params<T>(A, d);
    int64_t gy = (d->n + 8 * NT - 1) / (8 * NT);
    dim3 grid((unsigned)((A->brows * 32 + 127) / 128), (unsigned)(gy > 65535 ? 65535 : gy));
    bsr_tc_kernel<T, H, NT><<<grid, 128, 0, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" int spx__cuda_bsr_tc_supported(const spx_cuda_bsr *A, spx_dtype dtype, spx_precision prec)
{
    if (A->br != 16 || prec == SPX_PRECISION_EXACT)
        return 0;
    if (dtype == SPX_F32 && prec == SPX_PRECISION_TF32)
        return A->bc % 8 == 0;
    if (dtype == SPX_F32 || dtype == SPX_F16 || dtype == SPX_BF16)
        return A->bc % 16 == 0;
    return 0;
}

extern "C" cudaError_t spx__cuda_launch_bsr(const spx_cuda_bsr *A, spx_precision prec,
                                            const spx_cuda_dense_args *d)
{
    if (A->brows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (d->vec <= 1) /* B is the finite copy (run_on_finite_b): rows on 16 bytes */
        return cudaErrorInvalidValue;
    if (prec != SPX_PRECISION_EXACT) {
        if (!spx__cuda_bsr_tc_supported(A, d->dtype, prec))
            return cudaErrorInvalidValue;
        switch (d->dtype) {
        case SPX_F32:
            if (prec == SPX_PRECISION_TF32)
                return launch_bsr_tc_t<float, float>(A, d);
            return prec == SPX_PRECISION_F16 ? launch_bsr_tc_t<float, __half>(A, d)
                                             : launch_bsr_tc_t<float, __nv_bfloat16>(A, d);
        case SPX_F16: return launch_bsr_tc_t<__half, __half>(A, d);
        case SPX_BF16: return launch_bsr_tc_t<__nv_bfloat16, __nv_bfloat16>(A, d);
        default: return cudaErrorInvalidValue;
        }
    }
#define CALL(T, V) launch_bsr_t<T, V>(A, d)
    SPX_DISPATCH_T(d->dtype, CALL)
#undef CALL
}

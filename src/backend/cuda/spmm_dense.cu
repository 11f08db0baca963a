// B's non-finite values, for the algorithms that multiply zeros A does not
// hold: the dense path (op(A) written out densely once per plan, then
// cuBLASLt's GEMM, dense_gemm.c) and the tensor-core kernels' zero-padded tiles
// (BSR blocks, gather_tc's row groups). 0 x Inf or 0 x NaN would put NaN where
// the sparse product has no term. So these run on a copy of B that holds
// zeros in place of its non-finite values, and afterwards those values' terms
// are added from A's columns (CSC): each such term is +-Inf or NaN, and a sum
// holding one is the same in any order, so the atomics keep results
// deterministic. The dense path with beta = 0 and B in the GEMM's type needs
// no copy: a scan marks B's column chunks that hold a non-finite value, the
// GEMM reads B in place, and the marked columns of C are computed again from
// A's rows (with beta = 0, C held nothing the GEMM overwrote).
#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

const int BLOCK = 256;
const int WARPS = BLOCK / 32;

template <typename D, typename S> __device__ __forceinline__ D convert_from(S x)
{
    return from_acc<D>((typename acc_of<D>::type)to_acc(x));
}
template <typename T> __device__ __forceinline__ bool finite(T x) { return isfinite(to_acc(x)); }

template <typename S, typename D>
__global__ void __launch_bounds__(BLOCK) fill_kernel(const int64_t *__restrict__ rowptr,
                                                     const int32_t *__restrict__ colidx, const S *__restrict__ vals,
                                                     int64_t m, D *out, int64_t ld)
{
    for (int64_t i = blockIdx.x; i < m; i += gridDim.x)
        for (int64_t p = rowptr[i] + threadIdx.x; p < rowptr[i + 1]; p += BLOCK)
            out[i * ld + colidx[p]] = vals ? convert_from<D>(vals[p]) : from_acc<D>(1);
}

// What take_b_kernel does with each (row of B, chunk) it reads.
enum class Take {
    AS_GEMM, // copy as D, zeros for non-finite values; bad[row * chunks + chunk] = the chunk's flag
    AS_B,    // the same, copied as T
    SCAN     // no copy; bad[chunk] = 1 where the chunk holds a non-finite value in any row (bad zeroed first)
};

// One warp per (row of B, chunk of SPX_DENSE_CHUNK columns). Finiteness is
// judged as D: a value beyond f16's range becomes Inf there.
template <typename T, typename D, Take MODE>
__global__ void __launch_bounds__(BLOCK) take_b_kernel(const T *__restrict__ B, int64_t ldb, int64_t k, int64_t n,
                                                       void *out_, int64_t ldo, int32_t *bad, int64_t chunks)
{
    const int lane = threadIdx.x & 31;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); w < k * chunks;
         w += (int64_t)gridDim.x * WARPS) {
        const int64_t r = w / chunks, c0 = (w % chunks) * SPX_DENSE_CHUNK;
        bool any = false;
#pragma unroll
        for (int u = 0; u < SPX_DENSE_CHUNK / 32; u++) {
            const int64_t j = c0 + u * 32 + lane;
            if (j < n) {
                const T x = B[r * ldb + j];
                const bool fin = finite(convert_from<D>(x));
                any |= !fin;
                if constexpr (MODE == Take::AS_GEMM)
                    ((D *)out_)[r * ldo + j] = fin ? convert_from<D>(x) : from_acc<D>(0);
                else if constexpr (MODE == Take::AS_B)
                    ((T *)out_)[r * ldo + j] = fin ? x : from_acc<T>(0);
            }
        }
        any = __any_sync(SPX_FULL_MASK, any);
        if constexpr (MODE == Take::SCAN) {
            if (any && lane == 0)
                bad[w % chunks] = 1;
        } else if (lane == 0)
            bad[w] = any;
    }
}

// C(i, j) = alpha * sum over row i of op(A) of A(i, p) * B(p, j) for every
// row i and the columns j of each chunk marked in bad (beta = 0): the columns
// where the GEMM met a non-finite value of B.
template <typename T>
__global__ void __launch_bounds__(BLOCK) recompute_kernel(const T *__restrict__ B, int64_t ldb, int64_t m, int64_t n,
                                                          const int32_t *__restrict__ bad, int64_t chunks,
                                                          const int64_t *__restrict__ rowptr,
                                                          const int32_t *__restrict__ colidx,
                                                          const T *__restrict__ avals, typename acc_of<T>::type alpha,
                                                          T *C, int64_t ldc)
{
    typedef typename acc_of<T>::type A;
    constexpr int U = SPX_DENSE_CHUNK / 32;
    const int lane = threadIdx.x & 31;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); w < m * chunks;
         w += (int64_t)gridDim.x * WARPS) {
        const int64_t c = w % chunks, i = w / chunks, c0 = c * SPX_DENSE_CHUNK;
        if (!bad[c])
            continue;
        A acc[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            acc[u] = A(0);
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++) {
            const A a = avals ? to_acc(avals[p]) : A(1);
            const T *b = B + (int64_t)colidx[p] * ldb;
#pragma unroll
            for (int u = 0; u < U; u++)
                if (c0 + u * 32 + lane < n)
                    acc[u] += a * to_acc(b[c0 + u * 32 + lane]);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * 32 + lane < n)
                C[i * ldc + c0 + u * 32 + lane] = from_acc<T>(alpha * acc[u]);
    }
}

// C(i, j) += alpha * A(i, r) * B(r, j) for every non-finite B(r, j) (as the
// GEMM's input type) and every entry of column r of op(A).
template <typename T, typename D>
__global__ void __launch_bounds__(BLOCK) add_nonfinite_kernel(const T *__restrict__ B, int64_t ldb, int64_t k,
                                                              int64_t n, const int32_t *__restrict__ bad, int64_t chunks,
                                                              const int64_t *__restrict__ colptr,
                                                              const int32_t *__restrict__ rowidx,
                                                              const T *__restrict__ avals,
                                                              typename acc_of<T>::type alpha, T *C, int64_t ldc)
{
    typedef typename acc_of<T>::type A;
    const int lane = threadIdx.x & 31;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); w < k * chunks;
         w += (int64_t)gridDim.x * WARPS) {
        if (!bad[w])
            continue;
        const int64_t r = w / chunks, c0 = (w % chunks) * SPX_DENSE_CHUNK;
        for (int u = 0; u < SPX_DENSE_CHUNK / 32; u++) {
            const int64_t j = c0 + u * 32 + lane;
            if (j >= n)
                continue;
            const D v = convert_from<D>(B[r * ldb + j]);
            if (finite(v))
                continue;
            for (int64_t p = colptr[r]; p < colptr[r + 1]; p++) {
                const A a = avals ? to_acc(avals[p]) : A(1);
                atomicAdd(C + rowidx[p] * ldc + j, from_acc<T>(alpha * a * (A)to_acc(v)));
            }
        }
    }
}

int64_t grid_for(int64_t warps)
{
    const int64_t blocks = (warps + WARPS - 1) / WARPS;
    return blocks < 1 ? 1 : blocks > 65535 ? 65535 : blocks;
}

} // namespace

// The value type of A, B and C with the GEMM's input type: f32 data may be
// rounded to f16 or bf16; every other type multiplies as it is.
#define SPX_DENSE_DISPATCH(dtype, gemm, CALL)                                                        \
    switch (dtype) {                                                                                 \
    case SPX_F32:                                                                                    \
        return gemm == SPX_F16 ? CALL(float, __half) : gemm == SPX_BF16 ? CALL(float, __nv_bfloat16) \
                                                                        : CALL(float, float);        \
    case SPX_F64: return CALL(double, double);                                                       \
    case SPX_F16: return CALL(__half, __half);                                                       \
    case SPX_BF16: return CALL(__nv_bfloat16, __nv_bfloat16);                                        \
    default: return cudaErrorInvalidValue;                                                           \
    }

extern "C" cudaError_t spx__cuda_dense_fill(const spx_cuda_csr *A, spx_dtype dtype, spx_dtype gemm, void *out,
                                            int64_t ld, cudaStream_t stream)
{
    cudaError_t e = cudaMemsetAsync(out, 0, (size_t)(A->rows * ld) * spx_dtype_size(gemm), stream);
    if (e != cudaSuccess || A->rows == 0)
        return e;
    const int64_t grid = A->rows < 65535 ? A->rows : 65535;
#define FILL(T, D)                                                                                      \
    (fill_kernel<T, D><<<(unsigned)grid, BLOCK, 0, stream>>>(A->rowptr, A->colidx, (const T *)A->vals, \
                                                              A->rows, (D *)out, ld),                   \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(dtype, gemm, FILL)
#undef FILL
}

extern "C" cudaError_t spx__cuda_dense_take_b(const spx_cuda_dense_args *d, int64_t k, spx_dtype gemm,
                                              int as_gemm, void *out, int64_t ldo, int32_t *bad)
{
    const int64_t chunks = spx__cuda_dense_chunks(d->n);
    if (k == 0 || d->n == 0)
        return cudaSuccess;
    const unsigned grid = (unsigned)grid_for(k * chunks);
#define TAKE(T, D)                                                                                        \
    ((as_gemm ? take_b_kernel<T, D, Take::AS_GEMM><<<grid, BLOCK, 0, d->stream>>>((const T *)d->B, d->ldb, k, \
                                                                                   d->n, out, ldo, bad, chunks) \
              : take_b_kernel<T, D, Take::AS_B><<<grid, BLOCK, 0, d->stream>>>((const T *)d->B, d->ldb, k,    \
                                                                                d->n, out, ldo, bad, chunks)), \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, gemm, TAKE)
#undef TAKE
}

extern "C" cudaError_t spx__cuda_dense_find_nonfinite(const spx_cuda_dense_args *d, int64_t k, int32_t *bad)
{
    const int64_t chunks = spx__cuda_dense_chunks(d->n);
    cudaError_t e = cudaMemsetAsync(bad, 0, (size_t)chunks * sizeof *bad, d->stream);
    if (e != cudaSuccess || k == 0 || d->n == 0)
        return e;
#define FIND(T, D)                                                                                 \
    (take_b_kernel<T, D, Take::SCAN><<<(unsigned)grid_for(k * chunks), BLOCK, 0, d->stream>>>(    \
         (const T *)d->B, d->ldb, k, d->n, nullptr, 0, bad, chunks),                               \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, d->dtype, FIND)
#undef FIND
}

extern "C" cudaError_t spx__cuda_dense_recompute(const spx_cuda_csr *A, const int32_t *bad, int64_t blocks,
                                                 const spx_cuda_dense_args *d)
{
    const int64_t chunks = spx__cuda_dense_chunks(d->n);
    if (A->rows == 0 || d->n == 0)
        return cudaSuccess;
    const int64_t grid = grid_for(A->rows * chunks) < blocks ? grid_for(A->rows * chunks) : blocks;
#define RECOMPUTE(T, D)                                                                                     \
    (recompute_kernel<T><<<(unsigned)grid, BLOCK, 0, d->stream>>>(                                         \
         (const T *)d->B, d->ldb, A->rows, d->n, bad, chunks, A->rowptr, A->colidx, (const T *)A->vals,    \
         (typename acc_of<T>::type)d->alpha, (T *)d->C, d->ldc),                                            \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, d->dtype, RECOMPUTE)
#undef RECOMPUTE
}

extern "C" cudaError_t spx__cuda_dense_add_nonfinite(const spx_cuda_csr *At, spx_dtype gemm, const int32_t *bad,
                                                     const spx_cuda_dense_args *d)
{
    const int64_t k = At->rows, chunks = spx__cuda_dense_chunks(d->n);
    if (k == 0 || d->n == 0)
        return cudaSuccess;
#define ADD(T, D)                                                                                        \
    (add_nonfinite_kernel<T, D><<<(unsigned)grid_for(k * chunks), BLOCK, 0, d->stream>>>(               \
         (const T *)d->B, d->ldb, k, d->n, bad, chunks, At->rowptr, At->colidx, (const T *)At->vals,     \
         (typename acc_of<T>::type)d->alpha, (T *)d->C, d->ldc),                                          \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, gemm, ADD)
#undef ADD
}

// B's non-finite values, for the algorithms that multiply zeros A does not
// hold: the dense path (op(A) written out densely once per plan, then
// cuBLASLt's GEMM, dense_gemm.c) and the tensor-core kernels' zero-padded tiles
// (BSR blocks, gather_tc's row groups). 0 x Inf or 0 x NaN would put NaN where
// the sparse product has no term. So these run on a copy of B that holds
// zeros in place of its non-finite values, and afterwards those values' terms
// are added from A's columns (CSC): each such term is +-Inf or NaN, and a sum
// holding one is the same in any order, so the atomics keep results
// deterministic. The dense path with beta = 0 and B in the GEMM's type needs
// no copy: the GEMM reads B in place, then one kernel computes again from A's
// rows the elements of C that met a non-finite value of B (with beta = 0, C
// held nothing the GEMM overwrote): where C is at most B's size, those of the
// pieces of C's rows that are not finite; else, in one cooperative launch,
// those of the column chunks of B that hold such a value.
// Small products of 16-bit operands skip all this: spmm_dense_mma.cu's GEMM
// multiplies B as it is and computes again the elements whose sum is not
// finite.
#include "backend/cuda/device_types.cuh"

#include <cooperative_groups.h>
#include <type_traits>

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

// One warp per (row of B, chunk of SPX_DENSE_CHUNK columns), TAKE
// consecutive columns a lane: out = B with zeros for its non-finite values,
// as D (AS_GEMM) or as T; bad[row * chunks + chunk] = whether the chunk held
// one. Finiteness is judged as D: a value beyond f16's range becomes Inf
// there. A lane's columns move as 16-byte vectors where B's rows start on 16
// bytes (vec; the copy's always do): element by element, the loads waited
// on the stores before them, and the copy of a 512 x 4096 f32 B to bf16 took
// 7.2 us on an H200.
const int TAKE = SPX_DENSE_CHUNK / 32;
template <typename X> struct take_lane {
    static constexpr int VECS = TAKE * (int)sizeof(X) / 16;
    uint4 raw[VECS];
    __device__ __forceinline__ X *e() { return reinterpret_cast<X *>(raw); }
};
template <typename T, typename D, bool AS_GEMM>
__global__ void __launch_bounds__(BLOCK) take_b_kernel(const T *__restrict__ B, int64_t ldb, int64_t k, int64_t n,
                                                       bool vec, void *__restrict__ out_, int64_t ldo,
                                                       int32_t *__restrict__ bad, int64_t chunks)
{
    typedef typename std::conditional<AS_GEMM, D, T>::type O;
    static_assert(TAKE * 32 == SPX_DENSE_CHUNK && TAKE * sizeof(T) % 16 == 0 && TAKE * sizeof(O) % 16 == 0,
                  "a lane's columns are whole 16-byte vectors of B and of the copy");
    const int lane = threadIdx.x & 31;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); w < k * chunks;
         w += (int64_t)gridDim.x * WARPS) {
        const int64_t r = w / chunks, j0 = (w % chunks) * SPX_DENSE_CHUNK + TAKE * lane;
        const T *src = B + r * ldb + j0;
        O *dst = static_cast<O *>(out_) + r * ldo + j0;
        const bool whole = j0 + TAKE <= n;
        take_lane<T> x;
        take_lane<O> y;
        if (whole && vec) {
#pragma unroll
            for (int v = 0; v < x.VECS; v++)
                x.raw[v] = __ldg(reinterpret_cast<const uint4 *>(src) + v);
        } else {
#pragma unroll
            for (int t = 0; t < TAKE; t++)
                x.e()[t] = j0 + t < n ? src[t] : from_acc<T>(0);
        }
        bool any = false;
#pragma unroll
        for (int t = 0; t < TAKE; t++) {
            const D g = convert_from<D>(x.e()[t]);
            const bool fin = finite(g);
            any |= !fin;
            if constexpr (AS_GEMM)
                y.e()[t] = fin ? g : from_acc<D>(0);
            else
                y.e()[t] = fin ? x.e()[t] : from_acc<T>(0);
        }
        if (whole) { // the copy's rows start on 16 bytes, and so does j0 * sizeof(O)
#pragma unroll
            for (int v = 0; v < y.VECS; v++)
                reinterpret_cast<uint4 *>(dst)[v] = y.raw[v];
        } else {
#pragma unroll
            for (int t = 0; t < TAKE; t++)
                if (j0 + t < n)
                    dst[t] = y.e()[t];
        }
        any = __any_sync(SPX_FULL_MASK, any);
        if (lane == 0)
            bad[w] = any;
    }
}

// Bit r: whether row r0 + r (r < ROWS, r0 + r < rows) of X holds a value
// that is not finite in the chunk of columns from c0; the same in every lane.
// A lane reads ROWS x 64 bytes, all loads issued before any test. Where the
// chunk lies whole in X and X's rows start on 16 bytes (vec), a lane takes
// 64 consecutive bytes of each row as 16-byte vectors (a warp a whole row of
// the chunk a load); else a column every 32, indices past X clamped to its
// last row and column, which lie in the same chunk, so that the loads carry
// no predicate. Element loads held a 4 MB scan to 2 TB/s (H200).
template <int ROWS, typename T>
__device__ __forceinline__ unsigned nonfinite_rows(const T *X, int64_t ld, int64_t rows, int64_t n, int64_t r0,
                                                   int64_t c0, bool vec)
{
    constexpr int U = SPX_DENSE_CHUNK / 32, V = U * (int)sizeof(T) / 16;
    static_assert(V * 16 == U * (int)sizeof(T), "a lane's columns of a row are whole 16-byte vectors");
    const int lane = threadIdx.x & 31;
    union {
        uint4 v[ROWS][V];
        T e[ROWS][U];
    } x;
    if (vec && c0 + SPX_DENSE_CHUNK <= n) {
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const uint4 *row = reinterpret_cast<const uint4 *>(X + (r0 + r < rows ? r0 + r : rows - 1) * ld + c0);
#pragma unroll
            for (int v = 0; v < V; v++)
                x.v[r][v] = row[lane * V + v];
        }
    } else {
#pragma unroll
        for (int r = 0; r < ROWS; r++)
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int64_t i = r0 + r < rows ? r0 + r : rows - 1, j = c0 + u * 32 + lane;
                x.e[r][u] = X[i * ld + (j < n ? j : n - 1)];
            }
    }
    unsigned bits = 0;
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int u = 0; u < U; u++)
            if (!finite(x.e[r][u]) && r0 + r < rows)
                bits |= 1u << r;
    return __reduce_or_sync(SPX_FULL_MASK, bits);
}
// Rows of a chunk a warp scans: 64 bytes a lane.
template <typename T> constexpr int scan_rows() { return sizeof(T) >= 8 ? 1 : 8 / (int)sizeof(T); }

// C(i, j) = alpha * sum over row i of op(A) of A(i, p) * B(p, j), for the
// columns j of the chunk from c0; a warp's lanes take its columns.
template <typename T>
__device__ __forceinline__ void recompute_chunk(int64_t i, int64_t c0, int64_t n, const int64_t *__restrict__ rowptr,
                                                const int32_t *__restrict__ colidx, const T *__restrict__ avals,
                                                const T *__restrict__ B, int64_t ldb, typename acc_of<T>::type alpha,
                                                T *C, int64_t ldc)
{
    typedef typename acc_of<T>::type A;
    constexpr int U = SPX_DENSE_CHUNK / 32;
    const int lane = threadIdx.x & 31;
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

// After a GEMM on B itself with beta = 0, in one cooperative launch (a
// grid-wide barrier between the steps): bad[c] = epoch where chunk c of B's
// columns holds a non-finite value in some row (bad[chunks] = epoch where any
// does; flags of earlier calls hold other values); then
// C(i, j) = alpha * sum over row i of op(A) of A(i, p) * B(p, j) for every row
// i and the columns j of each marked chunk, the columns where the GEMM met
// such a value.
template <typename T>
__global__ void __launch_bounds__(BLOCK, SPX_DENSE_FIX_BLOCKS_PER_SM)
    fix_in_place_kernel(const T *__restrict__ B, int64_t ldb, bool vec, int64_t k, int64_t m, int64_t n,
                        int32_t *bad, int64_t chunks, int32_t epoch, const int64_t *__restrict__ rowptr,
                        const int32_t *__restrict__ colidx, const T *__restrict__ avals,
                        typename acc_of<T>::type alpha, T *C, int64_t ldc)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int lane = threadIdx.x & 31;
    const int64_t warp0 = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5), warps = (int64_t)gridDim.x * WARPS;
    constexpr int ROWS = scan_rows<T>();
    for (int64_t w = warp0; w < (k + ROWS - 1) / ROWS * chunks; w += warps)
        if (nonfinite_rows<ROWS>(B, ldb, k, n, w / chunks * ROWS, (w % chunks) * SPX_DENSE_CHUNK, vec) && lane == 0)
            bad[w % chunks] = bad[chunks] = epoch;
    grid.sync();
    if (((volatile int32_t *)bad)[chunks] != epoch) /* the common case: one load, not one a row and chunk */
        return;
    for (int64_t w = warp0; w < m * chunks; w += warps)
        if (((volatile int32_t *)bad)[w % chunks] == epoch)
            recompute_chunk(w / chunks, (w % chunks) * SPX_DENSE_CHUNK, n, rowptr, colidx, avals, B, ldb, alpha, C,
                            ldc);
}

// After a GEMM on B itself with beta = 0: each chunk of a row of C that holds
// a value that is not finite is computed again from A's row. A sum that met
// B's Inf or NaN is not finite, and one that did not is right, so this reads
// C where fix_in_place_kernel reads B: the fewer bytes where m <= k, and no
// grid-wide barrier.
template <typename T>
__global__ void __launch_bounds__(BLOCK)
    fix_from_c_kernel(const T *__restrict__ B, int64_t ldb, int64_t m, int64_t n, int64_t chunks,
                      const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colidx,
                      const T *__restrict__ avals, typename acc_of<T>::type alpha, T *C, int64_t ldc, bool vec)
{
    constexpr int ROWS = scan_rows<T>();
    for (int64_t w = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); w < (m + ROWS - 1) / ROWS * chunks;
         w += (int64_t)gridDim.x * WARPS) {
        const int64_t i0 = w / chunks * ROWS, c0 = (w % chunks) * SPX_DENSE_CHUNK;
        for (unsigned bits = nonfinite_rows<ROWS>(C, ldc, m, n, i0, c0, vec); bits; bits &= bits - 1)
            recompute_chunk(i0 + __ffs(bits) - 1, c0, n, rowptr, colidx, avals, B, ldb, alpha, C, ldc);
    }
}

// C(i, j) += alpha * A(i, r) * B(r, j) for every non-finite B(r, j) (as the
// GEMM's input type) and every entry of column r of op(A). A warp reads the
// flags of 32 (row, chunk) pairs in one load and works through the marked
// ones together: when B is finite, as it nearly always is, the launch is
// 1/32 of the blocks one pair a warp needed.
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
    for (int64_t w0 = ((int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5)) * 32; w0 < k * chunks;
         w0 += (int64_t)gridDim.x * WARPS * 32) {
        for (unsigned marked = __ballot_sync(SPX_FULL_MASK, w0 + lane < k * chunks && bad[w0 + lane]); marked;
             marked &= marked - 1) {
            const int64_t w = w0 + __ffs(marked) - 1, r = w / chunks, c0 = (w % chunks) * SPX_DENSE_CHUNK;
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
    const bool vec = d->vec > 1;
#define TAKE(T, D)                                                                                   \
    ((as_gemm ? take_b_kernel<T, D, true><<<grid, BLOCK, 0, d->stream>>>((const T *)d->B, d->ldb, k, d->n, vec, \
                                                                          out, ldo, bad, chunks)                \
              : take_b_kernel<T, D, false><<<grid, BLOCK, 0, d->stream>>>((const T *)d->B, d->ldb, k, d->n, vec, \
                                                                           out, ldo, bad, chunks)),              \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, gemm, TAKE)
#undef TAKE
}

template <typename T>
cudaError_t launch_fix_in_place(const spx_cuda_csr *A, int32_t *bad, int32_t epoch, int64_t *blocks,
                                const spx_cuda_dense_args *d, int64_t k)
{
    const T *B = (const T *)d->B, *avals = (const T *)A->vals;
    int64_t ldb = d->ldb, m = A->rows, n = d->n, chunks = spx__cuda_dense_chunks(d->n), ldc = d->ldc;
    bool vec = d->vec > 1;
    const int64_t *rowptr = A->rowptr;
    const int32_t *colidx = A->colidx;
    typename acc_of<T>::type alpha = (typename acc_of<T>::type)d->alpha;
    T *C = (T *)d->C;
    void *args[] = {&B, &ldb, &vec, &k, &m, &n, &bad, &chunks, &epoch, &rowptr, &colidx, &avals, &alpha, &C, &ldc};
    /* The kernel's loops cover the work with any grid. A block keeps
     * BLOCK x 64 bytes of B in flight, so one for every 16 KB of B, from one
     * to SPX_DENSE_FIX_BLOCKS_PER_SM an SM: more only add to the grid
     * barrier's cost (H200, B of 1-4 MB: 4.9-5.7 us against 6.9-7.1 with 4
     * an SM; 16-38 MB: within 4 %). */
    const int64_t work = grid_for((k > m ? k : m) * chunks), per_sm = *blocks / SPX_DENSE_FIX_BLOCKS_PER_SM,
                  scan = k * n * (int64_t)sizeof(T) / (BLOCK * 64),
                  want = scan < per_sm ? per_sm : scan < *blocks ? scan : *blocks;
    const int64_t first = work < want ? work : want < 1 ? 1 : want;
    for (int64_t grid = first;; grid = (grid + 1) / 2) {
        const cudaError_t e =
            cudaLaunchCooperativeKernel((const void *)fix_in_place_kernel<T>, (unsigned)grid, BLOCK, args, 0, d->stream);
        if (e != cudaErrorCooperativeLaunchTooLarge || grid == 1) {
            if (e == cudaSuccess && grid < first)
                *blocks = grid;
            return e;
        }
        cudaGetLastError();
    }
}

extern "C" cudaError_t spx__cuda_dense_fix_in_place(const spx_cuda_csr *A, int32_t *bad, int32_t epoch, int64_t *blocks,
                                                    const spx_cuda_dense_args *d, int64_t k)
{
    if (A->rows == 0 || d->n == 0)
        return cudaSuccess;
#define FIX(T, D) launch_fix_in_place<T>(A, bad, epoch, blocks, d, k)
    SPX_DENSE_DISPATCH(d->dtype, d->dtype, FIX)
#undef FIX
}

extern "C" cudaError_t spx__cuda_dense_fix_from_c(const spx_cuda_csr *A, const spx_cuda_dense_args *d)
{
    const int64_t chunks = spx__cuda_dense_chunks(d->n);
    if (A->rows == 0 || d->n == 0)
        return cudaSuccess;
#define FIX(T, D)                                                                                                 \
    (fix_from_c_kernel<T><<<(unsigned)grid_for((A->rows + scan_rows<T>() - 1) / scan_rows<T>() * chunks), BLOCK, 0, \
                            d->stream>>>((const T *)d->B, d->ldb, A->rows, d->n, chunks, A->rowptr, A->colidx,     \
                                         (const T *)A->vals, (typename acc_of<T>::type)d->alpha, (T *)d->C,        \
                                         d->ldc, d->c_vec != 0),                                                  \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, d->dtype, FIX)
#undef FIX
}

extern "C" cudaError_t spx__cuda_dense_add_nonfinite(const spx_cuda_csr *At, spx_dtype gemm, const int32_t *bad,
                                                     const spx_cuda_dense_args *d)
{
    const int64_t k = At->rows, chunks = spx__cuda_dense_chunks(d->n);
    if (k == 0 || d->n == 0)
        return cudaSuccess;
#define ADD(T, D)                                                                                        \
    (add_nonfinite_kernel<T, D><<<(unsigned)grid_for((k * chunks + 31) / 32), BLOCK, 0, d->stream>>>(               \
         (const T *)d->B, d->ldb, k, d->n, bad, chunks, At->rowptr, At->colidx, (const T *)At->vals,     \
         (typename acc_of<T>::type)d->alpha, (T *)d->C, d->ldc),                                          \
     cudaGetLastError())
    SPX_DENSE_DISPATCH(d->dtype, gemm, ADD)
#undef ADD
}

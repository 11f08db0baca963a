// Device-side value types for the SpMM kernels: accumulator type per value
// type, conversions, vector loads/stores of V elements, and the epilogue.
#ifndef SPX_DEVICE_TYPES_CUH
#define SPX_DEVICE_TYPES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "spx.h"
extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

#define SPX_FULL_MASK 0xffffffffu
// B row segments in flight per lane in the SpMM gather loops
#define SPX_SPMM_IN_FLIGHT 4

template <typename T> struct acc_of { typedef float type; };
template <> struct acc_of<double> { typedef double type; };

__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }
__device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_acc(typename acc_of<T>::type x);
template <> __device__ __forceinline__ float from_acc<float>(float x) { return x; }
template <> __device__ __forceinline__ double from_acc<double>(double x) { return x; }
template <> __device__ __forceinline__ __half from_acc<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

// The dense operands and scalars every SpMM kernel takes: C = alpha * op(A)
// * B + beta * C with B and C row-major, n columns.
template <typename T> struct dense_ops {
    int64_t n;
    const T *B;
    int64_t ldb;
    T *C;
    int64_t ldc;
    typename acc_of<T>::type alpha, beta;
    bool c_vec; // C's rows may be stored as 16-byte vectors
};

template <typename T> dense_ops<T> dense_ops_from(const spx_cuda_dense_args *d)
{
    dense_ops<T> o;
    o.n = d->n;
    o.B = static_cast<const T *>(d->B);
    o.ldb = d->ldb;
    o.C = static_cast<T *>(d->C);
    o.ldc = d->ldc;
    o.alpha = (typename acc_of<T>::type)d->alpha;
    o.beta = (typename acc_of<T>::type)d->beta;
    o.c_vec = d->c_vec != 0;
    return o;
}

// Value of entry p of A (pattern matrices have no values: 1).
template <typename T>
__device__ __forceinline__ typename acc_of<T>::type a_value(const T *vals, int64_t p)
{
    return vals ? to_acc(vals[p]) : typename acc_of<T>::type(1);
}

// Elements per 16-byte vector.
template <typename T> struct vec16 { static const int n = 16 / sizeof(T); };

// Load V elements of T at p into acc-typed registers. V == 1 or V * sizeof(T)
// == 16 (p then 16-byte aligned).
template <typename T, int V>
__device__ __forceinline__ void load_v(const T *__restrict__ p, typename acc_of<T>::type (&out)[V])
{
    if (V == 1) {
        out[0] = to_acc(__ldg(p));
    } else {
        uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
        const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
        for (int t = 0; t < V; t++)
            out[t] = to_acc(e[t]);
    }
}

// As load_v, through ordinary loads (shared memory).
template <typename T, int V>
__device__ __forceinline__ void load_plain(const T *p, typename acc_of<T>::type (&out)[V])
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

// Load the first `count` (< V) elements one by one, zeros after (edge of N).
template <typename T, int V>
__device__ __forceinline__ void load_partial(const T *__restrict__ p, int count,
                                             typename acc_of<T>::type (&out)[V])
{
#pragma unroll
    for (int t = 0; t < V; t++)
        out[t] = t < count ? to_acc(p[t]) : typename acc_of<T>::type(0);
}

// C[t] = alpha * acc[t] + beta * C[t] for t < count (beta == 0: C is not read).
// vec: p may be accessed as one 16-byte vector when count == V (dense_ops'
// c_vec); else element by element.
template <typename T, int V>
__device__ __forceinline__ void store_epilogue(T *p, int count, const typename acc_of<T>::type (&acc)[V],
                                               typename acc_of<T>::type alpha,
                                               typename acc_of<T>::type beta, bool vec)
{
    typedef typename acc_of<T>::type A;
    if (V > 1 && count == V && vec) {
        uint4 raw;
        T *e = reinterpret_cast<T *>(&raw);
        if (beta != A(0))
            raw = *reinterpret_cast<const uint4 *>(p);
#pragma unroll
        for (int t = 0; t < V; t++)
            e[t] = from_acc<T>(beta != A(0) ? alpha * acc[t] + beta * to_acc(e[t]) : alpha * acc[t]);
        *reinterpret_cast<uint4 *>(p) = raw;
        return;
    }
#pragma unroll
    for (int t = 0; t < V; t++)
        if (t < count)
            p[t] = from_acc<T>(beta != A(0) ? alpha * acc[t] + beta * to_acc(p[t]) : alpha * acc[t]);
}

// Accumulate a * b[t] into acc[t] for the V columns of one B row segment,
// loading b at row pointer brow + col0 (count valid elements, V when full).
template <typename T, int V>
__device__ __forceinline__ void fma_row(const T *__restrict__ brow, int count,
                                        typename acc_of<T>::type a,
                                        typename acc_of<T>::type (&acc)[V])
{
    typename acc_of<T>::type b[V];
    if (count == V)
        load_v<T, V>(brow, b);
    else
        load_partial<T, V>(brow, count, b);
#pragma unroll
    for (int t = 0; t < V; t++)
        acc[t] = fma(a, b[t], acc[t]);
}

// Row c of B at this lane's columns, bcol + c * ldb elements, as one 32 x 32
// -> 64-bit multiply-add (a 64-bit product costs ~8 instructions per entry in
// the gather loops). ldb_bytes = ldb * sizeof(T) < 2^32 (checked by the host).
template <typename T> __device__ __forceinline__ const T *b_row(const T *bcol, int c, uint32_t ldb_bytes)
{
    return reinterpret_cast<const T *>(reinterpret_cast<const char *>(bcol) + (uint64_t)(uint32_t)c * ldb_bytes);
}

// Where a lane's V columns of B row c are: B in global memory (through the
// read-only path). Other sources (shared-memory copies of some rows) provide
// the same row() and set generic, so that their pointers are read with
// generic loads.
template <typename T> struct b_global {
    const T *bcol; // B + the lane's first column
    uint32_t ldb_bytes;
    static constexpr bool generic = false;
    __device__ __forceinline__ const T *row(int c) const { return b_row(bcol, c, ldb_bytes); }
};
template <typename T> __device__ __forceinline__ b_global<T> b_in_global(const T *bcol, int64_t ldb)
{
    return b_global<T>{bcol, (uint32_t)ldb * (uint32_t)sizeof(T)};
}

// acc += vj[u] * B(cj[u], lane's V columns) for the first nvalid of U entries
// already broadcast to this lane: all U loads are issued before the FMAs, so
// U row segments are in flight at once. count: valid columns of this lane.
template <typename T, int V, int U, typename Src>
__device__ __forceinline__ void fma_rows(const Src &src, const int (&cj)[U], const typename acc_of<T>::type (&vj)[U],
                                         int nvalid, int count, typename acc_of<T>::type (&acc)[V])
{
    typename acc_of<T>::type b[U][V];
    if (count == V) {
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid) {
                if (Src::generic)
                    load_plain<T, V>(src.row(cj[u]), b[u]);
                else
                    load_v<T, V>(src.row(cj[u]), b[u]);
            }
    } else if (count > 0) {
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid)
                load_partial<T, V>(src.row(cj[u]), count, b[u]);
    }
    if (count <= 0)
        return;
#pragma unroll
    for (int u = 0; u < U; u++)
        if (u < nvalid)
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] = fma(vj[u], b[u][t], acc[t]);
}

// Dispatch on the value type and the vector width (1, or 16 bytes): CALL(T, V)
// is a macro expanding to a call returning cudaError_t.
#define SPX_DISPATCH_TV(dtype, vec, CALL)                                                     \
    switch (dtype) {                                                                          \
    case SPX_F32: return vec > 1 ? CALL(float, 4) : CALL(float, 1);                           \
    case SPX_F64: return vec > 1 ? CALL(double, 2) : CALL(double, 1);                         \
    case SPX_F16: return vec > 1 ? CALL(__half, 8) : CALL(__half, 1);                         \
    case SPX_BF16: return vec > 1 ? CALL(__nv_bfloat16, 8) : CALL(__nv_bfloat16, 1);          \
    default: return cudaErrorInvalidValue;                                                    \
    }

// Let `kernel` take dynamic shared memory up to what the device allows a
// block, so that a launch of `smem` bytes needs no other call. Every host
// thread sets the same value: setting each launch's own size raced (another
// thread could lower the limit between this one's call and its launch).
template <typename K> cudaError_t allow_dynamic_smem(K kernel, size_t smem)
{
    int dev = 0, optin = 0;
    cudaFuncAttributes fa;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess)
        e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess)
        return e;
    const size_t limit = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
    if (smem > limit)
        return cudaErrorInvalidValue;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)limit);
}

#endif

// Device-side value types for the SpMM kernels: accumulator type per value
// type, conversions, vector loads/stores of V elements, and the epilogue.
#ifndef SPX_DEVICE_TYPES_CUH
#define SPX_DEVICE_TYPES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

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
// * B + beta * C with B and C row-major, n columns. B's values are of TB: T,
// or for the row kernels at the bf16 and f16 precisions, f32 data's B rounded
// to that type (spx_cuda_dense_args.b_round).
template <typename T, typename TB = T> struct dense_ops {
    int64_t n;
    const TB *B;
    int64_t ldb;
    T *C;
    int64_t ldc;
    typename acc_of<T>::type alpha, beta;
    bool c_vec; // C's rows may be stored as 16-byte vectors
};

template <typename T, typename TB = T> dense_ops<T, TB> dense_ops_from(const spx_cuda_dense_args *d)
{
    dense_ops<T, TB> o;
    o.n = d->n;
    o.B = static_cast<const TB *>(d->B);
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

// The same, rounded to TB where B's values were rounded to TB (16-bit B for
// f32 data): A's and B's values then meet at one precision.
template <typename TB, typename T>
__device__ __forceinline__ typename acc_of<T>::type a_value_as(const T *vals, int64_t p)
{
    if constexpr (sizeof(TB) < sizeof(T))
        return to_acc(from_acc<TB>(a_value(vals, p)));
    else
        return a_value(vals, p);
}

// Two adjacent elements as one aligned access.
template <typename T> struct alignas(2 * sizeof(T)) pair_of {
    T x, y;
};

// Elements per 16-byte vector.
template <typename T> struct vec16 { static const int n = 16 / sizeof(T); };

// One element of global memory, through the read-only path (NC) or an
// ordinary load.
template <bool NC, typename T> __device__ __forceinline__ T load_global(const T *p)
{
    if constexpr (NC)
        return __ldg(p);
    else
        return *p;
}

// The raw vector that moves V values of T in one access (or in 16-byte
// parts): 16 bytes, or 8 (four 16-bit values).
template <typename T, int V> using raw_vector = typename std::conditional<V * sizeof(T) >= 16, uint4, uint2>::type;

// Load V elements of T at p into acc-typed registers. V == 1 or V * sizeof(T)
// == 16 or a multiple (that many 16-byte loads), or 8 (four 16-bit values);
// p then aligned to 16 bytes (8).
// NC: through the read-only path (load_global).
template <typename T, int V, bool NC = true>
__device__ __forceinline__ void load_v(const T *__restrict__ p, typename acc_of<T>::type (&out)[V])
{
    static_assert(V == 1 || V * sizeof(T) % 16 == 0 || V * sizeof(T) == 8, "loads of 1, 8 or 16 bytes");
    if constexpr (V == 1) {
        out[0] = to_acc(load_global<NC>(p));
    } else if constexpr (V * sizeof(T) > 16) {
        constexpr int P = 16 / sizeof(T);
#pragma unroll
        for (int w = 0; w < V / P; w++) {
            typename acc_of<T>::type part[P];
            load_v<T, P, NC>(p + w * P, part);
#pragma unroll
            for (int t = 0; t < P; t++)
                out[w * P + t] = part[t];
        }
    } else {
        typedef raw_vector<T, V> R;
        R raw = load_global<NC>(reinterpret_cast<const R *>(p));
        const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
        for (int t = 0; t < V; t++)
            out[t] = to_acc(e[t]);
    }
}

// As load_v, through ordinary loads (shared memory), for any V: where V
// elements are whole 16-byte vectors (p then 16-byte aligned), as vectors.
template <typename T, int V>
__device__ __forceinline__ void load_plain(const T *p, typename acc_of<T>::type (&out)[V])
{
    if constexpr (V * sizeof(T) % 16 == 0) {
        constexpr int E = 16 / sizeof(T);
#pragma unroll
        for (int w = 0; w < V / E; w++) {
            uint4 raw = reinterpret_cast<const uint4 *>(p)[w];
            const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
            for (int t = 0; t < E; t++)
                out[w * E + t] = to_acc(e[t]);
        }
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

// C[t * step] = alpha * acc[t] + beta * C[t * step] for t < count (beta ==
// 0: C is not read); step: elements between the lane's columns (lane_cols).
// vec: p may be accessed as vectors of V elements in all (16 bytes each, or
// one of 8: four 16-bit values) when count == V and step == 1 (dense_ops'
// c_vec: C and its rows start on 16 bytes); else element by element.
template <typename T, int V>
__device__ __forceinline__ void store_epilogue(T *p, int count, int step, const typename acc_of<T>::type (&acc)[V],
                                               typename acc_of<T>::type alpha,
                                               typename acc_of<T>::type beta, bool vec)
{
    typedef typename acc_of<T>::type A;
    static_assert(V == 1 || V * sizeof(T) % 16 == 0 || V * sizeof(T) == 8, "vectors of 8 or 16 bytes");
    if (V > 1 && count == V && step == 1 && vec) {
        typedef raw_vector<T, V> R;
        constexpr int P = sizeof(R) / sizeof(T);
#pragma unroll
        for (int w = 0; w < V / P; w++) {
            R raw;
            T *e = reinterpret_cast<T *>(&raw);
            if (beta != A(0))
                raw = reinterpret_cast<const R *>(p)[w];
#pragma unroll
            for (int t = 0; t < P; t++)
                e[t] = from_acc<T>(beta != A(0) ? alpha * acc[w * P + t] + beta * to_acc(e[t])
                                                : alpha * acc[w * P + t]);
            reinterpret_cast<R *>(p)[w] = raw;
        }
        return;
    }
#pragma unroll
    for (int t = 0; t < V; t++)
        if (t < count) {
            T *e = p + (int64_t)t * step;
            *e = from_acc<T>(beta != A(0) ? alpha * acc[t] + beta * to_acc(*e) : alpha * acc[t]);
        }
}

// The columns a lane owns in column tile `tile` of G lanes x V columns: V
// consecutive ones from `first` (one 16-byte vector of each B row), or, with
// SPREAD, every G-th one from `first`, for B whose rows do not start on 16
// bytes: each of the V loads is then one element per lane, coalesced across
// the group, and a tile still spans G x V columns (scalar lanes would need V
// times the tiles, each reloading A's row). count: how many lie below n (<= 0:
// the lane is idle).
struct lane_cols {
    int64_t first;
    int count, step;
    bool full; // the whole tile lies below n: every lane has V columns (the same for every lane)
};
template <int V, bool SPREAD>
__device__ __forceinline__ lane_cols lane_cols_of(int64_t tile, int G, int glane, int64_t n)
{
    lane_cols c;
    c.step = SPREAD ? G : 1;
    c.full = (tile + 1) * G * V <= n;
    c.first = tile * G * V + (SPREAD ? (int64_t)glane : (int64_t)glane * V);
    const int64_t left = n - c.first; // columns from the lane's first to n
    if (SPREAD) // 32-bit division: left is below V * G there
        c.count = left <= 0 ? 0 : left > (int64_t)(V - 1) * G ? V : ((int)left + G - 1) / G;
    else
        c.count = left >= V ? V : (left > 0 ? (int)left : 0);
    return c;
}

// Row c of B at this lane's columns, bcol + c * ldb elements, as one 32 x 32
// -> 64-bit multiply-add (a 64-bit product costs ~8 instructions per entry in
// the gather loops). ldb_bytes = ldb * sizeof(T) < 2^32 (checked by the host).
// MAD: as one mad.wide.u32 in inline PTX, which the compiler keeps as it is
// (in C it may fold bcol's own offset into the sum: 4 instructions an
// address; the mad gives 3 in SASS, IMAD.WIDE.U32 and a 64-bit add, as
// csrmm_v3 spends 4); ordinary loads from such an address are generic (ld, not
// ld.global). H100, the two together: 1.03x on the batches (forced on 68
// DLMC products); in the other row kernels they moved spills and times by
// -4 to +5 %.
template <bool MAD = false, typename T>
__device__ __forceinline__ const T *b_row(const T *bcol, int c, uint32_t ldb_bytes)
{
    if constexpr (MAD) {
        uint64_t a;
        asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(a) : "r"((uint32_t)c), "r"(ldb_bytes), "l"((uint64_t)bcol));
        return reinterpret_cast<const T *>(a);
    } else {
        return reinterpret_cast<const T *>(reinterpret_cast<const char *>(bcol) + (uint64_t)(uint32_t)c * ldb_bytes);
    }
}

// Where a lane's V columns of B row c are: B in global memory (through the
// read-only path, or with NC false ordinary loads; MAD: b_row's), V
// consecutive columns or, SPREAD, `step` elements apart (lane_cols). Other
// sources (shared-memory copies of some rows) provide the same row() and set
// generic, so that their pointers are read with generic loads; they are never
// spread.
template <typename T, bool SPREAD, bool NC = true, bool MAD = false> struct b_global {
    typedef T elem;
    const T *bcol; // B + the lane's first column
    uint32_t ldb_bytes;
    int step;
    bool full; // lane_cols.full
    static constexpr bool generic = false, spread = SPREAD, nc = NC;
    __device__ __forceinline__ const T *row(int c) const { return b_row<MAD>(bcol, c, ldb_bytes); }
};
template <bool SPREAD, bool NC = true, bool MAD = false, typename T>
__device__ __forceinline__ b_global<T, SPREAD, NC, MAD> b_in_global(const T *B, int64_t ldb, const lane_cols &lc)
{
    return b_global<T, SPREAD, NC, MAD>{B + lc.first, (uint32_t)ldb * (uint32_t)sizeof(T), lc.step, lc.full};
}

// r = s[0 .. U) in 16-byte loads (s aligned to 16 bytes; shared memory).
template <typename E, int U> __device__ __forceinline__ void load_shared16(const E *s, E (&r)[U])
{
    constexpr int P = 16 / sizeof(E);
    static_assert(16 % sizeof(E) == 0 && U % P == 0, "whole 16-byte vectors");
#pragma unroll
    for (int q = 0; q < U / P; q++) {
        const uint4 raw = reinterpret_cast<const uint4 *>(s)[q];
        const E *e = reinterpret_cast<const E *>(&raw);
#pragma unroll
        for (int j = 0; j < P; j++)
            r[q * P + j] = e[j];
    }
}

// A 16-bit value of E (bf16 or f16) held in the low (high: the high) half of
// a 32-bit word, widened to f32: for bf16 one shift or mask.
template <typename E> __device__ __forceinline__ float widen16(uint32_t word, bool high)
{
    static_assert(sizeof(E) == 2, "16-bit values");
    if constexpr (std::is_same<E, __nv_bfloat16>::value)
        return __uint_as_float(high ? word & 0xffff0000u : word << 16);
    else
        return __half2float(__ushort_as_half((unsigned short)(high ? word >> 16 : word)));
}

// 32-bit word i of a vector of two or four (i known at compile time: the
// vector stays in registers).
__device__ __forceinline__ uint32_t word_of(const uint2 &r, int i) { return i == 0 ? r.x : r.y; }
__device__ __forceinline__ uint32_t word_of(const uint4 &r, int i)
{
    return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w;
}

// Bits of column t of B row segment c (spread lanes: `step` apart).
template <typename Src> __device__ __forceinline__ uint32_t bits16(const Src &src, int c, int t)
{
    return load_global<Src::nc>(reinterpret_cast<const unsigned short *>(src.row(c) + t * (Src::spread ? src.step : 1)));
}

// fma_rows for 16-bit B in global memory: the loaded bits are kept as they
// are and widened at the FMAs. Widened right after its load, a value is used
// inside the load's branch (u < nvalid), so that each load waited for the one
// before: the batches on bf16 data took 1.1-4.2x the time of the same plans
// on f32 data; widened here 1.0-1.5x with 8 and 16 entries a batch (each
// value's widening is one more instruction beside its FMA), 1.2-3x with 32
// (H200, DLMC layers; docs/PERFORMANCE.md). Whole vectors (count == V) are
// loaded for every entry, past nvalid too: every caller holds a column of B
// there (0, or another entry's), so the load is safe and its result unused.
// With the test before each load, ptxas issued most of them one at a time
// between the FMAs of the entries before (predicate registers run short);
// without it all U go out first, as for f32: on bf16 data the batches ran
// 1.30x faster and the row kernels 1.10x, merge path as before (H200, 34
// DLMC layers at N = 256-4096, forced).
template <typename T, int V, int U, typename Src>
__device__ __forceinline__ void fma_rows16(const Src &src, const int (&cj)[U], const float (&vj)[U], int nvalid,
                                           int count, float (&acc)[V])
{
    typedef typename Src::elem E;
    static_assert(V == 1 || V * sizeof(E) == 16 || V * sizeof(E) == 8, "one load of 2, 8 or 16 bytes");
    if (count <= 0)
        return;
    if constexpr (Src::spread || V == 1) { // one value a word
        uint32_t bits[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid)
#pragma unroll
                for (int t = 0; t < V; t++)
                    bits[u][t] = t < count ? bits16(src, cj[u], t) : 0u;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid)
#pragma unroll
                for (int t = 0; t < V; t++)
                    acc[t] = fma(vj[u], widen16<E>(bits[u][t], false), acc[t]);
    } else if (count == V) { // two a word, as one vector load gives them
        typedef raw_vector<E, V> R;
        R raw[U];
#pragma unroll
        for (int u = 0; u < U; u++) // all U, past nvalid too (see above)
            raw[u] = load_global<Src::nc>(reinterpret_cast<const R *>(src.row(cj[u])));
        // Every entry's FMAs run and entries past nvalid keep acc as it was
        // (a select, no branch). Behind an `if (u < nvalid)` ptxas moved three
        // of the four f16 loads into their entries' branches, one wait each:
        // the row kernels on f16 data took up to 1.5x the time of bf16 (H200,
        // ca-CondMat at N = 128: 1.4x more stall on loads, the same
        // instructions).
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int t = 0; t < V; t++) {
                const float sum = fma(vj[u], widen16<E>(word_of(raw[u], t / 2), t & 1), acc[t]);
                acc[t] = u < nvalid ? sum : acc[t];
            }
    } else { // fewer than V columns (the tile N ends in; rare): each value as loaded
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid)
#pragma unroll
                for (int t = 0; t < V; t++)
                    if (t < count)
                        acc[t] = fma(vj[u], widen16<E>(bits16(src, cj[u], t), false), acc[t]);
    }
}

// acc += vj[u] * B(cj[u], lane's V columns) for the first nvalid of U entries
// already broadcast to this lane: all U loads are issued before the FMAs, so
// U row segments are in flight at once. count: valid columns of this lane.
// B's values are of Src::elem.
template <typename T, int V, int U, typename Src>
__device__ __forceinline__ void fma_rows(const Src &src, const int (&cj)[U], const typename acc_of<T>::type (&vj)[U],
                                         int nvalid, int count, typename acc_of<T>::type (&acc)[V])
{
    typedef typename acc_of<T>::type A;
    typedef typename Src::elem E;
    static_assert(std::is_same<A, typename acc_of<E>::type>::value, "B's values widen to the accumulator");
    if constexpr (sizeof(E) == 2 && !Src::generic) {
        fma_rows16<T, V, U>(src, cj, vj, nvalid, count, acc);
        return;
    }
    A b[U][V];
    if constexpr (Src::spread) {
        // the branch is the same for every lane of a tile (lane_cols.full):
        // in a tile that N ends inside, lanes with all V columns and lanes
        // with fewer take the predicated loads together, rather than one
        // after the other
        if (src.full) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (u < nvalid)
#pragma unroll
                    for (int t = 0; t < V; t++)
                        b[u][t] = to_acc(load_global<Src::nc>(src.row(cj[u]) + t * src.step));
        } else if (count > 0) {
#pragma unroll
            for (int u = 0; u < U; u++)
                if (u < nvalid)
#pragma unroll
                    for (int t = 0; t < V; t++)
                        b[u][t] = t < count ? to_acc(load_global<Src::nc>(src.row(cj[u]) + t * src.step)) : A(0);
        }
    } else if (count == V) {
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid) {
                if constexpr (Src::generic)
                    load_plain<E, V>(src.row(cj[u]), b[u]);
                else
                    load_v<E, V, Src::nc>(src.row(cj[u]), b[u]);
            }
    } else if (count > 0) {
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < nvalid)
                load_partial<E, V>(src.row(cj[u]), count, b[u]);
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

// Dispatch on the value type: CALL(T, V) is a macro expanding to a call
// returning cudaError_t, V the elements of a 16-byte vector of T (the caller
// picks its kernel's layout, vectors, one column or spread, from V and the
// operands).
#define SPX_DISPATCH_T(dtype, CALL)                                                           \
    switch (dtype) {                                                                          \
    case SPX_F32: return CALL(float, 4);                                                      \
    case SPX_F64: return CALL(double, 2);                                                     \
    case SPX_F16: return CALL(__half, 8);                                                     \
    case SPX_BF16: return CALL(__nv_bfloat16, 8);                                             \
    default: return cudaErrorInvalidValue;                                                    \
    }

#endif

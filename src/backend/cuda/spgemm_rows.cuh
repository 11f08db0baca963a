// The SpGEMM row kernel: one group of G threads (8 lanes, a warp, or a block of 256)
// computes one row of C with a table of its columns, in either phase.
//
// Products. The group takes A(i,:) G entries at a time; for each it cuts
// B(k,:) to the mask's column window (binary search) and a group scan turns
// the lengths into a flat list of the chunk's products, so the threads take
// consecutive products whatever the lengths of the rows of B. A matrix mask
// is tested per product by binary search in M(i,:).
//
// Table. Hash keys are claimed with atomicCAS (linear probing from a
// multiplicative hash); a dense table's slot is the column minus the row's
// first, marked with a fire-and-forget atomicMax (every writer writes the
// same key). Symbolic: the count of claims (hash) or of marked slots
// (dense) is the row's size. Numeric, unordered: values
// start at the add identity and products combine atomically (exact for the
// semirings and modes that allow it, see spx__cuda_gemm_numeric). Numeric,
// ordered: a round's products (consecutive in k order) are applied to each
// slot in increasing k: the earliest pending product of each slot wins an
// atomicMin on the slot's owner word, is applied, and the round repeats until
// none is pending. The first product of a column is stored as is, later ones
// added: the reduction of every C(i,j) is exactly the ref backend's.
//
// Output (numeric). Slots are compacted in order (dense tables are then
// sorted already; hash tables are sorted by rank counting in a warp of up
// to 128 entries, else by a bitonic network), identities dropped if asked,
// and the row is written out, or merged with accum's row by binary searches
// and group counts that give every entry its position.
//
// Numeric rows of a block whose column span is narrow enough skip the hash
// table (ranked_row): a bitmap of the span, scanned, gives each column its
// place in the row, so the entries come out compacted and sorted.
//
// Rows too large for shared memory whose columns are dense enough are
// computed in column windows (window_row): a dense table in shared memory
// per window, the products cut to it, the entries written window by window.
//
// Numeric rows of 33 to 128 products may skip the table (sorted_row, see
// spx__gemm_sorted_row): a warp lists their products as keys in registers,
// sorts them with a bitonic network and reduces each column's run in k
// order.
#ifndef SPX_SPGEMM_ROWS_CUH
#define SPX_SPGEMM_ROWS_CUH

#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <type_traits>

extern "C" {
#include "backend/cuda/spgemm_cuda.h"
}
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/sorted_columns.cuh"
#include "core/semiring.h"

#define SPX_GEMM_FULL 0xffffffffu

namespace spx_gemm {

constexpr int32_t EMPTY = -1;
constexpr uint32_t IDLE = 0xffffffffu;

// ---- semirings ----------------------------------------------------------------

template <spx_semiring_kind K, typename TT> struct semiring;
#define SPX_GEMM_SEMIRING(K, S, T_, ADD, MUL)                                                    \
    template <> struct semiring<SPX_SEMIRING_##K, T_> {                                          \
        typedef T_ T;                                                                            \
        static constexpr spx_semiring_kind kind = SPX_SEMIRING_##K;                              \
        __device__ static __forceinline__ int add(T *z, T x, T y) { return spx__##ADD##_##S(z, x, y); } \
        __device__ static __forceinline__ int mul(T *z, T x, T y) { return spx__##MUL##_##S(z, x, y); } \
        __device__ static __forceinline__ T identity() { return spx__ident_##ADD##_##S(); }    \
    };
SPX__BUILTIN_SEMIRINGS(SPX_GEMM_SEMIRING)
#undef SPX_GEMM_SEMIRING

// The symbolic phase: no values.
struct pattern_only {
    typedef int32_t T;
    static constexpr spx_semiring_kind kind = SPX_SEMIRING_CUSTOM;
    __device__ static __forceinline__ int add(T *z, T, T) { *z = 0; return 0; }
    __device__ static __forceinline__ int mul(T *z, T, T) { *z = 0; return 0; }
    __device__ static __forceinline__ T identity() { return 0; }
};

template <class SR> constexpr bool is_float_sr()
{
    return std::is_floating_point<typename SR::T>::value;
}
// Combining products in any order gives the same bits (and the same
// overflows): integer min/max, or, avos_sum (idempotent), and pair sums
// (every term is 1).
template <class SR> constexpr bool order_free()
{
    return (!is_float_sr<SR>() && SR::kind != SPX_SEMIRING_PLUS_TIMES) ||
           SR::kind == SPX_SEMIRING_PLUS_PAIR;
}
// Kernels exist for the ordered path unless the order never matters, and for
// the unordered one unless it would change results beyond float rounding
// (integer sums must overflow exactly where k order overflows).
template <class SR> constexpr bool has_ordered() { return !order_free<SR>(); }
template <class SR> constexpr bool has_unordered()
{
    return !(SR::kind == SPX_SEMIRING_PLUS_TIMES && !is_float_sr<SR>());
}

// ---- memory access ------------------------------------------------------------

// Tables in device memory are read through L2 (__ldcg): other threads of the
// block change them with atomics, which L1 does not see. Shared tables are
// read as volatile so that no value is kept in a register across the writes
// of other threads. Plain reads happen only after a barrier that orders them
// after every write they can see.
template <bool GLOB, typename T> __device__ __forceinline__ T ld(const T *p)
{
    if constexpr (GLOB)
        return __ldcg(p);
    else
        return *(const volatile T *)p;
}

// ---- row geometry ---------------------------------------------------------------

// Columns [lo, hi) the mask leaves to row i (a plain matrix mask: its row's
// span); mb, me delimit M(i,:).
__device__ __forceinline__ void row_window(const spx_gemm_dev &d, int64_t i, int64_t mb, int64_t me,
                                           int32_t *lo, int32_t *hi)
{
    int64_t l = 0, h = d.n;
    switch (d.mask) {
    case SPX_MASK_NONE: h = d.complement ? 0 : d.n; break;
    case SPX_MASK_UPPER: l = i; break;
    case SPX_MASK_STRICT_UPPER: l = i + 1; break;
    case SPX_MASK_LOWER: h = i + 1; break;
    case SPX_MASK_STRICT_LOWER: h = i; break;
    case SPX_MASK_MATRIX:
        if (!d.complement) {
            l = mb < me ? __ldg(d.M.col + mb) : 0;
            h = mb < me ? (int64_t)__ldg(d.M.col + me - 1) + 1 : 0;
        }
        break;
    default: break;
    }
    if (h > d.n)
        h = d.n;
    if (l > h)
        l = h;
    *lo = (int32_t)l;
    *hi = (int32_t)h;
}

// M(i,:) = [*mb, *me) (empty without a matrix mask) and row i's window.
__device__ __forceinline__ void row_bounds(const spx_gemm_dev &d, int64_t i, int64_t *mb, int64_t *me,
                                           int32_t *lo, int32_t *hi)
{
    *mb = d.M.ptr ? d.M.ptr[i] : 0;
    *me = d.M.ptr ? d.M.ptr[i + 1] : 0;
    row_window(d, i, *mb, *me, lo, hi);
}

// B(k,:) cut to the columns [lo, hi): [*qb, *qe) on entry is the whole row.
__device__ __forceinline__ void cut_row(const int32_t *__restrict__ col, int64_t *qb, int64_t *qe,
                                        int32_t lo, int32_t hi, int64_t n)
{
    if (lo > 0 && *qb < *qe && __ldg(col + *qb) < lo)
        *qb = lower_bound_col(col, *qb, *qe, lo);
    if (hi < n && *qb < *qe && __ldg(col + *qe - 1) >= hi)
        *qe = lower_bound_col(col, *qb, *qe, hi);
}

__device__ __forceinline__ void flag_overflow(const spx_gemm_dev &d, int64_t i)
{
    atomicMin(&d.status->bad_row, (long long)i);
}

// ---- groups of threads ------------------------------------------------------------

// A whole block (G == blockDim.x) or, for G <= 32, G aligned lanes of a
// warp. Sub-warp groups of a warp may follow different rows (different trip
// counts): their votes, shuffles and barriers name only the group's lanes.
template <int G, bool WARP = (G <= 32)> struct group {
    __device__ static __forceinline__ int rank() { return threadIdx.x; }
    __device__ static __forceinline__ void sync() { __syncthreads(); }
    __device__ static __forceinline__ bool any(bool p) { return __syncthreads_or(p) != 0; }
};
template <int G> struct group<G, true> {
    static_assert(G == 8 || G == 16 || G == 32, "a power-of-two part of a warp");
    __device__ static __forceinline__ int rank() { return threadIdx.x & (G - 1); }
    __device__ static __forceinline__ int base() { return threadIdx.x & 31 & ~(G - 1); }
    __device__ static __forceinline__ unsigned mask()
    {
        return G == 32 ? SPX_GEMM_FULL : ((1u << G) - 1) << base();
    }
    // the group's bits of a warp ballot, rank 0 lowest
    __device__ static __forceinline__ unsigned own(unsigned ballot)
    {
        return G == 32 ? ballot : (ballot >> base()) & ((1u << G) - 1);
    }
    __device__ static __forceinline__ void sync() { __syncwarp(mask()); }
    // __syncwarp orders the lanes' memory accesses; the vote alone does not
    __device__ static __forceinline__ bool any(bool p)
    {
        __syncwarp(mask());
        return __any_sync(mask(), p) != 0;
    }
};

// Inclusive scan over the G <= 32 lanes of a group.
template <int G> __device__ __forceinline__ int64_t lanes_scan(int64_t v)
{
    typedef group<G> grp;
    const int r = grp::rank();
#pragma unroll
    for (int o = 1; o < G; o <<= 1) {
        int64_t u = __shfl_up_sync(grp::mask(), v, o, G);
        if (r >= o)
            v += u;
    }
    return v;
}

// Inclusive scan over the group; *total gets the sum. scratch: 32 int64 of
// the group's shared staging (block groups). Every thread of the group must
// call it.
template <int G> __device__ __forceinline__ int64_t group_scan(int64_t v, int64_t *total,
                                                               int64_t *scratch)
{
    if constexpr (G <= 32) {
        int64_t x = lanes_scan<G>(v);
        *total = __shfl_sync(group<G>::mask(), x, G - 1, G);
        return x;
    } else {
        constexpr int NW = G / 32;
        const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
        int64_t x = lanes_scan<32>(v);
        if (lane == 31)
            scratch[w] = x;
        __syncthreads();
        if (w == 0) {
            int64_t t = lane < NW ? scratch[lane] : 0;
            t = lanes_scan<32>(t);
            if (lane < NW)
                scratch[lane] = t;
        }
        __syncthreads();
        int64_t r = x + (w > 0 ? scratch[w - 1] : 0);
        *total = scratch[NW - 1];
        __syncthreads(); // scratch is reused by the next scan
        return r;
    }
}

// Inclusive count of the group's threads with p set (ballots, no 64-bit
// scan); *total gets the count. Every thread of the group must call it.
template <int G> __device__ __forceinline__ int64_t flag_scan(bool p, int64_t *total, int64_t *scratch)
{
    if constexpr (G <= 32) {
        typedef group<G> grp;
        const unsigned b = grp::own(__ballot_sync(grp::mask(), p));
        *total = __popc(b);
        return __popc(b & (SPX_GEMM_FULL >> (31 - grp::rank())));
    } else {
        const int lane = threadIdx.x & 31;
        const unsigned b = __ballot_sync(SPX_GEMM_FULL, p);
        const int in_warp = __popc(b & (SPX_GEMM_FULL >> (31 - lane)));
        const int w = threadIdx.x >> 5;
        if (lane == 0)
            scratch[w] = __popc(b);
        __syncthreads();
        int64_t before = 0, all = 0;
#pragma unroll
        for (int x = 0; x < G / 32; x++) {
            const int64_t c = scratch[x];
            before += x < w ? c : 0;
            all += c;
        }
        __syncthreads(); // scratch is reused by the next scan
        *total = all;
        return before + in_warp;
    }
}

// The group's sum of v (every thread must call it).
template <int G> __device__ __forceinline__ int64_t group_sum(int32_t v, int64_t *scratch)
{
    if constexpr (G <= 32) {
        return (int32_t)__reduce_add_sync(group<G>::mask(), (unsigned)v);
    } else {
        int64_t total;
        group_scan<G>(v, &total, scratch);
        return total;
    }
}

// ---- staging and tables -------------------------------------------------------------

// A group's share of shared memory for the flat product list of one chunk of
// A(i,:): end[e] = inclusive prefix of the cut B row lengths, qoff[e] = the
// position in B of product 0 of entry e minus its first flat index.
template <typename T> struct stage {
    int64_t *end, *qoff, *scratch;
    T *aval;
};

template <typename T> __device__ __forceinline__ stage<T> carve_stage(unsigned char *p, int G)
{
    stage<T> s;
    s.end = (int64_t *)p;
    s.qoff = s.end + G;
    s.scratch = s.qoff + G;
    s.aval = (T *)(p + spx__gemm_stage_scan_bytes(G));
    return s;
}

template <typename T> struct table {
    int32_t *key;
    T *val;          // numeric
    uint32_t *own;   // ordered: the rank of the earliest pending product, IDLE if none
    uint8_t *hasv;   // ordered: the slot holds a value
    uint32_t S;      // slots
    int dense;       // slot = column - lo; else hashed
    int32_t lo;
    int shift;       // hash: 32 - log2(S)
};

// The same layout as spx__gemm_table_bytes: keys, values, owners, flags.
template <typename T, bool NUM, bool ORD>
__device__ __forceinline__ table<T> carve_table(unsigned char *p, uint32_t S)
{
    table<T> t;
    t.S = S;
    t.key = (int32_t *)p;
    p += spx__gemm_round16(4 * (int64_t)S);
    t.val = (T *)p;
    t.own = nullptr;
    t.hasv = nullptr;
    if (NUM)
        p += spx__gemm_round16((int64_t)sizeof(T) * S);
    if (NUM && ORD) {
        t.own = (uint32_t *)p;
        p += spx__gemm_round16(4 * (int64_t)S);
        t.hasv = p;
    }
    return t;
}

template <typename T> __device__ __forceinline__ uint32_t home(const table<T> &t, int32_t j)
{
    return t.dense ? (uint32_t)(j - t.lo) : ((uint32_t)j * 2654435769u) >> t.shift;
}

// The slot of column j, claimed now (*fresh) or before. Probing only with
// atomicCAS: no plain read races with another thread's claim. A table is
// sized for its row and never fills; NO_SLOT (a bug) ends the probing
// instead of spinning forever.
constexpr uint32_t NO_SLOT = 0xffffffffu;
template <typename T> __device__ __forceinline__ uint32_t claim(const table<T> &t, int32_t j, bool *fresh)
{
    uint32_t s = home(t, j);
    *fresh = false;
    for (uint32_t probes = 0; probes < t.S; probes++) {
        const int32_t k = atomicCAS(t.key + s, EMPTY, j);
        if (k == EMPTY || k == j) {
            *fresh = k == EMPTY;
            return s;
        }
        s = (s + 1) & (t.S - 1); // only hash tables hold other keys
    }
    return NO_SLOT;
}

// Whether column j has a slot (lookups run after every claim).
template <bool GLOB, typename T> __device__ __forceinline__ bool holds(const table<T> &t, int32_t j)
{
    if (t.dense)
        return j >= t.lo && (int64_t)j - t.lo < (int64_t)t.S && ld<GLOB>(t.key + (j - t.lo)) != EMPTY;
    for (uint32_t s = home(t, j);; s = (s + 1) & (t.S - 1)) {
        int32_t k = ld<GLOB>(t.key + s);
        if (k == j)
            return true;
        if (k == EMPTY)
            return false;
    }
}

// ---- combining values -------------------------------------------------------------

template <typename W, typename T> __device__ __forceinline__ W to_word(T x)
{
    static_assert(sizeof(W) == sizeof(T), "a word of the value's size");
    W w;
    memcpy(&w, &x, sizeof w);
    return w;
}
template <typename T, typename W> __device__ __forceinline__ T from_word(W w)
{
    T x;
    memcpy(&x, &w, sizeof x);
    return x;
}

// The unsigned word of a value's size.
template <typename T> struct word_of {
    typedef typename std::conditional<
        sizeof(T) == 1, uint8_t,
        typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type>::type type;
};

template <typename T> __device__ __forceinline__ bool same_bits(T x, T y)
{
    typedef typename word_of<T>::type W;
    return to_word<W>(x) == to_word<W>(y);
}

// *p = add(*p, v) atomically (unordered path; *p started at the identity).
// Returns nonzero on overflow.
template <class SR> __device__ __forceinline__ int combine(typename SR::T *p, typename SR::T v)
{
    typedef typename SR::T T;
    constexpr spx_semiring_kind K = SR::kind;
    constexpr bool MIN = K == SPX_SEMIRING_MIN_PLUS || K == SPX_SEMIRING_MIN_TIMES;
    constexpr bool MAX = K == SPX_SEMIRING_MAX_PLUS || K == SPX_SEMIRING_MAX_TIMES;
    if constexpr (sizeof(T) == 1) { // or: set the byte in its word
        if (v) {
            const uintptr_t a = (uintptr_t)p;
            atomicOr((unsigned int *)(a & ~(uintptr_t)3), 1u << (8 * (a & 3)));
        }
        return 0;
    } else if constexpr (std::is_floating_point<T>::value &&
                         (K == SPX_SEMIRING_PLUS_TIMES || K == SPX_SEMIRING_PLUS_PAIR)) {
        atomicAdd(p, v);
        return 0;
    } else if constexpr (K == SPX_SEMIRING_PLUS_PAIR) { // integer counts: each term is 1
        if constexpr (sizeof(T) == 4)
            return atomicAdd((int *)p, (int)v) > INT32_MAX - (int)v;
        else
            return (long long)atomicAdd((unsigned long long *)p, (unsigned long long)v) >
                   (long long)(INT64_MAX - v);
    } else if constexpr (!std::is_floating_point<T>::value && MIN) {
        if constexpr (sizeof(T) == 4)
            atomicMin((int *)p, (int)v);
        else
            atomicMin((long long *)p, (long long)v);
        return 0;
    } else if constexpr (!std::is_floating_point<T>::value && MAX) {
        if constexpr (sizeof(T) == 4)
            atomicMax((int *)p, (int)v);
        else
            atomicMax((long long *)p, (long long)v);
        return 0;
    } else { // float min/max, avos_sum: compare and swap, first guessing the identity
        typedef typename word_of<T>::type W;
        W *w = (W *)p;
        W old = to_word<W>(SR::identity());
        for (;;) {
            T z;
            if (SR::add(&z, from_word<T>(old), v))
                return 1;
            W nw = to_word<W>(z);
            if (nw == old)
                return 0;
            W seen = atomicCAS(w, old, nw);
            if (seen == old)
                return 0;
            old = seen;
        }
    }
}

// Ordered path: apply this round's products (act, slot, prod per thread) to
// their slots in increasing rank, i.e. in k order. Every thread of the group
// calls it.
template <class SR, int G, bool GLOB>
__device__ __forceinline__ void apply_in_order(const spx_gemm_dev &d, int64_t i,
                                               const table<typename SR::T> &t, bool act,
                                               uint32_t slot, typename SR::T prod)
{
    typedef typename SR::T T;
    const uint32_t r = (uint32_t)group<G>::rank();
    bool pending = act;
    for (;;) {
        if (pending)
            atomicMin(t.own + slot, r);
        group<G>::sync();
        const bool win = pending && ld<GLOB>(t.own + slot) == r;
        group<G>::sync();
        if (win) {
            if (ld<GLOB>(t.hasv + slot)) {
                T z;
                if (SR::add(&z, ld<GLOB>(t.val + slot), prod))
                    flag_overflow(d, i);
                t.val[slot] = z;
            } else {
                t.val[slot] = prod;
                t.hasv[slot] = 1;
            }
            t.own[slot] = IDLE;
            pending = false;
        }
        if (!group<G>::any(pending))
            return;
    }
}

template <typename T> __device__ __forceinline__ void write_entry(const spx_gemm_dev &d, int64_t pos,
                                                                  int32_t j, T v)
{
    if (d.out_wide)
        ((int64_t *)d.out_col)[pos] = j;
    else
        ((int32_t *)d.out_col)[pos] = j;
    ((T *)d.out_val)[pos] = v;
}

// Sort keys[0..P) (P a power of two) with their values, ascending.
template <int G, bool GLOB, typename T>
__device__ void bitonic_sort(int32_t *key, T *val, uint32_t P)
{
    const uint32_t r = (uint32_t)group<G>::rank();
    for (uint32_t k = 2; k <= P; k <<= 1) {
        for (uint32_t jj = k >> 1; jj > 0; jj >>= 1) {
            for (uint32_t x = r; x < P; x += G) {
                const uint32_t y = x ^ jj;
                if (y <= x)
                    continue;
                const int32_t kx = ld<GLOB>(key + x), ky = ld<GLOB>(key + y);
                if ((kx > ky) == ((x & k) == 0)) {
                    key[x] = ky;
                    key[y] = kx;
                    const T vx = ld<GLOB>(val + x), vy = ld<GLOB>(val + y);
                    val[x] = vy;
                    val[y] = vx;
                }
            }
            group<G>::sync();
        }
    }
}

// Sort keys[0..n) (distinct, n <= R * G) with their values in a group of
// G <= 32 lanes: every entry's place is the count of smaller keys. Cheaper
// than a bitonic network for the short rows of warp groups. The keys are
// read four at a time: up to three slots after n are padded, which a hash
// table (n at most half its slots, 64 at least) always has.
template <int G, int R, typename T> __device__ void rank_sort(int32_t *key, T *val, int n)
{
    typedef group<G> grp;
    const int r = grp::rank();
    const int n4 = (n + 3) & ~3;
    int32_t k[R];
    T v[R];
    int at[R];
#pragma unroll
    for (int q = 0; q < R; q++) {
        const int e = r + G * q;
        k[q] = e < n ? ld<false>(key + e) : INT32_MIN;
        v[q] = e < n ? ld<false>(val + e) : T(0);
        at[q] = 0;
    }
    grp::sync();
    if (r < n4 - n)
        key[n + r] = INT32_MAX; // never below a key
    grp::sync();
    for (int x = 0; x < n4; x += 4) {
        const int4 kx = *(const int4 *)(key + x); // 16-aligned: tables start aligned
#pragma unroll
        for (int q = 0; q < R; q++)
            at[q] += (kx.x < k[q]) + (kx.y < k[q]) + (kx.z < k[q]) + (kx.w < k[q]);
    }
    grp::sync();
#pragma unroll
    for (int q = 0; q < R; q++)
        if (r + G * q < n) {
            key[at[q]] = k[q];
            val[at[q]] = v[q];
        }
    grp::sync();
}

// ---- the products of a row ------------------------------------------------------------

// Entry p of A(i,:): the start of B(k,:) cut to the window [lo, hi) in *qb,
// its length returned (0 past the row's end pe or for an empty window).
__device__ __forceinline__ int64_t cut_entry(const spx_gemm_dev &d, int64_t p, int64_t pe, int32_t lo,
                                             int32_t hi, int64_t *qb)
{
    *qb = 0;
    if (p >= pe || lo >= hi)
        return 0;
    const int32_t k = __ldg(d.A.col + p);
    *qb = __ldg(d.B.ptr + k);
    int64_t qe = __ldg(d.B.ptr + k + 1);
    cut_row(d.B.col, qb, &qe, lo, hi, d.n);
    return qe - *qb;
}

// Whether the matrix mask M(i,:) = [mb, me) keeps column j (no matrix mask:
// every column).
__device__ __forceinline__ bool mask_keeps(const spx_gemm_dev &d, int32_t j, int64_t mb, int64_t me)
{
    if (!d.M.ptr)
        return true;
    const int64_t x = lower_bound_col(d.M.col, mb, me, j);
    return (x < me && __ldg(d.M.col + x) == j) != (d.complement != 0);
}

// Product u of the staged chunk (entries of A, see stage): the entry it
// comes from (returned), its position *q in B and column *j; whether the
// matrix mask M(i,:) = [mb, me) keeps it in *in.
template <typename T>
__device__ __forceinline__ int find_product(const spx_gemm_dev &d, const stage<T> &st, int entries,
                                            int64_t u, int64_t mb, int64_t me, int64_t *q,
                                            int32_t *j, bool *in)
{
    int e0 = 0, e1 = entries - 1;
    while (e0 < e1) {
        const int mid = (e0 + e1) >> 1;
        if (st.end[mid] > u)
            e1 = mid;
        else
            e0 = mid + 1;
    }
    *q = st.qoff[e0] + u;
    *j = __ldg(d.B.col + *q);
    *in = mask_keeps(d, *j, mb, me);
    return e0;
}

// ---- one row ------------------------------------------------------------------------

// Entries of key[0..n) (sorted) below v.
template <bool GLOB> __device__ __forceinline__ int64_t count_below(const int32_t *key, int64_t n, int32_t v)
{
    int64_t e = 0;
    while (e < n) {
        const int64_t mid = e + ((n - e) >> 1);
        if (ld<GLOB>(key + mid) < v)
            e = mid + 1;
        else
            n = mid;
    }
    return e;
}

// Row i of C (or the part of it in one column window) from its product's
// entries key/val[0..kept) (sorted, distinct) and accum's entries [ab, ae):
// each entry written at its place from out0, changed recorded. Returns the
// entries written. Every thread of the group calls it.
template <class SR, int G, bool GLOB>
__device__ int64_t write_row(const spx_gemm_dev &d, int64_t i, const int32_t *key,
                             const typename SR::T *val, int64_t kept,
                             const stage<typename SR::T> &st, int64_t ab, int64_t ae, int64_t out0)
{
    typedef typename SR::T T;
    typedef group<G> grp;
    const int r = grp::rank();
    const T ident = SR::identity();
    const T *Cv = (const T *)d.acc.val;
    const int64_t alen = ae - ab;
    bool changed = false;
    int64_t before = 0; // matched pairs in earlier chunks
    if (alen == 0) { // no accum row: the sorted entries are the row
        for (int64_t e = r; e < kept; e += G)
            write_entry(d, out0 + e, ld<GLOB>(key + e), ld<GLOB>(val + e));
        changed = kept > 0;
    } else {
        for (int64_t e0 = 0; e0 < kept; e0 += G) {
            const int64_t e = e0 + r;
            bool matched = false;
            int32_t j = 0;
            T v = ident;
            int64_t ra = 0;
            if (e < kept) {
                j = ld<GLOB>(key + e);
                v = ld<GLOB>(val + e);
                ra = lower_bound_col(d.acc.col, ab, ae, j) - ab;
                matched = ra < alen && __ldg(d.acc.col + ab + ra) == j;
                if (matched) {
                    const T a = Cv[ab + ra];
                    T z;
                    if (SR::add(&z, a, v))
                        flag_overflow(d, i);
                    changed |= !same_bits(z, a);
                    v = z;
                } else {
                    changed = true;
                }
            }
            int64_t chunk;
            const int64_t incl = flag_scan<G>(matched, &chunk, st.scratch);
            if (e < kept) /* entries before: e of the product, ra of accum, less the pairs below */
                write_entry(d, out0 + e + ra - (before + incl - matched), j, v);
            before += chunk;
        }
        before = 0;
        for (int64_t x0 = 0; x0 < alen; x0 += G) {
            const int64_t x = x0 + r;
            bool matched = false;
            int64_t e = 0;
            int32_t ja = 0;
            if (x < alen) {
                ja = __ldg(d.acc.col + ab + x);
                e = count_below<GLOB>(key, kept, ja); // product entries below ja
                matched = e < kept && ld<GLOB>(key + e) == ja;
            }
            int64_t chunk;
            const int64_t incl = flag_scan<G>(matched, &chunk, st.scratch);
            if (x < alen && !matched)
                write_entry(d, out0 + x + e - (before + incl), ja, Cv[ab + x]);
            before += chunk;
        }
    }
    if (d.track_changed && grp::any(changed) && r == 0)
        d.status->changed = 1;
    return kept + alen - before;
}

// Numeric output of row i (or of its window) once every product is in
// table t: compaction of the occupied slots in slot order (identities
// dropped if asked), sorting (hash tables), then write_row; returns the
// entries written.
template <class SR, int G, bool GLOB>
__device__ int64_t emit_row(const spx_gemm_dev &d, int64_t i, const table<typename SR::T> &t,
                            const stage<typename SR::T> &st, int64_t ab, int64_t ae, int64_t out0)
{
    typedef typename SR::T T;
    typedef group<G> grp;
    const int r = grp::rank();
    int64_t kept = 0;
    const T ident = SR::identity();
    for (int64_t s0 = 0; s0 < t.S; s0 += G) {
        const int64_t s = s0 + r;
        int32_t kk = EMPTY;
        T vv = ident;
        if (s < t.S)
            kk = ld<GLOB>(t.key + s);
        bool keep = false;
        if (kk != EMPTY) {
            vv = ld<GLOB>(t.val + s);
            keep = !(d.drop && vv == ident);
        }
        int64_t chunk;
        const int64_t incl = flag_scan<G>(keep, &chunk, st.scratch);
        grp::sync(); // every read of this chunk before the writes below
        if (keep) {
            t.key[kept + incl - 1] = kk;
            t.val[kept + incl - 1] = vv;
        }
        kept += chunk;
        grp::sync();
    }
    if (!t.dense && kept > 1) { // hash order: sort
        constexpr int RS = G <= 32 && !GLOB ? 128 / G : 0; // rank sort up to 128 entries
        if (RS && kept <= G) {
            rank_sort<G, 1>(t.key, t.val, (int)kept);
        } else if (RS && kept <= 2 * G) {
            rank_sort<G, 2>(t.key, t.val, (int)kept);
        } else if (RS && kept <= 4 * G) {
            rank_sort<G, 4>(t.key, t.val, (int)kept);
        } else if (RS >= 8 && kept <= 8 * G) {
            rank_sort<G, (RS >= 8 ? 8 : 1)>(t.key, t.val, (int)kept);
        } else {
            uint32_t P = 1;
            while ((int64_t)P < kept)
                P <<= 1;
            for (uint32_t s = (uint32_t)kept + r; s < P; s += G)
                t.key[s] = INT32_MAX;
            grp::sync();
            bitonic_sort<G, GLOB>(t.key, t.val, P);
        }
    }
    return write_row<SR, G, GLOB>(d, i, t.key, t.val, kept, st, ab, ae, out0);
}

// Ascending bitonic sort of 32 * R keys held R per lane, element lane * R + q
// in k[q]: strides below R swap registers, the others exchange lanes.
template <int R> __device__ __forceinline__ void warp_sort(uint32_t (&k)[R])
{
    const uint32_t lane = threadIdx.x & 31;
#pragma unroll
    for (uint32_t K = 2; K <= 32 * R; K <<= 1) {
#pragma unroll
        for (uint32_t J = K >> 1; J > 0; J >>= 1) {
#pragma unroll
            for (int q = 0; q < R; q++) {
                const uint32_t e = lane * R + q;
                const bool up = (e & K) == 0;
                if (J >= R) {
                    const uint32_t o = __shfl_xor_sync(SPX_GEMM_FULL, k[q], J / R);
                    k[q] = up == ((e & J) == 0) ? min(k[q], o) : max(k[q], o);
                } else if ((q & J) == 0) {
                    const uint32_t x = k[q], y = k[q | J];
                    k[q] = up ? min(x, y) : max(x, y);
                    k[q | J] = up ? max(x, y) : min(x, y);
                }
            }
        }
    }
}

// Numeric row i when it has at most 32 * R products (a sorted bin): a warp
// lists the products as keys (column - rlo above the product's position in
// k order, see SPX_GEMM_SORT_SHIFT) with their values in shared memory,
// sorts the keys in registers, and the first product of each column
// reduces the column's values in k order: exact for every semiring and
// mode, no table to clear, probe or compact.
template <class SR, int R>
__device__ void sorted_row(const spx_gemm_dev &d, int64_t i, unsigned char *tmem,
                           const stage<typename SR::T> &st)
{
    typedef typename SR::T T;
    constexpr int P = 32 * R;
    constexpr uint32_t NONE = 0xffffffffu, POS = SPX_GEMM_SORT_MAX - 1;
    const uint32_t lane = threadIdx.x & 31;
    uint32_t *key = (uint32_t *)tmem; // the layout of carve_table: keys, then values
    T *val = (T *)(tmem + spx__gemm_round16(4 * (int64_t)P));
    int64_t mb, me;
    int32_t lo, hi;
    row_bounds(d, i, &mb, &me, &lo, &hi);
    const int32_t rlo = d.rlo[i];

    // ---- products, in k order, as keys and values ----
    const int64_t pa = d.A.ptr[i], pe = d.A.ptr[i + 1];
    const T *Av = (const T *)d.A.val, *Bv = (const T *)d.B.val;
    int n = 0; // products listed so far
    for (int64_t c0 = pa; c0 < pe; c0 += 32) {
        const int64_t p = c0 + lane;
        int64_t qb;
        const int64_t cut = cut_entry(d, p, pe, lo, hi, &qb);
        const int len = (int)(cut < P ? cut : P); // more than P: the bin is wrong (flagged below)
        const T av = Av && len > 0 ? Av[p] : T(1);
        int incl = len;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int u = __shfl_up_sync(SPX_GEMM_FULL, incl, o);
            if ((int)lane >= o)
                incl += u;
        }
        const int total = __shfl_sync(SPX_GEMM_FULL, incl, 31);
        st.end[lane] = incl;
        st.qoff[lane] = qb - (incl - len);
        st.aval[lane] = av;
        __syncwarp();
        if (n + total > P) { // the work pass counted fewer products: a bug, not an input
            if (lane == 0)
                d.status->internal = 1;
            break;
        }
        const int entries = pe - c0 < 32 ? (int)(pe - c0) : 32;
        for (int u = lane; u < total; u += 32) {
            int64_t q;
            int32_t j;
            bool act;
            const int e0 = find_product(d, st, entries, u, mb, me, &q, &j, &act);
            key[n + u] = act ? ((uint32_t)(j - rlo) << SPX_GEMM_SORT_SHIFT) | (uint32_t)(n + u) : NONE;
            if (act && SR::mul(&val[n + u], st.aval[e0], Bv ? Bv[q] : T(1)))
                flag_overflow(d, i);
        }
        n += total;
        __syncwarp(); // the staging is rewritten by the next chunk
    }
    for (int u = n + (int)lane; u < P; u += 32)
        key[u] = NONE;
    __syncwarp();

    // ---- sort; the first key of each column heads it ----
    uint32_t k[R];
#pragma unroll
    for (int q = 0; q < R; q++)
        k[q] = key[lane * R + q];
    __syncwarp(); // every load before key is rewritten
    warp_sort<R>(k);
    const uint32_t last = __shfl_up_sync(SPX_GEMM_FULL, k[R - 1], 1); // the element before lane * R
    bool head[R];
    unsigned heads[R];
    int below = 0, mine = 0; // heads in lower lanes; in this lane
#pragma unroll
    for (int q = 0; q < R; q++) {
        const uint32_t prev = q > 0 ? k[q - 1] : (lane > 0 ? last : NONE);
        head[q] = k[q] != NONE && (k[q] >> SPX_GEMM_SORT_SHIFT) != (prev >> SPX_GEMM_SORT_SHIFT);
    }
    const int64_t ab = d.acc.ptr ? d.acc.ptr[i] : 0, ae = d.acc.ptr ? d.acc.ptr[i + 1] : 0;
    int32_t *out_key = (int32_t *)key; // the row's entries, compacted, for accum
    // a head reduces its column's products in k order (sorted keys in memory)
#pragma unroll
    for (int q = 0; q < R; q++)
        key[lane * R + q] = k[q];
    __syncwarp();
    const T ident = SR::identity();
    T v[R];
#pragma unroll
    for (int q = 0; q < R; q++) {
        v[q] = ident;
        if (head[q]) {
            const uint32_t c = k[q] >> SPX_GEMM_SORT_SHIFT;
            v[q] = val[k[q] & POS];
            for (int x = lane * R + q + 1; x < P; x++) {
                const uint32_t kx = key[x];
                if ((kx >> SPX_GEMM_SORT_SHIFT) != c)
                    break;
                if (SR::add(&v[q], v[q], val[kx & POS]))
                    flag_overflow(d, i);
            }
            head[q] = !(d.drop && v[q] == ident);
        }
    }
#pragma unroll
    for (int q = 0; q < R; q++) {
        heads[q] = __ballot_sync(SPX_GEMM_FULL, head[q]);
        below += __popc(heads[q] & ((1u << lane) - 1));
    }
    int kept = 0;
#pragma unroll
    for (int q = 0; q < R; q++)
        kept += __popc(heads[q]);
    __syncwarp(); // every read of key and val before the entries replace them
#pragma unroll
    for (int q = 0; q < R; q++) {
        const int at = below + mine;
        const int32_t j = rlo + (int32_t)(k[q] >> SPX_GEMM_SORT_SHIFT);
        if (head[q]) {
            mine++;
            if (ae == ab) {
                write_entry(d, d.off[i] - d.base + at, j, v[q]);
            } else {
                out_key[at] = j;
                val[at] = v[q];
            }
        }
    }
    if (ae == ab) {
        if (d.act && lane == 0)
            d.act[i] = kept;
        if (d.track_changed && kept > 0 && lane == 0)
            d.status->changed = 1;
    } else {
        __syncwarp();
        const int64_t written = write_row<SR, 32, false>(d, i, out_key, val, kept, st, ab, ae,
                                                         d.off[i] - d.base);
        if (d.act && lane == 0)
            d.act[i] = written;
    }
    __syncwarp(); // the row's memory is reused by the next row
}

// f(act, j, prod) for every product of row i with a column in [clo, chi)
// that the matrix mask keeps: its column j and (NUM) value prod. Every
// thread of the group calls f as often as the others (act false when it has
// no product that round), so f may synchronize the group.
//
// Products come as a flat list of each chunk of G entries of A(i,:): a scan
// of the entries' lengths, staged, and a binary search per product. With
// WALK (columns only, in any order, f without group operations), a group of
// 8 whose entries have no more products each than the flat list has rounds
// lets every thread walk its own entry's row of B instead. H100, symbolic
// 8-lane kernel, uniform 1M at 8 per row squared: 1034 -> 790 us; 3D
// Laplacian 369 -> 356 us. Tried and not kept: the walk for numeric rows
// (its loads are not coalesced; H200, Laplacian 1005 -> 1085 us); for rows
// whose entries may take twice the flat list's rounds (graph products 10-17 %
// slower); the entries one at a time, the group's threads over each one's
// row of B (Laplacian: symbolic 433 us, numeric 1247 us fast, 1316 us
// deterministic against 1355).
template <class SR, int G, bool NUM, bool WALK = false, class F>
__device__ __forceinline__ void each_product(const spx_gemm_dev &d, int64_t i,
                                             const stage<typename SR::T> &st, int32_t clo,
                                             int32_t chi, int64_t mb, int64_t me, F &&f)
{
    static_assert(!(WALK && NUM), "the walk lists columns only");
    typedef typename SR::T T;
    typedef group<G> grp;
    const int r = grp::rank();
    const int64_t pa = d.A.ptr[i], pe = d.A.ptr[i + 1];
    const T *Av = (const T *)d.A.val, *Bv = (const T *)d.B.val;
    for (int64_t c0 = pa; c0 < pe; c0 += G) {
        const int64_t p = c0 + r;
        int64_t qb;
        const int64_t len = cut_entry(d, p, pe, clo, chi, &qb);
        const T av = NUM && Av && len > 0 ? Av[p] : T(1);
        if constexpr (WALK && G <= 8) {
            // lengths capped so that the sum fits
            const unsigned l = len < (1 << 26) ? (unsigned)len : (1u << 26);
            const unsigned most = __reduce_max_sync(grp::mask(), l);
            if (most <= (__reduce_add_sync(grp::mask(), l) + G - 1) / G) {
                for (int64_t q = qb; q < qb + len; q++) {
                    const int32_t j = __ldg(d.B.col + q);
                    f(mask_keeps(d, j, mb, me), j, T(0));
                }
                continue; // the staging was not touched
            }
        }
        int64_t total;
        const int64_t incl = group_scan<G>(len, &total, st.scratch);
        st.end[r] = incl;
        st.qoff[r] = qb - (incl - len);
        if (NUM)
            st.aval[r] = av;
        grp::sync();
        const int entries = pe - c0 < G ? (int)(pe - c0) : G; // short rows search fewer
        for (int64_t u0 = 0; u0 < total; u0 += G) {
            const int64_t u = u0 + r;
            bool act = u < total;
            int32_t j = 0;
            T prod = T(0);
            if (act) {
                int64_t q;
                const int e0 = find_product(d, st, entries, u, mb, me, &q, &j, &act);
                if (NUM && act && SR::mul(&prod, st.aval[e0], Bv ? Bv[q] : T(1)))
                    flag_overflow(d, i);
            }
            f(act, j, prod);
        }
        grp::sync(); // the staging is rewritten by the next chunk
    }
    grp::sync();
}

// Row i's products with columns in [clo, chi) into table t (cleared here).
// Returns the thread's claims of fresh hash slots. Every thread of the group
// calls it.
template <class SR, int G, bool NUM, bool ORD, bool GLOB>
__device__ __forceinline__ int64_t fill_table(const spx_gemm_dev &d, int64_t i,
                                              const table<typename SR::T> &t,
                                              const stage<typename SR::T> &st, int32_t clo,
                                              int32_t chi, int64_t mb, int64_t me)
{
    typedef typename SR::T T;
    const int r = group<G>::rank();
    for (uint32_t s = r; s < t.S; s += G) {
        t.key[s] = EMPTY;
        if (NUM && ORD) {
            t.own[s] = IDLE;
            t.hasv[s] = 0;
        } else if (NUM) {
            t.val[s] = SR::identity();
        }
    }
    group<G>::sync();
    int64_t claimed = 0;
    each_product<SR, G, NUM, !NUM>(d, i, st, clo, chi, mb, me, [&](bool act, int32_t j, T prod) {
        uint32_t slot = 0;
        if (act) {
            if (t.dense) { // every writer of the slot writes j: no claim
                slot = (uint32_t)(j - t.lo);
                atomicMax(t.key + slot, j);
            } else {
                bool fresh;
                slot = claim(t, j, &fresh);
                claimed += fresh;
            }
            if (slot == NO_SLOT) {
                d.status->internal = 1;
                act = false;
            } else if (NUM && !ORD && combine<SR>(t.val + slot, prod)) {
                flag_overflow(d, i);
            }
        }
        if (NUM && ORD)
            apply_in_order<SR, G, GLOB>(d, i, t, act, slot, prod);
    });
    return claimed;
}

// Symbolic: the entries of table t (claimed: the thread's fresh hash claims)
// and, added to *extras, accum's entries [xb, xe) it lacks.
template <int G, bool GLOB, typename T>
__device__ __forceinline__ int64_t count_table(const spx_gemm_dev &d, const table<T> &t,
                                               const stage<T> &st, int64_t claimed, int64_t xb,
                                               int64_t xe, int64_t *extras)
{
    const int r = group<G>::rank();
    if (t.dense) { // count the marked slots
        claimed = 0;
        for (uint32_t x = r; x < t.S; x += G)
            claimed += ld<GLOB>(t.key + x) != EMPTY;
    }
    const int64_t count = group_sum<G>((int32_t)claimed, st.scratch);
    if (xe > xb) {
        int32_t extra = 0;
        for (int64_t x = xb + r; x < xe; x += G)
            extra += !holds<GLOB>(t, __ldg(d.acc.col + x));
        *extras += group_sum<G>(extra, st.scratch);
    }
    return count;
}

// Row i of C once its entries are written (numeric) or counted (symbolic).
template <int G, bool NUM>
__device__ __forceinline__ void finish_row(const spx_gemm_dev &d, int64_t i, int64_t done,
                                           int64_t extras)
{
    if (group<G>::rank() != 0)
        return;
    if (NUM && d.act)
        d.act[i] = done;
    if (!NUM) {
        d.cnt[i] = (int32_t)done;
        d.tot[i] = done + extras;
    }
}

// ---- rows ranked by a bitmap of their span --------------------------------------------

// A numeric row of a block bin may skip the hash table when a bitmap of its
// column span fits beside its entries in the block's table memory (room
// bytes): a first pass over the products sets their columns' bits, a scan of
// the bitmap gives every column its place among the row's entries, and a
// second pass combines each product at its column's place. The entries come
// out compacted and sorted: no probing, no compaction of the table's slots
// and no sort, which took most of the block rows' time (a 256-thread
// bitonic sort of a few hundred entries and its barriers). Only for rows of
// at most RANK_PRODUCTS products an entry: the second pass costs a round per
// 256 products, about what a round of the sort costs, so rows of many
// products an entry gain nothing (H100, bcsstk13 squared, 8-16 products an
// entry: 0.94-1.00x; pubmed, ca-CondMat and R-MAT scale 16, under 2 for most
// rows: 1.25-1.6x).
constexpr int64_t RANK_PRODUCTS = 4;
template <class SR, bool ORD>
__device__ __forceinline__ bool ranked_fits(int64_t room, int64_t size, int64_t range, int64_t prod)
{
    return range > 0 && prod <= RANK_PRODUCTS * size &&
           8 * ((range + 31) >> 5) <= room - spx__gemm_table_bytes(size, sizeof(typename SR::T), 1, ORD);
}

// The bitmap map[0..W) (.x: the bits of 32 columns from lo): .y of every word
// gets the set bits of the words below it, key[0..size) the columns in
// order. Returns the set bits (size unless the counts are wrong). Every
// thread of the group calls it; each takes a run of consecutive words.
template <int G>
__device__ int64_t rank_bits(uint2 *map, uint32_t W, int32_t *key, int64_t size, int32_t lo,
                             int64_t *scratch)
{
    const uint32_t per = (W + G - 1) / G, x0 = (uint32_t)group<G>::rank() * per;
    const uint32_t x1 = x0 + per < W ? x0 + per : W;
    int32_t mine = 0;
    for (uint32_t x = x0; x < x1; x++)
        mine += __popc(map[x].x);
    int64_t total;
    int64_t run = group_scan<G>(mine, &total, scratch) - mine;
    for (uint32_t x = x0; x < x1; x++) {
        uint32_t b = map[x].x;
        map[x].y = (uint32_t)run;
        for (; b && run < size; b &= b - 1)
            key[run++] = lo + (int32_t)(32 * x) + __ffs(b) - 1;
    }
    group<G>::sync();
    return total;
}

// Numeric row i of `size` entries over columns [rlo, rlo + range) in the
// block's table memory tmem (see ranked_fits): entries (key, value, owner,
// flag as a table of `size` slots) then the bitmap.
template <class SR, bool ORD>
__device__ void ranked_row(const spx_gemm_dev &d, int64_t i, unsigned char *tmem,
                           const stage<typename SR::T> &st, int64_t size, int32_t rlo,
                           int64_t range, int32_t lo, int32_t hi, int64_t mb, int64_t me)
{
    typedef typename SR::T T;
    constexpr int G = SPX_GEMM_BLOCK;
    table<T> t = carve_table<T, true, ORD>(tmem, (uint32_t)size);
    t.dense = 1; // all slots hold entries, in column order
    uint2 *map = (uint2 *)(tmem + spx__gemm_table_bytes(size, sizeof(T), 1, ORD));
    const uint32_t W = (uint32_t)((range + 31) >> 5);
    for (uint32_t x = threadIdx.x; x < W; x += G)
        map[x] = make_uint2(0, 0);
    for (int64_t s = threadIdx.x; s < size; s += G) {
        if (ORD) {
            t.own[s] = IDLE;
            t.hasv[s] = 0;
        } else {
            t.val[s] = SR::identity();
        }
    }
    __syncthreads();
    each_product<SR, G, false>(d, i, st, lo, hi, mb, me, [&](bool act, int32_t j, T) {
        if (act) {
            const uint32_t c = (uint32_t)(j - rlo);
            atomicOr(&map[c >> 5].x, 1u << (c & 31));
        }
    });
    if (rank_bits<G>(map, W, t.key, size, rlo, st.scratch) != size && threadIdx.x == 0)
        d.status->internal = 1; // the symbolic count differs: a bug
    each_product<SR, G, true>(d, i, st, lo, hi, mb, me, [&](bool act, int32_t j, T prod) {
        uint32_t slot = 0;
        if (act) {
            const uint32_t c = (uint32_t)(j - rlo);
            const uint2 w = map[c >> 5]; // read only since rank_bits
            slot = w.y + __popc(w.x & ((1u << (c & 31)) - 1));
            if (slot >= size) {
                d.status->internal = 1;
                act = false;
            } else if (!ORD && combine<SR>(t.val + slot, prod)) {
                flag_overflow(d, i);
            }
        }
        if (ORD)
            apply_in_order<SR, G, false>(d, i, t, act, slot, prod);
    });
    const int64_t ab = d.acc.ptr ? d.acc.ptr[i] : 0, ae = d.acc.ptr ? d.acc.ptr[i + 1] : 0;
    const int64_t out0 = d.off[i] - d.base;
    const int64_t done = d.drop ? emit_row<SR, G, false>(d, i, t, st, ab, ae, out0) // drops identities
                                : write_row<SR, G, false>(d, i, t.key, t.val, size, st, ab, ae, out0);
    __syncthreads(); // the memory is reused by the next row
    finish_row<G, true>(d, i, done, 0);
}

// Row i of C with one table: in the group's shared memory, or in device
// memory (GLOB).
template <class SR, int G, bool NUM, bool ORD, bool GLOB>
__device__ void gemm_row(const spx_gemm_dev &d, int64_t i, unsigned char *tmem, int64_t room,
                         const stage<typename SR::T> &st)
{
    typedef typename SR::T T;
    int64_t mb, me;
    int32_t lo, hi;
    row_bounds(d, i, &mb, &me, &lo, &hi);
    const int64_t size = NUM ? d.cnt[i] : d.cap[i];
    const int32_t rlo = d.rlo[i];
    const int64_t range = (int64_t)d.rhi[i] - rlo;
    const int64_t slots = spx__gemm_row_slots(size, range);
    if constexpr (NUM && G == SPX_GEMM_BLOCK && !GLOB) {
        if (slots != range && ranked_fits<SR, ORD>(room, size, range, d.prod[i])) {
            ranked_row<SR, ORD>(d, i, tmem, st, size, rlo, range, lo, hi, mb, me);
            return;
        }
    }
    table<T> t = carve_table<T, NUM, ORD>(tmem, (uint32_t)slots);
    t.dense = range > 0 && (int64_t)t.S == range;
    t.lo = rlo;
    t.shift = 32 - (31 - __clz((int)t.S)); // hash tables: S is a power of two >= 64
    const int64_t claimed = fill_table<SR, G, NUM, ORD, GLOB>(d, i, t, st, lo, hi, mb, me);
    // loaded only now: fewer registers live across the products
    const int64_t ab = d.acc.ptr ? d.acc.ptr[i] : 0, ae = d.acc.ptr ? d.acc.ptr[i + 1] : 0;
    int64_t done, extras = 0;
    if constexpr (NUM)
        done = emit_row<SR, G, GLOB>(d, i, t, st, ab, ae, d.off[i] - d.base);
    else
        done = count_table<G, GLOB>(d, t, st, claimed, ab, ae, &extras);
    group<G>::sync(); // the table is cleared by the next row
    finish_row<G, NUM>(d, i, done, extras);
}

// Row i of C in column windows (a block's row, see spx__gemm_windowed): the
// row's column span is taken `window` slots at a time, each with a dense
// table in the block's shared memory; the products are cut to the window
// and its entries counted or written after those of the windows before it.
// Accum's entries before the span go with the first window, those after it
// with the last.
template <class SR, bool NUM, bool ORD>
__device__ void window_row(const spx_gemm_dev &d, int64_t i, unsigned char *tmem,
                           const stage<typename SR::T> &st, uint32_t window)
{
    typedef typename SR::T T;
    int64_t mb, me;
    int32_t lo, hi;
    row_bounds(d, i, &mb, &me, &lo, &hi);
    const int64_t rlo = d.rlo[i], rhi = d.rhi[i];
    const int64_t ab = d.acc.ptr ? d.acc.ptr[i] : 0, ae = d.acc.ptr ? d.acc.ptr[i + 1] : 0;
    const int64_t out0 = NUM ? d.off[i] - d.base : 0;
    int64_t done = 0, extras = 0, xb = ab;
    for (int64_t wlo = rlo; wlo < rhi; wlo += window) {
        const int64_t whi = rhi - wlo > (int64_t)window ? wlo + window : rhi;
        table<T> t = carve_table<T, NUM, ORD>(tmem, (uint32_t)(whi - wlo));
        t.dense = 1;
        t.lo = (int32_t)wlo;
        const int64_t claimed = fill_table<SR, SPX_GEMM_BLOCK, NUM, ORD, false>(
            d, i, t, st, wlo > lo ? (int32_t)wlo : lo, whi < hi ? (int32_t)whi : hi, mb, me);
        const int64_t xe = whi == rhi ? ae : lower_bound_col(d.acc.col, xb, ae, (int32_t)whi);
        if constexpr (NUM)
            done += emit_row<SR, SPX_GEMM_BLOCK, false>(d, i, t, st, xb, xe, out0 + done);
        else
            done += count_table<SPX_GEMM_BLOCK, false>(d, t, st, claimed, xb, xe, &extras);
        __syncthreads(); // the table is cleared by the next window or row
        xb = xe;
    }
    finish_row<SPX_GEMM_BLOCK, NUM>(d, i, done, extras);
}

// The rows of one launch: consecutive bins of the same group size, each a
// segment of the row list with its table size. Blocks [first_block[s],
// first_block[s + 1]) take segment s, so one launch covers every warp bin
// (a launch per bin cost more than the small products' kernels).
struct row_segments {
    int n;
    int64_t first_block[SPX_GEMM_MAX_BINS + 1];
    int64_t begin[SPX_GEMM_MAX_BINS], count[SPX_GEMM_MAX_BINS]; // rows[begin .. begin + count)
    uint32_t slots[SPX_GEMM_MAX_BINS];                          // 0: tables in device memory
    uint32_t window; // the window bin's launch: its rows' window slots
};

// The sorted bins' rows (sorted_row: 64 or 128 products), a warp per row,
// row after row (SPX_GEMM_SORTED_BLOCKS_PER_SM); a launch of its own: in the
// table kernel its registers would cost the table rows occupancy.
template <class SR>
__global__ void __launch_bounds__(SPX_GEMM_BLOCK)
    sorted_kernel(const spx_gemm_dev d, const int32_t *__restrict__ rows, const row_segments seg)
{
    typedef typename SR::T T;
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int GROUPS = SPX_GEMM_BLOCK / 32;
    int s = 0;
    while (s + 1 < seg.n && (int64_t)blockIdx.x >= seg.first_block[s + 1])
        s++;
    const int g = threadIdx.x / 32;
    const int64_t sb = spx__gemm_stage_bytes(32, sizeof(T));
    unsigned char *mine = smem + g * (sb + spx__gemm_table_bytes(seg.slots[s], sizeof(T), 1, 0));
    const stage<T> st = carve_stage<T>(mine, 32);
    const int32_t *list = rows + seg.begin[s];
    const int64_t blocks = seg.first_block[s + 1] - seg.first_block[s];
    for (int64_t x = ((int64_t)blockIdx.x - seg.first_block[s]) * GROUPS + g; x < seg.count[s];
         x += blocks * GROUPS) {
        if (seg.slots[s] == 64)
            sorted_row<SR, 2>(d, list[x], mine + sb, st);
        else
            sorted_row<SR, 4>(d, list[x], mine + sb, st);
    }
}

// 256 / G groups per block; a table in the group's shared memory (sized for
// the segment's slots; WIN: the window bin, rows in windows), or in the
// block's region of device memory (GLOB: one segment, a persistent grid of at
// most one block per region).
template <class SR, int G, bool NUM, bool ORD, bool GLOB, bool WIN>
__device__ __forceinline__ void rows_of_block(const spx_gemm_dev &d, const int32_t *__restrict__ rows,
                                              const row_segments &seg, unsigned char *regions,
                                              int64_t region_bytes)
{
    typedef typename SR::T T;
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int GROUPS = SPX_GEMM_BLOCK / G;
    int s = 0;
    while (s + 1 < seg.n && (int64_t)blockIdx.x >= seg.first_block[s + 1])
        s++;
    const int g = threadIdx.x / G;
    const int64_t sb = spx__gemm_stage_bytes(G, sizeof(T));
    const int64_t room = GLOB ? region_bytes : spx__gemm_table_bytes(seg.slots[s], sizeof(T), NUM, ORD);
    const int64_t per_group = sb + (GLOB ? 0 : room);
    unsigned char *mine = smem + g * per_group;
    const stage<T> st = carve_stage<T>(mine, G);
    unsigned char *tmem = GLOB ? regions + (int64_t)blockIdx.x * region_bytes : mine + sb;
    const int32_t *list = rows + seg.begin[s];
    const int64_t blocks = seg.first_block[s + 1] - seg.first_block[s];
    for (int64_t x = ((int64_t)blockIdx.x - seg.first_block[s]) * GROUPS + g; x < seg.count[s];
         x += blocks * GROUPS)
        if constexpr (WIN)
            window_row<SR, NUM, ORD>(d, list[x], tmem, st, seg.window);
        else
            gemm_row<SR, G, NUM, ORD, GLOB>(d, list[x], tmem, room, st);
}

template <class SR, int G, bool NUM, bool ORD, bool GLOB, bool WIN = false>
__global__ void __launch_bounds__(SPX_GEMM_BLOCK)
    rows_kernel(const spx_gemm_dev d, const int32_t *__restrict__ rows, const row_segments seg,
                unsigned char *regions, int64_t region_bytes)
{
    rows_of_block<SR, G, NUM, ORD, GLOB, WIN>(d, rows, seg, regions, region_bytes);
}

// The bins of 8 lanes: their kernels issue on about 2/3 of the cycles with
// half the warps an SM holds, so their registers are capped for 5 (numeric)
// or 6 (symbolic) blocks an SM, a few bytes of spills (H100, 3D Laplacian
// squared: numeric 1011 -> 910 us fast, 1356 -> 1234 us deterministic;
// symbolic 362 -> 339 us). Not the other kernels: a block minimum of 1 let
// them take 30-50 % more registers, and products without 8-lane bins lost up
// to 25 % (R-MAT, pushpull, ca-CondMat squared).
template <class SR, bool NUM, bool ORD>
__global__ void __launch_bounds__(SPX_GEMM_BLOCK, NUM ? 5 : 6)
    lanes_kernel(const spx_gemm_dev d, const int32_t *__restrict__ rows, const row_segments seg,
                 unsigned char *regions, int64_t region_bytes)
{
    rows_of_block<SR, 8, NUM, ORD, false, false>(d, rows, seg, regions, region_bytes);
}

// ---- launching -------------------------------------------------------------------------

// Bins [b0, b1) in one launch on stream st (the same group size; GLOB: the
// last bin; SORTED: sorted bins, sorted_kernel; WIN: the window bin).
template <class SR, int G, bool NUM, bool ORD, bool GLOB, bool SORTED = false, bool WIN = false>
cudaError_t launch_bins(const spx_gemm_dev *d, const spx_gemm_launch *L, int b0, int b1, cudaStream_t st)
{
    constexpr int GROUPS = SPX_GEMM_BLOCK / G;
    const int64_t vsz = sizeof(typename SR::T);
    row_segments seg = {};
    int64_t blocks = 0, table = 0;
    for (int b = b0; b < b1; b++) {
        const int64_t n = L->hi[b] - L->lo[b];
        if (n <= 0)
            continue;
        seg.first_block[seg.n] = blocks;
        seg.begin[seg.n] = L->lo[b];
        seg.count[seg.n] = n;
        seg.slots[seg.n] = GLOB ? 0 : L->bins.slots[b];
        const int64_t tb = GLOB ? 0 : spx__gemm_table_bytes(L->bins.slots[b], vsz, NUM, ORD && !SORTED);
        table = tb > table ? tb : table;
        const int64_t cap = GLOB ? L->nregions : SORTED && L->sorted_blocks > 0 ? L->sorted_blocks : INT_MAX;
        const int64_t need = GLOB ? n : (n + GROUPS - 1) / GROUPS;
        blocks += need < cap ? need : cap;
        seg.n++;
    }
    seg.first_block[seg.n] = blocks;
    seg.window = L->bins.window_slots;
    if (GLOB && seg.n > 0 && L->nregions <= 0) // rows in device memory, no region planned: a bug
        return cudaErrorInvalidConfiguration;
    if (blocks == 0)
        return cudaSuccess;
    if (blocks > INT_MAX)
        return cudaErrorInvalidConfiguration;
    const int64_t smem = GROUPS * (spx__gemm_stage_bytes(G, vsz) + table);
    if constexpr (SORTED) { // a few KB a block
        sorted_kernel<SR><<<(unsigned)blocks, SPX_GEMM_BLOCK, (size_t)smem, st>>>(*d, L->rows, seg);
        return cudaGetLastError();
    }
    constexpr auto kernel = [] {
        if constexpr (G == 8)
            return lanes_kernel<SR, NUM, ORD>;
        else
            return rows_kernel<SR, G, NUM, ORD, GLOB, WIN>;
    }();
    return launch_dynamic_smem<kernel>((unsigned)blocks, SPX_GEMM_BLOCK, (size_t)smem, st, *d, L->rows, seg,
                                       L->regions, L->region_bytes);
}

// One launch of launch_rows: bins [b0, b1) of one kind.
enum launch_kind { RUN_GLOBAL, RUN_WINDOW, RUN_BLOCK, RUN_SORTED, RUN_LANES, RUN_WARP };
struct launch_run {
    int b0, b1;
    launch_kind kind;
};

// Every bin of the launch but 0 with semiring SR. The block kernels (rows
// in device memory, in windows, block bins from the largest) go first, each
// on a side stream when there is more than one launch: a few long rows
// would otherwise hold the GPU while most of it idles; then the sorted bins
// and the sub-block bins (runs of one group size) on the stream itself.
template <class SR, bool NUM, bool ORD>
cudaError_t launch_rows(const spx_gemm_dev *d, const spx_gemm_launch *L)
{
    const int last = L->bins.nshared + 1, first = NUM ? L->bins.nsorted + 1 : 1;
    const int window = spx__gemm_bin_window(&L->bins), global = spx__gemm_bin_global(&L->bins);
    launch_run run[SPX_GEMM_MAX_BINS + 1];
    int n = 0;
    auto add = [&](int b0, int b1, launch_kind kind) {
        for (int b = b0; b < b1; b++)
            if (L->hi[b] > L->lo[b]) {
                run[n++] = {b0, b1, kind};
                return;
            }
    };
    add(global, global + 1, RUN_GLOBAL);
    if (L->bins.window_slots)
        add(window, window + 1, RUN_WINDOW);
    for (int b = last - 1; b >= first; b--)
        if (L->bins.group[b] == SPX_GEMM_BLOCK)
            add(b, b + 1, RUN_BLOCK);
    add(1, first, RUN_SORTED); // symbolic binning has no sorted bins
    for (int b = first, end; b < last; b = end) {
        const int G = L->bins.group[b];
        for (end = b + 1; end < last && L->bins.group[end] == G;)
            end++;
        if (G <= 32)
            add(b, end, G == 8 ? RUN_LANES : RUN_WARP);
    }
    const bool side = n > 1 && L->side && run[0].kind <= RUN_BLOCK;
    int used = 0; // side streams that waited for the stream
    cudaError_t e = side ? cudaEventRecord(L->side->fork, L->stream) : cudaSuccess;
    for (int r = 0; r < n && e == cudaSuccess; r++) {
        const launch_run &x = run[r];
        cudaStream_t st = L->stream;
        if (side && x.kind <= RUN_BLOCK) {
            const int k = r % SPX_CUDA_SIDE_STREAMS;
            st = L->side->stream[k];
            if (k >= used && (e = cudaStreamWaitEvent(st, L->side->fork, 0)) == cudaSuccess)
                used = k + 1;
        }
        if (e != cudaSuccess)
            break;
        switch (x.kind) {
        case RUN_GLOBAL: e = launch_bins<SR, SPX_GEMM_BLOCK, NUM, ORD, true>(d, L, x.b0, x.b1, st); break;
        case RUN_WINDOW:
            e = launch_bins<SR, SPX_GEMM_BLOCK, NUM, ORD, false, false, true>(d, L, x.b0, x.b1, st);
            break;
        case RUN_BLOCK: e = launch_bins<SR, SPX_GEMM_BLOCK, NUM, ORD, false>(d, L, x.b0, x.b1, st); break;
        case RUN_SORTED:
            if constexpr (NUM)
                e = launch_bins<SR, 32, NUM, ORD, false, true>(d, L, x.b0, x.b1, st);
            break;
        case RUN_LANES: e = launch_bins<SR, 8, NUM, ORD, false>(d, L, x.b0, x.b1, st); break;
        case RUN_WARP: e = launch_bins<SR, 32, NUM, ORD, false>(d, L, x.b0, x.b1, st); break;
        }
    }
    // the stream waits for every side stream that started, error or not:
    // nothing may reuse their memory before they are done
    for (int k = 0; k < used; k++) {
        cudaError_t j = cudaEventRecord(L->side->join[k], L->side->stream[k]);
        if (j == cudaSuccess)
            j = cudaStreamWaitEvent(L->stream, L->side->join[k], 0);
        if (e == cudaSuccess)
            e = j;
    }
    return e;
}

} // namespace spx_gemm

#endif

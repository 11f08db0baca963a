// TILED SpMM: B held in shared memory while many rows use it.
//
// Merge path and the row kernels read one B row segment through L1/L2 per
// entry. On pruned weights (a few thousand columns, 2-50 % dense) many rows
// share each column, so a block here owns a large set of rows (the plan
// picks how many) and a tile of 8, 16 or 32 16-byte vectors of columns: it
// copies rows [k0, k0 + kc) of B's tile into shared memory once (all of k
// when it fits) and every row of the block takes its entries in that range
// from there. B then crosses L2 once per block, and each entry costs a
// shared-memory load instead of an L1 lookup that may miss.
//
// A team of G lanes owns one slot at a time, each lane W 16-byte vectors of
// the tile (teams of 4 x 2 for tiles of 8 vectors: a shuffle pair per entry
// then serves 8 vector loads, not 4 as with teams of 8 x 1). Shuffles and
// shared-memory loads share one data path, which bounds this kernel. Entries
// are loaded 32 per team at once and broadcast with shuffles; a warp's teams
// run their loops together (bounds are warp maxima), so the shuffles stay
// converged. A slot (the plan's) is a row or a piece of one: rows much longer
// than the average are cut into 2-8 pieces on adjacent teams of a warp, whose
// sums meet through shuffles in a fixed order, so that one long row no longer
// holds its block, and the GPU, long after the others; the plan lists slots
// by length, a warp's teams side by side, and spreads them so that blocks get
// about equal work. Entries are read in pairs (one 8-byte load of columns,
// one of values) where A's arrays are aligned for it: each of a warp's load
// instructions touches as many rows of A as the warp has teams, so pairs
// halve that cost. When k takes several chunks, slots' partial sums and
// positions wait in shared memory from one chunk to the next. Each row adds
// its entries in column order (a cut row: each piece so, then the pieces in a
// fixed tree): bit-exact from run to run. Exact arithmetic on CUDA cores.
#include <limits.h>

#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/dynamic_smem.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct tiled_params {
    const int32_t *colidx;
    const T *vals;
    const int32_t *slot_row;     // row of each slot (-1: none)
    const longlong2 *slot_range; // its entries [x, y)
    int64_t k;
    int64_t rows; // slots per block
    int64_t kc;   // rows of B per chunk
    dense_ops<T> d;
    int vec_loads; // B may be read with 16-byte vectors
    int pairs;     // colidx and vals may be read two entries at a time
};

// Entries i and i + 1 of A (past `end`: column INT_MAX, value 0), as one
// vector load of each array when their alignment allows (p.pairs).
template <typename T>
__device__ __forceinline__ void load_entry_pair(const tiled_params<T> &p, int64_t i, int64_t end, int (&col)[2],
                                                typename acc_of<T>::type (&v)[2])
{
    typedef typename acc_of<T>::type A;
    if (p.pairs && i + 1 < end) {
        const int2 c = *reinterpret_cast<const int2 *>(p.colidx + i);
        col[0] = c.x;
        col[1] = c.y;
        if (p.vals) {
            const pair_of<T> x = *reinterpret_cast<const pair_of<T> *>(p.vals + i);
            v[0] = to_acc(x.x);
            v[1] = to_acc(x.y);
        } else {
            v[0] = v[1] = A(1);
        }
        return;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        col[h] = i + h < end ? p.colidx[i + h] : INT_MAX;
        v[h] = i + h < end ? a_value(p.vals, i + h) : A(0);
    }
}

// a[w] = the old a[(w + r) mod W] for every w (r may be negative), as
// rotations by each set bit of r, so that register indices stay fixed at
// compile time
template <typename A, int W, int V> __device__ __forceinline__ void rotate_vectors(A (&a)[W][V], int r)
{
#pragma unroll
    for (int b = 1; b < W; b <<= 1) {
        const bool on = r & b;
        A old[W][V];
#pragma unroll
        for (int w = 0; w < W; w++)
#pragma unroll
            for (int t = 0; t < V; t++)
                old[w][t] = a[w][t];
#pragma unroll
        for (int w = 0; w < W; w++)
#pragma unroll
            for (int t = 0; t < V; t++)
                a[w][t] = on ? old[(w + b) & (W - 1)][t] : old[w][t];
    }
}

template <typename T, int G, int W, int BT>
__global__ void __launch_bounds__(BT, BT > 256 ? 1 : sizeof(T) >= 4 ? 3 : 2) tiled_kernel(const tiled_params<T> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int V = vec16<T>::n, NV = G * W, TN = NV * V, ROW_BYTES = TN * (int)sizeof(T);
    constexpr int TEAMS = BT / G, E = SPX_CUDA_TILED_BATCH / G; // E: entries per lane per batch
    constexpr int U2 = W >= 4 ? 1 : SPX_SPMM_IN_FLIGHT / 2;       // pairs of entries in flight (registers)
    static_assert(G % U2 == 0 && E % 2 == 0 && G * W >= 8, "pairs in flight divide the team; tiles of >= 128 bytes");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int64_t kc = p.kc, nchunks = p.k > 0 ? (p.k + kc - 1) / kc : 1, R = p.rows; // k = 0: C = beta C
    T *const slab = reinterpret_cast<T *>(smem_raw);
    // only with several chunks: sums [R][TN], then the next entry of each row
    A *const sums = reinterpret_cast<A *>(smem_raw + (kc + 1) * TN * sizeof(T));
    int64_t *const next = reinterpret_cast<int64_t *>(sums + R * TN);

    const int lane = threadIdx.x & 31, tl = lane & (G - 1), team = threadIdx.x / G, sub = lane / G;
    const unsigned tmask = (G == 32 ? SPX_FULL_MASK : (1u << G) - 1) << (sub * G);
    const int64_t r0 = (int64_t)blockIdx.x * R, rend = r0 + R;
    // The lane's vectors: at step w, vector vec_of(w) of the tile. Teams
    // rotate the steps so that the teams of a quarter warp read different
    // 128-byte parts of their rows: conflict-free.
    auto vec_of = [&](int w) { return ((w + team) & (W - 1)) * G + tl; };
    const char *const slab_bytes = reinterpret_cast<const char *>(slab);
    const int zero_row = (int)kc; // row kc holds zeros
    for (int e = threadIdx.x; e < TN; e += BT)
        slab[kc * TN + e] = from_acc<T>(A(0));

    const int64_t ntiles = (p.d.n + TN - 1) / TN; // more than the grid's 65535 in y: blocks loop
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        for (int64_t c = 0; c < nchunks; c++) {
            const int64_t c0 = tile * TN;
            const int k0 = (int)(c * kc), k1 = (int)(k0 + kc < p.k ? k0 + kc : p.k);
            if (c > 0 || tile != blockIdx.y)
                __syncthreads(); // every row is done with the previous chunk
            copy_b_rows<T, V, NV, BT>(slab, 0, -1, p.d.B, p.d.ldb, p.d.n, p.vec_loads != 0, k0, k1, c0, threadIdx.x);
            copy_b_wait();
            __syncthreads();
            // the warp's teams take slots base + sub, base + TEAMS + sub, ...
            for (int64_t base = r0 + (threadIdx.x / 32) * (32 / G); base < rend; base += TEAMS) {
                const int64_t slot = base + sub, rl = slot - r0;
                const int32_t row = p.slot_row[slot];
                const bool live = row >= 0;
                A acc[W][V];
                int64_t pos = 0, end = 0;
                if (live) {
                    const longlong2 range = p.slot_range[slot];
                    end = range.y;
                    pos = c == 0 ? range.x : next[rl];
                }
#pragma unroll
                for (int w = 0; w < W; w++)
#pragma unroll
                    for (int t = 0; t < V; t++)
                        acc[w][t] = c == 0 || !live ? A(0) : sums[rl * TN + vec_of(w) * V + t];
                for (;;) {
                    // The batch: entries [base, base + SPX_CUDA_TILED_BATCH), base = pos rounded down
                    // to even; lane tl holds the pairs base + 2 (q G + tl) + {0, 1}. Byte
                    // offsets of their slab rows and their values; entries before pos, past
                    // the row or outside the chunk read the zero row with value -0 (exact
                    // no-ops).
                    const int64_t base = pos & ~(int64_t)1;
                    int off[E / 2][2];
                    A val[E / 2][2];
                    int n = 0; // entries [pos, pos + n) are this chunk's (columns are sorted)
#pragma unroll
                    for (int q = 0; q < E / 2; q++) {
                        const int64_t i = base + 2 * (q * G + tl);
                        int col[2];
                        A v[2];
                        load_entry_pair(p, i, end, col, v);
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            // no col >= k0 test: earlier chunks took those (columns sorted and
                            // unique, as validation checks); the test cost 2 % (ncu)
                            const bool in = i + h >= pos && col[h] < k1;
                            off[q][h] = (in ? col[h] - k0 : zero_row) * ROW_BYTES;
                            val[q][h] = in ? v[h] : A(-0.0);
                            n += __popc(__ballot_sync(SPX_FULL_MASK, in) & tmask);
                        }
                    }
                    // batch slots below `used` hold some team's entries of this chunk
                    const int used = (int)__reduce_max_sync(SPX_FULL_MASK, n ? (unsigned)(pos - base + n) : 0u);
#pragma unroll
                    for (int q = 0; q < E / 2; q++) {
#pragma unroll
                        for (int j0 = 0; j0 < G; j0 += U2) {
                            if (2 * (q * G + j0) >= used)
                                break;
                            // slots 2 (q G + j0 + u) + h, in increasing order
                            A b[U2][2][W][V], vj[U2][2];
#pragma unroll
                            for (int u = 0; u < U2; u++)
#pragma unroll
                                for (int h = 0; h < 2; h++) {
                                    const int o = __shfl_sync(SPX_FULL_MASK, off[q][h], j0 + u, G);
                                    vj[u][h] = __shfl_sync(SPX_FULL_MASK, val[q][h], j0 + u, G);
#pragma unroll
                                    for (int w = 0; w < W; w++)
                                        load_plain<T, V>(reinterpret_cast<const T *>(slab_bytes + o + vec_of(w) * 16),
                                                         b[u][h][w]);
                                }
#pragma unroll
                            for (int u = 0; u < U2; u++)
#pragma unroll
                                for (int h = 0; h < 2; h++)
#pragma unroll
                                    for (int w = 0; w < W; w++)
#pragma unroll
                                        for (int t = 0; t < V; t++)
                                            acc[w][t] = fma(vj[u][h], b[u][h][w][t], acc[w][t]);
                        }
                    }
                    pos += n;
                    // the whole rest of the batch was in this chunk and the row goes on: load the next
                    if (!__any_sync(SPX_FULL_MASK, pos == base + SPX_CUDA_TILED_BATCH && pos < end))
                        break;
                }
                // a row's pieces (adjacent teams, a power of two of them, aligned)
                // add their sums, in vector order (acc[w] holds vector vec_of(w),
                // which differs from team to team): every team of the row ends
                // with the whole
                const unsigned same = __match_any_sync(SPX_FULL_MASK, live ? row : -1 - sub);
                if (c + 1 == nchunks && __any_sync(SPX_FULL_MASK, same != tmask)) {
                    rotate_vectors(acc, -team); // acc[x]: vector x * G + tl
#pragma unroll
                    for (int o = G; o < 32; o <<= 1)
#pragma unroll
                        for (int w = 0; w < W; w++)
#pragma unroll
                            for (int t = 0; t < V; t++) {
                                const A other = __shfl_xor_sync(SPX_FULL_MASK, acc[w][t], o);
                                if ((same >> (lane ^ o)) & 1)
                                    acc[w][t] += other;
                            }
                    rotate_vectors(acc, team);
                }
                if (!live || (c + 1 == nchunks && (same & ((1u << (sub * G)) - 1))))
                    continue; // the row's first team stores it
                if (c + 1 < nchunks) {
                    __syncwarp(tmask); // the team's lanes have read next[rl]
#pragma unroll
                    for (int w = 0; w < W; w++)
#pragma unroll
                        for (int t = 0; t < V; t++)
                            sums[rl * TN + vec_of(w) * V + t] = acc[w][t];
                    if (tl == 0)
                        next[rl] = pos;
                    continue;
                }
#pragma unroll
                for (int w = 0; w < W; w++) {
                    const int64_t col0 = c0 + (int64_t)vec_of(w) * V;
                    const int count = p.d.n - col0 >= V ? V : (p.d.n - col0 > 0 ? (int)(p.d.n - col0) : 0);
                    if (count > 0)
                        store_epilogue<T, V>(p.d.C + row * p.d.ldc + col0, count, 1, acc[w], p.d.alpha, p.d.beta,
                                             p.d.c_vec);
                }
            }
        }
    }
}

template <typename T, int G, int W, int BT = 256>
cudaError_t launch_gw(const tiled_params<T> &p, int64_t slots, int64_t n, size_t smem, cudaStream_t st)
{
    constexpr int64_t TN = G * W * vec16<T>::n;
    const int64_t gx = slots / p.rows, gy = (n + TN - 1) / TN;
    if (gx > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_dynamic_smem<tiled_kernel<T, G, W, BT>>(dim3((unsigned)gx, (unsigned)(gy < 65535 ? gy : 65535)),
                                                          BT, smem, st, p);
}

// Tiles of 8, 16 or 32 16-byte vectors: teams of 4 lanes x 2 vectors (two
// shuffles per entry and 8 vectors, rather than per 8 with teams of 8 lanes),
// 8 x 2 and 8 x 4, as spx__cuda_tiled_team_lanes tells the plan; blocks of
// 256 threads, or of 512 for tiles of 8 vectors when the plan asks (wide).
template <typename T>
cudaError_t launch_t(const spx_cuda_csr *A, const spx_cuda_tiled_slots *slots, const spx_cuda_tiled_shape *s,
                     const spx_cuda_dense_args *d)
{
    tiled_params<T> p = {};
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.slot_row = slots->row;
    p.slot_range = reinterpret_cast<const longlong2 *>(slots->range);
    p.k = A->cols;
    p.rows = s->rows;
    p.kc = s->kc;
    p.d = dense_ops_from<T>(d);
    p.vec_loads = d->vec > 1;
    p.pairs = (uintptr_t)A->colidx % 8 == 0 && (uintptr_t)A->vals % (2 * sizeof(T)) == 0;
    const size_t smem = spx__cuda_tiled_smem(s, A->cols, d->dtype);
    const int64_t vectors = s->cols / vec16<T>::n;
    if (s->threads != 256)
        return s->threads == 512 && vectors == 8 ? launch_gw<T, 4, 2, 512>(p, slots->count, d->n, smem, d->stream)
                                                 : cudaErrorInvalidValue;
    switch (vectors * spx__cuda_tiled_team_lanes(vectors)) {
    case 8 * 4: return launch_gw<T, 4, 2>(p, slots->count, d->n, smem, d->stream);
    case 16 * 8: return launch_gw<T, 8, 2>(p, slots->count, d->n, smem, d->stream);
    case 32 * 8: return launch_gw<T, 8, 4>(p, slots->count, d->n, smem, d->stream);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

extern "C" size_t spx__cuda_tiled_smem(const spx_cuda_tiled_shape *s, int64_t k, spx_dtype dtype)
{
    const size_t es = spx_dtype_size(dtype), acc = dtype == SPX_F64 ? 8 : 4;
    size_t bytes = (size_t)(s->kc + 1) * (size_t)s->cols * es; /* and a row of zeros */
    if (s->kc < k) /* partial sums and positions between chunks */
        bytes += (size_t)s->rows * ((size_t)s->cols * acc + sizeof(int64_t));
    return bytes;
}

extern "C" cudaError_t spx__cuda_launch_tiled(const spx_cuda_csr *A, const spx_cuda_tiled_slots *slots,
                                              const spx_cuda_tiled_shape *s, const spx_cuda_dense_args *d)
{
    if (A->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (s->rows <= 0 || s->rows % SPX_CUDA_TILED_ROW_QUANTUM || s->kc <= 0 || slots->count % s->rows)
        return cudaErrorInvalidValue;
    switch (d->dtype) {
    case SPX_F32: return launch_t<float>(A, slots, s, d);
    case SPX_F64: return launch_t<double>(A, slots, s, d);
    case SPX_F16: return launch_t<__half>(A, slots, s, d);
    case SPX_BF16: return launch_t<__nv_bfloat16>(A, slots, s, d);
    default: return cudaErrorInvalidValue;
    }
}

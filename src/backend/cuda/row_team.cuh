// The inner loop of the row kernels: a team of lanes accumulates one row.
// A team is a power of two of lanes (up to a warp); `group` of them own V
// output columns each (consecutive, or spread over the tile: lane_cols), and
// the team/group sub-groups take every (team/group)-th entry. Entries are loaded `team` at a time (coalesced) and
// broadcast with shuffles; four B row segments are in flight per lane.
#ifndef SPX_ROW_TEAM_CUH
#define SPX_ROW_TEAM_CUH

#include "backend/cuda/device_types.cuh"

namespace {

__device__ __forceinline__ int64_t warp_max(int64_t v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        int64_t u = __shfl_xor_sync(SPX_FULL_MASK, v, o);
        v = u > v ? u : v;
    }
    return v;
}

// acc += the sub-group's `mine` entries of a chunk that the team holds one a
// lane (col, v): entries sub, sub + S, sub + 2S, ... (S sub-groups), U at a
// time, broadcast with shuffles. jmax: the largest `mine` of the warp.
template <typename T, int V, typename Src>
__device__ __forceinline__ void chunk_accumulate(int col, typename acc_of<T>::type v, int mine, int jmax, int team,
                                                 int sub, int S, const Src &src, int count,
                                                 typename acc_of<T>::type (&acc)[V])
{
    typedef typename acc_of<T>::type A;
    constexpr int U = SPX_SPMM_IN_FLIGHT; // entries in flight per lane (8 measured slower: registers)
    for (int j0 = 0; j0 < jmax; j0 += U) {
        int cj[U];
        A vj[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int from = ((j0 + u) * S + sub) & (team - 1);
            cj[u] = __shfl_sync(SPX_FULL_MASK, col, from, team);
            vj[u] = __shfl_sync(SPX_FULL_MASK, v, from, team);
        }
        fma_rows<T, V, U>(src, cj, vj, mine - j0, count, acc);
    }
}

// acc += the team's share of sum_{q in row} A(q) * B(col(q), lane's columns),
// B's rows as src gives them (b_global and the like; A's values rounded to
// B's type where that is narrower).
// Every lane of the warp calls this together (shuffles); lanes whose team has
// fewer entries idle through the extra iterations. With REDUCE the
// sub-groups' sums are added at the end (acc must start at zero then).
template <typename T, int V, bool REDUCE, typename Src>
__device__ __forceinline__ void team_accumulate(const int32_t *__restrict__ colidx, const T *__restrict__ vals,
                                                int64_t start, int64_t len, int64_t stride, int team, int G,
                                                const Src &src, int count, typename acc_of<T>::type (&acc)[V])
{
    typedef typename acc_of<T>::type A;
    const int tl = (threadIdx.x & 31) & (team - 1), sub = tl / G, S = team / G;
    const int64_t chunks = warp_max((len + team - 1) / team);
    for (int64_t c = 0; c < chunks; c++) {
        const int64_t i = c * team + tl;
        int col = 0;
        A v = A(0);
        if (i < len) {
            const int64_t q = start + i * stride;
            col = colidx[q];
            v = a_value_as<typename Src::elem>(vals, q);
        }
        const int64_t left = len - c * team;
        const int cnt = left >= team ? team : (left > 0 ? (int)left : 0);
        // this sub-group takes entries sub, sub + S, sub + 2S, ... of the chunk
        const int mine = cnt > sub ? (cnt - sub + S - 1) / S : 0;
        chunk_accumulate<T, V>(col, v, mine, (int)__reduce_max_sync(SPX_FULL_MASK, (unsigned)mine), team, sub, S, src,
                               count, acc);
    }
    if (REDUCE)
        for (int o = G; o < team; o <<= 1) // same order every run: bit-exact
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] += __shfl_xor_sync(SPX_FULL_MASK, acc[t], o);
}

} // namespace

#endif

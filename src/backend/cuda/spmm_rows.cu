// Row-parallel SpMM kernels. A row is handled by a team of lanes (a power of
// two up to a warp): `group` lanes of the team each own V consecutive output
// columns (one 16-byte load of a B row segment per entry; 8 bytes from a
// rounded B), and the team's
// team/group sub-groups take every (team/group)-th entry of the row, adding
// their partial sums with shuffles at the end (fixed order: bit-exact run to
// run). Without 16-byte vectors (B's rows misaligned) a lane's V columns are
// spread G apart (SPREAD, lane_cols). The team loads `team` (column, value)
// pairs at once, coalesced, and broadcasts them with shuffles. One launch
// covers every row bin: each block finds its segment (bin) from the block
// index. BLOCK_ROW puts several such warps on one row and adds them through
// shared memory; SELL uses the same loop over SELL-C-sigma slices; RUNS
// gives each warp several adjacent rows of the list; BATCHES stages each
// row's entries in shared memory, 8, 16 or 32 at a time. A row's entries end
// at row_end[r] (rowptr[r + 1] unless A is a slab of columns). B's values are of
// TB: T, or at the bf16 and f16 precisions f32 data's B rounded to 16 bits
// (half the bytes of each gathered segment; A's values are rounded alike).
#include "backend/cuda/row_team.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T, typename TB = T> struct rows_params {
    const int64_t *rowptr, *row_end; // row r: entries [rowptr[r], row_end[r])
    const int32_t *colidx;
    const T *vals;
    const int32_t *rows; // row list; NULL: slot == row
    const spx_cuda_batch_slot *slots; // BATCHES: slots instead of rows (or NULL)
    // segments of the row list, one per bin: blocks [first_block[s], first_block[s+1])
    int nsegs;
    int64_t first_block[SPX_CUDA_MAX_SEGMENTS + 1];
    int64_t seg_offset[SPX_CUDA_MAX_SEGMENTS], seg_rows[SPX_CUDA_MAX_SEGMENTS];
    int seg_team[SPX_CUDA_MAX_SEGMENTS];
    // SELL layout (sell kernel only)
    const int64_t *slice_ptr;
    const int32_t *perm, *rowlen;
    int64_t slice_c;
    int group;
    dense_ops<T, TB> d;
};

// Threads resident per SM: 1024 for f32 (64 registers, where the compiler
// took 72-80 and left 768): the row kernels wait on dependent loads, and the
// fourth block's warps hide them (H100: 1.08-1.2x on uniform, Laplacian and
// graph products at N = 32-64). 896 for 16-bit data in 16-byte vectors (72
// registers, none spilled; at 85 for bf16 the compiler left 512, up to 1.3x
// slower on graphs; at 64, 16-32 bytes spilled). Other forms as the compiler
// chooses (not measured).
template <typename T, bool SPREAD> constexpr int rows_resident_threads()
{
    return sizeof(T) == 4 ? 1024 : sizeof(T) == 2 && !SPREAD ? 896 : 256;
}
// Threads a block: 64 for 16-bit data, 256 otherwise. Blocks of 256 threads,
// three an SM, left the last of a few waves part empty: in blocks of 64 a
// warp per row of 4096 x 1024-4096 pruned layers at N = 256 ran 1.03-1.13x
// faster (f16, H200: 12.6 -> 11.4 us at 98.5 %), 1.02-1.05x over the 54
// products of 27 such layers at N = 256 and 1024 (f16 and bf16); AUTO on
// the larger graphs (ca-CondMat, p2p-Gnutella31, pubmed) up to 1.18x at N =
// 32-128, 0.94-0.99x on some products of 6-8 us. On f32 data blocks of 64
// were 1.5-2.5 % slower on the graphs, those of 128 level (docs/PERFORMANCE.md).
template <typename T> constexpr int rows_threads() { return sizeof(T) == 2 ? 64 : 256; }

template <typename T, typename TB, int V, bool SPREAD, bool SELL>
__global__ void __launch_bounds__(rows_threads<T>(), rows_resident_threads<T, SPREAD>() / rows_threads<T>())
    rows_kernel(const rows_params<T, TB> p)
{
    typedef typename acc_of<T>::type A;
    int s = 0;
    while (s + 1 < p.nsegs && (int64_t)blockIdx.x >= p.first_block[s + 1])
        s++;
    const int G = p.group, team = SELL ? G : p.seg_team[s];
    const int tl = (threadIdx.x & 31) & (team - 1), glane = tl & (G - 1);
    const int64_t slot = (((int64_t)blockIdx.x - p.first_block[s]) * blockDim.x + threadIdx.x) / team;
    int64_t row = -1, start = 0, len = 0, stride = 1;
    if (SELL) {
        if (slot < p.seg_rows[0]) {
            int64_t sl = slot / p.slice_c;
            start = p.slice_ptr[sl] + (slot - sl * p.slice_c);
            stride = p.slice_c;
            row = p.perm[slot];
            len = row >= 0 ? p.rowlen[slot] : 0;
        }
    } else if (slot < p.seg_rows[s]) {
        const int64_t k = p.seg_offset[s] + slot;
        row = p.rows ? p.rows[k] : k;
        start = p.rowptr[row];
        len = p.row_end[row] - start;
    }
    const int64_t tile_cols = (int64_t)G * V, ntiles = (p.d.n + tile_cols - 1) / tile_cols;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const lane_cols lc = lane_cols_of<V, SPREAD>(tile, G, glane, p.d.n);
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        team_accumulate<T, V, true>(p.colidx, p.vals, start, len, stride, team, G,
                                    b_in_global<SPREAD>(p.d.B, p.d.ldb, lc), lc.count, acc);
        if (row >= 0 && lc.count > 0 && tl < G)
            store_epilogue<T, V>(p.d.C + row * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha, p.d.beta,
                                 p.d.c_vec);
    }
}

// RUNS: a warp per column tile of 32 16-byte vectors (blockIdx.y) takes
// SPX_CUDA_ROW_RUN adjacent slots of the list (seg_rows[0] of them) one after
// another, in blocks of 128 threads. Short rows are bound by the chain of
// dependent loads each one waits on (row number, row start, entries, B), not
// by bytes. So the warp reads its rows' starts and lengths at once (lane r
// holds row r), loads the next row's first 32 entries while this row's B
// segments are in flight, and its team is a constant warp (none of
// rows_kernel's team arithmetic). Rows and their lengths fit 32 bits (the
// backend's bound on m and k; CSR rows hold no duplicates). Ten blocks an SM
// for f32 (48 registers, 0-12 bytes spilled; other types as the compiler
// chooses): more warps in flight paid more than the registers (H100, 3D
// Laplacian 100^3 at N = 128: 0.87 ms in rows_kernel's warp per row, 0.54 in
// runs, 0.47 with the entries loaded ahead and ten blocks;
// docs/PERFORMANCE.md). The loop over chunks of 32 entries spilled least:
// written for rows of at most 32 entries alone, the kernel spilled 36 bytes
// where it then spilled 12, and took 0.50 ms.
template <typename T, typename TB, int V, bool SPREAD>
__global__ void __launch_bounds__(128, sizeof(T) == 4 ? 10 : 1) row_runs_kernel(const rows_params<T, TB> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int R = SPX_CUDA_ROW_RUN;
    static_assert(R <= 32, "a lane holds each row of a run");
    const int lane = threadIdx.x & 31;
    const int64_t first = ((int64_t)blockIdx.x * 128 + threadIdx.x) / 32 * R, nrows = p.seg_rows[0];
    const lane_cols lc = lane_cols_of<V, SPREAD>(blockIdx.y, 32, lane, p.d.n);
    const auto src = b_in_global<SPREAD>(p.d.B, p.d.ldb, lc);
    int my_row = -1, my_len = 0;
    int64_t my_start = 0;
    if (lane < R && first + lane < nrows) {
        my_row = p.rows ? p.rows[first + lane] : (int)(first + lane);
        my_start = p.rowptr[my_row];
        my_len = (int)(p.row_end[my_row] - my_start);
    }
    // lane i: entry i of the 32 from `start` (column 0, value 0 past `len`)
    auto load32 = [&](int64_t start, int len, int &col, A &v) {
        col = 0;
        v = A(0);
        if (lane < len) {
            col = p.colidx[start + lane];
            v = a_value_as<TB>(p.vals, start + lane);
        }
    };
    // the first 32 entries of run row r (col, v), then of row r + 1 (next_col, next_v)
    int col;
    A v;
    load32(__shfl_sync(SPX_FULL_MASK, my_start, 0), __shfl_sync(SPX_FULL_MASK, my_len, 0), col, v);
#pragma unroll 1
    for (int r = 0; r < R; r++) { // the same trips for the whole warp
        const int row = __shfl_sync(SPX_FULL_MASK, my_row, r), len = __shfl_sync(SPX_FULL_MASK, my_len, r);
        const int64_t start = __shfl_sync(SPX_FULL_MASK, my_start, r);
        int next_col = 0;
        A next_v = A(0);
        if (r + 1 < R)
            load32(__shfl_sync(SPX_FULL_MASK, my_start, r + 1), __shfl_sync(SPX_FULL_MASK, my_len, r + 1), next_col,
                   next_v);
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        for (int c = 0; c < len; c += 32) {
            if (c > 0)
                load32(start + c, len - c, col, v);
            const int cnt = len - c < 32 ? len - c : 32;
            chunk_accumulate<T, V>(col, v, cnt, cnt, 32, 0, 1, src, lc.count, acc);
        }
        if (row >= 0 && lc.count > 0)
            store_epilogue<T, V>(p.d.C + (int64_t)row * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha,
                                 p.d.beta, p.d.c_vec);
        col = next_col;
        v = next_v;
    }
}

// BATCHES: a team of L = SPX_CUDA_BATCH_LANES(U, C) lanes per row and column
// tile of C (blockIdx.y), V = SPX_CUDA_BATCH_LANE_COLS(U) columns a lane, BT /
// L rows a block of BT threads. The team
// stages its row's entries U at a time in shared memory, double-buffered: the
// next batch's
// loads are in flight while this one's U B row segments are, all issued
// before their FMAs. rows_kernel broadcasts entries with two shuffles each and
// keeps SPX_SPMM_IN_FLIGHT segments in flight; on long rows of narrow
// matrices at large N that left it behind cuSPARSE's csrmm_v3, whose SASS
// shows this structure (ncu; H100, DLMC layers of 512 rows:
// docs/PERFORMANCE.md; on those rows 8 a batch, or each register reloaded
// right after its FMA, were 1.3-2x slower). Shapes (the plan's), in tiles of
// 64 columns: 512 threads and U = 16, one block an SM (128 registers); 256 and 32, one block an SM (up
// to 255 registers), where the blocks are few, as csrmm_v3 does (1.16x over 16
// on the DLMC layers at N = 256); 256 and 16, two blocks an SM; 128 and 8,
// four blocks an SM, on short rows (1.12-1.15x over TILED and the row kernels
// on the DLMC 2 % layers of k = 512, as 256 threads in teams of 16, three
// blocks an SM). Teams of 8 lanes of eight columns, one address and test
// feeding 8 FMAs, ran 1.08-1.17x over those teams of 16 on 10 short-row
// products of 512 blocks and more, 0.96-0.99x on 5 of 64-256 blocks (DLMC
// and generated layers, H200); in the shapes of 16 entries, where they
// halve the warps an SM, 0.88-0.94x. Whole batches without a test before
// each load and FMA ran 1-4 % slower (tested for the warp), 6-11 % (for each lane). Staging each entry as
// its B row's byte offset, with the entries past a row's end pointed at a row
// of zeros (no multiply and no test in the loop; in the 16-entry kernel 624
// SASS instructions instead of 800) ran 6 % slower forced on the DLMC layers
// (8 % with generic loads; H100): the likely cost is those entries' loads,
// which the tests skip. A sorted list's rows dealt to the blocks in turn, to
// even out their work, gained about 3 % on the whole but lost up to 12 % on
// the 2 % q layer, whose SMs then worked more cycles (L1 reuse between
// neighbouring rows lost). With slots (p.slots), a long row's pieces run on
// adjacent teams of a block, so that no team waits on a whole long row: after
// the batches the later pieces leave their sums in shared memory (where the
// batches were staged) and the first piece adds them in order. Where N is at
// most 32, the tile is 32 or 16 columns: the same rows a block in teams of a
// half or a quarter of the lanes, so blocks of as many fewer threads, two or
// four times as many an SM; no lane idles for want of columns (H200, forced,
// 1.13-1.36x over the tile of 64 at N = 8-32; in blocks of the 64-column
// tile's threads, the few blocks of small products on as few SMs lost up to
// 20 %: docs/PERFORMANCE.md).
template <typename T, typename TB, bool SPREAD, int BT, int U, int C>
__global__ void __launch_bounds__(BT, SPX_CUDA_BATCH_BLOCKS_PER_SM(BT, U)) row_batches_kernel(const rows_params<T, TB> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int V = SPX_CUDA_BATCH_LANE_COLS(U), L = SPX_CUDA_BATCH_LANES(U, C), ROWS = BT / L;
    constexpr int E = U / L;         // entries a lane stages
    constexpr bool PIECES = U >= 16; // the launch takes slots (8 a batch: short rows, never cut)
    static_assert(L >= 1 && L <= 32 && U % L == 0 && L * V == C, "a team within a warp, its tile");
    static_assert(ROWS % SPX_CUDA_BATCH_PIECE_TEAMS == 0, "a row's pieces within one block");
    __shared__ __align__(16) union {
        struct {
            int col[2][ROWS][U];
            A val[2][ROWS][U];
        } staged;
        A sums[PIECES ? ROWS : 1][L * V];
    } sm;
    auto &scol = sm.staged.col;
    auto &sval = sm.staged.val;
    const int t = threadIdx.x / L, tl = threadIdx.x % L;
    const int64_t slot = (int64_t)blockIdx.x * ROWS + t;
    int64_t row = -1, start = 0, len = 0;
    int pieces = 1;
    if (slot < p.seg_rows[0]) {
        if (PIECES && p.slots) {
            const spx_cuda_batch_slot sl = p.slots[slot];
            row = sl.row;
            start = sl.start;
            len = sl.end - sl.start;
            pieces = sl.pieces;
        } else {
            row = p.rows ? p.rows[slot] : slot;
            start = p.rowptr[row];
            len = p.row_end[row] - start;
        }
    }
    const int64_t batches = warp_max((len + U - 1) / U); // the same trips for the warp's teams
    const int64_t tile_cols = (int64_t)L * V, ntiles = (p.d.n + tile_cols - 1) / tile_cols;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const lane_cols lc = lane_cols_of<V, SPREAD>(tile, L, tl, p.d.n);
        // B through ordinary C++ loads: 1.03x over the read-only path on the
        // DLMC layers AUTO gives the batches, 1.07-1.09x on 512 x 4608 and
        // 512 x 2048 (H100), though ptxas then spills up to 24 bytes; the same
        // loads in inline PTX (ld.global) ran as the read-only path did.
        // Addresses by one mad.wide each (b_row).
        const auto src = b_in_global<SPREAD, false, true>(p.d.B, p.d.ldb, lc);
        A acc[V];
#pragma unroll
        for (int q = 0; q < V; q++)
            acc[q] = A(0);
        int col[E];
        A val[E];
        auto fetch = [&](int64_t b) { // this lane's entries of batch b (column 0, value 0 past the row)
#pragma unroll
            for (int e = 0; e < E; e++) {
                const int64_t i = b * U + tl + e * L;
                col[e] = 0;
                val[e] = A(0);
                if (i < len) {
                    col[e] = p.colidx[start + i];
                    val[e] = a_value_as<TB>(p.vals, start + i);
                }
            }
        };
        auto stage = [&](int buf) {
#pragma unroll
            for (int e = 0; e < E; e++) {
                scol[buf][t][tl + e * L] = col[e];
                sval[buf][t][tl + e * L] = val[e];
            }
            __syncwarp();
        };
        if (batches > 0) {
            fetch(0);
            stage(0);
        }
        for (int64_t b = 0; b < batches; b++) {
            if (b + 1 < batches)
                fetch(b + 1);
            const int64_t left = len - b * U;
            const int cnt = left >= U ? U : (left > 0 ? (int)left : 0);
            int cj[U];
            A vj[U];
            load_shared16(scol[b & 1][t], cj);
            load_shared16(sval[b & 1][t], vj);
            fma_rows<T, V, U>(src, cj, vj, cnt, lc.count, acc);
            if (b + 1 < batches) // the other buffer: read by every lane before the last __syncwarp
                stage((int)((b + 1) & 1));
        }
        if (PIECES && p.slots) { // the same for the whole grid
            __syncthreads();     // every team past its batches: the sums take their memory
            if (pieces == 0)
#pragma unroll
                for (int q = 0; q < V; q++)
                    sm.sums[t][tl * V + q] = acc[q];
            __syncthreads();
            for (int j = 1; j < pieces; j++)
#pragma unroll
                for (int q = 0; q < V; q++)
                    acc[q] += sm.sums[t + j][tl * V + q];
            __syncthreads(); // read before the next tile stages
        }
        if (row >= 0 && lc.count > 0)
            store_epilogue<T, V>(p.d.C + row * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha, p.d.beta,
                                 p.d.c_vec);
        __syncwarp(); // the next tile stages into buffer 0 again
    }
}

// BLOCK_ROW: blockDim.x = 32 * warps, one row per block; each warp is a team of
// 32 lanes taking chunks of 32 entries round-robin; warp 0 then adds the
// warps' sums in warp order.
template <typename T, typename TB, int V, bool SPREAD>
__global__ void __launch_bounds__(512) block_rows_kernel(const rows_params<T, TB> p)
{
    typedef typename acc_of<T>::type A;
    extern __shared__ unsigned char smem_raw[];
    A *red = reinterpret_cast<A *>(smem_raw); // [warps][G * V]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const int G = p.group, glane = lane & (G - 1);
    const int64_t k = p.seg_offset[0] + blockIdx.x, row = p.rows ? p.rows[k] : k;
    const int64_t start = p.rowptr[row], len = p.row_end[row] - start;
    const int64_t tile_cols = (int64_t)G * V, ntiles = (p.d.n + tile_cols - 1) / tile_cols;
    // warp w owns the chunks w, w + nwarps, ... of 32 entries: a strided range
    const int64_t nchunks = (len + 31) / 32;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const lane_cols lc = lane_cols_of<V, SPREAD>(tile, G, glane, p.d.n);
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = A(0);
        for (int64_t c = warp; c < nchunks; c += nwarps) {
            const int64_t b = c * 32, l = len - b < 32 ? len - b : 32;
            team_accumulate<T, V, false>(p.colidx, p.vals, start + b, l, 1, 32, G,
                                         b_in_global<SPREAD>(p.d.B, p.d.ldb, lc), lc.count, acc);
        }
        for (int o = G; o < 32; o <<= 1) // the warp's sub-groups, then the warps below
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] += __shfl_xor_sync(SPX_FULL_MASK, acc[t], o);
        if (lane < G)
#pragma unroll
            for (int t = 0; t < V; t++)
                red[(warp * G + lane) * V + t] = acc[t];
        __syncthreads();
        if (warp == 0 && lane < G) {
            for (int w = 1; w < nwarps; w++)
#pragma unroll
                for (int t = 0; t < V; t++)
                    acc[t] += red[(w * G + lane) * V + t];
            if (lc.count > 0)
                store_epilogue<T, V>(p.d.C + row * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha, p.d.beta,
                                     p.d.c_vec);
        }
        __syncthreads(); // red is reused by the next tile
    }
}

template <typename T, typename TB = T>
rows_params<T, TB> make_params(const spx_cuda_dense_args *d, int group)
{
    rows_params<T, TB> p = {};
    p.group = group;
    p.d = dense_ops_from<T, TB>(d);
    return p;
}

// make_params over op(A)'s CSR and the row list
template <typename T, typename TB>
rows_params<T, TB> csr_params(const spx_cuda_csr *A, const int32_t *rows, const spx_cuda_dense_args *d, int group)
{
    rows_params<T, TB> p = make_params<T, TB>(d, group);
    p.rowptr = A->rowptr;
    p.row_end = A->row_end ? A->row_end : A->rowptr + 1;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.rows = rows;
    return p;
}

unsigned grid_y(int64_t n, int64_t tile_cols)
{
    int64_t gy = (n + tile_cols - 1) / tile_cols;
    return (unsigned)(gy > 65535 ? 65535 : (gy < 1 ? 1 : gy));
}

template <typename T, typename TB, int V, bool SPREAD>
cudaError_t launch_rows_t(const spx_cuda_csr *A, const int32_t *rows, const spx_cuda_row_segment *segs,
                          int nsegs, int group, const spx_cuda_dense_args *d)
{
    rows_params<T, TB> p = csr_params<T, TB>(A, rows, d, group);
    int64_t blocks = 0;
    for (int s = 0; s < nsegs; s++) {
        p.first_block[p.nsegs] = blocks;
        p.seg_offset[p.nsegs] = segs[s].offset;
        p.seg_rows[p.nsegs] = segs[s].nrows;
        p.seg_team[p.nsegs] = segs[s].team;
        blocks += (segs[s].nrows * segs[s].team + rows_threads<T>() - 1) / rows_threads<T>();
        p.nsegs++;
    }
    p.first_block[p.nsegs] = blocks;
    if (blocks == 0)
        return cudaSuccess;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    rows_kernel<T, TB, V, SPREAD, false>
        <<<dim3((unsigned)blocks, grid_y(d->n, (int64_t)group * V)), rows_threads<T>(), 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, int V, bool SPREAD>
cudaError_t launch_sell_t(const spx_cuda_sell *A, int group, const spx_cuda_dense_args *d)
{
    rows_params<T> p = make_params<T>(d, group);
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.slice_ptr = A->slice_ptr;
    p.perm = A->perm;
    p.rowlen = A->rowlen;
    p.slice_c = A->c;
    p.nsegs = 1;
    p.seg_rows[0] = A->nslices * A->c;
    p.seg_team[0] = group;
    int64_t blocks = (p.seg_rows[0] * group + rows_threads<T>() - 1) / rows_threads<T>();
    p.first_block[1] = blocks;
    rows_kernel<T, T, V, SPREAD, true>
        <<<dim3((unsigned)blocks, grid_y(d->n, (int64_t)group * V)), rows_threads<T>(), 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, typename TB, int V, bool SPREAD>
cudaError_t launch_row_runs_t(const spx_cuda_csr *A, const int32_t *rows, int64_t nrows, const spx_cuda_dense_args *d)
{
    rows_params<T, TB> p = csr_params<T, TB>(A, rows, d, 32);
    p.seg_rows[0] = nrows;
    const int64_t blocks = ((nrows + SPX_CUDA_ROW_RUN - 1) / SPX_CUDA_ROW_RUN + 3) / 4;
    const int64_t tiles = (d->n + 32 * V - 1) / (32 * V);
    if (blocks > 0x7fffffff || tiles > 65535)
        return cudaErrorInvalidConfiguration;
    row_runs_kernel<T, TB, V, SPREAD><<<dim3((unsigned)blocks, (unsigned)tiles), 128, 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, bool SPREAD, int BT, int U, int C>
cudaError_t launch_row_batches_t(const spx_cuda_csr *A, const int32_t *rows, const spx_cuda_batch_slot *slots,
                                 int64_t nrows, const spx_cuda_dense_args *d)
{
    constexpr int L = SPX_CUDA_BATCH_LANES(U, C);
    rows_params<T> p = csr_params<T, T>(A, rows, d, L);
    p.slots = slots;
    p.seg_rows[0] = nrows;
    const int64_t blocks = (nrows * L + BT - 1) / BT;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    row_batches_kernel<T, T, SPREAD, BT, U, C><<<dim3((unsigned)blocks, grid_y(d->n, C)), BT, 0, d->stream>>>(p);
    return cudaGetLastError();
}

template <typename T, typename TB, int V, bool SPREAD>
cudaError_t launch_block_rows_t(const spx_cuda_csr *A, const int32_t *rows, int64_t offset, int64_t nrows,
                                int warps, int group, const spx_cuda_dense_args *d)
{
    rows_params<T, TB> p = csr_params<T, TB>(A, rows, d, group);
    p.seg_offset[0] = offset;
    size_t smem = (size_t)warps * group * V * sizeof(typename acc_of<T>::type);
    block_rows_kernel<T, TB, V, SPREAD><<<dim3((unsigned)nrows, grid_y(d->n, (int64_t)group * V)), 32 * warps, smem, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

// f32 data's B rounded to 16 bits (d->b_round): four columns a lane, as
// for f32, in 8-byte loads; the rounded copy's rows start on 16 bytes, so it
// is never spread. Else B of the data's type.
#define LAUNCH_ROWS(F, ...)                                                                                           \
    if (d->b_round)                                                                                                   \
        return d->dtype != SPX_F32 || d->vec < 4 ? cudaErrorInvalidValue                                             \
               : d->b_round == SPX_BF16          ? F<float, __nv_bfloat16, 4, false>(__VA_ARGS__)                     \
               : d->b_round == SPX_F16           ? F<float, __half, 4, false>(__VA_ARGS__)                            \
                                                 : cudaErrorInvalidValue;                                             \
    SPX_DISPATCH_T(d->dtype, CALL)

extern "C" cudaError_t spx__cuda_launch_rows(const spx_cuda_csr *A, const int32_t *rows,
                                             const spx_cuda_row_segment *segs, int nsegs, int group,
                                             const spx_cuda_dense_args *d)
{
    if (d->n <= 0 || nsegs <= 0)
        return cudaSuccess;
    if (nsegs > SPX_CUDA_MAX_SEGMENTS)
        return cudaErrorInvalidValue;
#define CALL(T, V) (d->vec > 1 ? launch_rows_t<T, T, V, false>(A, rows, segs, nsegs, group, d) : launch_rows_t<T, T, V, true>(A, rows, segs, nsegs, group, d))
    LAUNCH_ROWS(launch_rows_t, A, rows, segs, nsegs, group, d)
#undef CALL
}

extern "C" cudaError_t spx__cuda_launch_row_runs(const spx_cuda_csr *A, const int32_t *rows, int64_t nrows,
                                                 const spx_cuda_dense_args *d)
{
    if (nrows <= 0 || d->n <= 0)
        return cudaSuccess;
#define CALL(T, V) (d->vec > 1 ? launch_row_runs_t<T, T, V, false>(A, rows, nrows, d) : launch_row_runs_t<T, T, V, true>(A, rows, nrows, d))
    LAUNCH_ROWS(launch_row_runs_t, A, rows, nrows, d)
#undef CALL
}

// The batches' shapes (spx__cuda_launch_row_batches) for values of T and
// a column tile of C: 32 rows a block with 16 entries a batch; 16 rows with
// 32, 16 or 8 entries. Four columns a lane with 16 or 32 entries a batch:
// one 16-byte load of a B row segment for f32, 8 bytes for 16-bit data;
// eight with 8 entries a batch: two 16-byte loads for f32, one for 16-bit
// data.
template <typename T, bool SPREAD, int C>
cudaError_t launch_row_batches_of(const spx_cuda_csr *A, const int32_t *rows, const spx_cuda_batch_slot *slots,
                                  int64_t nrows, int threads, int batch, const spx_cuda_dense_args *d)
{
    const int lanes = SPX_CUDA_BATCH_LANES(batch, C);
    const int block_rows = lanes > 0 && threads % lanes == 0 ? threads / lanes : 0;
    if (block_rows == 32 && batch == 16)
        return launch_row_batches_t<T, SPREAD, 32 * SPX_CUDA_BATCH_LANES(16, C), 16, C>(A, rows, slots, nrows, d);
    if (block_rows == 16 && batch == 32)
        return launch_row_batches_t<T, SPREAD, 16 * SPX_CUDA_BATCH_LANES(32, C), 32, C>(A, rows, slots, nrows, d);
    if (block_rows == 16 && batch == 16)
        return launch_row_batches_t<T, SPREAD, 16 * SPX_CUDA_BATCH_LANES(16, C), 16, C>(A, rows, slots, nrows, d);
    if (block_rows == 16 && batch == 8)
        return launch_row_batches_t<T, SPREAD, 16 * SPX_CUDA_BATCH_LANES(8, C), 8, C>(A, rows, slots, nrows, d);
    return cudaErrorInvalidValue;
}

template <typename T, bool SPREAD>
cudaError_t launch_row_batches_cols(const spx_cuda_csr *A, const int32_t *rows, const spx_cuda_batch_slot *slots,
                                    int64_t nrows, int threads, int batch, int cols, const spx_cuda_dense_args *d)
{
    switch (cols) {
    case SPX_CUDA_BATCH_COLS:
        return launch_row_batches_of<T, SPREAD, SPX_CUDA_BATCH_COLS>(A, rows, slots, nrows, threads, batch, d);
    case 32: return launch_row_batches_of<T, SPREAD, 32>(A, rows, slots, nrows, threads, batch, d);
    case 16: return launch_row_batches_of<T, SPREAD, 16>(A, rows, slots, nrows, threads, batch, d);
    default: return cudaErrorInvalidValue;
    }
}

static cudaError_t launch_row_batches_typed(const spx_cuda_csr *A, const int32_t *rows,
                                            const spx_cuda_batch_slot *slots, int64_t nrows, int threads, int batch,
                                            int cols, const spx_cuda_dense_args *d)
{
#define CALL(T)                                                                                                       \
    (d->vec > 1 ? launch_row_batches_cols<T, false>(A, rows, slots, nrows, threads, batch, cols, d)                   \
                : launch_row_batches_cols<T, true>(A, rows, slots, nrows, threads, batch, cols, d))
    switch (d->dtype) {
    case SPX_F32: return CALL(float);
    case SPX_F16: return CALL(__half);
    case SPX_BF16: return CALL(__nv_bfloat16);
    default: return cudaErrorInvalidValue;
    }
#undef CALL
}

extern "C" cudaError_t spx__cuda_launch_row_batches(const spx_cuda_csr *A, const int32_t *rows,
                                                    const spx_cuda_batch_slot *slots, int64_t nrows, int threads,
                                                    int batch, int cols, int last_cols, const spx_cuda_dense_args *d)
{
    if (nrows <= 0 || d->n <= 0)
        return cudaSuccess;
    /* B as given; slots with 16 entries a batch or more */
    if (d->b_round || (slots && batch < 16))
        return cudaErrorInvalidValue;
    const int64_t rest = d->n > cols ? d->n % cols : 0; // the columns past the last whole tile
    if (last_cols >= cols || rest == 0)
        return launch_row_batches_typed(A, rows, slots, nrows, threads, batch, cols, d);
    if (last_cols != spx__cuda_batch_tile_cols(rest))
        return cudaErrorInvalidValue;
    // The whole tiles, then the last in a tile as narrow as its columns, in
    // blocks of the same rows (teams of fewer lanes) on a view of B and C
    spx_cuda_dense_args part = *d;
    part.n = d->n - rest;
    cudaError_t e = launch_row_batches_typed(A, rows, slots, nrows, threads, batch, cols, &part);
    if (e != cudaSuccess)
        return e;
    const size_t skip = (size_t)part.n * spx_dtype_size(d->dtype);
    part.n = rest;
    part.B = (const char *)d->B + skip;
    part.C = (char *)d->C + skip;
    const int block_rows = threads / SPX_CUDA_BATCH_LANES(batch, cols);
    return launch_row_batches_typed(A, rows, slots, nrows, block_rows * SPX_CUDA_BATCH_LANES(batch, last_cols), batch,
                                    last_cols, &part);
}

extern "C" cudaError_t spx__cuda_launch_sell(const spx_cuda_sell *A, int group, const spx_cuda_dense_args *d)
{
    if (A->nslices <= 0 || d->n <= 0)
        return cudaSuccess;
    if (d->b_round)
        return cudaErrorInvalidValue;
#define CALL(T, V) (d->vec > 1 ? launch_sell_t<T, V, false>(A, group, d) : launch_sell_t<T, V, true>(A, group, d))
    SPX_DISPATCH_T(d->dtype, CALL)
#undef CALL
}

extern "C" cudaError_t spx__cuda_launch_block_rows(const spx_cuda_csr *A, const int32_t *rows, int64_t offset,
                                                   int64_t nrows, int warps, int group,
                                                   const spx_cuda_dense_args *d)
{
    if (nrows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (nrows > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
#define CALL(T, V) (d->vec > 1 ? launch_block_rows_t<T, T, V, false>(A, rows, offset, nrows, warps, group, d) : launch_block_rows_t<T, T, V, true>(A, rows, offset, nrows, warps, group, d))
    LAUNCH_ROWS(launch_block_rows_t, A, rows, offset, nrows, warps, group, d)
#undef CALL
}

#undef LAUNCH_ROWS

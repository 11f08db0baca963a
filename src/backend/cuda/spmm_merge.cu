// Merge-path SpMM: every warp gets the same number of merge items (row ends +
// entries), so a row of a million entries and a million empty rows cost the
// same. Rows cut by a warp boundary leave partial sums in carry slots; a
// fix-up kernel adds them in warp order (no atomics: bit-exact run to run).
// A row cut into many pieces is added in two levels: groups of consecutive
// pieces first (one warp per group), then the groups' sums. Without 16-byte
// vectors (B's rows misaligned) a lane's V columns are spread 32 apart
// (SPREAD, lane_cols); N up to 32 takes a column per lane (V = 1).
#include "backend/cuda/device_types.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

// Start coordinate of every warp: rows ended and entries consumed before the
// warp's first merge item (Merrill & Garland's merge-path search). With
// row_aligned, a start inside a row moves back to the row's start, so no row
// is cut, and *longest records the largest such move (entries); without, it
// records the most warps past its first that any cut row reaches.
__global__ void partition_kernel(const int64_t *__restrict__ rowptr, int64_t m, int64_t nnz,
                                 int64_t per_warp, int64_t nwarps, int row_aligned, int64_t *start_row,
                                 int64_t *start_nnz, unsigned long long *longest)
{
    int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w > nwarps)
        return;
    int64_t d = w * per_warp, total = m + nnz;
    if (d > total)
        d = total;
    int64_t lo = d - nnz > 0 ? d - nnz : 0, hi = d < m ? d : m;
    while (lo < hi) {
        int64_t pivot = (lo + hi) >> 1;
        if (rowptr[pivot + 1] <= d - pivot - 1)
            lo = pivot + 1;
        else
            hi = pivot;
    }
    int64_t e = d - lo;
    if (lo < m && e > rowptr[lo]) { // the warp starts inside row lo
        if (row_aligned) {
            atomicMax(longest, (unsigned long long)(e - rowptr[lo]));
            e = rowptr[lo];
        } else {
            atomicMax(longest, (unsigned long long)((lo + rowptr[lo + 1]) / per_warp - (lo + rowptr[lo]) / per_warp));
        }
    }
    start_row[w] = lo;
    start_nnz[w] = e;
}

template <typename T> struct merge_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t m, nwarps, items; // items: rows + entries per warp
    int64_t group;            // pieces per first-level group of a long cut row (0: one level)
    const int64_t *start_row, *start_nnz;
    int32_t *carry_rows;                  // [2 * nwarps]: row of a warp's first / last carry, or -1
    typename acc_of<T>::type *carry_vals; // [2 * nwarps][n]
    dense_ops<T> d;
};

// acc += sum over entries [y0, y1) of A(row, col) * B(col, lane's columns).
template <typename T, int V, bool SPREAD>
__device__ __forceinline__ void accumulate(const merge_params<T> &p, int64_t y0, int64_t y1, const lane_cols &lc,
                                           typename acc_of<T>::type (&acc)[V])
{
    typedef typename acc_of<T>::type A;
    const int lane = threadIdx.x & 31;
    for (int64_t base = y0; base < y1; base += 32) {
        int col = 0;
        A v = A(0);
        if (base + lane < y1) {
            col = p.colidx[base + lane];
            v = a_value(p.vals, base + lane);
        }
        const int cnt = y1 - base >= 32 ? 32 : (int)(y1 - base);
        constexpr int U = SPX_SPMM_IN_FLIGHT;
        for (int j0 = 0; j0 < cnt; j0 += U) { /* U B row segments in flight */
            int cj[U];
            A vj[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                cj[u] = __shfl_sync(SPX_FULL_MASK, col, (j0 + u) & 31);
                vj[u] = __shfl_sync(SPX_FULL_MASK, v, (j0 + u) & 31);
            }
            fma_rows<T, V, U>(b_in_global<SPREAD>(p.d.B, p.d.ldb, lc), cj, vj, cnt - j0, lc.count, acc);
        }
    }
}

template <typename T, int V>
__device__ __forceinline__ void save_carry(const merge_params<T> &p, int64_t slot, int64_t row, const lane_cols &lc,
                                           bool first_tile, const typename acc_of<T>::type (&acc)[V])
{
    if (first_tile && (threadIdx.x & 31) == 0)
        p.carry_rows[slot] = (int32_t)row;
    for (int t = 0; t < V && t < lc.count; t++)
        p.carry_vals[slot * p.d.n + lc.first + t * lc.step] = acc[t];
}

// Blocks per SM held at what the kernel had before its addresses were
// narrowed (which let the compiler take more registers): four (64 registers)
// for f32 and a column per lane, three for f64 and the half types. At three,
// the L2-bound f32 stencil products lost ~9 % (H200).
template <typename T, int V, bool SPREAD>
__global__ void __launch_bounds__(256, sizeof(T) == 4 || V == 1 ? 4 : 3) merge_kernel(const merge_params<T> p)
{
    typedef typename acc_of<T>::type A;
    const int lane = threadIdx.x & 31;
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (w >= p.nwarps)
        return; // whole warps leave together
    const int64_t x_end = p.start_row[w + 1], y_end = p.start_nnz[w + 1];
    if (p.carry_rows && blockIdx.y == 0 && lane == 0) // no carries unless set below (same lane, first tile)
        p.carry_rows[2 * w] = p.carry_rows[2 * w + 1] = -1;
    const int64_t ntiles = (p.d.n + 32 * V - 1) / (32 * V);
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const bool first_tile = tile == 0;
        const lane_cols lc = lane_cols_of<V, SPREAD>(tile, 32, lane, p.d.n);
        int64_t x = p.start_row[w], y = p.start_nnz[w];
        bool began = x < p.m && y == p.rowptr[x];
        A acc[V];
        for (; x < x_end; x++) { // rows whose end lies in this warp's range
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] = A(0);
            const int64_t row_end = p.rowptr[x + 1];
            accumulate<T, V, SPREAD>(p, y, row_end, lc, acc);
            y = row_end;
            if (began) {
                if (lc.count > 0)
                    store_epilogue<T, V>(p.d.C + x * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha, p.d.beta,
                                         p.d.c_vec);
            } else {
                save_carry<T, V>(p, 2 * w, x, lc, first_tile, acc); // end of a cut row
            }
            began = true;
        }
        if (y < y_end) { // row x continues past this warp
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] = A(0);
            accumulate<T, V, SPREAD>(p, y, y_end, lc, acc);
            if (began) {
                save_carry<T, V>(p, 2 * w + 1, x, lc, first_tile, acc); // start of a cut row
            } else {
                save_carry<T, V>(p, 2 * w, x, lc, first_tile, acc); // middle of a cut row
            }
        }
    }
}

// The warp holding a cut row's last merge item (its end); the first piece is
// the warp holding its first entry, (row + rowptr[row]) / items. Exact because
// a partition with cut rows puts warp w's start at item w * items.
template <typename T> __device__ __forceinline__ int64_t last_piece(const merge_params<T> &p, int64_t row)
{
    return (row + p.rowptr[row + 1]) / p.items;
}

// acc += the first carries of warps from, from + stride, ... up to `to`, in
// that order, in batches of up to 8 warps' loads in flight (at most 32
// registers a lane; 4 warps for f16 and bf16 above N = 32), the rest one at a
// time: a fix-up warp's time is its chain of loads.
template <typename T, int V>
__device__ __forceinline__ void add_pieces(const merge_params<T> &p, int64_t from, int64_t to, int64_t stride,
                                           const lane_cols &lc, typename acc_of<T>::type (&acc)[V])
{
    typedef typename acc_of<T>::type A;
    constexpr int FIT = 128 / (V * (int)sizeof(A)); // warps' loads that fit 32 registers a lane
    constexpr int U = FIT < 8 ? FIT : 8;
    static_assert(U >= 1, "a lane's columns must fit 32 registers");
    const A *base = p.carry_vals + lc.first;
    const int count = lc.count, step = lc.step;
    int64_t w2 = from;
    for (; w2 + (U - 1) * stride <= to; w2 += U * stride) {
        A v[U][V];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int t = 0; t < V; t++)
                v[u][t] = t < count ? base[2 * (w2 + u * stride) * p.d.n + t * step] : A(0);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] += v[u][t];
    }
    for (; w2 <= to; w2 += stride)
#pragma unroll
        for (int t = 0; t < V; t++)
            if (t < count)
                acc[t] += base[2 * w2 * p.d.n + t * step];
}

// One warp per (warp slot, column tile). GROUPS (first level, for rows cut
// into more than `group` pieces): the warp holding piece 1, 1 + group,
// 1 + 2 group, ... (piece 0 is the row's start) adds its group's pieces in
// order into its own carry slot. Otherwise the warp holding a cut row's start
// adds the following pieces (or their groups' sums) in warp order, then the
// epilogue.
template <typename T, int V, bool SPREAD, bool GROUPS>
__global__ void __launch_bounds__(256) fixup_kernel(const merge_params<T> p)
{
    typedef typename acc_of<T>::type A;
    const int lane = threadIdx.x & 31;
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (w >= p.nwarps)
        return;
    const int64_t slot = GROUPS ? 2 * w : 2 * w + 1; // a piece after the start / a row's start
    const int32_t row = p.carry_rows[slot];
    if (row < 0)
        return;
    const int64_t last = last_piece(p, row);
    int64_t to = last, stride = 1;
    if (GROUPS) {
        const int64_t first = (row + p.rowptr[row]) / p.items;
        if (last - first <= p.group || (w - first - 1) % p.group)
            return;
        to = w + p.group - 1 < last ? w + p.group - 1 : last;
    } else if (p.group && last - w > p.group) {
        stride = p.group;
    }
    const int64_t ntiles = (p.d.n + 32 * V - 1) / (32 * V);
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const lane_cols lc = lane_cols_of<V, SPREAD>(tile, 32, lane, p.d.n);
        if (lc.count <= 0)
            continue;
        A *own = p.carry_vals + slot * p.d.n + lc.first;
        A acc[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            acc[t] = t < lc.count ? own[t * lc.step] : A(0);
        add_pieces<T, V>(p, w + 1, to, stride, lc, acc);
        if (GROUPS)
            for (int t = 0; t < V && t < lc.count; t++)
                own[t * lc.step] = acc[t];
        else
            store_epilogue<T, V>(p.d.C + (int64_t)row * p.d.ldc + lc.first, lc.count, lc.step, acc, p.d.alpha,
                                 p.d.beta, p.d.c_vec);
    }
}

template <typename T, int V, bool SPREAD>
cudaError_t launch_merge_t(const spx_cuda_csr *A, int64_t nwarps, int64_t items, int64_t group,
                           const int64_t *start_row, const int64_t *start_nnz, int32_t *carry_rows,
                           void *carry_vals, const spx_cuda_dense_args *d)
{
    merge_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.m = A->rows;
    p.nwarps = nwarps;
    p.items = items;
    p.group = group;
    p.start_row = start_row;
    p.start_nnz = start_nnz;
    p.carry_rows = carry_rows;
    p.carry_vals = static_cast<typename acc_of<T>::type *>(carry_vals);
    p.d = dense_ops_from<T>(d);
    int64_t gy = (d->n + 32 * V - 1) / (32 * V);
    dim3 grid((unsigned)((nwarps * 32 + 255) / 256), (unsigned)(gy > 65535 ? 65535 : gy));
    merge_kernel<T, V, SPREAD><<<grid, 256, 0, d->stream>>>(p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || !carry_rows)
        return e; // row-aligned partition: no row is cut
    if (group > 0) {
        fixup_kernel<T, V, SPREAD, true><<<grid, 256, 0, d->stream>>>(p);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    fixup_kernel<T, V, SPREAD, false><<<grid, 256, 0, d->stream>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t spx__cuda_merge_partition(const spx_cuda_csr *A, int64_t items_per_warp,
                                                 int64_t nwarps, int row_aligned, int64_t *start_row,
                                                 int64_t *start_nnz, unsigned long long *longest,
                                                 cudaStream_t stream)
{
    int64_t threads = nwarps + 1;
    partition_kernel<<<(unsigned)((threads + 255) / 256), 256, 0, stream>>>(
        A->rowptr, A->rows, A->nnz, items_per_warp, nwarps, row_aligned, start_row, start_nnz, longest);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_launch_merge(const spx_cuda_csr *A, int64_t nwarps, int64_t items,
                                              int64_t group, const int64_t *start_row,
                                              const int64_t *start_nnz, int32_t *carry_rows,
                                              void *carry_vals, const spx_cuda_dense_args *d)
{
    if (nwarps <= 0 || d->n <= 0)
        return cudaSuccess;
    /* N within a warp's lanes: a column per lane keeps every lane busy with
     * the fewest instructions (spread lanes took 1.3x longer on R-MAT and
     * arrow at N = 32, H100) */
#define LAUNCH(T, V, S) launch_merge_t<T, V, S>(A, nwarps, items, group, start_row, start_nnz, carry_rows, carry_vals, d)
#define CALL(T, V) (d->n <= 32 ? LAUNCH(T, 1, false) : d->vec > 1 ? LAUNCH(T, V, false) : LAUNCH(T, V, true))
    SPX_DISPATCH_T(d->dtype, CALL)
#undef CALL
#undef LAUNCH
}

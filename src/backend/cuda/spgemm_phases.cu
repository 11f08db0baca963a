// SpGEMM phases around the row kernels: the work bound of every row, binning
// with the statistics that size the tables, the symbolic row kernels, scans,
// per-chunk bin ranges, rows without products, and the compaction after
// drop_identity.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "backend/cuda/spgemm_rows.cuh"

namespace {

using namespace spx_gemm;

unsigned grid_for(int64_t threads)
{
    int64_t g = (threads + SPX_GEMM_BLOCK - 1) / SPX_GEMM_BLOCK;
    return (unsigned)(g < 1 ? 1 : (g > 65536 ? 65536 : g));
}

// Reductions over aligned groups of L lanes (L a power of two <= 32).
template <int L> __device__ __forceinline__ int64_t lanes_sum(int64_t v)
{
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(SPX_GEMM_FULL, v, o);
    return v;
}
template <int L> __device__ __forceinline__ int32_t lanes_min(int32_t v)
{
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1)
        v = min(v, __shfl_xor_sync(SPX_GEMM_FULL, v, o));
    return v;
}
template <int L> __device__ __forceinline__ int32_t lanes_max(int32_t v)
{
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1)
        v = max(v, __shfl_xor_sync(SPX_GEMM_FULL, v, o));
    return v;
}

// L lanes per row (L near the mean row length of A: short rows would leave
// most of a warp idle and make the pass latency-bound): the products of the
// row under the mask's window (prod; the bound cap, also capped by the
// window and a plain mask row) and the span of columns they reach. Every lane of a
// warp runs the same number of iterations, so the shuffles see all lanes.
template <int L> __global__ void __launch_bounds__(SPX_GEMM_BLOCK) work_kernel(const spx_gemm_dev d)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) { // the flags, and the counts past the last row
        *d.status = spx_gemm_status{LLONG_MAX, 0, 0};
        d.tot[d.m] = 0;
        if (d.act)
            d.act[d.m] = 0;
    }
    const int lane = threadIdx.x & (L - 1);
    const int64_t step = (int64_t)gridDim.x * (SPX_GEMM_BLOCK / L);
    const int64_t first = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / L;
    const int64_t warp_first = first - ((threadIdx.x & 31) / L); // row of the warp's lane 0
    for (int64_t i0 = warp_first; i0 < d.m; i0 += step) {
        const int64_t i = i0 + (first - warp_first);
        const bool row = i < d.m;
        int64_t mb = 0, me = 0;
        int32_t lo = 0, hi = 0;
        if (row)
            row_bounds(d, i, &mb, &me, &lo, &hi);
        int64_t w = 0;
        int32_t jmin = INT32_MAX, jmax = -1;
        if (row && lo < hi) {
            for (int64_t p = d.A.ptr[i] + lane, pe = d.A.ptr[i + 1]; p < pe; p += L) {
                const int32_t k = __ldg(d.A.col + p);
                int64_t qb = __ldg(d.B.ptr + k), qe = __ldg(d.B.ptr + k + 1);
                cut_row(d.B.col, &qb, &qe, lo, hi, d.n);
                if (qb < qe) {
                    w += qe - qb;
                    jmin = min(jmin, __ldg(d.B.col + qb));
                    jmax = max(jmax, __ldg(d.B.col + qe - 1));
                }
            }
        }
        w = lanes_sum<L>(w);
        jmin = lanes_min<L>(jmin);
        jmax = lanes_max<L>(jmax);
        if (row && lane == 0) {
            int64_t cap = w < hi - lo ? w : hi - lo;
            if (d.mask == SPX_MASK_MATRIX && !d.complement && me - mb < cap)
                cap = me - mb;
            d.cap[i] = (int32_t)cap;
            d.prod[i] = (int32_t)(w < INT32_MAX ? w : INT32_MAX);
            d.rlo[i] = w > 0 ? jmin : 0;
            d.rhi[i] = w > 0 ? jmax + 1 : 0;
        }
    }
}

__device__ __forceinline__ bool stat_is_max(int s)
{
    return s == SPX_GEMM_STAT_SYM_SLOTS || s == SPX_GEMM_STAT_NUM_SLOTS ||
           s == SPX_GEMM_STAT_ROW_BOUND || s == SPX_GEMM_STAT_A_MAX || s == SPX_GEMM_STAT_C_ENTRIES;
}

__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long u = __shfl_xor_sync(SPX_GEMM_FULL, v, o);
        v = u > v ? u : v;
    }
    return v;
}

// The bin of row i by size[i] (0 past the last row), a thread per row; whole
// warps call it together, so that the warp reductions see every lane. Rows
// per bin and, symbolic, every other statistic go to the block's s, combined
// per warp first (the rows of a block would otherwise all hit the same few
// shared counters); symbolic binning also sets cnt and tot of rows of size 0.
__device__ __forceinline__ int bin_row(const spx_gemm_dev &d, const int32_t *__restrict__ size,
                                       const spx_gemm_bins &bins, int numeric, int64_t i,
                                       unsigned char *bin, unsigned long long *s)
{
    const int window = spx__gemm_bin_window(&bins), global = spx__gemm_bin_global(&bins);
    const int lane = threadIdx.x & 31;
    const bool row = i < d.m;
    const int64_t sz = row ? size[i] : 0;
    int b = 0;
    // rows too large for shared memory: windows or device memory (by cap in both phases)
    const bool win = row && spx__gemm_windowed(d.cap[i], (int64_t)d.rhi[i] - d.rlo[i], d.prod[i],
                                               d.A.ptr[i + 1] - d.A.ptr[i], bins.window_slots);
    if (sz > 0) {
        b = win ? window : global;
        const int64_t pr = d.prod[i];
        const bool few = bins.nsorted > 0 &&
                         spx__gemm_sorted_row(sz, pr, (int64_t)d.rhi[i] - d.rlo[i], bins.sort_every);
        for (int c = few ? bins.nsorted : bins.nshared; c > (few ? 0 : bins.nsorted); c--)
            if ((few ? pr : sz) <= bins.max_size[c])
                b = c;
    }
    if (row)
        bin[i] = (unsigned char)b;
    for (int c = 0; c <= global; c++) {
        const unsigned in_bin = __ballot_sync(SPX_GEMM_FULL, row && b == c);
        if (lane == 0 && in_bin)
            atomicAdd(&s[SPX_GEMM_STAT_ROWS + c], (unsigned long long)__popc(in_bin));
    }
    if (numeric)
        return b;
    const int64_t alen = row && d.acc.ptr ? d.acc.ptr[i + 1] - d.acc.ptr[i] : 0;
    unsigned long long sym_slots = 0, num_slots = 0;
    if (row && sz == 0) {
        d.cnt[i] = 0;
        d.tot[i] = alen;
    } else if (row) {
        const unsigned long long slots =
            (unsigned long long)spx__gemm_row_slots(sz, (int64_t)d.rhi[i] - d.rlo[i]);
        if (b == global)
            sym_slots = slots;
        if (sz > bins.num_smax && !win)
            num_slots = slots;
    }
    const unsigned num_rows = __ballot_sync(SPX_GEMM_FULL, row && sz > bins.num_smax && !win);
    const int64_t pr = row ? d.prod[i] : 0;
    const unsigned few_rows = __ballot_sync(SPX_GEMM_FULL, pr > SPX_GEMM_SORT_MIN && pr <= SPX_GEMM_SORT_MAX);
    sym_slots = warp_max_u64(sym_slots);
    num_slots = warp_max_u64(num_slots);
    const unsigned long long bound = warp_max_u64(row ? (unsigned long long)(sz + alen) : 0ull);
    const unsigned long long amax =
        warp_max_u64(row ? (unsigned long long)(d.A.ptr[i + 1] - d.A.ptr[i]) : 0ull);
    if (lane == 0) {
        if (sym_slots)
            atomicMax(&s[SPX_GEMM_STAT_SYM_SLOTS], sym_slots);
        if (num_slots)
            atomicMax(&s[SPX_GEMM_STAT_NUM_SLOTS], num_slots);
        if (num_rows)
            atomicAdd(&s[SPX_GEMM_STAT_NUM_ROWS], (unsigned long long)__popc(num_rows));
        if (few_rows)
            atomicAdd(&s[SPX_GEMM_STAT_FEW_ROWS], (unsigned long long)__popc(few_rows));
        if (bound)
            atomicMax(&s[SPX_GEMM_STAT_ROW_BOUND], bound);
        if (amax)
            atomicMax(&s[SPX_GEMM_STAT_A_MAX], amax);
    }
    return b;
}

__global__ void __launch_bounds__(SPX_GEMM_BLOCK)
    bin_kernel(const spx_gemm_dev d, const int32_t *__restrict__ size, const spx_gemm_bins bins,
               int numeric, unsigned char *bin, unsigned long long *stats)
{
    __shared__ unsigned long long s[SPX_GEMM_NSTATS];
    if (threadIdx.x < SPX_GEMM_NSTATS)
        s[threadIdx.x] = 0;
    __syncthreads();
    if (numeric && blockIdx.x == 0 && threadIdx.x == 0)
        s[SPX_GEMM_STAT_C_ENTRIES] = (unsigned long long)d.off[d.m];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i0 = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31); i0 < d.m; i0 += stride)
        bin_row(d, size, bins, numeric, i0 + (threadIdx.x & 31), bin, s);
    __syncthreads();
    const int t = threadIdx.x;
    if (t < SPX_GEMM_NSTATS && s[t]) {
        if (stat_is_max(t))
            atomicMax(&stats[t], s[t]);
        else
            atomicAdd(&stats[t], s[t]);
    }
}

// Products of at most SPX_GEMM_SMALL_ROWS rows: one block bins the rows and
// groups them by bin, increasing within a bin, as the radix sort does for
// larger ones; numeric, it first scans tot into off. One launch where the
// other path takes five or six: a small product's time is mostly launches
// and the host's calls between them.
constexpr int SMALL_THREADS = 1024;
constexpr int SMALL_SLOTS = SPX_GEMM_SMALL_ROWS / 32; // the runs of 32 rows, one per warp pass
static_assert(SPX_GEMM_SMALL_ROWS % 32 == 0 && SPX_GEMM_MAX_BINS * SMALL_SLOTS % SMALL_THREADS == 0,
              "the one-block binning scans its counts in equal runs per thread");

__global__ void __launch_bounds__(SMALL_THREADS)
    bin_small_kernel(const spx_gemm_dev d, const int32_t *__restrict__ size, const spx_gemm_bins bins,
                     int numeric, unsigned char *bin, unsigned long long *stats, int32_t *rows,
                     int64_t *off)
{
    using scan_t = cub::BlockScan<int64_t, SMALL_THREADS>;
    constexpr int PER = SPX_GEMM_MAX_BINS * SMALL_SLOTS / SMALL_THREADS;
    __shared__ typename scan_t::TempStorage scan;
    __shared__ unsigned long long s[SPX_GEMM_NSTATS];
    // rows of bin c in run r at [c * SMALL_SLOTS + r], then where the first goes
    __shared__ int32_t at[SPX_GEMM_MAX_BINS * SMALL_SLOTS];
    __shared__ unsigned char row_bin[SPX_GEMM_SMALL_ROWS];
    const int t = threadIdx.x, lane = t & 31;
    if (t < SPX_GEMM_NSTATS)
        s[t] = 0;
    for (int x = t; x < SPX_GEMM_MAX_BINS * SMALL_SLOTS; x += SMALL_THREADS)
        at[x] = 0;
    __syncthreads();
    if (numeric) { // off = exclusive sums of tot[0..m] (tot[m] = 0), a run of them per thread
        const int64_t n = d.m + 1, per = (n + SMALL_THREADS - 1) / SMALL_THREADS;
        const int64_t p0 = min(n, t * per), p1 = min(n, p0 + per);
        int64_t sum = 0;
        for (int64_t p = p0; p < p1; p++)
            sum += d.tot[p];
        scan_t(scan).ExclusiveSum(sum, sum);
        for (int64_t p = p0; p < p1; p++) {
            off[p] = sum;
            if (p == d.m)
                s[SPX_GEMM_STAT_C_ENTRIES] = (unsigned long long)sum;
            sum += d.tot[p];
        }
        __syncthreads(); // scan's storage is used again below
    }
    const unsigned below = (1u << lane) - 1u; // the lanes before this one
    for (int64_t i0 = (int64_t)(t & ~31); i0 < d.m; i0 += SMALL_THREADS) {
        const int64_t i = i0 + lane;
        const int b = bin_row(d, size, bins, numeric, i, bin, s);
        const unsigned same = __match_any_sync(SPX_GEMM_FULL, i < d.m ? b : -1);
        if (i < d.m) {
            row_bin[i] = (unsigned char)b;
            if (!(same & below))
                at[b * SMALL_SLOTS + (int)(i0 >> 5)] = __popc(same);
        }
    }
    __syncthreads();
    int32_t v[PER];
    int64_t sum = 0;
#pragma unroll
    for (int x = 0; x < PER; x++) {
        v[x] = at[t * PER + x];
        sum += v[x];
    }
    scan_t(scan).ExclusiveSum(sum, sum);
#pragma unroll
    for (int x = 0; x < PER; x++) {
        at[t * PER + x] = (int32_t)sum;
        sum += v[x];
    }
    __syncthreads();
    for (int64_t i0 = (int64_t)(t & ~31); i0 < d.m; i0 += SMALL_THREADS) {
        const int64_t i = i0 + lane;
        const int b = i < d.m ? row_bin[i] : -1;
        const unsigned same = __match_any_sync(SPX_GEMM_FULL, b);
        if (i < d.m)
            rows[at[b * SMALL_SLOTS + (int)(i0 >> 5)] + __popc(same & below)] = (int32_t)i;
    }
    if (t < SPX_GEMM_NSTATS)
        stats[t] = s[t];
}

// Bin b spans rows[start[b]..start[b+1]); find where rows r0 and r1 begin.
struct bin_starts {
    int64_t v[SPX_GEMM_MAX_BINS + 1];
};

__global__ void chunk_ranges_kernel(const int32_t *__restrict__ rows, const bin_starts start,
                                    int nbins, int64_t r0, int64_t r1, int64_t *out)
{
    const int b = threadIdx.x;
    if (b >= nbins)
        return;
    for (int h = 0; h < 2; h++) {
        const int64_t want = h ? r1 : r0;
        int64_t lo = start.v[b], hi = start.v[b + 1];
        while (lo < hi) {
            const int64_t mid = lo + ((hi - lo) >> 1);
            if (rows[mid] < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[2 * b + h] = lo;
    }
}

__device__ __forceinline__ void put_col(void *col, int wide, int64_t pos, int64_t j)
{
    if (wide)
        ((int64_t *)col)[pos] = j;
    else
        ((int32_t *)col)[pos] = (int32_t)j;
}

// A warp per listed row: its accum row, unchanged, to its place in C.
template <typename W>
__global__ void __launch_bounds__(SPX_GEMM_BLOCK)
    copy_rows_kernel(const spx_gemm_dev d, const int32_t *__restrict__ rows, int64_t n)
{
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (SPX_GEMM_BLOCK / 32);
    for (int64_t x = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; x < n; x += warps) {
        const int64_t i = rows[x];
        const int64_t ab = d.acc.ptr ? d.acc.ptr[i] : 0, ae = d.acc.ptr ? d.acc.ptr[i + 1] : 0;
        const int64_t out0 = d.off[i] - d.base;
        for (int64_t p = ab + lane; p < ae; p += 32) {
            put_col(d.out_col, d.out_wide, out0 + p - ab, __ldg(d.acc.col + p));
            ((W *)d.out_val)[out0 + p - ab] = ((const W *)d.acc.val)[p];
        }
        if (d.act && lane == 0)
            d.act[i] = ae - ab;
    }
}

// A warp per row of [r0, r1): act[i] entries from the chunk's copy to noff[i].
template <typename W>
__global__ void __launch_bounds__(SPX_GEMM_BLOCK)
    compact_kernel(const int64_t *__restrict__ off, const int64_t *__restrict__ noff,
                   const int64_t *__restrict__ act, int64_t r0, int64_t r1, const void *src_col,
                   const W *__restrict__ src_val, void *col, W *val, int wide)
{
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (SPX_GEMM_BLOCK / 32);
    const int64_t base = off[r0];
    for (int64_t i = r0 + (((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5); i < r1; i += warps) {
        const int64_t src = off[i] - base, dst = noff[i], len = act[i];
        for (int64_t p = lane; p < len; p += 32) {
            if (wide)
                ((int64_t *)col)[dst + p] = ((const int64_t *)src_col)[src + p];
            else
                ((int32_t *)col)[dst + p] = ((const int32_t *)src_col)[src + p];
            val[dst + p] = src_val[src + p];
        }
    }
}

} // namespace

extern "C" cudaError_t spx__cuda_gemm_work(const spx_gemm_dev *d, int64_t nnz_a, cudaStream_t stream)
{
    const int64_t mean = d->m > 0 ? nnz_a / d->m : 0;
    // a warp per row from a mean of 9: skewed rows (power-law graphs) would
    // hold the sharing rows of a warp back
    if (mean <= 4)
        work_kernel<4><<<grid_for(d->m * 4), SPX_GEMM_BLOCK, 0, stream>>>(*d);
    else if (mean <= 8)
        work_kernel<8><<<grid_for(d->m * 8), SPX_GEMM_BLOCK, 0, stream>>>(*d);
    else
        work_kernel<32><<<grid_for(d->m * 32), SPX_GEMM_BLOCK, 0, stream>>>(*d);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_bin(const spx_gemm_dev *d, const int32_t *size,
                                          const spx_gemm_bins *bins, int numeric,
                                          unsigned char *bin, unsigned long long *stats,
                                          cudaStream_t stream)
{
    if (d->m <= 0)
        return cudaSuccess;
    bin_kernel<<<grid_for(d->m), SPX_GEMM_BLOCK, 0, stream>>>(*d, size, *bins, numeric, bin, stats);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_bin_small(const spx_gemm_dev *d, const int32_t *size,
                                                const spx_gemm_bins *bins, int numeric,
                                                unsigned char *bin, unsigned long long *stats,
                                                int32_t *rows, int64_t *off, cudaStream_t stream)
{
    if (d->m <= 0 || d->m > SPX_GEMM_SMALL_ROWS)
        return cudaErrorInvalidValue;
    bin_small_kernel<<<1, SMALL_THREADS, 0, stream>>>(*d, size, *bins, numeric, bin, stats, rows, off);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_symbolic(const spx_gemm_dev *d, const spx_gemm_launch *L)
{
    return launch_rows<pattern_only, false, false>(d, L);
}

extern "C" cudaError_t spx__cuda_gemm_scan(const int64_t *in, int64_t *out, int64_t n, void *tmp,
                                           size_t *tmp_bytes, cudaStream_t stream)
{
    return cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, in, out, n, stream);
}

extern "C" cudaError_t spx__cuda_gemm_chunk_ranges(const int32_t *rows, const int64_t *start,
                                                   int nbins, int64_t r0, int64_t r1, int64_t *out,
                                                   cudaStream_t stream)
{
    if (nbins < 1 || nbins > SPX_GEMM_MAX_BINS)
        return cudaErrorInvalidValue;
    bin_starts s;
    for (int b = 0; b <= nbins; b++)
        s.v[b] = start[b];
    chunk_ranges_kernel<<<1, 32, 0, stream>>>(rows, s, nbins, r0, r1, out);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_copy_rows(const spx_gemm_dev *d, const int32_t *rows,
                                                int64_t n, int64_t vsz, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    const unsigned grid = grid_for(n * 32);
    switch (vsz) {
    case 1: copy_rows_kernel<uint8_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(*d, rows, n); break;
    case 4: copy_rows_kernel<uint32_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(*d, rows, n); break;
    case 8: copy_rows_kernel<uint64_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(*d, rows, n); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_compact(const int64_t *off, const int64_t *noff,
                                              const int64_t *act, int64_t r0, int64_t r1,
                                              const void *src_col, const void *src_val, void *col,
                                              void *val, int wide, int64_t vsz, cudaStream_t stream)
{
    if (r1 <= r0)
        return cudaSuccess;
    const unsigned grid = grid_for((r1 - r0) * 32);
    switch (vsz) {
    case 1:
        compact_kernel<uint8_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(
            off, noff, act, r0, r1, src_col, (const uint8_t *)src_val, col, (uint8_t *)val, wide);
        break;
    case 4:
        compact_kernel<uint32_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(
            off, noff, act, r0, r1, src_col, (const uint32_t *)src_val, col, (uint32_t *)val, wide);
        break;
    case 8:
        compact_kernel<uint64_t><<<grid, SPX_GEMM_BLOCK, 0, stream>>>(
            off, noff, act, r0, r1, src_col, (const uint64_t *)src_val, col, (uint64_t *)val, wide);
        break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_gemm_numeric(spx_semiring_kind kind, spx_dtype type,
                                              const spx_gemm_dev *d, const spx_gemm_launch *L)
{
    switch (type) {
    case SPX_F32: return spx__cuda_gemm_numeric_f32(kind, d, L);
    case SPX_F64: return spx__cuda_gemm_numeric_f64(kind, d, L);
    case SPX_I32: return spx__cuda_gemm_numeric_i32(kind, d, L);
    case SPX_I64: return spx__cuda_gemm_numeric_i64(kind, d, L);
    case SPX_BOOL: return spx__cuda_gemm_numeric_bool(kind, d, L);
    default: return cudaErrorInvalidValue;
    }
}

// Device helpers of the SpMM planner: row-length bins, stable grouping of
// rows by bin (CUB radix sort), slabs of columns and the columns neighbouring
// rows share, index widening/narrowing, dense transposes (column-major
// operands are transposed into row-major workspace) and f32 B rounded to
// 16 bits.
#include <cub/device/device_radix_sort.cuh>

#include "backend/cuda/device_types.cuh"
#include "backend/cuda/sorted_columns.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

__global__ void bins_kernel(const int64_t *__restrict__ rowptr, int64_t m, int64_t b0, int64_t b1, int64_t b2,
                            int64_t b3, unsigned char *bin, unsigned long long *stats)
{
    __shared__ unsigned long long s[13];
    if (threadIdx.x < 13)
        s[threadIdx.x] = 0;
    __syncthreads();
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < m;
         r += (int64_t)gridDim.x * blockDim.x) {
        int64_t start = rowptr[r], len = rowptr[r + 1] - start;
        unsigned char b = len == 0 ? 0 : len <= b0 ? 1 : len <= b1 ? 2 : len <= b2 ? 3 : len <= b3 ? 4 : 5;
        bin[r] = b;
        atomicAdd(&s[b], 1ull);
        atomicAdd(&s[6 + b], (unsigned long long)len);
        atomicMax(&s[12], (unsigned long long)len);
    }
    __syncthreads();
    if (threadIdx.x < 12)
        atomicAdd(&stats[threadIdx.x], s[threadIdx.x]);
    else if (threadIdx.x == 12)
        atomicMax(&stats[12], s[12]);
}

// Distances of entries from the diagonal: stats[b] counts entries whose
// |col - row| has bit length b (b = 0: on the diagonal), stats[32 + b] is the
// largest such distance, stats[64] the longest row. A warp per row, a
// block's counts gathered in shared memory first.
__global__ void diagonal_profile_kernel(const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colidx,
                                        int64_t m, unsigned long long *stats)
{
    constexpr int NS = 2 * SPX_CUDA_DIAGONAL_BUCKETS + 1;
    __shared__ unsigned long long s[NS];
    for (int i = threadIdx.x; i < NS; i += blockDim.x)
        s[i] = 0;
    __syncthreads();
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < m; r += warps) {
        if ((threadIdx.x & 31) == 0)
            atomicMax(&s[NS - 1], (unsigned long long)(rowptr[r + 1] - rowptr[r]));
        for (int64_t q = rowptr[r] + (threadIdx.x & 31); q < rowptr[r + 1]; q += 32) {
            const int64_t dist = colidx[q] > r ? colidx[q] - r : r - colidx[q];
            const int b = dist ? 64 - __clzll(dist) : 0;
            atomicAdd(&s[b], 1ull);
            atomicMax(&s[SPX_CUDA_DIAGONAL_BUCKETS + b], (unsigned long long)dist);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < NS; i += blockDim.x)
        if (s[i] && i < SPX_CUDA_DIAGONAL_BUCKETS)
            atomicAdd(&stats[i], s[i]);
        else if (s[i])
            atomicMax(&stats[i], s[i]);
}

// A thread per row: a binary search for each slab boundary, each from the
// last one's result.
__global__ void slab_starts_kernel(const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colidx, int64_t m,
                                   int64_t k, int slabs, int64_t *starts)
{
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo = rowptr[r];
        const int64_t end = rowptr[r + 1];
        for (int s = 1; s < slabs; s++) {
            lo = lower_bound_col(colidx, lo, end, (int32_t)(k * s / slabs));
            starts[(int64_t)(s - 1) * m + r] = lo;
        }
    }
}

// A thread per row merges its sorted columns with the row before's.
__global__ void shared_columns_kernel(const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colidx,
                                      int64_t m, unsigned long long *shared)
{
    unsigned long long mine = 0;
    for (int64_t r = 1 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = rowptr[r], j = rowptr[r - 1];
        const int64_t ie = rowptr[r + 1], je = rowptr[r];
        while (i < ie && j < je) {
            const int32_t a = colidx[i], b = colidx[j];
            mine += a == b;
            i += a <= b;
            j += b <= a;
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        mine += __shfl_xor_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(shared, mine);
}

__global__ void iota_kernel(int32_t *out, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (int32_t)i;
}

__global__ void widen_kernel(const int32_t *src, int64_t *dst, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void narrow_kernel(const int64_t *src, int32_t *dst, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = (int32_t)src[i];
}

// 32 x 32 tiles through shared memory; E is an element of the right size.
template <typename E>
__global__ void transpose_kernel(const E *src, int64_t src_ld, E *dst, int64_t dst_ld,
                                 int64_t rows, int64_t cols)
{
    __shared__ E tile[32][33];
    const int64_t c0 = (int64_t)blockIdx.x * 32;
    for (int64_t r0 = (int64_t)blockIdx.y * 32; r0 < rows; r0 += (int64_t)gridDim.y * 32) {
        for (int i = threadIdx.y; i < 32; i += blockDim.y) {
            int64_t r = r0 + i, c = c0 + threadIdx.x;
            if (r < rows && c < cols)
                tile[i][threadIdx.x] = src[r * src_ld + c];
        }
        __syncthreads();
        for (int i = threadIdx.y; i < 32; i += blockDim.y) {
            int64_t c = c0 + i, r = r0 + threadIdx.x;
            if (r < rows && c < cols)
                dst[c * dst_ld + r] = tile[threadIdx.x][i];
        }
        __syncthreads();
    }
}

// out = B rounded to O, four columns a thread (one 16-byte load where B's
// rows allow, one 8-byte store: out's rows start on 16 bytes).
template <typename O>
__global__ void round_b_kernel(const float *__restrict__ B, int64_t ldb, int64_t k, int64_t n, bool vec,
                               O *__restrict__ out, int64_t ldo)
{
    const int64_t quads = (n + 3) / 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < k * quads;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / quads, c = (i - r * quads) * 4;
        const float *src = B + r * ldb + c;
        float x[4];
        if (vec && c + 4 <= n) {
            const float4 v = __ldg(reinterpret_cast<const float4 *>(src));
            x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
        } else {
#pragma unroll
            for (int t = 0; t < 4; t++)
                x[t] = c + t < n ? __ldg(src + t) : 0.0f;
        }
        uint2 raw;
        O *e = reinterpret_cast<O *>(&raw);
#pragma unroll
        for (int t = 0; t < 4; t++)
            e[t] = from_acc<O>(x[t]);
        if (c + 4 <= n)
            *reinterpret_cast<uint2 *>(out + r * ldo + c) = raw;
        else
            for (int t = 0; c + t < n; t++)
                out[r * ldo + c + t] = e[t];
    }
}

unsigned grid_1d(int64_t n)
{
    int64_t g = (n + 255) / 256;
    return (unsigned)(g < 1 ? 1 : (g > 65536 ? 65536 : g));
}

size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

} // namespace

extern "C" cudaError_t spx__cuda_row_bins(const spx_cuda_csr *A, const int64_t bounds[4],
                                          unsigned char *bin, unsigned long long *stats, cudaStream_t stream)
{
    if (A->rows <= 0)
        return cudaSuccess;
    bins_kernel<<<grid_1d(A->rows), 256, 0, stream>>>(A->rowptr, A->rows, bounds[0], bounds[1], bounds[2],
                                                       bounds[3], bin, stats);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_slab_starts(const spx_cuda_csr *A, int slabs, int64_t *starts, cudaStream_t stream)
{
    if (A->rows <= 0 || slabs < 2)
        return cudaSuccess;
    slab_starts_kernel<<<grid_1d(A->rows), 256, 0, stream>>>(A->rowptr, A->colidx, A->rows, A->cols, slabs, starts);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_shared_columns(const spx_cuda_csr *A, unsigned long long *shared,
                                                cudaStream_t stream)
{
    if (A->rows <= 1)
        return cudaSuccess;
    shared_columns_kernel<<<grid_1d(A->rows), 256, 0, stream>>>(A->rowptr, A->colidx, A->rows, shared);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_diagonal_profile(const spx_cuda_csr *A, unsigned long long *stats,
                                                  cudaStream_t stream)
{
    if (A->rows <= 0)
        return cudaSuccess;
    diagonal_profile_kernel<<<grid_1d(A->rows * 32), 256, 0, stream>>>(A->rowptr, A->colidx, A->rows, stats);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_sort_rows_by_bin(const unsigned char *bin, int64_t m, int key_bits,
                                                  int32_t *rows_out, void *tmp, size_t *tmp_bytes,
                                                  cudaStream_t stream)
{
    /* layout of tmp: sorted keys (m bytes), row ids (m ints), CUB's workspace */
    size_t cub_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, bin, (unsigned char *)nullptr,
                                                    (const int32_t *)nullptr, rows_out, m, 0, key_bits, stream);
    if (e != cudaSuccess)
        return e;
    size_t keys_bytes = align_up((size_t)m), ids_bytes = align_up((size_t)m * sizeof(int32_t));
    if (!tmp) {
        *tmp_bytes = keys_bytes + ids_bytes + cub_bytes;
        return cudaSuccess;
    }
    unsigned char *keys_out = (unsigned char *)tmp;
    int32_t *ids = (int32_t *)((char *)tmp + keys_bytes);
    void *cub_tmp = (char *)tmp + keys_bytes + ids_bytes;
    iota_kernel<<<grid_1d(m), 256, 0, stream>>>(ids, m);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    return cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, bin, keys_out, ids, rows_out, m, 0, key_bits,
                                           stream);
}

extern "C" cudaError_t spx__cuda_widen_i32(const int32_t *src, int64_t *dst, int64_t n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    widen_kernel<<<grid_1d(n), 256, 0, stream>>>(src, dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_narrow_i64(const int64_t *src, int32_t *dst, int64_t n, cudaStream_t stream)
{
    if (n <= 0)
        return cudaSuccess;
    narrow_kernel<<<grid_1d(n), 256, 0, stream>>>(src, dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_transpose(spx_dtype dtype, const void *src, int64_t src_ld, void *dst,
                                           int64_t dst_ld, int64_t rows, int64_t cols,
                                           cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    int64_t gx = (cols + 31) / 32, gy = (rows + 31) / 32;
    if (gx > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)gx, (unsigned)(gy > 65535 ? 65535 : gy)), block(32, 8);
    switch (spx_dtype_size(dtype)) {
    case 2: transpose_kernel<uint16_t><<<grid, block, 0, stream>>>((const uint16_t *)src, src_ld, (uint16_t *)dst, dst_ld, rows, cols); break;
    case 4: transpose_kernel<uint32_t><<<grid, block, 0, stream>>>((const uint32_t *)src, src_ld, (uint32_t *)dst, dst_ld, rows, cols); break;
    case 8: transpose_kernel<uint64_t><<<grid, block, 0, stream>>>((const uint64_t *)src, src_ld, (uint64_t *)dst, dst_ld, rows, cols); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t spx__cuda_round_b(const spx_cuda_dense_args *d, int64_t k, spx_dtype to, void *out, int64_t ldo)
{
    if (k <= 0 || d->n <= 0)
        return cudaSuccess;
    if (d->dtype != SPX_F32 || (to != SPX_BF16 && to != SPX_F16) || ldo % 8)
        return cudaErrorInvalidValue;
    const int64_t items = k * ((d->n + 3) / 4);
    const bool vec = d->vec > 1;
    if (to == SPX_BF16)
        round_b_kernel<<<grid_1d(items), 256, 0, d->stream>>>((const float *)d->B, d->ldb, k, d->n, vec,
                                                                (__nv_bfloat16 *)out, ldo);
    else
        round_b_kernel<<<grid_1d(items), 256, 0, d->stream>>>((const float *)d->B, d->ldb, k, d->n, vec,
                                                                (__half *)out, ldo);
    return cudaGetLastError();
}

// BAND SpMM: rows near one another share the B rows near the diagonal, held
// in shared memory.
//
// On stencil and banded matrices (the 3D Laplacian's row i holds columns
// i, i +- 1, i +- g, i +- g^2) every B row is used by several nearby rows.
// Merge path and the row kernels read one B row segment through L1/L2 per
// entry, and L1 keeps few of them: the L2 data path, not DRAM, bounds them
// (Laplacian 100^3 at N = 128: 4.2 GB through L2 for 1.45 GB from DRAM).
// Here a block walks a strip of consecutive rows, `rows` at a time, for one
// column tile: B rows [r - halo, r + rows + halo) of the tile wait in a
// ring of shared-memory slots (row j in slot j mod ring), and the rows the
// next step adds are copied asynchronously while this step computes, so each
// B row crosses L2 about once per tile. Entries inside the window read the
// ring; the others (diagonals beyond the halo) read B in global memory. The
// pointer is chosen per entry and read with one generic load, so a warp
// whose rows mix both kinds does not diverge.
//
// Inside a step a team of `group` lanes (one 16-byte vector each) takes a
// row, its entries loaded `group` at a time and broadcast with shuffles
// (row_team.cuh). Each row adds its entries in column order: bit-exact from
// run to run. Exact arithmetic on CUDA cores.
#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/row_team.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

#define BAND_THREADS 256

namespace {

template <typename T> struct band_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t m, k;
    int64_t strip, rows, halo, ring; // as spx_cuda_band_shape
    int64_t ntiles;
    dense_ops<T> d;
    int vec_loads; // B may be read with 16-byte vectors
};

// B rows of the window [lo, lo + w) from the ring, the others from global
// memory (b_global's contract).
template <typename T> struct b_window {
    typedef T elem;
    const T *bcol;     // B + the lane's first column
    uint32_t ldb_bytes;
    const char *ring;  // the ring + the lane's first column, a generic address
    int lo;            // may be negative near the first rows
    unsigned w, mask, slot_bytes;
    static constexpr bool generic = true, spread = false;
    __device__ __forceinline__ const T *row(int c) const
    {
        // unsigned: c - lo < 2^32 whatever lo's sign; below lo wraps past w
        return (unsigned)c - (unsigned)lo < w ? reinterpret_cast<const T *>(ring + ((unsigned)c & mask) * slot_bytes)
                                              : b_row(bcol, c, ldb_bytes);
    }
};

template <typename T, int V, int G>
__global__ void __launch_bounds__(BAND_THREADS) band_kernel(const band_params<T> p)
{
    typedef typename acc_of<T>::type A;
    constexpr int TN = G * V, TEAMS = BAND_THREADS / G;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const ring = reinterpret_cast<T *>(smem_raw);
    const int64_t tile = blockIdx.x % p.ntiles, s0 = (int64_t)(blockIdx.x / p.ntiles) * p.strip;
    const int64_t s1 = s0 + p.strip < p.m ? s0 + p.strip : p.m, R = p.rows, h = p.halo, mask = p.ring - 1;
    const int tl = (threadIdx.x & 31) & (G - 1), team = threadIdx.x / G;
    const int64_t c0 = tile * TN, col0 = c0 + (int64_t)tl * V;
    const int count = p.d.n - col0 >= V ? V : (p.d.n - col0 > 0 ? (int)(p.d.n - col0) : 0);
    auto clamp_k = [&](int64_t r) { return r < 0 ? 0 : (r > p.k ? p.k : r); };

    int64_t k0 = clamp_k(s0 - h), k1 = clamp_k(s0 + R + h); // the first window
    copy_b_rows<T, V, G, BAND_THREADS>(ring, k0 & mask, mask, p.d.B, p.d.ldb, p.d.n, p.vec_loads != 0, k0, k1, c0, threadIdx.x);
    copy_b_wait();
    __syncthreads();
    b_window<T> src;
    src.bcol = p.d.B + col0;
    src.ldb_bytes = (uint32_t)p.d.ldb * (uint32_t)sizeof(T);
    src.ring = reinterpret_cast<const char *>(ring + tl * V);
    src.w = (unsigned)(R + 2 * h);
    src.mask = (unsigned)mask;
    src.slot_bytes = TN * (unsigned)sizeof(T);
    for (int64_t r0 = s0; r0 < s1; r0 += R) {
        const int64_t r1 = r0 + R < s1 ? r0 + R : s1;
        if (r1 < s1) { // the rows the next step's window adds, into slots this step does not read
            k0 = clamp_k(r0 + R + h);
            k1 = clamp_k(r0 + 2 * R + h);
            copy_b_rows<T, V, G, BAND_THREADS>(ring, k0 & mask, mask, p.d.B, p.d.ldb, p.d.n, p.vec_loads != 0, k0, k1,
                                               c0, threadIdx.x);
        }
        src.lo = (int)(r0 - h);
        for (int64_t base = r0; base < r1; base += TEAMS) { // the same trips for every team: shuffles converge
            const int64_t row = base + team;
            int64_t start = 0, len = 0;
            if (row < r1) {
                start = p.rowptr[row];
                len = p.rowptr[row + 1] - start;
            }
            A acc[V];
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[t] = A(0);
            team_accumulate<T, V, false>(p.colidx, p.vals, start, len, 1, G, G, src, count, acc);
            if (row < r1 && count > 0)
                store_epilogue<T, V>(p.d.C + row * p.d.ldc + col0, count, 1, acc, p.d.alpha, p.d.beta, p.d.c_vec);
        }
        copy_b_wait();
        __syncthreads(); // the next rows have landed; this step's slots may be refilled
    }
}

template <typename T, int V, int G> size_t smem_of(const spx_cuda_band_shape *s)
{
    return (size_t)s->ring * G * V * sizeof(T);
}

// Occupancy queries above 48 KB need the kernel's limit raised first.
template <typename T, int V, int G> int blocks_per_sm_g(const spx_cuda_band_shape *s)
{
    const size_t smem = smem_of<T, V, G>(s);
    int n = 0;
    if (allow_dynamic_smem(band_kernel<T, V, G>, smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, band_kernel<T, V, G>, BAND_THREADS, smem) != cudaSuccess)
        return 0;
    return n;
}

template <typename T, int V, int G>
cudaError_t launch_g(const spx_cuda_csr *A, const spx_cuda_band_shape *s, const spx_cuda_dense_args *d)
{
    band_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.m = A->rows;
    p.k = A->cols;
    p.strip = s->strip;
    p.rows = s->rows;
    p.halo = s->halo;
    p.ring = s->ring;
    p.ntiles = (d->n + G * V - 1) / (G * V);
    p.d = dense_ops_from<T>(d);
    p.vec_loads = d->vec > 1;
    const size_t smem = smem_of<T, V, G>(s);
    const int64_t blocks = (p.m + p.strip - 1) / p.strip * p.ntiles;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_dynamic_smem<band_kernel<T, V, G>>((unsigned)blocks, BAND_THREADS, smem, d->stream, p);
}

template <typename T, int V>
cudaError_t launch_t(const spx_cuda_csr *A, const spx_cuda_band_shape *s, const spx_cuda_dense_args *d)
{
    switch (s->group) {
    case 8: return launch_g<T, V, 8>(A, s, d);
    case 16: return launch_g<T, V, 16>(A, s, d);
    case 32: return launch_g<T, V, 32>(A, s, d);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T> int blocks_per_sm(const spx_cuda_band_shape *s)
{
    constexpr int V = vec16<T>::n;
    switch (s->group) {
    case 8: return blocks_per_sm_g<T, V, 8>(s);
    case 16: return blocks_per_sm_g<T, V, 16>(s);
    case 32: return blocks_per_sm_g<T, V, 32>(s);
    default: return 0;
    }
}

} // namespace

extern "C" size_t spx__cuda_band_smem(const spx_cuda_band_shape *s) { return (size_t)s->ring * (size_t)s->group * 16; }

extern "C" int spx__cuda_band_blocks_per_sm(const spx_cuda_band_shape *s, spx_dtype dtype)
{
    switch (dtype) {
    case SPX_F32: return blocks_per_sm<float>(s);
    case SPX_F64: return blocks_per_sm<double>(s);
    case SPX_F16: return blocks_per_sm<__half>(s);
    case SPX_BF16: return blocks_per_sm<__nv_bfloat16>(s);
    default: return 0;
    }
}

extern "C" cudaError_t spx__cuda_launch_band(const spx_cuda_csr *A, const spx_cuda_band_shape *s,
                                             const spx_cuda_dense_args *d)
{
    if (A->rows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (s->rows <= 0 || s->halo < 0 || s->strip <= 0 || s->strip % s->rows || s->ring < 2 * (s->rows + s->halo) ||
        (s->ring & (s->ring - 1)) || s->ring > (1 << 30))
        return cudaErrorInvalidValue;
#define CALL(T, V) (d->vec > 1 ? launch_t<T, V>(A, s, d) : launch_t<T, 1>(A, s, d))
    SPX_DISPATCH_T(d->dtype, CALL)
#undef CALL
}

// BSR SpMM. CUDA cores: a warp per (block row, 16-row slice of the block,
// column tile); each B row segment loaded feeds the slice's 16 rows. Tensor
// cores (16 x bc blocks): mma.sync m16n8k8 (tf32) or m16n8k16 (f16/bf16)
// with the block as the A operand and B rows as the B operand. Both stage B's
// rows in shared memory by cp.async a step ahead. Also: the 16 x 16 blocks of
// a device CSR, for AUTO.
#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/mma.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T> struct bsr_params {
    const int64_t *rowptr;
    const int32_t *colidx;
    const T *vals;
    int64_t rows, cols, br, bc, brows;
    dense_ops<T> d;
};

// CUDA cores: a warp per (block row, 16-row slice of its blocks, column
// tile). G lanes cover the tile's columns, V each (one 16-byte vector of a B
// row), and the warp's 32 / G sub-groups split the slice's 16 rows, R a lane;
// where N is small, the sub-groups keep busy the lanes that a warp-wide tile
// would leave idle. The warp walks its blocks 16 columns (a step) at a time:
// the step's 16 rows of B's tile come into the warp's shared memory by
// cp.async, the next step's while this one's are added, and its values pass
// through registers (loaded a step ahead) into shared memory, transposed, so
// that a lane reads its R values of a column together. Loaded
// straight into registers, four B rows at a time, the rows' latency bound the
// kernel (1M x 1M of 16 x 16 blocks, N = 128: 2.09 ms, H100).
const int BSR_WARPS = 4;
// Start step s + 1's copies (fetch(s + 1)) and wait for this lane's of step s:
// the steps take turns in two buffers.
template <typename F> __device__ __forceinline__ void next_step(int64_t s, int64_t steps, F &fetch)
{
    if (s + 1 < steps) {
        fetch(s + 1);
        cp_async_wait<1>();
    } else {
        cp_async_wait<0>();
    }
}
template <typename T> constexpr int bsr_stage_ld() { return 16 + 16 / (int)sizeof(T); } // 16-byte rows, fewer conflicts
// Rows a lane may own: 32 float sums (64 spilled at 128 registers), 8 double
// ones (16 spilled 40 bytes).
template <typename T> constexpr int bsr_max_rows()
{
    return sizeof(typename acc_of<T>::type) == 8 ? 4 : 32 / vec16<T>::n;
}

template <typename T, int V, int R>
__global__ void __launch_bounds__(BSR_WARPS * 32, 4) bsr_kernel(const bsr_params<T> p, bool vec)
{
    typedef typename acc_of<T>::type A;
    constexpr int LD = bsr_stage_ld<T>(), S = 16 / R, G = 32 / S, TN = G * V, EACH = 16 * 16 / 32;
    __shared__ __align__(16) T a_stage[BSR_WARPS][16 * LD];
    __shared__ __align__(16) T b_stage[BSR_WARPS][2][16 * TN];
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, sub = lane / G, g = lane % G;
    T *const st = a_stage[w];
    const int64_t brow = (int64_t)blockIdx.x * BSR_WARPS + w;
    if (brow >= p.brows) // the whole warp
        return;
    const int64_t r0 = (int64_t)blockIdx.z * 16; // the slice's first row in the block
    const int64_t steps_per_block = (p.bc + 15) / 16, first = p.rowptr[brow],
                  steps = (p.rowptr[brow + 1] - first) * steps_per_block;
    const int64_t ntiles = (p.d.n + TN - 1) / TN;
    // step s: block first + s / steps_per_block, its columns from cc0
    auto block_of = [&](int64_t s, int64_t &kbase, int64_t &cc0) {
        const int64_t b = first + s / steps_per_block;
        cc0 = s % steps_per_block * 16;
        kbase = (int64_t)p.colidx[b] * p.bc + cc0;
        return p.vals + (b * p.br + r0) * p.bc + cc0;
    };
    // the B rows of step s that lie in B (none for a step of an edge block
    // that starts past B's last row)
    auto rows_of = [&](int64_t kbase, int64_t cc0) {
        const int64_t left = p.bc - cc0 < p.cols - kbase ? p.bc - cc0 : p.cols - kbase;
        return left <= 0 ? 0 : left < 16 ? (int)left : 16;
    };
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t c0 = tile * TN, col0 = c0 + (int64_t)g * V;
        const int count = p.d.n - col0 >= V ? V : p.d.n > col0 ? (int)(p.d.n - col0) : 0;
        A acc[R][V];
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int t = 0; t < V; t++)
                acc[r][t] = A(0);
        T a_next[EACH];
        // step s's values into a_next and its B rows into buffer s & 1
        auto fetch = [&](int64_t s) {
            int64_t kbase, cc0;
            const T *blk = block_of(s, kbase, cc0);
#pragma unroll
            for (int i = 0; i < EACH; i++) {
                const int e = i * 32 + lane, r = e >> 4, c = e & 15;
                a_next[i] = r0 + r < p.br && cc0 + c < p.bc ? (p.vals ? blk[r * p.bc + c] : from_acc<T>(A(1)))
                                                            : from_acc<T>(A(0));
            }
            copy_b_rows<T, V, G, 32>(b_stage[w][s & 1], 0, -1, p.d.B, p.d.ldb, p.d.n, vec, kbase,
                                     kbase + rows_of(kbase, cc0), c0, lane);
            cp_async_commit();
        };
        if (steps > 0)
            fetch(0);
        for (int64_t s = 0; s < steps; s++) {
            int64_t kbase, cc0;
            block_of(s, kbase, cc0);
            const int ncc = rows_of(kbase, cc0);
            __syncwarp(); // the last step's reads of st and of buffer (s + 1) & 1 are done
#pragma unroll
            for (int i = 0; i < EACH; i++) {
                const int e = i * 32 + lane;
                st[(e & 15) * LD + (e >> 4)] = a_next[i];
            }
            next_step(s, steps, fetch);
            __syncwarp(); // every lane's values and copies of step s
            const T *bs = b_stage[w][s & 1] + g * V;
#pragma unroll 4
            for (int cc = 0; cc < ncc; cc++) {
                A a[R], bv[V];
                load_plain<T, R>(st + cc * LD + sub * R, a);
                load_plain<T, V>(bs + cc * TN, bv);
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int t = 0; t < V; t++)
                        acc[r][t] = fma(a[r], bv[t], acc[r][t]);
            }
        }
        if (count > 0)
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int64_t in_block = r0 + sub * R + r, row = brow * p.br + in_block;
                if (in_block < p.br && row < p.rows)
                    store_epilogue<T, V>(p.d.C + row * p.d.ldc + col0, count, 1, acc[r], p.d.alpha, p.d.beta,
                                         p.d.c_vec);
            }
        __syncwarp(); // the next tile's first copies overwrite buffer 0
    }
}

// Tensor cores (16 x bc blocks): a warp per block row and column tile of 8 x
// NT columns, as the CUDA-core kernel walks its steps: each step's 16 B rows
// come into the warp's shared memory by cp.async a step ahead (rows past the
// block or past B as zeros, which the block's padding multiplies), and the
// step's A fragment into registers a step ahead. B fragments: ldmatrix.trans
// for 16-bit B; element by element for f32 B (its rows padded so that the
// four rows a load reads lie in distinct banks). H: the MMA operand type
// (float means tf32, two k8 steps a k16).
template <typename T> constexpr int bsr_tc_pitch(int tn) { return tn + (sizeof(T) == 2 ? 8 : 4); }

template <typename T, typename H, int NT>
__global__ void __launch_bounds__(BSR_WARPS * 32) bsr_tc_kernel(const bsr_params<T> p, bool vec)
{
    typedef typename acc_of<T>::type A;
    constexpr bool tf32 = sizeof(H) == 4;
    constexpr int V = vec16<T>::n, TN = 8 * NT, PITCH = bsr_tc_pitch<T>(TN);
    __shared__ __align__(16) T b_stage[BSR_WARPS][2][16 * PITCH];
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const int64_t brow = (int64_t)blockIdx.x * BSR_WARPS + w;
    if (brow >= p.brows) // the whole warp
        return;
    const int64_t steps_per_block = (p.bc + 15) / 16, first = p.rowptr[brow],
                  steps = (p.rowptr[brow + 1] - first) * steps_per_block;
    const int64_t ntiles = (p.d.n + TN - 1) / TN;
    // the A fragment's 8 elements of a k16 step: (row, column) of element i
    auto a_cell = [&](int i, int &r, int &c) {
        r = g + (i & 1) * 8;
        c = tf32 ? q + (i >> 1) * 4 : 2 * q + ((i >> 1) & 1) * 8 + (i >> 2);
    };
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const int64_t c0 = tile * TN;
        float c[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++)
            c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
        float a_next[8];
        auto fetch = [&](int64_t s) {
            const int64_t b = first + s / steps_per_block, cc0 = s % steps_per_block * 16,
                          kbase = (int64_t)p.colidx[b] * p.bc + cc0;
            const T *blk = p.vals + b * 16 * p.bc + cc0;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                int r, cc;
                a_cell(i, r, cc);
                a_next[i] = cc0 + cc < p.bc ? (p.vals ? (float)to_acc(blk[r * p.bc + cc]) : 1.0f) : 0.0f;
            }
            const int64_t left = p.bc - cc0 < p.cols - kbase ? p.bc - cc0 : p.cols - kbase;
            const int rows = left <= 0 ? 0 : left < 16 ? (int)left : 16; // none past B's last row
            T *stage = b_stage[w][s & 1];
            copy_b_rows<T, V, TN / V, 32, PITCH>(stage, 0, -1, p.d.B, p.d.ldb, p.d.n, vec, kbase, kbase + rows, c0,
                                                 lane);
            for (int e = lane; e < (16 - rows) * TN; e += 32)
                stage[(rows + e / TN) * PITCH + e % TN] = from_acc<T>(A(0));
            cp_async_commit();
        };
        if (steps > 0)
            fetch(0);
        for (int64_t s = 0; s < steps; s++) {
            __syncwarp(); // the last step's reads of buffer (s + 1) & 1 are done
            float a_cur[8];
#pragma unroll
            for (int i = 0; i < 8; i++)
                a_cur[i] = a_next[i];
            next_step(s, steps, fetch);
            __syncwarp(); // every lane's copies and zeros of step s
            const T *stage = b_stage[w][s & 1];
            if constexpr (tf32) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint32_t a[4] = {to_tf32(a_cur[4 * h]), to_tf32(a_cur[4 * h + 1]),
                                           to_tf32(a_cur[4 * h + 2]), to_tf32(a_cur[4 * h + 3])};
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const T *col = stage + (8 * h + q) * PITCH + j * 8 + g;
                        const uint32_t bf[2] = {to_tf32((float)to_acc(col[0])), to_tf32((float)to_acc(col[4 * PITCH]))};
                        mma_tf32(c[j], a, bf);
                    }
                }
            } else {
                const uint32_t a[4] = {pack2<H>(a_cur[0], a_cur[4]), pack2<H>(a_cur[1], a_cur[5]),
                                       pack2<H>(a_cur[2], a_cur[6]), pack2<H>(a_cur[3], a_cur[7])};
                if constexpr (sizeof(T) == 2 && NT % 2 == 0) {
                    const int mi = lane >> 3, r = lane & 7;
                    const unsigned base = (unsigned)__cvta_generic_to_shared(stage + ((mi & 1) * 8 + r) * PITCH +
                                                                             (mi >> 1) * 8);
#pragma unroll
                    for (int j = 0; j < NT; j += 2) {
                        uint32_t b4[4];
                        ldmatrix_x4_trans(b4, base + j * 8 * (unsigned)sizeof(T));
                        const uint32_t b0[2] = {b4[0], b4[1]}, b1[2] = {b4[2], b4[3]};
                        mma_16<H>(c[j], a, b0);
                        mma_16<H>(c[j + 1], a, b1);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const T *col = stage + 2 * q * PITCH + j * 8 + g;
                        const uint32_t bf[2] = {
                            pack2<H>((float)to_acc(col[0]), (float)to_acc(col[PITCH])),
                            pack2<H>((float)to_acc(col[8 * PITCH]), (float)to_acc(col[9 * PITCH]))};
                        mma_16<H>(c[j], a, bf);
                    }
                }
            }
        }
        // a lane's two adjacent columns as one store where C's rows start on
        // 16 bytes: element by element, 16-bit C took 1.7-1.8x the CUDA-core
        // kernel's time on mostly empty block rows
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t row = brow * 16 + g + 8 * h, col = c0 + j * 8 + 2 * q;
                if (row >= p.rows || col >= p.d.n)
                    continue;
                T *e = p.d.C + row * p.d.ldc + col;
                A v[2] = {p.d.alpha * (A)c[j][2 * h], p.d.alpha * (A)c[j][2 * h + 1]};
                if (p.d.c_vec && col + 1 < p.d.n) {
                    pair_of<T> x;
                    if (p.d.beta != A(0)) {
                        x = *reinterpret_cast<const pair_of<T> *>(e);
                        v[0] += p.d.beta * to_acc(x.x);
                        v[1] += p.d.beta * to_acc(x.y);
                    }
                    x.x = from_acc<T>(v[0]);
                    x.y = from_acc<T>(v[1]);
                    *reinterpret_cast<pair_of<T> *>(e) = x;
                } else {
#pragma unroll
                    for (int t = 0; t < 2; t++)
                        if (col + t < p.d.n)
                            e[t] = from_acc<T>(p.d.beta != A(0) ? v[t] + p.d.beta * to_acc(e[t]) : v[t]);
                }
            }
        __syncwarp(); // the next tile's first copies overwrite buffer 0
    }
}

template <typename T>
bsr_params<T> make_params(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    bsr_params<T> p = {};
    p.rowptr = A->rowptr;
    p.colidx = A->colidx;
    p.vals = static_cast<const T *>(A->vals);
    p.rows = A->rows;
    p.cols = A->cols;
    p.br = A->br;
    p.bc = A->bc;
    p.brows = A->brows;
    p.d = dense_ops_from<T>(d);
    return p;
}

template <typename T, int V, int R> cudaError_t launch_bsr_r(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    constexpr int G = 32 / (16 / R);
    const int64_t gy = (d->n + G * V - 1) / (G * V), gz = (A->br + 15) / 16;
    if (gz > 65535)
        return cudaErrorInvalidConfiguration;
    dim3 grid((unsigned)((A->brows + BSR_WARPS - 1) / BSR_WARPS), (unsigned)(gy > 65535 ? 65535 : gy), (unsigned)gz);
    bsr_kernel<T, V, R><<<grid, BSR_WARPS * 32, 0, d->stream>>>(make_params<T>(A, d), d->vec >= V);
    return cudaGetLastError();
}

// The kernel for `rows` rows a lane (a power of two up to R).
template <typename T, int V, int R> cudaError_t launch_bsr_rows(const spx_cuda_bsr *A, const spx_cuda_dense_args *d, int rows)
{
    if constexpr (R > 1)
        if (rows < R)
            return launch_bsr_rows<T, V, R / 2>(A, d, rows);
    return launch_bsr_r<T, V, R>(A, d);
}

// Rows a lane owns: as many as leave G lanes enough to cover N (G a power of
// two, at least 2), up to bsr_max_rows.
template <typename T, int V> cudaError_t launch_bsr_t(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    int g = 2;
    while (g < 32 && (int64_t)g * V < d->n)
        g *= 2;
    return launch_bsr_rows<T, V, bsr_max_rows<T>()>(A, d, 16 / (32 / g));
}

template <typename T, typename H, int NT> cudaError_t launch_bsr_tc_nt(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    const int64_t gy = (d->n + 8 * NT - 1) / (8 * NT);
    dim3 grid((unsigned)((A->brows + BSR_WARPS - 1) / BSR_WARPS), (unsigned)(gy > 65535 ? 65535 : gy));
    bsr_tc_kernel<T, H, NT><<<grid, BSR_WARPS * 32, 0, d->stream>>>(make_params<T>(A, d), d->vec >= vec16<T>::n);
    return cudaGetLastError();
}

// Tiles of 64 columns, or of 16 where N is at most 16.
template <typename T, typename H> cudaError_t launch_bsr_tc_t(const spx_cuda_bsr *A, const spx_cuda_dense_args *d)
{
    return d->n <= 16 ? launch_bsr_tc_nt<T, H, 2>(A, d) : launch_bsr_tc_nt<T, H, 8>(A, d);
}

// The 16 x 16 blocks of a CSR on the device: a half-warp per block row, lane
// l walking row 16 x (block row) + l in column order, each step taking the
// least block column any of its lanes is at. COUNT: the blocks of each block
// row (counts), and *broken = 1 where the cells of a block row's blocks that
// lie in the matrix are not exactly its entries (it stops counting once they
// pass them). Where *broken stays 0 the blocks are whole (rows holding no
// column twice) and every count is complete, so that the fill pass writes
// only the blocks counted. Else
// each block's column and its values (the values zero-filled before; E: a
// value's bits, one: 1 for pattern A).
template <typename E, bool COUNT>
__global__ void __launch_bounds__(256) csr_blocks_kernel(const int64_t *__restrict__ rowptr,
                                                         const int32_t *__restrict__ colidx, const E *__restrict__ vals,
                                                         int64_t m, int64_t k, int64_t brows, int64_t *counts,
                                                         int *broken, const int64_t *__restrict__ browptr,
                                                         int32_t *bcol, E *bvals, E one)
{
    const int64_t h = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 4;
    const int l = threadIdx.x & 15;
    const unsigned half = 0xffffu << (threadIdx.x & 16);
    if (h >= brows) // the whole half-warp; the other half syncs on its own lanes
        return;
    const int64_t row = h * 16 + l;
    int64_t p = row < m ? rowptr[row] : 0;
    const int64_t e = row < m ? rowptr[row + 1] : 0;
    unsigned long long entries = (unsigned long long)(e - p), in = 0;
    if (COUNT)
        for (int o = 8; o > 0; o >>= 1) // within the half-warp
            entries += __shfl_xor_sync(half, entries, o);
    const int64_t rows_in = m - h * 16 < 16 ? m - h * 16 : 16;
    int64_t out = COUNT ? 0 : browptr[h];
    for (;;) {
        const unsigned mine = p < e ? (unsigned)colidx[p] >> 4 : 0xffffffffu;
        const unsigned bc = __reduce_min_sync(half, mine);
        if (bc == 0xffffffffu)
            break;
        if (COUNT) {
            in += (unsigned long long)(rows_in * (k - 16 * (int64_t)bc < 16 ? k - 16 * (int64_t)bc : 16));
            if (in > entries)
                break;
        } else if (l == 0) {
            bcol[out] = (int32_t)bc;
        }
        for (; p < e && ((unsigned)colidx[p] >> 4) == bc; p++)
            if (!COUNT)
                bvals[(out * 16 + l) * 16 + (colidx[p] & 15)] = vals ? vals[p] : one;
        out++;
    }
    if (COUNT && l == 0) {
        counts[h] = out;
        if (in != entries)
            *broken = 1;
    }
}

template <typename E>
cudaError_t launch_csr_blocks(const spx_cuda_csr *A, int64_t brows, bool count, int64_t *counts,
                              int *broken, const int64_t *browptr, int32_t *bcol, void *bvals, E one,
                              cudaStream_t stream)
{
    const unsigned grid = (unsigned)((brows * 16 + 255) / 256);
    const auto kernel = count ? csr_blocks_kernel<E, true> : csr_blocks_kernel<E, false>;
    kernel<<<grid, 256, 0, stream>>>(A->rowptr, A->colidx, static_cast<const E *>(A->vals), A->rows, A->cols, brows,
                                     counts, broken, browptr, bcol, (E *)bvals, one);
    return cudaGetLastError();
}

} // namespace

extern "C" int spx__cuda_bsr_tc_supported(const spx_cuda_bsr *A, spx_dtype dtype, spx_precision prec)
{
    if (A->br != 16 || prec == SPX_PRECISION_EXACT)
        return 0;
    if (dtype == SPX_F32 && prec == SPX_PRECISION_TF32)
        return A->bc % 8 == 0;
    if (dtype == SPX_F32 || dtype == SPX_F16 || dtype == SPX_BF16)
        return A->bc % 16 == 0;
    return 0;
}

extern "C" cudaError_t spx__cuda_launch_bsr(const spx_cuda_bsr *A, spx_precision prec,
                                            const spx_cuda_dense_args *d)
{
    if (A->brows <= 0 || d->n <= 0)
        return cudaSuccess;
    if (prec != SPX_PRECISION_EXACT) {
        if (!spx__cuda_bsr_tc_supported(A, d->dtype, prec))
            return cudaErrorInvalidValue;
        switch (d->dtype) {
        case SPX_F32:
            if (prec == SPX_PRECISION_TF32)
                return launch_bsr_tc_t<float, float>(A, d);
            return prec == SPX_PRECISION_F16 ? launch_bsr_tc_t<float, __half>(A, d)
                                             : launch_bsr_tc_t<float, __nv_bfloat16>(A, d);
        case SPX_F16: return launch_bsr_tc_t<__half, __half>(A, d);
        case SPX_BF16: return launch_bsr_tc_t<__nv_bfloat16, __nv_bfloat16>(A, d);
        default: return cudaErrorInvalidValue;
        }
    }
#define CALL(T, V) launch_bsr_t<T, V>(A, d)
    SPX_DISPATCH_T(d->dtype, CALL)
#undef CALL
}

extern "C" cudaError_t spx__cuda_csr_blocks(const spx_cuda_csr *A, spx_dtype dtype, int count, int64_t *counts,
                                           int *broken, const int64_t *browptr, int32_t *bcol,
                                           void *bvals, cudaStream_t stream)
{
    const int64_t brows = (A->rows + 15) / 16;
    if (brows == 0 || brows * 16 / 256 >= INT32_MAX)
        return brows == 0 ? cudaSuccess : cudaErrorInvalidValue;
    switch (dtype) {
    case SPX_F32: return launch_csr_blocks<uint32_t>(A, brows, count, counts, broken, browptr, bcol, bvals, 0x3f800000u, stream);
    case SPX_F64:
        return launch_csr_blocks<uint64_t>(A, brows, count, counts, broken, browptr, bcol, bvals, 0x3ff0000000000000ull,
                                           stream);
    case SPX_F16: return launch_csr_blocks<uint16_t>(A, brows, count, counts, broken, browptr, bcol, bvals, 0x3c00, stream);
    case SPX_BF16: return launch_csr_blocks<uint16_t>(A, brows, count, counts, broken, browptr, bcol, bvals, 0x3f80, stream);
    default: return cudaErrorInvalidValue;
    }
}


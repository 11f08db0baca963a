// Gather-GEMM on tensor cores. The plan cuts the rows into groups of 16 and
// stores each group densely over the union of its columns, in steps of 16
// columns (slots) laid out as mma.sync's A fragments. A block holds a chunk
// of B's rows x a column tile in shared memory, and each of its warps runs one
// group against it: per step, the B fragments come from the shared rows the
// step's slots name (ldmatrix gathers them for f16/bf16), so each element of
// B the block copies serves all its groups, and each B fragment serves the 16
// rows of a group. The plan orders a step's slots so that the rows one
// shared-memory access reads fall in different banks (spx_cuda_gather says
// how). Because the tiles are dense, a row multiplies B rows it has no entry
// in by zero: the kernel runs on a copy of B without non-finite values
// (spmm_exec.c).
#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/device_types.cuh"
#include "backend/cuda/mma.cuh"

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

template <typename T, typename H> struct gather_params {
    const int32_t *group_rows;
    const int64_t *step_ptr;
    const int32_t *slot_cols;
    const uint4 *frags;
    int64_t ngroups, k, kc;
    int nchunks;
    const H *B; // B without non-finite values, in the operands' type; rows start on 16 bytes
    int64_t ldb;
    dense_ops<T> d; // n, C and the scalars
};

// One step's operands for this lane: the shared rows it reads (relative to
// the chunk) and its A fragments, loaded PF steps ahead of their use.
template <typename H> struct step_ops {
    static constexpr int ROWS = sizeof(H) == 4 ? 4 : 1, FRAGS = sizeof(H) == 4 ? 2 : 1;
    int32_t row[ROWS];
    uint4 frag[FRAGS];
};

template <typename H>
__device__ __forceinline__ step_ops<H> load_step(const int32_t *__restrict__ slot_cols,
                                                 const uint4 *__restrict__ frags, int64_t s, int64_t k0, int lane)
{
    step_ops<H> o;
    const int32_t *cols = slot_cols + 16 * s;
    if constexpr (sizeof(H) == 4) { // tf32: lane (g, q) reads rows q and q + 4 of each half step
        const int q = lane & 3;
#pragma unroll
        for (int t = 0; t < 4; t++)
            o.row[t] = cols[(t >> 1) * 8 + q + 4 * (t & 1)] - (int32_t)k0;
        o.frag[0] = frags[64 * s + lane];
        o.frag[1] = frags[64 * s + 32 + lane];
    } else { // lanes 0-15 name the step's 16 rows for columns 0-7 of a 16-column pair, 16-31 for 8-15
        o.row[0] = cols[lane & 15] - (int32_t)k0;
        o.frag[0] = frags[32 * s + lane];
    }
    return o;
}

// c += one step of a group: 16 slots against the tile's NT columns, shared
// row r at base + r * RS bytes.
template <typename H, int NT, int RS>
__device__ __forceinline__ void run_step(float (&c)[NT / 8][4], const step_ops<H> &o, unsigned base, int lane)
{
    constexpr int SL = NT / 8;
    if constexpr (sizeof(H) == 4) { // tf32: two k steps of 8; B fragments element by element
        const int g = lane >> 2;
#pragma unroll
        for (int sub = 0; sub < 2; sub++) {
            const uint4 f = o.frag[sub];
            const uint32_t a[4] = {to_tf32(__uint_as_float(f.x)), to_tf32(__uint_as_float(f.y)),
                                   to_tf32(__uint_as_float(f.z)), to_tf32(__uint_as_float(f.w))};
            const unsigned r0 = base + (unsigned)o.row[2 * sub] * RS + 4 * g,
                           r1 = base + (unsigned)o.row[2 * sub + 1] * RS + 4 * g;
#pragma unroll
            for (int j = 0; j < SL; j++) {
                float b0, b1;
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(b0) : "r"(r0 + 32 * j));
                asm volatile("ld.shared.f32 %0, [%1];" : "=f"(b1) : "r"(r1 + 32 * j));
                const uint32_t b[2] = {to_tf32(b0), to_tf32(b1)};
                mma_tf32(c[j], a, b);
            }
        }
    } else {
        const uint32_t a[4] = {o.frag[0].x, o.frag[0].y, o.frag[0].z, o.frag[0].w};
        const unsigned r = base + (unsigned)o.row[0] * RS + (lane >> 4) * 16;
#pragma unroll
        for (int j = 0; j < SL / 2; j++) {
            uint32_t b[4];
            ldmatrix_x4_trans(b, r + 32 * j);
            const uint32_t lo[2] = {b[0], b[1]}, hi[2] = {b[2], b[3]};
            mma_16<H>(c[2 * j], a, lo);
            mma_16<H>(c[2 * j + 1], a, hi);
        }
    }
}

// Block (x, y): groups 8x .. 8x + 7 (SPX_CUDA_GATHER_WARPS), columns [y * NT, y * NT + NT).
template <typename T, typename H, int TB>
__global__ void __launch_bounds__(SPX_CUDA_GATHER_WARPS * 32, 2) gather_tc_kernel(const gather_params<T, H> p)
{
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int NT = TB / (int)sizeof(H), SL = NT / 8, VR = TB / 16; // columns, n8 slices, vectors a row
    constexpr int RS = TB + (sizeof(H) == 4 ? 32 : 16);                // bytes a shared row (spx_cuda_gather)
    constexpr int V = 16 / (int)sizeof(H), PF = 4;                      // PF: steps whose operands are in flight
    const int lane = threadIdx.x & 31;
    const int64_t grp = (int64_t)blockIdx.x * SPX_CUDA_GATHER_WARPS + (threadIdx.x >> 5), n0 = (int64_t)blockIdx.y * NT;
    const bool active = grp < p.ngroups;
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    float c[SL][4];
#pragma unroll
    for (int j = 0; j < SL; j++)
        c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.0f;
    for (int ch = 0; ch < p.nchunks; ch++) {
        const int64_t k0 = ch * p.kc, k1 = p.k - k0 < p.kc ? p.k : k0 + p.kc;
        copy_b_rows<H, V, VR, SPX_CUDA_GATHER_WARPS * 32, RS / (int)sizeof(H)>(reinterpret_cast<H *>(smem), 0, -1, p.B,
                                                                               p.ldb, p.d.n, true, k0, k1, n0, threadIdx.x);
        copy_b_wait();
        __syncthreads();
        const int64_t s0 = active ? p.step_ptr[grp * p.nchunks + ch] : 0,
                      s1 = active ? p.step_ptr[grp * p.nchunks + ch + 1] : 0;
        // operands PF steps ahead: a step's loads come from L2 and take far
        // longer than its mma
        step_ops<H> o[PF];
#pragma unroll
        for (int t = 0; t < PF; t++)
            if (s0 + t < s1)
                o[t] = load_step<H>(p.slot_cols, p.frags, s0 + t, k0, lane);
        for (int64_t s = s0; s < s1; s += PF)
#pragma unroll
            for (int t = 0; t < PF; t++)
                if (s + t < s1) {
                    run_step<H, NT, RS>(c, o[t], base, lane);
                    if (s + t + PF < s1)
                        o[t] = load_step<H>(p.slot_cols, p.frags, s + t + PF, k0, lane);
                }
        __syncthreads();
    }
    if (!active)
        return;
    typedef typename acc_of<T>::type A;
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int32_t row = p.group_rows[grp * 16 + g + 8 * h];
        if (row < 0)
            continue;
        T *out = p.d.C + (int64_t)row * p.d.ldc;
#pragma unroll
        for (int j = 0; j < SL; j++) {
            const int64_t col = n0 + 8 * j + 2 * q;
            if constexpr (sizeof(T) == 4) // f32 C on 16 bytes: the lane's two columns in one store
                if (p.d.c_vec && col + 1 < p.d.n) {
                    float2 v = make_float2(p.d.alpha * c[j][2 * h], p.d.alpha * c[j][2 * h + 1]);
                    if (p.d.beta != A(0)) {
                        const float2 o = *reinterpret_cast<const float2 *>(out + col);
                        v.x += p.d.beta * o.x;
                        v.y += p.d.beta * o.y;
                    }
                    *reinterpret_cast<float2 *>(out + col) = v;
                    continue;
                }
#pragma unroll
            for (int t = 0; t < 2; t++)
                if (col + t < p.d.n) {
                    const A v = p.d.alpha * (A)c[j][2 * h + t];
                    out[col + t] = from_acc<T>(p.d.beta != A(0) ? v + p.d.beta * to_acc(out[col + t]) : v);
                }
        }
    }
}

template <typename T, typename H, int TB>
cudaError_t launch_t(const spx_cuda_gather *G, const spx_cuda_dense_args *d)
{
    gather_params<T, H> p = {};
    p.group_rows = G->group_rows;
    p.step_ptr = G->step_ptr;
    p.slot_cols = G->slot_cols;
    p.frags = static_cast<const uint4 *>(G->frags);
    p.ngroups = G->ngroups;
    p.k = G->k;
    p.kc = G->kc;
    p.nchunks = (int)((G->k + G->kc - 1) / G->kc);
    p.B = static_cast<const H *>(d->B);
    p.ldb = d->ldb;
    p.d = dense_ops_from<T>(d);
    const int64_t nt = TB / (int64_t)sizeof(H), gy = (d->n + nt - 1) / nt, gx = (G->ngroups + SPX_CUDA_GATHER_WARPS - 1) / SPX_CUDA_GATHER_WARPS;
    const size_t smem = spx__cuda_gather_smem(G->kc, G->tile_bytes, sizeof(H));
    if (gy > 65535 || gx > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    return launch_dynamic_smem<gather_tc_kernel<T, H, TB>>(dim3((unsigned)gx, (unsigned)gy), 32 * SPX_CUDA_GATHER_WARPS,
                                                           smem, d->stream, p);
}

template <typename T, typename H> cudaError_t launch_h(const spx_cuda_gather *G, const spx_cuda_dense_args *d)
{
    return G->tile_bytes == 128 ? launch_t<T, H, 128>(G, d) : launch_t<T, H, 256>(G, d);
}

} // namespace

extern "C" size_t spx__cuda_gather_smem(int64_t kc, int tile_bytes, size_t operand_size)
{
    return (size_t)kc * (size_t)(tile_bytes + (operand_size == 4 ? 32 : 16));
}

extern "C" cudaError_t spx__cuda_launch_gather_tc(const spx_cuda_gather *G, spx_precision prec,
                                                  const spx_cuda_dense_args *d)
{
    if (G->ngroups <= 0 || d->n <= 0)
        return cudaSuccess;
    if (G->tile_bytes != 128 && G->tile_bytes != 256)
        return cudaErrorInvalidValue;
    switch (d->dtype) {
    case SPX_F32:
        if (prec == SPX_PRECISION_TF32)
            return launch_h<float, float>(G, d);
        return prec == SPX_PRECISION_F16 ? launch_h<float, __half>(G, d) : launch_h<float, __nv_bfloat16>(G, d);
    case SPX_F16: return launch_h<__half, __half>(G, d);
    case SPX_BF16: return launch_h<__nv_bfloat16, __nv_bfloat16>(G, d);
    default: return cudaErrorInvalidValue;
    }
}

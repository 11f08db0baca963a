// The dense path's own GEMM on Hopper (sm_90a): spmm_dense_mma.cu's kernel
// with wgmma in place of mma.sync, for bf16 and f16 data and for f32 data
// rounded to bf16 or f16. mma.sync there is bound by latency at a quarter of
// the tensor cores' rate (H200: 22 cycles per instruction per scheduler, 2-4x
// cuBLASLt's kernel time on products of 1e9 flops and more); wgmma reads
// both operands from shared memory, 64 x BN x 16 per instruction for a whole
// warpgroup, asynchronously.
//
// A block of one or two warpgroups computes BM x BN of C (BM = 64 per
// warpgroup), k in steps of 64 through a ring of STAGES cp.async slots. The
// slots are in wgmma's 128-byte swizzle: A's tile as rows of 64 k (K-major),
// B's as rows of 64 columns (MN-major, wgmma's transposed B), so both are
// copied from global memory as they lie. f32 B is copied as it lies into slots
// of its own, and each step the block rounds the step's tile into one of two
// slots in wgmma's layout before the step's wgmma: cuBLASLt's route takes a
// pass over B for that (B read as f32, written and read again as 16 bits) and
// two launches more. Copies run STAGES - 2 tiles ahead and are issued after
// the step's wgmma, while it runs: the ring slot being refilled was read two
// steps back (by that step's wgmma, or for f32 B by its rounding), and so was
// the rounded slot being rewritten (by that step's wgmma), which every
// warpgroup has waited for before the step's barrier. The epilogue is the
// mma.sync kernel's (the accumulators are laid out as mma.sync's, a warp's 16
// rows each): elements whose sum is not finite are computed again from A's
// rows. Where the tiles are too few for the SMs, k is cut into parts, one
// block each, and the tile's last block to finish adds the parts' sums
// (written to a workspace) in the parts' order. Each element is one thread's
// sum in a fixed order, or a fixed sum of such: bit-exact from run to run.
//
// Kernel times (H200, bf16, CUDA graphs): 512 x 2048 x 4096 in 19.6 us
// against mma.sync's 43 and cuBLAS's 12.7; 512 x 4608 x 4096 in 36.5 against
// 91 and 25; 2048 x 512 x 1024 in 9.5 against 14.7 and 5.7. Large products
// stay at 1.5-2x cuBLAS's time. The copies look like the bound: a 64 x 64
// tile copies 16 KB a k-step (24 KB for f32 B) for 0.5 MFLOP, and one block
// an SM copies such rows from L2 at about 46 GB/s (bench/l2_copy_rate.cu,
// H100; 66 with two blocks an SM), close to this kernel's own rate on 512 x
// 2048 x 1024. Not kept (docs/PERFORMANCE.md, forty-eighth round): a second
// warpgroup that only copies and rounds, rings of 8 and 12 slots, each
// block's k-steps in its own order, other tiles and parts of k; none gained
// across the products, and none beat cuBLASLt's route past the plan's bound.
// The plan takes it where its one launch wins (spmm_plan_formats.c).
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/spmm_dense_mma.cuh"

namespace {

// Shared memory: STAGES slots of A's tile (BM x 64, rows of 128 bytes), then
// of B's: 16-bit B as wgmma reads it (64 x BN as BN / 64 pieces of 64 x 64,
// each 64 rows of 128 bytes; h_at), f32 B (ROUNDED) in rows of BN values,
// then two slots of its tiles rounded to 16 bits, as wgmma reads them. 16-byte
// chunk c of row r lies at chunk c ^ (r % 8) of its row (wgmma's 128-byte
// swizzle, on 1024-byte aligned slots).
template <typename T, typename C> struct wg_smem {
  static_assert(C::BK == 64 && C::BN % 64 == 0, "rows of 128 bytes");
  static constexpr bool ROUNDED = sizeof(T) == 4;
  static constexpr int AP = 64, RP = ROUNDED ? C::BN : 64; // elements between rows
  static constexpr size_t a_stage = (size_t)C::BM * 128,
                          h_stage = (size_t)C::BK * C::BN * 2,
                          b_stage = ROUNDED ? 2 * h_stage : h_stage,
                          bytes = C::STAGES * (a_stage + b_stage) +
                                  (ROUNDED ? 2 * h_stage : 0) +
                                  1024; // slack to align the slots
  static_assert(bytes <= 227 * 1024, "the shared memory a block may take");
  static __device__ __forceinline__ int a_at(int row, int col) {
    return row * 64 + (((col >> 3) ^ (row & 7)) << 3);
  }
  static __device__ __forceinline__ int h_at(int row, int col) {
    return (col >> 6) * (C::BK * 64) + row * 64 +
           ((((col >> 3) & 7) ^ (row & 7)) << 3) + (col & 7);
  }
  static __device__ __forceinline__ int b_at(int row, int col) {
    return ROUNDED ? row * C::BN + col : h_at(row, col);
  }
};

// f32 B's tile in ring slot `slot` rounded to H into `h`, four values a
// thread at a time: a warp reads 512 contiguous bytes, and each half-warp
// writes one 128-byte row of wgmma's layout (no bank conflicts).
template <typename H, typename C, typename S>
__device__ __forceinline__ void round_b(const unsigned char *smem, int slot,
                                        H *h) {
  const float *b = reinterpret_cast<const float *>(
      smem + C::STAGES * S::a_stage + slot * S::b_stage);
  constexpr int UNITS = C::BK * C::BN / 4;
  static_assert(UNITS % C::THREADS == 0, "whole units per thread");
#pragma unroll
  for (int i = 0; i < UNITS / C::THREADS; i++) {
    const int u = threadIdx.x + i * C::THREADS, r = u / (C::BN / 4),
              c = u % (C::BN / 4) * 4;
    const float4 f = *reinterpret_cast<const float4 *>(b + r * C::BN + c);
    *reinterpret_cast<uint2 *>(h + S::h_at(r, c)) =
        make_uint2(pack2<H>(f.x, f.y), pack2<H>(f.z, f.w));
  }
}

// A shared-memory matrix descriptor: the operand at byte address `addr`,
// `lead` bytes between its 64-element pieces along the contiguous dimension
// (B's column pieces; unused for A), `stride` bytes between groups of 8 rows,
// the 128-byte swizzle.
__device__ __forceinline__ uint64_t wg_desc(unsigned addr, unsigned lead,
                                            unsigned stride) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(lead >> 4) << 16 |
         (uint64_t)(stride >> 4) << 32 | 1ull << 62;
}

#define WG_O8(i)                                                               \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),  \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_OUTS_N64 WG_O8(0), WG_O8(8), WG_O8(16), WG_O8(24)
#define WG_OUTS_N128 WG_OUTS_N64, WG_O8(32), WG_O8(40), WG_O8(48), WG_O8(56)
#define WG_REGS_N64                                                            \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31}, %32, %33"
#define WG_SCALE_N64 "%34"
#define WG_REGS_N128                                                           \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "     \
  "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "     \
  "%58, %59, %60, %61, %62, %63}, %64, %65"
#define WG_SCALE_N128 "%66"
// d += A (64 x 16, K-major) x B (16 x N, transposed: MN-major), f32 sums
// (the accumulate predicate from a register holding 1).
#define WG_MMA(N, TYPE)                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " WG_SCALE_N##N               \
               ", 0;\n"                                                        \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE \
               " " WG_REGS_N##N ", p, 1, 1, 0, 1;\n}\n"                        \
               : WG_OUTS_N##N                                                  \
               : "l"(da), "l"(db), "r"(1))

template <typename H, int N>
__device__ __forceinline__ void wg_mma(float *d, uint64_t da, uint64_t db) {
  constexpr bool BF = std::is_same<H, __nv_bfloat16>::value;
  if constexpr (N == 128) {
    if constexpr (BF)
      WG_MMA(128, "bf16");
    else
      WG_MMA(128, "f16");
  } else {
    static_assert(N == 64, "64 or 128 columns");
    if constexpr (BF)
      WG_MMA(64, "bf16");
    else
      WG_MMA(64, "f16");
  }
}

// Keep the compiler from moving accumulator accesses across wgmma's
// asynchronous use of them.
template <int N> __device__ __forceinline__ void wg_hold(float *d) {
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("" : "+f"(d[i])::"memory");
}

// k in parts (gridDim.z of them, blockIdx.z's the k-steps [part x z, part x
// (z + 1))): each part's sums go to partial, and the tile's last block adds
// them in the parts' order.
struct wg_split {
  int part;
  float *partial;
  int *arrived;
};

// Whether this block is its tile's last part to finish; then d holds the
// sum of all parts, added in their order whichever finished first.
template <typename C>
__device__ __forceinline__ bool add_parts(const wg_split &s, float *d) {
  constexpr int E = C::NT * 4; // a thread's sums
  __shared__ int last;
  const int64_t tile = (int64_t)blockIdx.y * gridDim.x + blockIdx.x;
  float *const part =
      s.partial + tile * gridDim.z * E * C::THREADS + threadIdx.x;
#pragma unroll
  for (int i = 0; i < E; i++)
    __stcg(part + ((int64_t)blockIdx.z * E + i) * C::THREADS, d[i]);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(s.arrived + tile, 1) == (int)gridDim.z - 1;
  __syncthreads();
  if (!last)
    return false;
  __threadfence(); // the other parts' sums, stored before they arrived
  // Part by part, each part's sums all in flight (its own read back too:
  // keeping them apart would take a third set of registers).
  for (unsigned z = 0; z < gridDim.z; z++) {
    float v[E];
#pragma unroll
    for (int i = 0; i < E; i++)
      v[i] = __ldcg(part + ((int64_t)z * E + i) * C::THREADS);
#pragma unroll
    for (int i = 0; i < E; i++)
      d[i] = z ? d[i] + v[i] : v[i];
  }
  if (threadIdx.x == 0)
    s.arrived[tile] = 0; // for the next launch
  return true;
}

template <typename T, typename H, typename C>
__global__ void __launch_bounds__(C::THREADS, 1)
    dense_wgmma_kernel(const dmma_params<T> p, const wg_split split) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  typedef wg_smem<T, C> S;
  constexpr int NT = C::NT, STAGES = C::STAGES, AHEAD = STAGES - 2;
  typedef dmma_loads<T, H, C, S> LD;
  static_assert(C::MT == 1 && C::WN == 1 && AHEAD >= 1,
                "a warp per 16 rows, at least one tile ahead");
  static_assert(LD::A_STEP % 8 == 0 && (S::ROUNDED || LD::B_STEP % 8 == 0),
                "a thread's pieces keep their swizzled column");
  extern __shared__ unsigned char smem_raw[];
  const unsigned raw = (unsigned)__cvta_generic_to_shared(smem_raw),
                 sbase = (raw + 1023u) & ~1023u;
  unsigned char *const smem = smem_raw + (sbase - raw);
  const int64_t n0 = (int64_t)blockIdx.x * C::BN,
                m0 = (int64_t)blockIdx.y * C::BM;
  const int kts = (int)((p.k + C::BK - 1) / C::BK),
            kt0 = (int)blockIdx.z * split.part,
            kt1 = kt0 + split.part < kts ? kt0 + split.part : kts;
  const LD L(p, m0, n0);
  float acc[1][NT][4];
  float *const d = &acc[0][0][0];
#pragma unroll
  for (int i = 0; i < NT * 4; i++)
    d[i] = 0.0f;
#pragma unroll
  for (int s = 0; s < AHEAD; s++) {
    if (kt0 + s < kt1)
      load_tile<T, H, C, S>(p, L, smem, s, kt0 + s);
    cp_async_commit();
  }
  // This warpgroup's 64 rows of A's slots; B's slots whole (for f32 B, the
  // rounded slots after the ring).
  const unsigned a_base = sbase + (threadIdx.x >> 7) * 64 * 128,
                 b_base = sbase + STAGES * (unsigned)S::a_stage,
                 h_base = b_base + STAGES * (unsigned)S::b_stage;
  for (int kt = kt0; kt < kt1; kt++) {
    const int slot = (kt - kt0) % STAGES;
    cp_async_wait<AHEAD - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads(); // tile kt is in place; every warpgroup's wgmma of tile
                     // kt - 2 is done
    unsigned bs = b_base + slot * (unsigned)S::b_stage;
    if constexpr (S::ROUNDED) { // into the rounded slot of tile kt - 2
      bs = h_base + ((kt - kt0) & 1) * (unsigned)S::h_stage;
      round_b<H, C, S>(smem, slot, reinterpret_cast<H *>(smem + (bs - sbase)));
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads(); // the rounded tile is complete
    }
    const unsigned as = a_base + slot * (unsigned)S::a_stage;
    wg_hold<NT * 4>(d);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < C::BK / 16; ks++)
      wg_mma<H, C::BN>(d, wg_desc(as + ks * 32, 16, 1024),
                       wg_desc(bs + ks * 16 * 128, C::BK * 128, 1024));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    // The copies while the tensor cores work: into the slot of tile kt - 2.
    if (kt + AHEAD < kt1)
      load_tile<T, H, C, S>(p, L, smem, (kt - kt0 + AHEAD) % STAGES,
                            kt + AHEAD);
    cp_async_commit();
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    wg_hold<NT * 4>(d);
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  wg_hold<NT * 4>(d);
  if (gridDim.z > 1 && !add_parts<C>(split, d))
    return;
  store_c<T, H, C>(p, acc, m0, n0);
#endif
}

template <typename T, typename H, typename C>
cudaError_t launch_wg_tile(const dmma_params<T> &p,
                           const spx_cuda_wgmma_shape &sh, const wg_split &s,
                           cudaStream_t st) {
  const dim3 grid((unsigned)((p.d.n + C::BN - 1) / C::BN),
                  (unsigned)((p.m + C::BM - 1) / C::BM), (unsigned)sh.splits);
  return launch_dynamic_smem<dense_wgmma_kernel<T, H, C>>(
      grid, C::THREADS, wg_smem<T, C>::bytes, st, p, s);
}

// tile<BM, BN, 64, STAGES, BM / 16, 1>: a warp per 16 rows.
template <int BM, int BN, int STAGES>
using wg_tile = tile<BM, BN, 64, STAGES, BM / 16, 1>;

// 16-bit B: six slots for the 128 x 128 tiles (one block an SM), four or six
// for the smaller ones (two blocks an SM): the fastest on 16 DLMC shapes
// (H200). f32 B's slots are twice as large and its rounded slots come on
// top: four for the 128-wide tiles, one block an SM throughout.
template <typename T, typename H>
cudaError_t launch_wg(const dmma_params<T> &p, const spx_cuda_wgmma_shape &sh,
                      float *partial, int *arrived, cudaStream_t st) {
  constexpr bool B16 = sizeof(T) == 2;
  const wg_split s = {sh.part, partial, arrived};
  if (sh.bm == 128)
    return launch_wg_tile<T, H, wg_tile<128, 128, B16 ? 6 : 4>>(p, sh, s, st);
  if (sh.bn == 128)
    return launch_wg_tile<T, H, wg_tile<64, 128, 4>>(p, sh, s, st);
  return launch_wg_tile<T, H, wg_tile<64, 64, 6>>(p, sh, s, st);
}

} // namespace

// The largest tiles that give nine SMs in ten a block. Where k is long (at
// least WG_SPLIT_MIN_STEPS steps of 64) and the tiles leave half the SMs
// without a block, or k has 2 x WG_MIN_PART steps and the tiles leave three
// SMs in four without one, k in up to WG_MAX_SPLITS parts of at least
// WG_MIN_PART steps, for the blocks the SMs hold (launch_wg: two of 64 rows
// for 16-bit B, else one). H200, bf16: 512 x 4608 x 256 (32 tiles) took
// 13-14 us in 4 or 8 parts, 27.5 in one; shorter k with more tiles lost 1-3
// us to the parts' exchange (2048 x 512 x 256 in 2 parts: 7.2-8.9 us -> 10;
// 256 x 1024 x 1024 in 4: 9.0-9.3 -> 11.2), and so did 512 x 2048 x 1024 in 2
// parts (128 tiles: 13.0 -> 14.3). With fewer tiles the parts win (H100):
// 384 x 1536 x 256 (24 tiles, 24 steps) 11.0 us against 21.8 for bf16 data,
// 11.7 against 23.5 for f32 data at bf16 precision; 128 x 1152 x 256 (8
// tiles, 18 steps) 10.6 against 14.4 (f32).
#define WG_SPLIT_MIN_STEPS 32
#define WG_MAX_SPLITS 8
#define WG_MIN_PART 4
extern "C" spx_cuda_wgmma_shape spx__cuda_dense_wgmma_shape(int64_t m,
                                                            int64_t n,
                                                            int64_t k,
                                                            int64_t sms,
                                                            bool rounded) {
  const int64_t rows = (m + 63) / 64, cols = (n + 127) / 128,
                enough = sms * 9 / 10, kts = (k + 63) / 64;
  spx_cuda_wgmma_shape sh = {64, 64, 1, (int)kts, 0};
  int per_sm = rounded ? 1 : 2;
  if (((rows + 1) / 2) * cols >= enough) {
    sh.bm = sh.bn = 128;
    per_sm = 1;
  } else if (rows * cols >= enough) {
    sh.bn = 128;
  }
  sh.tiles = ((m + sh.bm - 1) / sh.bm) * ((n + sh.bn - 1) / sh.bn);
  int64_t splits = (kts >= WG_SPLIT_MIN_STEPS && 2 * sh.tiles <= sms) ||
                           (kts >= 2 * WG_MIN_PART && 4 * sh.tiles <= sms)
                       ? per_sm * sms / sh.tiles
                       : 1;
  if (splits > kts / WG_MIN_PART)
    splits = kts / WG_MIN_PART;
  if (splits > WG_MAX_SPLITS)
    splits = WG_MAX_SPLITS;
  if (splits > 1) { // parts of equal steps, none empty
    sh.part = (int)((kts + splits - 1) / splits);
    sh.splits = (int)((kts + sh.part - 1) / sh.part);
  }
  return sh;
}

extern "C" cudaError_t spx__cuda_dense_wgmma(const spx_cuda_csr *A,
                                             const spx_cuda_densified *D,
                                             const spx_cuda_dense_args *d,
                                             int64_t k,
                                             const spx_cuda_wgmma_shape *sh,
                                             float *partial, int *arrived) {
  if (A->rows == 0 || d->n == 0)
    return cudaSuccess;
  if (!spx__cuda_dense_mma_fits(D, d, A->rows) ||
      (sh->splits > 1 && (!partial || !arrived)))
    return cudaErrorInvalidValue;
  const bool bf = D->type == SPX_BF16;
  switch (d->dtype) {
  case SPX_F32:
    return bf ? launch_wg<float, __nv_bfloat16>(
                    dmma_params_from<float>(A, D, d, k), *sh, partial, arrived,
                    d->stream)
              : launch_wg<float, __half>(dmma_params_from<float>(A, D, d, k),
                                         *sh, partial, arrived, d->stream);
  case SPX_BF16:
    return launch_wg<__nv_bfloat16, __nv_bfloat16>(
        dmma_params_from<__nv_bfloat16>(A, D, d, k), *sh, partial, arrived,
        d->stream);
  case SPX_F16:
    return launch_wg<__half, __half>(dmma_params_from<__half>(A, D, d, k), *sh,
                                     partial, arrived, d->stream);
  default:
    return cudaErrorInvalidValue;
  }
}

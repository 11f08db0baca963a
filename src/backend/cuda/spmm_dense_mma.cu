// The dense path's own GEMM for 16-bit tensor-core operands (bf16 or f16
// data, or f32 data rounded to bf16 or f16): C = alpha * A_dense * B + beta *
// C in one launch. cuBLASLt's route takes up to three (B's finite copy in
// the operands' type, the GEMM, the non-finite terms) and cuBLASLt's own host
// work, which on small products is the product's time. Here each block reads
// B in its own type (f32 B rounded in shared memory) and multiplies its
// non-finite values too: such a value makes every sum of its column Inf or
// NaN, and so does a sum that overflowed, so the elements whose sum is not
// finite are computed again from A's rows, with the product's terms only
// (0 x Inf must not reach C: spmm_dense.cu says why).
//
// A block computes 64 x BN of C (BN = 128, 64 or 32: the widest that gives
// the SMs enough blocks) with four warps of 32 x BN/2 each, mma.sync
// m16n8k16 with f32 accumulators, k in steps of BK through a ring of STAGES
// cp.async copies of A's and B's tiles. Each element of C is one thread's sum
// in a fixed order: bit-exact from run to run. Each block walks all of k, so
// that long k and large products run far below cuBLASLt's rate (H200, bf16
// kernel times: 2048 x 512 x 1024 in 14.8 us against 5.7; 512 x 4608 x 1024
// in 35 against 10; more stages, 8 warps or 128 x 128 tiles did not change
// that); the plan takes it only where launches bound the product
// (spmm_plan_formats.c). On compute capability 9.0, bf16 and f16 data and
// f32 data rounded to them run spmm_dense_wgmma.cu's kernel instead; what the
// two share is in spmm_dense_mma.cuh.
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/spmm_dense_mma.cuh"

namespace {

// Shared memory of a block: STAGES slots of A's tile (BM x BK) and of B's
// (BK x BN in B's type), then, for f32 B, its tile rounded to H. Rows are
// padded by 16 bytes so that ldmatrix's eight rows fall in distinct banks.
template <typename T, typename H, typename C> struct dmma_smem {
  static constexpr bool ROUNDED =
      sizeof(T) != sizeof(H); // B's tile is rounded into its own buffer
  static constexpr int AP = C::BK + 8,  // pitches: A's slots, B's slots and
      RP = C::BN + 16 / (int)sizeof(T), // the rounded tile
      HP = C::BN + 8;
  static constexpr size_t a_stage = (size_t)C::BM * AP * sizeof(H),
                          b_stage = (size_t)C::BK * RP * sizeof(T);
  static constexpr size_t h_bytes =
      ROUNDED ? (size_t)C::BK * HP * sizeof(H) : 0;
  static constexpr size_t bytes = C::STAGES * (a_stage + b_stage) + h_bytes;
  static __device__ __forceinline__ int a_at(int row, int col) {
    return row * AP + col;
  }
  static __device__ __forceinline__ int b_at(int row, int col) {
    return row * RP + col;
  }
};

// f32 B's landed tile in slot `slot` rounded to H into Bh.
template <typename T, typename H, typename C>
__device__ __forceinline__ void round_tile(const unsigned char *smem, int slot,
                                           H *Bh) {
  typedef dmma_smem<T, H, C> S;
  const T *Bs = reinterpret_cast<const T *>(smem + C::STAGES * S::a_stage +
                                            slot * S::b_stage);
  constexpr int UNITS = C::BK * C::BN / 8; // 8 values each: 16 bytes of H
  static_assert(UNITS % C::THREADS == 0, "whole units per thread");
#pragma unroll
  for (int i = 0; i < UNITS / C::THREADS; i++) {
    const int e = threadIdx.x + i * C::THREADS, r = e / (C::BN / 8),
              c = e % (C::BN / 8) * 8;
    const float4 f0 = *reinterpret_cast<const float4 *>(Bs + r * S::RP + c),
                 f1 = *reinterpret_cast<const float4 *>(Bs + r * S::RP + c + 4);
    *reinterpret_cast<uint4 *>(Bh + r * S::HP + c) =
        make_uint4(pack2<H>(f0.x, f0.y), pack2<H>(f0.z, f0.w),
                   pack2<H>(f1.x, f1.y), pack2<H>(f1.z, f1.w));
  }
}

template <typename T, typename H, typename C>
__global__ void __launch_bounds__(C::THREADS, C::MIN_BLOCKS)
    dense_mma_kernel(const dmma_params<T> p) {
  typedef dmma_smem<T, H, C> S;
  constexpr int WTM = C::BM / C::WM, WTN = C::BN / C::WN; // a warp's tile
  constexpr int MT = C::MT, NT = C::NT, STAGES = C::STAGES;
  constexpr int BPITCH = S::ROUNDED ? S::HP : S::RP;
  extern __shared__ __align__(16) unsigned char smem[];
  H *Bh = reinterpret_cast<H *>(smem + STAGES * (S::a_stage + S::b_stage));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp % C::WM,
            wn = warp / C::WM;
  const int64_t n0 = (int64_t)blockIdx.x * C::BN,
                m0 = (int64_t)blockIdx.y * C::BM;
  const int kts = (int)((p.k + C::BK - 1) / C::BK);
  const dmma_loads<T, H, C, S> L(p, m0, n0);
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
      acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < kts)
      load_tile<T, H, C, S>(p, L, smem, s, s);
    cp_async_commit();
  }
  const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
  int slot = 0, next_slot = STAGES - 1;
  for (int kt = 0; kt < kts; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads(); // tile kt has landed; every warp is done with slot kt - 1
                     // (and the rounded tile)
    if constexpr (S::ROUNDED) // before the next copies: 3-8 % faster (H200)
      round_tile<T, H, C>(smem, slot, Bh);
    if (kt + STAGES - 1 < kts)
      load_tile<T, H, C, S>(p, L, smem, next_slot, kt + STAGES - 1);
    cp_async_commit();
    if constexpr (S::ROUNDED)
      __syncthreads(); // the rounded tile is complete
    const unsigned as = sbase + (unsigned)(slot * S::a_stage);
    const unsigned bs =
        S::ROUNDED
            ? (unsigned)__cvta_generic_to_shared(Bh)
            : sbase + (unsigned)(STAGES * S::a_stage + slot * S::b_stage);
#pragma unroll
    for (int ks = 0; ks < C::BK / 16; ks++) {
      uint32_t a[MT][4];
#pragma unroll
      for (int i = 0; i < MT; i++)
        ldmatrix_x4(a[i],
                    as + (unsigned)(((wm * WTM + i * 16 + (lane & 15)) * S::AP +
                                     ks * 16 + (lane >> 4) * 8) *
                                    (int)sizeof(H)));
#pragma unroll
      for (int j = 0; j < NT / 2; j++) {
        uint32_t b[4];
        ldmatrix_x4_trans(
            b, bs + (unsigned)(((ks * 16 + (lane & 15)) * BPITCH + wn * WTN +
                                j * 16 + (lane >> 4) * 8) *
                               (int)sizeof(H)));
        const uint32_t lo[2] = {b[0], b[1]}, hi[2] = {b[2], b[3]};
#pragma unroll
        for (int i = 0; i < MT; i++) {
          mma_16<H>(acc[i][2 * j], a[i], lo);
          mma_16<H>(acc[i][2 * j + 1], a[i], hi);
        }
      }
    }
    slot = slot + 1 == STAGES ? 0 : slot + 1;
    next_slot = next_slot + 1 == STAGES ? 0 : next_slot + 1;
  }
  store_c<T, H, C>(p, acc, m0, n0);
}

template <typename T, typename H, typename C>
cudaError_t launch_tile(const dmma_params<T> &p, cudaStream_t st) {
  const dim3 grid((unsigned)((p.d.n + C::BN - 1) / C::BN),
                  (unsigned)((p.m + C::BM - 1) / C::BM));
  return launch_dynamic_smem<dense_mma_kernel<T, H, C>>(
      grid, C::THREADS, dmma_smem<T, H, C>::bytes, st, p);
}

template <typename T, typename H>
cudaError_t launch_t(const spx_cuda_csr *A, const spx_cuda_densified *D,
                     const spx_cuda_dense_args *d, int64_t k, int64_t sms) {
  const dmma_params<T> p = dmma_params_from<T>(A, D, d, k);
  // The widest tiles that still give the SMs enough blocks: three in four
  // SMs one for 16-bit B (128 and 64 wide tiles were the fastest from there,
  // 32 wide ones below), every SM one for f32 B, whose blocks also round B's
  // tiles (H200, 16 DLMC shapes). k in steps of 64 for 16-bit B; f32 B's
  // slots are twice as large, so 32.
  constexpr bool B16 = sizeof(T) == 2;
  constexpr int BK = B16 ? 64 : 32;
  const int64_t rows = (p.m + 63) / 64, enough = B16 ? 3 * sms : 4 * sms;
  if (4 * rows * ((p.d.n + 127) / 128) >= enough)
    return launch_tile<T, H, tile<64, 128, BK, 3, 2, 2>>(p, d->stream);
  if (4 * rows * ((p.d.n + 63) / 64) >= enough)
    return launch_tile<T, H, tile<64, 64, BK, 3, 2, 2>>(p, d->stream);
  return launch_tile<T, H, tile<64, 32, BK, 3, 2, 2>>(p, d->stream);
}

} // namespace

extern "C" bool spx__cuda_dense_mma_fits(const spx_cuda_densified *D,
                                         const spx_cuda_dense_args *d,
                                         int64_t m) {
  const bool types = (D->type == SPX_BF16 || D->type == SPX_F16) &&
                     (d->dtype == SPX_F32 || d->dtype == D->type);
  return types && d->vec > 1 && (m + 63) / 64 <= 65535 &&
         (d->n + 31) / 32 <= 0x7fffffff;
}

extern "C" cudaError_t spx__cuda_dense_mma(const spx_cuda_csr *A,
                                           const spx_cuda_densified *D,
                                           const spx_cuda_dense_args *d,
                                           int64_t k, int64_t sms) {
  if (A->rows == 0 || d->n == 0)
    return cudaSuccess;
  if (!spx__cuda_dense_mma_fits(D, d, A->rows))
    return cudaErrorInvalidValue;
  switch (d->dtype) {
  case SPX_F32:
    return D->type == SPX_BF16 ? launch_t<float, __nv_bfloat16>(A, D, d, k, sms)
                               : launch_t<float, __half>(A, D, d, k, sms);
  case SPX_BF16:
    return launch_t<__nv_bfloat16, __nv_bfloat16>(A, D, d, k, sms);
  case SPX_F16:
    return launch_t<__half, __half>(A, D, d, k, sms);
  default:
    return cudaErrorInvalidValue;
  }
}

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
// (spmm_plan_formats.c).
#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/mma.cuh"

#include <float.h>
#include <limits.h>
#include <type_traits>

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

// A block's BM x BN tile of C with WM x WN warps, each computing MT x NT mma
// tiles (16 x 8) of it; k in steps of BK through a ring of STAGES cp.async
// copies (STAGES - 1 tiles in flight). MIN_BLOCKS an SM leaves a thread its
// accumulators and about 96 registers more.
template <int BM_, int BN_, int BK_, int STAGES_, int WM_, int WN_>
struct tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, WM = WM_,
                       WN = WN_, THREADS = 32 * WM * WN, MT = BM / WM / 16,
                       NT = BN / WN / 8,
                       MIN_BLOCKS = 65536 / (THREADS * (MT * NT * 4 + 96));
  static_assert(NT % 2 == 0 && BK % 16 == 0 && STAGES >= 2,
                "B's columns in pairs of n8 tiles, k in steps of 16");
  static_assert(MT * NT * 4 <= 64, "a bit per accumulator in 64");
};

template <typename T> struct dmma_params {
  const void *A; // op(A) densely (the operands' type), m x lda, rows on 16
                 // bytes, zeros past k
  int64_t lda, m, k;
  dense_ops<T> d;        // n, B (k x n, rows on 16 bytes), C and the scalars
  const int64_t *rowptr; // op(A) by rows, for the elements computed again
  const int32_t *colidx;
  const T *avals;
};

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
};

// What this thread copies of each k-tile, in 16-byte pieces: of A's BM x BK
// (pieces of 8 H), rows a_row + i * A_STEP at column a_col; of B's BK x BN
// (pieces of V T), rows b_row + i * B_STEP at column b_col. Everything but
// the k-tile's offset is set once, so that a whole tile's copies cost a few
// instructions each.
template <typename T, typename H, typename C> struct dmma_loads {
  static constexpr int V = 16 / (int)sizeof(T),
                       A_STEP = C::THREADS / (C::BK / 8), AI = C::BM / A_STEP,
                       B_STEP = C::THREADS / (C::BN / V), BI = C::BK / B_STEP;
  static_assert(C::THREADS % (C::BK / 8) == 0 && C::BM % A_STEP == 0 &&
                    C::THREADS % (C::BN / V) == 0 && C::BK % B_STEP == 0,
                "whole pieces per thread");
  static_assert(AI <= 32, "a bit per piece of A");
  const H *a; // A's row m0 + a_row (m0 where that is past m), column a_col
  const T *b; // B's row b_row, column n0 + b_col
  int64_t a_stride, b_stride; // A_STEP rows of A, B_STEP rows of B
  unsigned a_live;            // bit i: piece i's row is below m
  int a_left, b_row, b_bytes; // a_left: columns from the piece's first to k;
                              // b_bytes: of each piece of B, within n
  int a_smem, b_smem;         // piece 0's offsets in a slot, in elements
  __device__ __forceinline__ dmma_loads(const dmma_params<T> &p, int64_t m0,
                                        int64_t n0) {
    typedef dmma_smem<T, H, C> S;
    const int a_row = threadIdx.x / (C::BK / 8),
              rows = (int)(p.m - m0 < C::BM ? p.m - m0 : C::BM),
              a_col = threadIdx.x % (C::BK / 8) * 8,
              b_col = threadIdx.x % (C::BN / V) * V;
    a_left = (int)(p.k - a_col < INT32_MAX ? p.k - a_col : INT32_MAX);
    a_live = 0;
#pragma unroll
    for (int i = 0; i < AI; i++)
      a_live |= (a_row + i * A_STEP < rows ? 1u : 0u) << i;
    a = static_cast<const H *>(p.A) +
        (m0 + (a_row < rows ? a_row : 0)) * p.lda + a_col;
    a_stride = (int64_t)A_STEP * p.lda;
    b_row = threadIdx.x / (C::BN / V);
    const int64_t b_left = p.d.n - (n0 + b_col);
    b_bytes = b_left >= V ? 16 : b_left > 0 ? (int)b_left * (int)sizeof(T) : 0;
    b = p.d.B + (int64_t)b_row * p.d.ldb + n0 + b_col;
    b_stride = (int64_t)B_STEP * p.d.ldb;
    a_smem = a_row * S::AP + a_col;
    b_smem = b_row * S::RP + b_col;
  }
};

// Start copying k-tile kt into ring slot `slot`, zeros past m, n and k.
template <typename T, typename H, typename C>
__device__ __forceinline__ void
load_tile(const dmma_params<T> &p, const dmma_loads<T, H, C> &L,
          unsigned char *smem, int slot, int kt) {
  typedef dmma_smem<T, H, C> S;
  typedef dmma_loads<T, H, C> LD;
  const int k0 = kt * C::BK;
  H *As = reinterpret_cast<H *>(smem + slot * S::a_stage) + L.a_smem;
  T *Bs =
      reinterpret_cast<T *>(smem + C::STAGES * S::a_stage + slot * S::b_stage) +
      L.b_smem;
  const H *a = L.a + k0;
  const T *b = L.b + (int64_t)k0 * p.d.ldb;
  const bool whole = k0 + C::BK <= p.k;
  const int a_left = L.a_left - k0, a_bytes = a_left >= 8  ? 16
                                              : a_left > 0 ? a_left * 2
                                                           : 0;
#pragma unroll
  for (int i = 0; i < LD::AI; i++) {
    const int bytes = (L.a_live >> i) & 1u ? a_bytes : 0;
    cp_async16(As + i * LD::A_STEP * S::AP, bytes ? a + i * L.a_stride : L.a,
               bytes);
  }
#pragma unroll
  for (int i = 0; i < LD::BI; i++) {
    const int bytes =
        whole || k0 + L.b_row + i * LD::B_STEP < p.k ? L.b_bytes : 0;
    cp_async16(Bs + i * LD::B_STEP * S::RP, bytes ? b + i * L.b_stride : p.d.B,
               bytes);
  }
}

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

// alpha * v + beta * (C's value at `at`) as T; beta = 0 does not read C.
template <typename T>
__device__ __forceinline__ T scaled(const dense_ops<T> &d, float v,
                                    const T *at) {
  return from_acc<T>(d.beta != 0.0f ? d.alpha * v + d.beta * to_acc(*at)
                                    : d.alpha * v);
}

// This thread's elements of C set in `redo` (bit ((i * 2 + h) * NT + j) * 2
// + t: mma tile i, row half h, column tile j, column t), from op(A)'s row
// and B's column with the operands rounded to H as the tiles are: the sum of
// the product's terms only. row0 and col0 are the thread's first row and
// column.
template <typename T, typename H, typename C>
__device__ __noinline__ void recompute(const dmma_params<T> &p, int64_t row0,
                                       int64_t col0, uint64_t redo) {
#pragma unroll 1
  while (redo) {
    const int e = __ffsll((long long)redo) - 1;
    redo &= redo - 1;
    const int t = e & 1, j = (e >> 1) % C::NT, ih = (e >> 1) / C::NT;
    const int64_t row = row0 + (ih >> 1) * 16 + (ih & 1) * 8,
                  col = col0 + j * 8 + t;
    if (row >= p.m || col >= p.d.n)
      continue;
    float s = 0.0f;
    for (int64_t x = p.rowptr[row]; x < p.rowptr[row + 1]; x++) {
      const float a = to_acc(from_acc<H>(p.avals ? to_acc(p.avals[x]) : 1.0f));
      s += a * to_acc(from_acc<H>(
                   to_acc(p.d.B[(int64_t)p.colidx[x] * p.d.ldb + col])));
    }
    T *at = p.d.C + row * p.d.ldc + col;
    *at = scaled(p.d, s, at);
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
  const dmma_loads<T, H, C> L(p, m0, n0);
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
      acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < kts)
      load_tile<T, H, C>(p, L, smem, s, s);
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
      load_tile<T, H, C>(p, L, smem, next_slot, kt + STAGES - 1);
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
  // C. An element whose sum is not finite is left to recompute(): a
  // non-finite value in B's column makes every row's sum there Inf or NaN
  // (0 x Inf is NaN where A holds no entry), and the product has no such term
  // there; a sum that overflowed comes out the same from A's row.
  const int g = lane >> 2, q = lane & 3;
  const int64_t row0 = m0 + wm * WTM + g, col0 = n0 + wn * WTN + 2 * q;
  const int rows = (int)(p.m - row0 < WTM ? p.m - row0 : WTM),
            cols = (int)(p.d.n - col0 < WTN ? p.d.n - col0 : WTN);
  T *const c = p.d.C + row0 * p.d.ldc + col0;
  uint64_t redo = 0;
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int r = i * 16 + h * 8;
      if (r >= rows)
        continue;
      T *const out = c + r * p.d.ldc;
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const float v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        if (!(fabsf(v[0]) <= FLT_MAX && fabsf(v[1]) <= FLT_MAX)) { // rare
          redo |= 3ull << (((i * 2 + h) * NT + j) * 2);
          continue;
        }
        if (p.d.c_vec && j * 8 + 1 < cols) { // the two columns in one store
                                             // (rows on 16 bytes, col0 even)
          typedef
              typename std::conditional<sizeof(T) == 4, uint2, uint32_t>::type
                  P2;
          P2 raw = p.d.beta != 0.0f ? *reinterpret_cast<const P2 *>(out + j * 8)
                                    : P2{};
          T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
          for (int t = 0; t < 2; t++)
            e[t] = scaled(p.d, v[t], e + t);
          *reinterpret_cast<P2 *>(out + j * 8) = raw;
        } else {
#pragma unroll
          for (int t = 0; t < 2; t++)
            if (j * 8 + t < cols)
              out[j * 8 + t] = scaled(p.d, v[t], out + j * 8 + t);
        }
      }
    }
  if (redo)
    recompute<T, H, C>(p, row0, col0, redo);
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
  dmma_params<T> p;
  p.A = D->vals;
  p.lda = D->ld;
  p.m = A->rows;
  p.k = k;
  p.d = dense_ops_from<T>(d);
  p.rowptr = A->rowptr;
  p.colidx = A->colidx;
  p.avals = static_cast<const T *>(A->vals);
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

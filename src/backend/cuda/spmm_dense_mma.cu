// The dense path's own GEMM for 16-bit tensor-core operands (bf16 or f16
// data, or f32 data rounded to bf16 or f16): C = alpha * A_dense * B + beta *
// C in one launch. cuBLASLt's route takes up to three (B's finite copy in
// the operands' type, the GEMM, the non-finite terms) and cuBLASLt's own host
// work, which on small products is the product's time. Here each block reads
// B in its own type, rounds it to the operands' type in shared memory and
// zeroes what is not finite there; the columns of its tile that held such a
// value are computed again from A's rows at the end, so that 0 x Inf never
// reaches C (spmm_dense.cu says why it must not).
//
// A block computes 64 x BN of C (BN = 128, 64 or 32: the widest that gives
// every SM two blocks) with four warps of 32 x BN/2 each, mma.sync m16n8k16
// with f32 accumulators, k in steps of BK through a ring of STAGES cp.async
// copies of A's and B's tiles. Each element of C is one thread's sum in a
// fixed order: bit-exact from run to run. Each block walks all of k, with
// only two tiles in flight, so that long k and large products run far below
// cuBLASLt's rate (H200, bf16: 2048 x 512 x 1024 in 20.6 us a call against
// 13.6 through cuBLASLt; k = 4608 three times slower; 128 x 128 and 128 x
// 256 tiles were slower still); the plan takes it only where launches bound
// the product (spmm_plan_formats.c).
#include "backend/cuda/b_slab.cuh"
#include "backend/cuda/dynamic_smem.cuh"
#include "backend/cuda/mma.cuh"

#include <limits.h>
#include <type_traits>

extern "C" {
#include "backend/cuda/spmm_cuda.h"
}

namespace {

constexpr int BK = 32, STAGES = 3,
              APITCH = BK + 8; // APITCH: ldmatrix rows in distinct banks

// A block's 64 x BN tile of C and its 2 x 2 warps, each computing MT x NT
// mma tiles (16 x 8) of it. MIN_BLOCKS an SM leaves a thread its
// accumulators and about 96 registers more.
template <int BN_> struct tile {
  static constexpr int BM = 64, BN = BN_, WM = 2, WN = 2,
                       THREADS = 32 * WM * WN, MT = BM / WM / 16,
                       NT = BN / WN / 8,
                       MIN_BLOCKS = 65536 / (THREADS * (MT * NT * 4 + 96));
  static_assert(NT % 2 == 0 && BN <= 256,
                "B's columns in pairs of n8 tiles, a bit a column group");
};

template <typename T> struct dmma_params {
  const void *A; // op(A) densely (the operands' type), m x lda, rows on 16
                 // bytes, zeros past k
  int64_t lda, m, k;
  dense_ops<T> d;        // n, B (k x n, rows on 16 bytes), C and the scalars
  const int64_t *rowptr; // op(A) by rows, for the columns computed again
  const int32_t *colidx;
  const T *avals;
};

// Shared memory of a block: STAGES slots of A's tile (BM x BK) and of B's
// (BK x BN in B's type), then, for f32 B, its tile rounded to H. Rows are
// padded by 16 bytes so that ldmatrix's eight rows fall in distinct banks.
template <typename T, typename H, typename C> struct dmma_smem {
  static constexpr bool ROUNDED =
      sizeof(T) != sizeof(H); // B's tile is rounded into its own buffer
  static constexpr int RP = C::BN + 16 / (int)sizeof(T),
                       HP = C::BN +
                            8; // pitches of B's slots and of the rounded tile
  static constexpr size_t a_stage = (size_t)C::BM * APITCH * sizeof(H),
                          b_stage = (size_t)BK * RP * sizeof(T);
  static constexpr size_t h_bytes = ROUNDED ? (size_t)BK * HP * sizeof(H) : 0;
  static constexpr size_t bytes =
      STAGES * (a_stage + b_stage) + h_bytes + C::BN / 8 * sizeof(int);
};

// The exponent bits of two packed values of H: all set means Inf or NaN.
template <typename H> struct exp2_of {
  static constexpr uint32_t v = 0x7f807f80u;
};
template <> struct exp2_of<__half> {
  static constexpr uint32_t v = 0x7c007c00u;
};

// Non-zero where a packed value of H in w is Inf or NaN: a half of E & ~w
// is zero exactly there, and only a zero half sets its top bit when one is
// subtracted from each half.
template <typename H>
__device__ __forceinline__ uint32_t nonfinite_bits(uint32_t w) {
  const uint32_t y = exp2_of<H>::v & ~w;
  return (y - 0x00010001u) & ~y & 0x80008000u;
}

// w with zeros for its packed values of H that are not finite.
template <typename H>
__device__ __forceinline__ uint32_t finite_pair(uint32_t w) {
  constexpr uint32_t E = exp2_of<H>::v;
  const uint32_t x = w & E;
  const bool lo = (x & 0xffffu) == (E & 0xffffu), hi = (x >> 16) == (E >> 16);
  return w & ((lo ? 0u : 0xffffu) | (hi ? 0u : 0xffff0000u));
}

// Where this thread's pieces of each k-tile come from and go: BM x BK of A
// in 16-byte pieces of H, BK x BN of B in 16-byte pieces of T. The pointers
// are those of k-tile 0; tile kt adds kt * BK columns (A) or rows (B).
template <typename T, typename H, typename C> struct dmma_loads {
  static constexpr int AI = C::BM * BK / 8 / C::THREADS,
                       V = 16 / (int)sizeof(T),
                       BI = BK * C::BN / V / C::THREADS;
  static_assert(AI * C::THREADS * 8 == C::BM * BK &&
                    BI * C::THREADS * V == BK * C::BN,
                "whole pieces per thread");
  const H *a[AI];
  int a_left[AI]; // columns of A's row from the piece's first one to k (0: a
                  // row past m)
  const T *b[BI];
  int b_row[BI], b_left[BI]; // the piece's row in the tile; columns from its
                             // first one to n
  __device__ __forceinline__ dmma_loads(const dmma_params<T> &p, int64_t m0,
                                        int64_t n0) {
#pragma unroll
    for (int i = 0; i < AI; i++) {
      const int e = threadIdx.x + i * C::THREADS, r = e / (BK / 8),
                c = e % (BK / 8) * 8;
      const bool live = m0 + r < p.m;
      a[i] = static_cast<const H *>(p.A) + (live ? (m0 + r) * p.lda + c : 0);
      a_left[i] = live ? (int)(p.k - c < INT32_MAX ? p.k - c : INT32_MAX)
                       : INT32_MIN / 2;
    }
#pragma unroll
    for (int i = 0; i < BI; i++) {
      const int e = threadIdx.x + i * C::THREADS, r = e / (C::BN / V),
                c = e % (C::BN / V) * V;
      b_row[i] = r;
      b_left[i] =
          (int)(p.d.n - (n0 + c) < INT32_MAX ? p.d.n - (n0 + c) : INT32_MAX);
      b[i] = p.d.B + (int64_t)r * p.d.ldb + n0 + c;
    }
  }
};

// Start copying k-tile kt into ring slot `slot`, zeros past m, n and k.
template <typename T, typename H, typename C>
__device__ __forceinline__ void
load_tile(const dmma_params<T> &p, const dmma_loads<T, H, C> &L,
          unsigned char *smem, int slot, int64_t kt) {
  typedef dmma_smem<T, H, C> S;
  typedef dmma_loads<T, H, C> LD;
  const int k0 = (int)(kt * BK);
  H *As = reinterpret_cast<H *>(smem + slot * S::a_stage);
  T *Bs = reinterpret_cast<T *>(smem + STAGES * S::a_stage + slot * S::b_stage);
#pragma unroll
  for (int i = 0; i < LD::AI; i++) {
    const int e = threadIdx.x + i * C::THREADS, r = e / (BK / 8),
              c = e % (BK / 8) * 8;
    const int left = L.a_left[i] - k0, bytes = left >= 8  ? 16
                                               : left > 0 ? left * 2
                                                          : 0;
    cp_async16(As + r * APITCH + c, bytes ? L.a[i] + k0 : L.a[i], bytes);
  }
#pragma unroll
  for (int i = 0; i < LD::BI; i++) {
    const int e = threadIdx.x + i * C::THREADS, c = e % (C::BN / LD::V) * LD::V;
    const bool live = k0 + L.b_row[i] < p.k;
    const int left = live ? L.b_left[i] : 0;
    const int bytes = left >= LD::V ? 16 : left > 0 ? left * (int)sizeof(T) : 0;
    cp_async16(Bs + L.b_row[i] * S::RP + c,
               bytes ? L.b[i] + (int64_t)k0 * p.d.ldb : p.d.B, bytes);
  }
}

// B's landed tile in slot `slot` as H with zeros for what is not finite as
// H: rounded into Bh (f32 B) or checked in place; bad gets the columns (in
// groups of 8) that held such a value.
template <typename T, typename H, typename C>
__device__ __forceinline__ void take_tile(unsigned char *smem, int slot, H *Bh,
                                          int *bad) {
  typedef dmma_smem<T, H, C> S;
  T *Bs = reinterpret_cast<T *>(smem + STAGES * S::a_stage + slot * S::b_stage);
  constexpr int UNITS = BK * C::BN / 8; // 8 values each: 16 bytes of H
  static_assert(UNITS % C::THREADS == 0, "whole units per thread");
#pragma unroll
  for (int i = 0; i < UNITS / C::THREADS; i++) {
    const int e = threadIdx.x + i * C::THREADS, r = e / (C::BN / 8),
              c = e % (C::BN / 8) * 8;
    uint4 *at = S::ROUNDED ? reinterpret_cast<uint4 *>(Bh + r * S::HP + c)
                           : reinterpret_cast<uint4 *>(Bs + r * S::RP + c);
    uint4 w;
    if constexpr (S::ROUNDED) {
      const float4 f0 = *reinterpret_cast<const float4 *>(Bs + r * S::RP + c),
                   f1 = *reinterpret_cast<const float4 *>(Bs + r * S::RP + c +
                                                          4);
      w = make_uint4(pack2<H>(f0.x, f0.y), pack2<H>(f0.z, f0.w),
                     pack2<H>(f1.x, f1.y), pack2<H>(f1.z, f1.w));
    } else {
      w = *at;
    }
    if (nonfinite_bits<H>(w.x) | nonfinite_bits<H>(w.y) |
        nonfinite_bits<H>(w.z) | nonfinite_bits<H>(w.w)) { // rare
      w = make_uint4(finite_pair<H>(w.x), finite_pair<H>(w.y),
                     finite_pair<H>(w.z), finite_pair<H>(w.w));
      atomicOr(bad + c / 8, 1);
      if constexpr (!S::ROUNDED)
        *at = w; // the zeros written back
    }
    if constexpr (S::ROUNDED)
      *at = w;
  }
}

// alpha * v + beta * (C's value at `at`) as T; beta = 0 does not read C.
template <typename T>
__device__ __forceinline__ T scaled(const dense_ops<T> &d, float v,
                                    const T *at) {
  return from_acc<T>(d.beta != 0.0f ? d.alpha * v + d.beta * to_acc(*at)
                                    : d.alpha * v);
}

// This thread's elements of C in the warp's column groups (8 wide) set in
// `groups`, from op(A)'s row and B's column with the operands rounded to H
// as the tiles are. row0 and col0 are the thread's first row and column.
template <typename T, typename H, typename C>
__device__ __noinline__ void recompute_flagged(const dmma_params<T> &p,
                                               int64_t row0, int64_t col0,
                                               unsigned groups) {
#pragma unroll 1
  for (int e = 0; e < C::MT * 2 * C::NT * 2; e++) {
    const int t = e & 1, j = (e >> 1) % C::NT, ih = (e >> 1) / C::NT;
    const int64_t row = row0 + (ih >> 1) * 16 + (ih & 1) * 8,
                  col = col0 + j * 8 + t;
    if (!((groups >> j) & 1u) || row >= p.m || col >= p.d.n)
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
  constexpr int MT = C::MT, NT = C::NT;
  constexpr int BPITCH = S::ROUNDED ? S::HP : S::RP;
  extern __shared__ __align__(16) unsigned char smem[];
  H *Bh = reinterpret_cast<H *>(smem + STAGES * (S::a_stage + S::b_stage));
  int *bad = reinterpret_cast<int *>(smem + STAGES * (S::a_stage + S::b_stage) +
                                     S::h_bytes);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp % C::WM,
            wn = warp / C::WM;
  const int64_t n0 = (int64_t)blockIdx.x * C::BN,
                m0 = (int64_t)blockIdx.y * C::BM, kts = (p.k + BK - 1) / BK;
  if (threadIdx.x < C::BN / 8)
    bad[threadIdx.x] = 0;
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
  int slot = 0;
  for (int64_t kt = 0; kt < kts; kt++) {
    cp_async_wait<STAGES - 2>();
    __syncthreads(); // tile kt has landed; every warp is done with the rounded
                     // tile and slot kt - 1
    take_tile<T, H, C>(smem, slot, Bh, bad);
    if (kt + STAGES - 1 < kts)
      load_tile<T, H, C>(p, L, smem, slot == 0 ? STAGES - 1 : slot - 1,
                         kt + STAGES - 1);
    cp_async_commit();
    __syncthreads(); // tile kt is taken
    const unsigned as = sbase + (unsigned)(slot * S::a_stage);
    const unsigned bs =
        S::ROUNDED
            ? (unsigned)__cvta_generic_to_shared(Bh)
            : sbase + (unsigned)(STAGES * S::a_stage + slot * S::b_stage);
#pragma unroll
    for (int ks = 0; ks < BK / 16; ks++) {
      uint32_t a[MT][4];
#pragma unroll
      for (int i = 0; i < MT; i++)
        ldmatrix_x4(
            a[i], as + (unsigned)(((wm * WTM + i * 16 + (lane & 15)) * APITCH +
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
  }
  __syncthreads(); // bad is complete
  // C. Columns of the tile where B held a non-finite value are left to the
  // loop after this one, which computes them again from A's rows; it is out
  // of line and not unrolled, so that the stores run through little code
  // (inlined into every store, it made the epilogue wait on instruction
  // fetches most of its time).
  const unsigned badmask =
      __ballot_sync(0xffffffffu, lane < C::BN / 8 && bad[lane]);
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int64_t row = m0 + wm * WTM + i * 16 + g + 8 * h;
      if (row >= p.m)
        continue;
      T *out = p.d.C + row * p.d.ldc;
#pragma unroll
      for (int j = 0; j < NT; j++) {
        const int tc = wn * WTN + j * 8 + 2 * q;
        const int64_t col = n0 + tc;
        if ((badmask >> (tc / 8)) & 1u)
          continue;
        const float v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        if (p.d.c_vec && col + 1 < p.d.n) { // the two columns in one store
                                            // (rows on 16 bytes, col even)
          typedef
              typename std::conditional<sizeof(T) == 4, uint2, uint32_t>::type
                  P2;
          P2 raw = p.d.beta != 0.0f ? *reinterpret_cast<const P2 *>(out + col)
                                    : P2{};
          T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
          for (int t = 0; t < 2; t++)
            e[t] = scaled(p.d, v[t], e + t);
          *reinterpret_cast<P2 *>(out + col) = raw;
        } else {
#pragma unroll
          for (int t = 0; t < 2; t++)
            if (col + t < p.d.n)
              out[col + t] = scaled(p.d, v[t], out + col + t);
        }
      }
    }
  if (badmask) // rare
    recompute_flagged<T, H, C>(p, m0 + wm * WTM + g, n0 + wn * WTN + 2 * q,
                               badmask >> (wn * WTN / 8));
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
  // the widest tiles that still give every SM two blocks (8 warps), else the
  // narrowest
  const int64_t rows = (p.m + 63) / 64;
  if (rows * ((p.d.n + 127) / 128) >= 2 * sms)
    return launch_tile<T, H, tile<128>>(p, d->stream);
  if (rows * ((p.d.n + 63) / 64) >= 2 * sms)
    return launch_tile<T, H, tile<64>>(p, d->stream);
  return launch_tile<T, H, tile<32>>(p, d->stream);
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

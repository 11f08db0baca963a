// What the dense path's two own GEMM kernels share: mma.sync
// (spmm_dense_mma.cu, sm_80 on) and wgmma (spmm_dense_wgmma.cu, sm_90a).
// Both copy A's and B's k-tiles into a ring of shared-memory slots with
// cp.async, each thread the same 16-byte pieces of every tile, and both end
// with each warp holding 16 x 8 accumulator tiles in mma.sync's layout, which
// the epilogue stores, recomputing from A's rows the elements whose sum is
// not finite.
#ifndef SPX_SPMM_DENSE_MMA_CUH
#define SPX_SPMM_DENSE_MMA_CUH

#include "backend/cuda/b_slab.cuh"
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
// copies. MIN_BLOCKS an SM leaves a thread its accumulators and about 96
// registers more.
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

// What this thread copies of each k-tile, in 16-byte pieces: of A's BM x BK
// (pieces of 8 H), rows a_row + i * A_STEP at column a_col; of B's BK x BN
// (pieces of V T), rows b_row + i * B_STEP at column b_col. S, the shared
// memory's layout, places them: S::a_at(row, column) and S::b_at in a slot,
// rows S::AP and S::RP elements apart (a layout must keep A_STEP and B_STEP
// rows on the same column). Everything but the k-tile's offset is set once,
// so that a whole tile's copies cost a few instructions each.
template <typename T, typename H, typename C, typename S> struct dmma_loads {
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
  bool inside;                // every row of A's pieces below m, B's pieces
                              // within n
  __device__ __forceinline__ dmma_loads(const dmma_params<T> &p, int64_t m0,
                                        int64_t n0) {
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
    inside = a_live == (AI == 32 ? ~0u : (1u << AI) - 1) && b_bytes == 16;
    a_smem = S::a_at(a_row, a_col);
    b_smem = S::b_at(b_row, b_col);
  }
};

// Start copying k-tile kt into ring slot `slot`, zeros past m, n and k: A's
// slots (S::a_stage bytes each) first, then B's (S::b_stage).
template <typename T, typename H, typename C, typename S>
__device__ __forceinline__ void
load_tile(const dmma_params<T> &p, const dmma_loads<T, H, C, S> &L,
          unsigned char *smem, int slot, int kt) {
  typedef dmma_loads<T, H, C, S> LD;
  const int k0 = kt * C::BK;
  H *As = reinterpret_cast<H *>(smem + slot * S::a_stage) + L.a_smem;
  T *Bs =
      reinterpret_cast<T *>(smem + C::STAGES * S::a_stage + slot * S::b_stage) +
      L.b_smem;
  const H *a = L.a + k0;
  const T *b = L.b + (int64_t)k0 * p.d.ldb;
  const bool whole = k0 + C::BK <= p.k;
  if (whole && L.inside) { // every piece whole: no bounds to apply
#pragma unroll
    for (int i = 0; i < LD::AI; i++)
      cp_async16(As + i * LD::A_STEP * S::AP, a + i * L.a_stride, 16);
#pragma unroll
    for (int i = 0; i < LD::BI; i++)
      cp_async16(Bs + i * LD::B_STEP * S::RP, b + i * L.b_stride, 16);
    return;
  }
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
template <typename T, typename H, int NT>
__device__ __noinline__ void recompute(const dmma_params<T> &p, int64_t row0,
                                       int64_t col0, uint64_t redo) {
#pragma unroll 1
  while (redo) {
    const int e = __ffsll((long long)redo) - 1;
    redo &= redo - 1;
    const int t = e & 1, j = (e >> 1) % NT, ih = (e >> 1) / NT;
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

// C from the block's accumulators (warp w of C's WM x WN holds its MT x NT
// mma tiles in mma.sync's layout). An element whose sum is not finite is
// left to recompute(): a non-finite value in B's column makes every row's
// sum there Inf or NaN (0 x Inf is NaN where A holds no entry), and the
// product has no such term there; a sum that overflowed comes out the same
// from A's row.
template <typename T, typename H, typename C>
__device__ __forceinline__ void store_c(const dmma_params<T> &p,
                                        const float (&acc)[C::MT][C::NT][4],
                                        int64_t m0, int64_t n0) {
  constexpr int WTM = C::BM / C::WM, WTN = C::BN / C::WN; // a warp's tile
  constexpr int MT = C::MT, NT = C::NT;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp % C::WM,
            wn = warp / C::WM, g = lane >> 2, q = lane & 3;
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
    recompute<T, H, NT>(p, row0, col0, redo);
}

// The parameters of either kernel from the plan's operands.
template <typename T>
dmma_params<T> dmma_params_from(const spx_cuda_csr *A,
                                const spx_cuda_densified *D,
                                const spx_cuda_dense_args *d, int64_t k) {
  dmma_params<T> p;
  p.A = D->vals;
  p.lda = D->ld;
  p.m = A->rows;
  p.k = k;
  p.d = dense_ops_from<T>(d);
  p.rowptr = A->rowptr;
  p.colidx = A->colidx;
  p.avals = static_cast<const T *>(A->vals);
  return p;
}

} // namespace

#endif

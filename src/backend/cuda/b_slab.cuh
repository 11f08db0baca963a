// Copies of rows of B into shared memory (TILED, BAND, GATHER_TC): a slab of
// slots of NV vectors of V elements each, one slot per row of B's column tile,
// PITCH elements apart.
#ifndef SPX_B_SLAB_CUH
#define SPX_B_SLAB_CUH

#include "backend/cuda/device_types.cuh"

namespace {

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}

// Start copying rows [k0, k1) x columns [c0, c0 + NV * V) of B (n columns,
// ld ldb): row k0 + r goes to slot (first_slot + r) & slot_mask; columns past
// n read as zeros. Asynchronous (cp.async) when vec and V elements are 16
// bytes, else element by element. THREADS threads share the work, this one
// being thread tid of them (the block's, or a warp's); copy_b_wait completes
// it.
template <typename T, int V, int NV, int THREADS, int PITCH = NV * V>
__device__ __forceinline__ void copy_b_rows(T *slab, int64_t first_slot, int64_t slot_mask, const T *B, int64_t ldb,
                                            int64_t n, bool vec, int64_t k0, int64_t k1, int64_t c0, int tid)
{
    const int64_t total = (k1 - k0) * NV;
    for (int64_t e = tid; e < total; e += THREADS) {
        const int64_t r = e / NV;
        const int cv = (int)(e % NV);
        const int64_t cc = c0 + (int64_t)cv * V, left = n - cc;
        const int cnt = left >= V ? V : (left > 0 ? (int)left : 0);
        T *dst = slab + ((first_slot + r) & slot_mask) * PITCH + cv * V;
        const T *src = B + (cnt ? (k0 + r) * ldb + cc : 0);
        if (V * sizeof(T) == 16 && vec) {
            cp_async16(dst, src, cnt * (int)sizeof(T));
        } else {
            typename acc_of<T>::type tmp[V];
            load_partial<T, V>(src, cnt, tmp);
#pragma unroll
            for (int t = 0; t < V; t++)
                dst[t] = from_acc<T>(tmp[t]);
        }
    }
}

// Close this thread's group of cp.async copies; wait until at most N groups
// are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// This thread's copies have landed (the caller synchronises the block).
__device__ __forceinline__ void copy_b_wait()
{
    cp_async_commit();
    cp_async_wait<0>();
}

} // namespace

#endif

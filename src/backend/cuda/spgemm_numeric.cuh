// The numeric phase for one value type: rows without products copy their
// accum row, the others run the row kernels of the semiring on the ordered
// or the unordered path (see has_ordered / has_unordered). Each
// spgemm_numeric_<type>.cu instantiates it for its type, so that the
// kernels of different types compile in parallel.
#ifndef SPX_SPGEMM_NUMERIC_CUH
#define SPX_SPGEMM_NUMERIC_CUH

#include "backend/cuda/spgemm_rows.cuh"

namespace spx_gemm {

template <class SR> cudaError_t numeric_run(const spx_gemm_dev *d, const spx_gemm_launch *L)
{
    const int64_t n0 = L->hi[0] - L->lo[0];
    if (n0 > 0 && (d->acc.ptr || d->act)) {
        cudaError_t e = spx__cuda_gemm_copy_rows(d, L->rows + L->lo[0], n0, sizeof(typename SR::T),
                                                 L->stream);
        if (e != cudaSuccess)
            return e;
    }
    if (L->ordered) {
        if constexpr (has_ordered<SR>())
            return launch_rows<SR, true, true>(d, L);
        else
            return cudaErrorInvalidValue;
    }
    if constexpr (has_unordered<SR>())
        return launch_rows<SR, true, false>(d, L);
    else
        return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t numeric_dispatch(spx_semiring_kind kind, const spx_gemm_dev *d, const spx_gemm_launch *L)
{
#define SPX_GEMM_CASE(K, S, T_, ADD, MUL)                                                        \
    if constexpr (std::is_same<T, T_>::value) {                                                  \
        if (kind == SPX_SEMIRING_##K)                                                            \
            return numeric_run<semiring<SPX_SEMIRING_##K, T_>>(d, L);                            \
    }
    SPX__BUILTIN_SEMIRINGS(SPX_GEMM_CASE)
#undef SPX_GEMM_CASE
    return cudaErrorInvalidValue;
}

} // namespace spx_gemm

#endif

// Numeric SpGEMM kernels over f32 values (see spgemm_numeric.cuh).
#include "backend/cuda/spgemm_numeric.cuh"

extern "C" cudaError_t spx__cuda_gemm_numeric_f32(spx_semiring_kind kind, const spx_gemm_dev *d,
                                                 const spx_gemm_launch *L)
{
    return spx_gemm::numeric_dispatch<float>(kind, d, L);
}

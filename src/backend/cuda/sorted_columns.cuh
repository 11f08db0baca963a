// Searches in a row's sorted column indices, shared by the SpMM planner's
// helpers and the SpGEMM row kernels.
#ifndef SPX_SORTED_COLUMNS_CUH
#define SPX_SORTED_COLUMNS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

// First position in [b, e) whose column is >= v (columns sorted).
__device__ __forceinline__ int64_t lower_bound_col(const int32_t *__restrict__ col, int64_t b, int64_t e, int32_t v)
{
    while (b < e) {
        const int64_t m = b + ((e - b) >> 1);
        if (__ldg(col + m) < v)
            b = m + 1;
        else
            e = m;
    }
    return b;
}

#endif

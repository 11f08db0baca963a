// Dynamic shared memory above the 48 KB a launch gets by default: the
// kernel's limit raised to what the device allows a block, once per device.
#ifndef SPX_DYNAMIC_SMEM_CUH
#define SPX_DYNAMIC_SMEM_CUH

#include <cuda_runtime.h>

#include <atomic>

namespace {

// Let `kernel` take dynamic shared memory up to what the device allows a
// block, so that a launch of `smem` bytes needs no other call. Every host
// thread sets the same value: setting each launch's own size raced (another
// thread could lower the limit between this one's call and its launch).
template <typename K> cudaError_t allow_dynamic_smem(K kernel, size_t smem)
{
    int dev = 0, optin = 0;
    cudaFuncAttributes fa;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess)
        e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess)
        return e;
    const size_t limit = (size_t)optin > fa.sharedSizeBytes ? (size_t)optin - fa.sharedSizeBytes : 0;
    if (smem > limit)
        return cudaErrorInvalidValue;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)limit);
}

// Launch Kernel with smem bytes of dynamic shared memory, its limit raised by
// allow_dynamic_smem on the first launch on each device (those calls took
// about 1 us of host time a launch, H100). A launch refused with
// cudaErrorInvalidValue after that raises it again: a device reset drops it.
template <auto Kernel, typename... Args>
cudaError_t launch_dynamic_smem(dim3 grid, dim3 block, size_t smem, cudaStream_t st, Args... args)
{
    static std::atomic<unsigned long long> raised{0}; // one bit per device; devices past 63 raise every time
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    const unsigned long long bit = dev >= 0 && dev < 64 ? 1ull << dev : 0;
    for (int attempt = 0; e == cudaSuccess && attempt < 2; attempt++) {
        if (!(raised.load() & bit)) {
            if ((e = allow_dynamic_smem(Kernel, smem)) != cudaSuccess)
                return e;
            raised.fetch_or(bit);
        }
        Kernel<<<grid, block, smem, st>>>(args...);
        e = cudaGetLastError();
        if (e != cudaErrorInvalidValue || !bit || attempt > 0)
            return e;
        raised.fetch_and(~bit);
        e = cudaSuccess;
    }
    return e;
}

} // namespace

#endif

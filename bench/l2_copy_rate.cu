/* How fast one SM can move 16 KB tiles from the L2 cache into shared memory,
 * the way the dense path's own GEMM kernels copy their k-tiles
 * (spmm_dense_wgmma.cu): each block streams STEPS tiles through a ring of
 * SLOTS slots, waiting for the oldest tile each step. Variants:
 * - cp.async of 16 bytes a thread, two block barriers a step (the second is
 *   more than the ring needs), contiguous tiles or 128 rows of 128 bytes 4 KB
 *   apart (as a k-tile of A lies), with or without the proxy fence the GEMM
 *   needs before wgmma reads a slot;
 * - one thread issuing cp.async.bulk copies that complete on an mbarrier:
 *   one of 16 KB, or 64 adjacent pieces of 256 bytes;
 * - the two blocks of a cluster each copying half of every tile with
 *   cp.async and writing it into the other's slot through distributed shared
 *   memory, two cluster barriers a step (one would do: each thread forwards
 *   what it copied itself), so that each SM reads half the bytes from L2;
 * - to price the cluster barriers, each block of a cluster copying whole
 *   tiles with two cluster barriers a step (arrive with release semantics, or
 *   relaxed, which is a timing probe, not a valid ordering), or one.
 * Tiles are read from 4 MB (8 MB allocated), which stays in L2. The grid is
 * one or two blocks for each of S SMs (all of them, or the first argument,
 * which must be even: the clusters pair blocks); the GPU places them, so with
 * S under the SM count the 2 S blocks may land on 2 S SMs. Prints the
 * aggregate rate of whole tiles and the rate an SM of the S, best of five
 * launches (CUDA events): a per-SM rate that rises as S falls means the SMs
 * share a cap (L2's), not each its own.
 *
 *   nvcc -O3 -arch=sm_90a -o l2_copy_rate bench/l2_copy_rate.cu && ./l2_copy_rate [S]
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define TILE 16384
#define SLOTS 4
#define TILES 256
#define STEPS 2000

// Byte offset of 16-byte piece j of tile t: contiguous tiles, or rows of 128
// bytes 4096 bytes apart (32 tiles side by side in a 4 KB-wide matrix).
template <bool ROWS> __device__ __forceinline__ size_t piece(int t, int j)
{
    return ROWS ? (size_t)(t % 32) * 128 + (size_t)(t / 32) * 128 * 4096 + (size_t)(j / 8) * 4096 + (j % 8) * 16
                : (size_t)t * TILE + (size_t)j * 16;
}

__device__ __forceinline__ int tile_of(int step) { return (blockIdx.x * 7 + step) % TILES; }

template <bool ROWS> __device__ __forceinline__ void copy_tile(unsigned slot, const char *src, int step)
{
    for (int j = threadIdx.x; j < TILE / 16; j += blockDim.x)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(slot + j * 16),
                     "l"(src + piece<ROWS>(tile_of(step), j)));
    asm volatile("cp.async.commit_group;\n");
}

template <bool FENCE, bool ROWS> __global__ void cp_async_stream(const char *src, int *sink)
{
    extern __shared__ __align__(128) char sm[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(sm);
    for (int s = 0; s < SLOTS - 1; s++)
        copy_tile<ROWS>(base + s * TILE, src, s);
    int acc = 0;
    for (int st = 0; st < STEPS; st++) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(SLOTS - 2));
        if (FENCE)
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        acc += sm[(st % SLOTS) * TILE + threadIdx.x * 4];
        __syncthreads(); // every thread is done with the slot refilled next
        if (st + SLOTS - 1 < STEPS)
            copy_tile<ROWS>(base + ((st + SLOTS - 1) % SLOTS) * TILE, src, st + SLOTS - 1);
        else
            asm volatile("cp.async.commit_group;\n");
    }
    if (acc == -1)
        *sink = acc;
}

// A barrier of the cluster's threads; RELAXED arrives without release
// semantics (the arrive then orders none of the thread's memory accesses).
template <bool RELAXED = false> __device__ __forceinline__ void cluster_sync()
{
    if (RELAXED)
        asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
    else
        asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// This block's half (by its rank in the cluster) of the tile of `step`, as
// rows of 128 bytes; both blocks of a cluster walk the same tiles.
__device__ __forceinline__ void copy_half(unsigned slot, const char *src, int step, unsigned rank)
{
    const int t = (blockIdx.x / 2 * 7 + step) % TILES;
    for (int j = threadIdx.x; j < TILE / 32; j += blockDim.x) {
        const int q = (int)rank * (TILE / 32) + j;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(slot + q * 16), "l"(src + piece<true>(t, q)));
    }
    asm volatile("cp.async.commit_group;\n");
}

// EXCHANGE: each block copies its half and writes it into the other's slot;
// without, each copies whole tiles (both halves) and only the barriers
// remain, which prices them. BARRIERS: cluster barriers a step (2: before and
// after the exchange; 1: the first is the block's own), RELAXED: their kind.
template <bool EXCHANGE, bool RELAXED, int BARRIERS>
__global__ void __cluster_dims__(2, 1, 1) cluster_stream(const char *src, int *sink)
{
    extern __shared__ __align__(128) char sm[];
    const unsigned base = (unsigned)__cvta_generic_to_shared(sm);
    unsigned rank, peer;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer) : "r"(base), "r"(rank ^ 1u));
    for (int s = 0; s < SLOTS - 1; s++) {
        copy_half(base + s * TILE, src, s, rank);
        if (!EXCHANGE)
            copy_half(base + s * TILE, src, s, rank ^ 1u);
    }
    int acc = 0;
    for (int st = 0; st < STEPS; st++) {
        const unsigned slot = (st % SLOTS) * TILE + rank * (TILE / 2);
        asm volatile("cp.async.wait_group %0;\n" ::"n"(EXCHANGE ? SLOTS - 2 : 2 * (SLOTS - 2)));
        if (BARRIERS == 2)
            cluster_sync<RELAXED>(); // this block's half is in place; the other is done with the slot written
        else
            __syncthreads();
        for (int j = threadIdx.x; EXCHANGE && j < TILE / 32; j += blockDim.x) {
            uint4 v;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                         : "r"(base + slot + j * 16));
            asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(peer + slot + j * 16), "r"(v.x),
                         "r"(v.y), "r"(v.z), "r"(v.w)
                         : "memory");
        }
        cluster_sync<RELAXED>(); // the other block's half is in this block's slot
        acc += sm[(st % SLOTS) * TILE + threadIdx.x * 4] + sm[(st % SLOTS) * TILE + TILE / 2 + threadIdx.x * 4];
        if (st + SLOTS - 1 < STEPS) {
            copy_half(base + ((st + SLOTS - 1) % SLOTS) * TILE, src, st + SLOTS - 1, rank);
            if (!EXCHANGE)
                copy_half(base + ((st + SLOTS - 1) % SLOTS) * TILE, src, st + SLOTS - 1, rank ^ 1u);
        } else {
            asm volatile("cp.async.commit_group;\n");
            if (!EXCHANGE)
                asm volatile("cp.async.commit_group;\n");
        }
    }
    cluster_sync(); // no block leaves while the other may still write to it
    if (acc == -1)
        *sink = acc;
}

__device__ __forceinline__ void bulk_tile(unsigned slot, unsigned bar, const char *src, int step, int rows)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(TILE) : "memory");
    const int bytes = TILE / rows;
    for (int r = 0; r < rows; r++)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         slot + r * bytes),
                     "l"(src + (size_t)tile_of(step) * TILE + r * bytes), "r"(bytes), "r"(bar)
                     : "memory");
}

__global__ void bulk_stream(const char *src, int rows, int *sink)
{
    extern __shared__ __align__(128) char sm[];
    __shared__ __align__(8) unsigned long long bar[SLOTS];
    const unsigned base = (unsigned)__cvta_generic_to_shared(sm), bars = (unsigned)__cvta_generic_to_shared(bar);
    if (threadIdx.x == 0)
        for (int s = 0; s < SLOTS; s++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars + s * 8));
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0)
        for (int s = 0; s < SLOTS - 1; s++)
            bulk_tile(base + s * TILE, bars + s * 8, src, s, rows);
    int acc = 0;
    for (int st = 0; st < STEPS; st++) {
        const unsigned bar_st = bars + (st % SLOTS) * 8, parity = (st / SLOTS) & 1;
        asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(
                         bar_st),
                     "r"(parity)
                     : "memory");
        acc += sm[(st % SLOTS) * TILE + threadIdx.x * 4];
        __syncthreads(); // every thread is done with the slot refilled next
        const int next = st + SLOTS - 1;
        if (threadIdx.x == 0 && next < STEPS)
            bulk_tile(base + (next % SLOTS) * TILE, bars + (next % SLOTS) * 8, src, next, rows);
    }
    if (acc == -1)
        *sink = acc;
}

int main(int argc, char **argv)
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (argc > 1) {
        const int asked = atoi(argv[1]);
        if (asked < 2 || asked > sms || asked % 2) { /* the clusters pair blocks */
            fprintf(stderr, "usage: l2_copy_rate [SMs: even, 2 to %d]\n", sms);
            return 2;
        }
        sms = asked;
    }
    char *src = NULL;
    int *sink = NULL;
    const size_t bytes_src = (size_t)TILES * TILE * 2;
    if (cudaMalloc(&src, bytes_src) != cudaSuccess || cudaMalloc(&sink, sizeof *sink) != cudaSuccess) {
        fprintf(stderr, "no device memory\n");
        return 1;
    }
    cudaMemset(src, 1, bytes_src);
    const size_t smem = SLOTS * TILE;
    cudaFuncSetAttribute(cp_async_stream<false, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cp_async_stream<true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cp_async_stream<false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cp_async_stream<true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(bulk_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cluster_stream<true, false, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cluster_stream<false, false, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cluster_stream<false, true, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    cudaFuncSetAttribute(cluster_stream<false, false, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    const char *name[] = {"cp.async, contiguous",       "cp.async, contiguous, fence", "cp.async, 128 B rows",
                          "cp.async, 128 B rows, fence", "bulk, 1 x 16 KB",            "bulk, 64 x 256 B",
                          "cluster: halves exchanged",      "cluster: whole, 2 barriers",
                          "cluster: whole, 2 relaxed",      "cluster: whole, 1 barrier"};
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    printf("%d SMs used, tiles of %d bytes through %d slots, 128 threads a block\n", sms, TILE, SLOTS);
    for (int per_sm = 1; per_sm <= 2; per_sm++)
        for (int v = 0; v < 10; v++) {
            const int grid = sms * per_sm;
            float best = 1e30f;
            for (int rep = 0; rep < 5; rep++) {
                cudaEventRecord(a);
                switch (v) {
                case 0: cp_async_stream<false, false><<<grid, 128, smem>>>(src, sink); break;
                case 1: cp_async_stream<true, false><<<grid, 128, smem>>>(src, sink); break;
                case 2: cp_async_stream<false, true><<<grid, 128, smem>>>(src, sink); break;
                case 3: cp_async_stream<true, true><<<grid, 128, smem>>>(src, sink); break;
                case 4: bulk_stream<<<grid, 128, smem>>>(src, 1, sink); break;
                case 5: bulk_stream<<<grid, 128, smem>>>(src, 64, sink); break;
                case 6: cluster_stream<true, false, 2><<<grid, 128, smem>>>(src, sink); break;
                case 7: cluster_stream<false, false, 2><<<grid, 128, smem>>>(src, sink); break;
                case 8: cluster_stream<false, true, 2><<<grid, 128, smem>>>(src, sink); break;
                default: cluster_stream<false, false, 1><<<grid, 128, smem>>>(src, sink); break;
                }
                cudaEventRecord(b);
                cudaEventSynchronize(b);
                float ms = 0;
                cudaEventElapsedTime(&ms, a, b);
                if (ms < best)
                    best = ms;
            }
            const cudaError_t e = cudaGetLastError();
            const double moved = (double)grid * STEPS * TILE;
            printf("%d block(s) an SM  %-30s %7.3f ms  %5.2f TB/s  %5.1f GB/s an SM%s%s\n", per_sm, name[v], best,
                   moved / best / 1e9, moved / best / 1e6 / sms, e ? "  error: " : "", e ? cudaGetErrorString(e) : "");
        }
    return 0;
}

/* The CUDA backend's frame: device selection, stream, device memory pool,
 * transfers, device copies of matrices, and its vtable. */
#include "backend/cuda/cuda_common.h"
#include "backend/cuda/dense_gemm.h"
#include "backend/cuda/spgemm_cuda.h"
#include "backend/cuda/spmm_cuda.h"
#include "format/matrix.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

spx_status spx__cuda_check(spx_ctx *ctx, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return SPX_OK;
    cudaGetLastError(); /* clear a sticky launch error so later calls are not blamed */
    if (e == cudaErrorMemoryAllocation)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "%s: out of device memory (%s)", what,
                         cudaGetErrorString(e));
    return spx__fail(ctx, SPX_ERR_BACKEND, "%s: CUDA error %d: %s", what, (int)e,
                     cudaGetErrorString(e));
}

spx_status spx__cuda_launch_check(spx_ctx *ctx, const char *kernel)
{
    static int sync_check = -1;
    if (sync_check < 0) {
        const char *env = getenv("SPX_CUDA_SYNC_CHECK");
        sync_check = env && *env == '1';
    }
    spx_status s = spx__cuda_check(ctx, cudaGetLastError(), kernel);
    if (!s && sync_check)
        s = spx__cuda_check(ctx, cudaStreamSynchronize(spx__cuda(ctx)->stream), kernel);
    return s;
}

/* ---- pool ---- */

/* The result pool of each device, made on first use and kept for the
 * process: results outlive their contexts, and a pool destroyed with blocks
 * still out is not something to rely on. */
#define RESULT_POOL_DEVICES 64
static _Atomic(cudaMemPool_t) result_pools[RESULT_POOL_DEVICES];
static atomic_int result_pool_none[RESULT_POOL_DEVICES]; /* the device has no pools */

/* The device's result pool if it was made (NULL otherwise). */
static cudaMemPool_t made_result_pool(int device)
{
    return device >= 0 && device < RESULT_POOL_DEVICES ? atomic_load(&result_pools[device]) : NULL;
}

/* After a failed allocation: return the memory both pools keep for reuse
 * to the device; nonzero if there was any to try again with. */
static int give_back_cached(spx_cuda_state *st)
{
    cudaGetLastError();
    uint64_t kept = 0;
    cudaMemPool_t results = made_result_pool(st->device);
    if (results)
        cudaMemPoolGetAttribute(results, cudaMemPoolAttrReservedMemCurrent, &kept);
    if (!st->pool.cached && !kept)
        return 0;
    cudaStreamSynchronize(st->stream);
    spx__cuda_pool_release(&st->pool);
    if (results)
        cudaMemPoolTrimTo(results, 0);
    return 1;
}

size_t spx__cuda_alloc_size(size_t bytes)
{
    size_t r = (bytes + 511) & ~(size_t)511;
    return r ? r : 512;
}

spx_status spx__cuda_alloc(spx_ctx *ctx, void **out, size_t bytes, const char *what)
{
    spx_cuda_pool *pool = &spx__cuda(ctx)->pool;
    size_t want = spx__cuda_alloc_size(bytes);
    /* best fit among cached blocks no more than twice the request */
    spx_cuda_block **best = NULL;
    for (spx_cuda_block **b = &pool->cached; *b; b = &(*b)->next)
        if ((*b)->size >= want && (*b)->size <= 2 * want && (!best || (*b)->size < (*best)->size))
            best = b;
    spx_cuda_block *blk = NULL;
    if (best) {
        blk = *best;
        *best = blk->next;
        pool->cached_bytes -= (int64_t)blk->size;
    } else {
        blk = spx__malloc(sizeof *blk);
        if (!blk)
            return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (pool record)");
        cudaError_t e = cudaMalloc(&blk->ptr, want);
        if (e == cudaErrorMemoryAllocation && give_back_cached(spx__cuda(ctx)))
            e = cudaMalloc(&blk->ptr, want);
        if (e != cudaSuccess) {
            spx__free(blk);
            spx_status s = spx__cuda_check(ctx, e, what);
            spx__error_prefix(ctx, "allocating %zu bytes of device memory (%lld in use)", want,
                              (long long)pool->in_use);
            return s;
        }
        blk->size = want;
    }
    blk->next = pool->live;
    pool->live = blk;
    pool->in_use += (int64_t)blk->size;
    if (pool->in_use > pool->peak)
        pool->peak = pool->in_use;
    *out = blk->ptr;
    return SPX_OK;
}

void spx__cuda_free(spx_ctx *ctx, void *p)
{
    if (!p)
        return;
    spx_cuda_pool *pool = &spx__cuda(ctx)->pool;
    for (spx_cuda_block **b = &pool->live; *b; b = &(*b)->next)
        if ((*b)->ptr == p) {
            spx_cuda_block *blk = *b;
            *b = blk->next;
            pool->in_use -= (int64_t)blk->size;
            /* reuse is safe without a sync: all work is ordered on one stream */
            blk->next = pool->cached;
            pool->cached = blk;
            pool->cached_bytes += (int64_t)blk->size;
            return;
        }
}

void spx__cuda_pool_release(spx_cuda_pool *pool)
{
    while (pool->cached) {
        spx_cuda_block *b = pool->cached;
        pool->cached = b->next;
        cudaFree(b->ptr);
        spx__free(b);
    }
    pool->cached_bytes = 0;
}

spx_status spx__cuda_malloc_persistent(spx_ctx *ctx, void **out, size_t bytes, const char *what)
{
    *out = NULL;
    if (bytes == 0)
        return SPX_OK;
    return spx__cuda_check(ctx, cudaMalloc(out, bytes), what);
}

void spx__cuda_free_persistent(void *p)
{
    if (p)
        cudaFree(p);
}

/* ---- results ---- */

/* A result array from the pool: wait for the device as cudaFree does, then
 * hand the block back to its pool (on the block's device). */
static void free_result(void *p)
{
    int dev = -1, cur = -1;
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) == cudaSuccess)
        dev = at.device;
    cudaGetDevice(&cur);
    if (dev >= 0 && dev != cur)
        cudaSetDevice(dev);
    cudaDeviceSynchronize();
    cudaFreeAsync(p, cudaStreamLegacy);
    if (dev >= 0 && dev != cur)
        cudaSetDevice(cur);
    cudaGetLastError();
}

static cudaMemPool_t result_pool(int device)
{
    if (device < 0 || device >= RESULT_POOL_DEVICES || atomic_load(&result_pool_none[device]))
        return NULL;
    cudaMemPool_t pool = atomic_load(&result_pools[device]);
    if (pool)
        return pool;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess ||
        !supported) {
        cudaGetLastError();
        atomic_store(&result_pool_none[device], 1);
        return NULL;
    }
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    /* keep freed blocks until an allocation needs the memory
     * (give_back_cached) or a context of the device ends */
    uint64_t keep = UINT64_MAX;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    cudaMemPool_t none = NULL;
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess ||
        !atomic_compare_exchange_strong(&result_pools[device], &none, pool)) {
        cudaGetLastError();
        cudaMemPoolDestroy(pool); /* unused: another thread's pool won, or no threshold */
        return atomic_load(&result_pools[device]);
    }
    return pool;
}

spx_status spx__cuda_result_alloc(spx_ctx *ctx, spx_matrix *C, void **arrays[], const size_t bytes[],
                                  int n, const char *what)
{
    spx_cuda_state *st = spx__cuda(ctx);
    cudaMemPool_t pool = result_pool(st->device);
    C->release_array = pool ? free_result : spx__cuda_free_persistent;
    /* one allocation, each array at a multiple of 256 bytes: an allocation
     * costs the host microseconds, which a small product feels */
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        *arrays[i] = NULL;
        total += bytes[i] ? (bytes[i] + 255) & ~(size_t)255 : 0;
    }
    if (!total)
        return SPX_OK;
    void *block = NULL;
    if (!pool) {
        spx_status s = spx__cuda_malloc_persistent(ctx, &block, total, what);
        if (s)
            return s;
    } else {
        cudaError_t e = cudaMallocFromPoolAsync(&block, total, pool, st->stream);
        if (e == cudaErrorMemoryAllocation && give_back_cached(st))
            e = cudaMallocFromPoolAsync(&block, total, pool, st->stream);
        if (e != cudaSuccess)
            return spx__cuda_check(ctx, e, what);
    }
    C->block = block;
    size_t at = 0;
    for (int i = 0; i < n; i++)
        if (bytes[i]) {
            *arrays[i] = (char *)block + at;
            at += (bytes[i] + 255) & ~(size_t)255;
        }
    return SPX_OK;
}

/* ---- side streams ---- */

static void destroy_side(spx_cuda_side *sd)
{
    for (int i = 0; i < SPX_CUDA_SIDE_STREAMS; i++) {
        if (sd->stream[i])
            cudaStreamDestroy(sd->stream[i]);
        if (sd->join[i])
            cudaEventDestroy(sd->join[i]);
    }
    if (sd->fork)
        cudaEventDestroy(sd->fork);
    memset(sd, 0, sizeof *sd);
}

spx_status spx__cuda_side_streams(spx_ctx *ctx, const spx_cuda_side **out)
{
    spx_cuda_state *st = spx__cuda(ctx);
    if (!st->has_side) {
        spx_cuda_side *sd = &st->side;
        memset(sd, 0, sizeof *sd);
        int least = 0, greatest = 0;
        /* the highest priority: their blocks (the longest rows) go first */
        cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        for (int i = 0; i < SPX_CUDA_SIDE_STREAMS && e == cudaSuccess; i++)
            if ((e = cudaStreamCreateWithPriority(&sd->stream[i], cudaStreamNonBlocking, greatest)) ==
                cudaSuccess)
                e = cudaEventCreateWithFlags(&sd->join[i], cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&sd->fork, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            destroy_side(sd);
            return spx__cuda_check(ctx, e, "creating side streams");
        }
        st->has_side = 1;
    }
    *out = &st->side;
    return SPX_OK;
}

spx_status spx__cuda_upload(spx_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes)
        return SPX_OK;
    return spx__cuda_check(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                                spx__cuda(ctx)->stream), "copy to device");
}

spx_status spx__cuda_download(spx_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes)
        return SPX_OK;
    return spx__cuda_check(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                                                spx__cuda(ctx)->stream), "copy to host");
}

spx_status spx__cuda_sync(spx_ctx *ctx)
{
    return spx__cuda_check(ctx, cudaStreamSynchronize(spx__cuda(ctx)->stream), "synchronize");
}

/* ---- backend entry points ---- */

static int cuda_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n > 0;
}

static spx_status cuda_init(spx_ctx *ctx, void **state)
{
    spx_cuda_state *st = spx__calloc(1, sizeof *st);
    if (!st)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (CUDA state)");
    spx_status s;
    struct cudaDeviceProp p;
    if ((s = spx__cuda_check(ctx, cudaGetDevice(&st->device), "selecting the device")) ||
        (s = spx__cuda_check(ctx, cudaGetDeviceProperties(&p, st->device), "reading device properties")) ||
        (s = spx__cuda_check(ctx, cudaStreamCreateWithFlags(&st->own_stream, cudaStreamDefault),
                             "creating a stream"))) {
        spx__free(st);
        return s;
    }
    /* a blocking stream: it orders with the caller's work on the legacy default
     * stream (plain cudaMemcpy), as cuSPARSE's and cuBLAS's default does */
    st->stream = st->own_stream;
    spx_device_info *in = &st->info;
    size_t nl = strnlen(p.name, sizeof in->name - 1);
    memcpy(in->name, p.name, nl);
    in->name[nl] = '\0';
    in->device = st->device;
    in->sm_count = p.multiProcessorCount;
    in->cc_major = p.major;
    in->cc_minor = p.minor;
    in->global_mem_bytes = (int64_t)p.totalGlobalMem;
    in->l2_bytes = p.l2CacheSize;
    in->smem_per_block_optin = (int64_t)p.sharedMemPerBlockOptin;
    in->smem_per_sm = (int64_t)p.sharedMemPerMultiprocessor;
    st->cooperative = p.cooperativeLaunch != 0;
    st->dense_fix_blocks = SPX_DENSE_FIX_BLOCKS_PER_SM * (int64_t)(p.multiProcessorCount > 0 ? p.multiProcessorCount : 1);
    *state = st;
    spx__log(ctx, SPX_LOG_INFO, "cuda device %d: %s, %d SMs, cc %d.%d", in->device, in->name,
             in->sm_count, in->cc_major, in->cc_minor);
    return SPX_OK;
}

static void cuda_fini(void *state)
{
    spx_cuda_state *st = state;
    if (!st)
        return;
    cudaStreamSynchronize(st->stream);
    spx__cuda_pool_release(&st->pool);
    while (st->pool.live) { /* leaked by a failed path: free anyway */
        spx_cuda_block *b = st->pool.live;
        st->pool.live = b->next;
        cudaFree(b->ptr);
        spx__free(b);
    }
    cudaMemPool_t results = made_result_pool(st->device);
    if (results)
        cudaMemPoolTrimTo(results, 0); /* freed results' memory back to the device */
    if (st->has_side)
        destroy_side(&st->side);
    spx__cuda_gemm_release(st->gemm);
    if (st->dense_flags)
        cudaFree(st->dense_flags);
    if (st->own_stream)
        cudaStreamDestroy(st->own_stream);
    spx__free(st);
}

static void *cuda_stream(spx_ctx *ctx) { return spx__cuda(ctx)->stream; }

static spx_status cuda_set_stream(spx_ctx *ctx, void *stream)
{
    spx_cuda_state *st = spx__cuda(ctx);
    /* finish work on the old stream: pooled blocks may be reused on the new one */
    SPX_CUDA_TRY(ctx, cudaStreamSynchronize(st->stream), "switching streams");
    st->stream = stream ? (cudaStream_t)stream : st->own_stream;
    return SPX_OK;
}

static spx_status cuda_device_info(spx_ctx *ctx, spx_device_info *out)
{
    *out = spx__cuda(ctx)->info;
    return SPX_OK;
}

static spx_status cuda_memory_stats(spx_ctx *ctx, spx_memory_stats *out, int reset_peak)
{
    spx_cuda_pool *pool = &spx__cuda(ctx)->pool;
    if (reset_peak)
        pool->peak = pool->in_use;
    if (out) {
        out->in_use = pool->in_use;
        out->peak = pool->peak;
        out->cached = pool->cached_bytes;
        cudaMemPool_t results = made_result_pool(spx__cuda(ctx)->device);
        uint64_t reserved = 0, used = 0;
        if (results &&
            cudaMemPoolGetAttribute(results, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
            cudaMemPoolGetAttribute(results, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
            reserved > used)
            out->cached += (int64_t)(reserved - used);
    }
    return SPX_OK;
}

/* ---- device copies of matrices ---- */

static spx_status copy_arrays(spx_ctx *ctx, const spx_matrix *A, spx_matrix *B, bool to_device)
{
    size_t isz = spx__index_size(A->itype), vsz = spx_dtype_size(A->dtype);
    struct {
        void *src, **dst;
        size_t bytes;
    } arr[] = {
        {A->offsets, &B->offsets, (size_t)spx__matrix_offsets_len(A) * isz},
        {A->indices, &B->indices, (size_t)spx__matrix_indices_len(A) * isz},
        {A->row_indices, &B->row_indices, A->row_indices ? (size_t)A->nnz * isz : 0},
        {A->values, &B->values, A->values ? (size_t)spx__matrix_values_len(A) * vsz : 0},
        {A->perm, &B->perm, A->perm ? (size_t)(A->nslices * A->sell_c) * isz : 0},
        {A->row_lengths, &B->row_lengths, A->row_lengths ? (size_t)(A->nslices * A->sell_c) * isz : 0},
    };
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        if (!arr[i].src)
            continue;
        spx_status s;
        if (to_device) {
            if ((s = spx__cuda_malloc_persistent(ctx, arr[i].dst, arr[i].bytes, "device matrix")))
                return s;
            SPX_CUDA_TRY(ctx, cudaMemcpy(*arr[i].dst, arr[i].src, arr[i].bytes, cudaMemcpyDefault),
                         "copying a matrix to the device");
        } else {
            if ((s = spx__alloc(ctx, arr[i].dst, (int64_t)arr[i].bytes, 1, "host matrix")))
                return s;
            SPX_CUDA_TRY(ctx, cudaMemcpy(*arr[i].dst, arr[i].src, arr[i].bytes, cudaMemcpyDeviceToHost),
                         "copying a matrix to the host");
        }
    }
    return SPX_OK;
}

static spx_status clone_header(spx_ctx *ctx, const spx_matrix *A, spx_memory mem, spx_matrix **out)
{
    spx_matrix *B = NULL;
    spx_status s = spx__matrix_new_like(ctx, A, SPX_INDEX_DEFAULT, SPX_DTYPE_DEFAULT, &B);
    if (s)
        return s;
    B->memory = mem;
    if (mem == SPX_MEM_DEVICE)
        B->release_array = spx__cuda_free_persistent;
    *out = B;
    return SPX_OK;
}

static spx_status cuda_matrix_to_device(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_matrix *B = NULL;
    spx_status s = spx__matrix_ensure_valid(ctx, A);
    if (s || (s = clone_header(ctx, A, SPX_MEM_DEVICE, &B)))
        return s;
    if ((s = copy_arrays(ctx, A, B, A->memory == SPX_MEM_HOST))) {
        spx_matrix_destroy(B);
        return s;
    }
    if (A->checked_version == A->version)
        B->checked_version = B->version;
    *out = B;
    return SPX_OK;
}

spx_status spx__cuda_matrix_to_host(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    spx_matrix *B = NULL;
    /* the context's stream may still be writing A, and need not order with
     * the copies (a caller's non-blocking stream) */
    spx_status s = ctx->backend == &spx__backend_cuda ? spx__cuda_sync(ctx) : SPX_OK;
    if (s || (s = clone_header(ctx, A, SPX_MEM_HOST, &B)))
        return s;
    if ((s = copy_arrays(ctx, A, B, false))) {
        spx_matrix_destroy(B);
        return s;
    }
    if (A->checked_version == A->version)
        B->checked_version = B->version;
    *out = B;
    return SPX_OK;
}

static spx_status cuda_synchronize(spx_ctx *ctx) { return spx__cuda_sync(ctx); }

const spx_backend_vtable spx__backend_cuda = {
    .kind = SPX_BACKEND_CUDA,
    .name = "cuda",
    .available = cuda_available,
    .init = cuda_init,
    .fini = cuda_fini,
    .spgemm = spx__cuda_spgemm,
    .spmm = spx__cuda_spmm,
    .spmm_plan_create = spx__cuda_spmm_plan_create,
    .spmm_plan_execute = spx__cuda_spmm_plan_execute,
    .spmm_plan_destroy = spx__cuda_spmm_plan_destroy,
    .matrix_to_device = cuda_matrix_to_device,
    .matrix_to_host = spx__cuda_matrix_to_host,
    .stream = cuda_stream,
    .set_stream = cuda_set_stream,
    .synchronize = cuda_synchronize,
    .device_info = cuda_device_info,
    .memory_stats = cuda_memory_stats,
};

/* SpMM on the CUDA backend: plan construction (operand preparation, row
 * binning by length on the GPU, one kernel choice per bin, or one forced
 * algorithm) and the explanation text. */
#include "backend/cuda/spmm_plan.h"
#include "format/convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bin_names[NBINS] = {"empty", "tiny", "small", "medium", "large", "huge"};

/* ---- small helpers ---- */


/* Persistent device array owned by the plan. */
spx_status spx__plan_alloc(spx_ctx *ctx, cuda_plan *P, void **out, size_t bytes, const char *what)
{
    *out = NULL;
    if (P->nowned == MAX_OWNED)
        return spx__fail(ctx, SPX_ERR_INTERNAL, "spmm plan: too many device arrays");
    spx_status s = spx__cuda_malloc_persistent(ctx, out, bytes, what);
    if (!s && *out)
        P->owned[P->nowned++] = *out;
    return s;
}

spx_status spx__plan_upload(spx_ctx *ctx, cuda_plan *P, void **out, const void *src, size_t bytes,
                              const char *what)
{
    spx_status s = spx__plan_alloc(ctx, P, out, bytes, what);
    if (!s && bytes)
        s = spx__cuda_check(ctx, cudaMemcpy(*out, src, bytes, cudaMemcpyHostToDevice), what);
    return s;
}

void spx__cuda_spmm_plan_destroy(void *plan)
{
    cuda_plan *P = plan;
    if (!P)
        return;
    for (int i = 0; i < P->nowned; i++)
        spx__cuda_free_persistent(P->owned[i]);
    spx__free(P);
}

static int pow2_at_least(int64_t x, int cap)
{
    int g = 1;
    while (g < cap && g < x)
        g *= 2;
    return g;
}

/* Lanes per row so that one group covers the N columns with 16-byte loads. */
int spx__plan_group_for_n(int64_t n, spx_dtype dtype)
{
    int64_t vec = 16 / (int64_t)spx_dtype_size(dtype);
    return pow2_at_least((n + vec - 1) / vec, 32);
}

/* Whether the values are 16-bit (f16 or bf16). */
static bool data16(const cuda_plan *P) { return P->dtype == SPX_F16 || P->dtype == SPX_BF16; }

/* Columns of a row kernels' tile when `group` lanes cover it (16 bytes a lane). */
static int64_t row_tile_cols(const cuda_plan *P, int group)
{
    return (int64_t)group * (16 / (int64_t)spx_dtype_size(P->dtype));
}

/* Column tiles of the row kernels when `group` lanes cover a tile. */
static int64_t column_tiles(const cuda_plan *P, int group)
{
    const int64_t tile = row_tile_cols(P, group);
    return (P->n + tile - 1) / tile;
}

/* Whether the row kernels at `group` lanes per column tile give every row and
 * tile a warp within two waves of the GPU's resident warps (64 per SM). */
static bool fits_two_waves(spx_ctx *ctx, const cuda_plan *P, int group)
{
    return P->m * column_tiles(P, group) <= 2 * 64 * spx__cuda_sm_count(ctx);
}

/* A product is small when the row kernels, at their narrowest tiles (8 lanes,
 * 128 bytes of B per entry), give every row and tile a warp within two waves
 * of the GPU's resident warps, and its reads of B (nnz x N values) take no
 * more than ~2.5 us at L2 bandwidth: its time is then the longest chain of
 * dependent loads. (Measured on an H200: row kernels with narrow tiles beat
 * merge path by 1.3-1.8x on such products, e.g. 1138_bus N=128 0.011 ->
 * 0.006 ms, and lost 10-25 % on DLMC layers just above 20 MB.) */
static bool small_product(spx_ctx *ctx, const cuda_plan *P)
{
    double b_bytes = (double)P->csr.nnz * (double)P->n * (double)spx_dtype_size(P->dtype);
    return fits_two_waves(ctx, P, 8) && b_bytes <= 20e6;
}

/* ---- host-side operand of op(A) as CSR (or compressed along k) ---- */

/* A host matrix whose arrays are the CSR of op(A) (outer = 0) or the CSR of
 * op(A)^T (outer = 1). Sets *tmp when a conversion was needed (caller frees). */
spx_status spx__plan_host_operand(spx_ctx *ctx, const spx_matrix *A, spx_op op, int outer,
                               const spx_matrix **csr, spx_matrix **tmp)
{
    spx_matrix *host = NULL, *conv = NULL;
    spx_status s = SPX_OK;
    *tmp = NULL;
    if (A->memory == SPX_MEM_DEVICE) {
        if ((s = spx__cuda_matrix_to_host(ctx, A, &host)))
            return s;
        A = host;
    }
    /* compressed "along rows of X" where X = op(A) (outer = 0) or op(A)^T */
    bool want_rows_of_A = (op == SPX_OP_NONE) != (outer != 0);
    spx_format direct = want_rows_of_A ? SPX_CSR : SPX_CSC;
    if (A->format != direct)
        s = spx_matrix_convert(ctx, A, direct, NULL, &conv);
    if (!s) {
        const spx_matrix *src = conv ? conv : A;
        if (src == host) {
            *tmp = host;
            host = NULL;
        } else if (conv) {
            *tmp = conv;
            conv = NULL;
        }
        *csr = src;
    }
    spx_matrix_destroy(conv);
    spx_matrix_destroy(host);
    return s;
}

spx_status spx__plan_host_csr(spx_ctx *ctx, const spx_matrix *A, spx_op op, const spx_matrix **csr,
                              spx_matrix **tmp)
{
    spx_matrix *host = NULL, *t = NULL, *c = NULL;
    spx_status s = SPX_OK;
    *tmp = NULL;
    if (A->memory == SPX_MEM_DEVICE) {
        if ((s = spx__cuda_matrix_to_host(ctx, A, &host)))
            return s;
        A = host;
    }
    if (op == SPX_OP_TRANSPOSE && (s = spx_matrix_transpose(ctx, A, &t)))
        goto done;
    const spx_matrix *src = t ? t : A;
    if (src->format != SPX_CSR && (s = spx_matrix_convert(ctx, src, SPX_CSR, NULL, &c)))
        goto done;
    if (c) {
        *tmp = c;
        *csr = c;
        c = NULL;
    } else if (t) {
        *tmp = t;
        *csr = t;
        t = NULL;
    } else if (host) {
        *tmp = host;
        *csr = host;
        host = NULL;
    } else {
        *csr = A;
    }
done:
    spx_matrix_destroy(c);
    spx_matrix_destroy(t);
    spx_matrix_destroy(host);
    return s;
}

/* Upload a host compressed matrix as kernel CSR (int64 offsets, int32 indices).
 * The arrays are CSR of X where X has `rows` rows and `cols` columns. */
spx_status spx__plan_upload_compressed(spx_ctx *ctx, cuda_plan *P, const spx_matrix *H, int64_t rows,
                                    int64_t cols, spx_cuda_csr *out)
{
    int64_t nnz = H->nnz;
    spx_status s;
    int64_t *ptr = NULL;
    int32_t *idx = NULL;
    out->rows = rows;
    out->cols = cols;
    out->nnz = nnz;
    out->vals = NULL;
    out->row_end = NULL;
    if (cols > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "the cuda backend needs fewer than 2^31 columns");
    if ((s = spx__alloc(ctx, (void **)&ptr, rows + 1, sizeof *ptr, "plan offsets")) ||
        (s = spx__alloc(ctx, (void **)&idx, nnz, sizeof *idx, "plan indices")))
        goto done;
    for (int64_t i = 0; i <= rows; i++)
        ptr[i] = spx__idx_get(H->offsets, H->itype, i);
    for (int64_t p = 0; p < nnz; p++)
        idx[p] = (int32_t)spx__idx_get(H->indices, H->itype, p);
    if ((s = spx__plan_upload(ctx, P, (void **)&out->rowptr, ptr, (size_t)(rows + 1) * sizeof *ptr, "plan offsets")) ||
        (s = spx__plan_upload(ctx, P, (void **)&out->colidx, idx, (size_t)nnz * sizeof *idx, "plan indices")))
        goto done;
    if (H->dtype != SPX_PATTERN)
        s = spx__plan_upload(ctx, P, &out->vals, H->values, (size_t)nnz * spx_dtype_size(H->dtype), "plan values");
done:
    spx__free(ptr);
    spx__free(idx);
    return s;
}

/* The device CSR of op(A): straight from a device CSR matrix when op is none
 * (only index types are adapted, on the device), else through the host. */
static spx_status prepare_csr(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, spx_cuda_csr *out)
{
    cudaStream_t st = spx__cuda(ctx)->stream;
    if (A->memory == SPX_MEM_DEVICE && A->format == SPX_CSR && P->op == SPX_OP_NONE) {
        if (A->cols > INT32_MAX)
            return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "the cuda backend needs fewer than 2^31 columns");
        out->rows = A->rows;
        out->cols = A->cols;
        out->nnz = A->nnz;
        out->vals = A->values;
        spx_status s;
        if (A->itype == SPX_INDEX_I64) {
            out->rowptr = A->offsets;
            if ((s = spx__plan_alloc(ctx, P, (void **)&out->colidx, (size_t)A->nnz * 4, "plan indices")))
                return s;
            SPX_CUDA_TRY(ctx, spx__cuda_narrow_i64(A->indices, out->colidx, A->nnz, st), "narrowing indices");
        } else {
            out->colidx = A->indices;
            if ((s = spx__plan_alloc(ctx, P, (void **)&out->rowptr, (size_t)(A->rows + 1) * 8, "plan offsets")))
                return s;
            SPX_CUDA_TRY(ctx, spx__cuda_widen_i32(A->offsets, out->rowptr, A->rows + 1, st), "widening offsets");
        }
        return spx__cuda_sync(ctx);
    }
    const spx_matrix *H;
    spx_matrix *tmp;
    spx_status s = spx__plan_host_operand(ctx, A, P->op, 0, &H, &tmp);
    if (!s)
        s = spx__plan_upload_compressed(ctx, P, H, P->m, P->k, out);
    spx_matrix_destroy(tmp);
    return s;
}

/* ---- row binning (AUTO and the forced row kernels) ---- */

/* The bins kernel: bin[] of every row, and the statistics (host[], as
 * spx__cuda_row_bins documents) on the host. */
static spx_status row_bins(spx_ctx *ctx, cuda_plan *P, const int64_t bounds[4], unsigned char *bin,
                           unsigned long long host[2 * NBINS + 1])
{
    cudaStream_t st = spx__cuda(ctx)->stream;
    size_t bytes = (2 * NBINS + 1) * sizeof *host;
    unsigned long long *counts = NULL;
    spx_status s;
    if (!(s = spx__cuda_alloc(ctx, (void **)&counts, bytes, "row bins")) &&
        !(s = spx__cuda_check(ctx, cudaMemsetAsync(counts, 0, bytes, st), "row bins")) &&
        !(s = spx__cuda_check(ctx, spx__cuda_row_bins(&P->csr, bounds, bin, counts, st), "row_bins kernel")) &&
        !(s = spx__cuda_download(ctx, host, counts, bytes)))
        s = spx__cuda_sync(ctx);
    spx__cuda_free(ctx, counts);
    if (!s)
        P->max_row = (int64_t)host[2 * NBINS];
    return s;
}

/* P->rows_sorted: the rows stably sorted by the byte key[] (key_bits bits). */
static spx_status sort_rows(spx_ctx *ctx, cuda_plan *P, const unsigned char *key, int key_bits)
{
    cudaStream_t st = spx__cuda(ctx)->stream;
    int64_t m = P->m;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    spx_status s;
    if (!(s = spx__plan_alloc(ctx, P, (void **)&P->rows_sorted, (size_t)m * sizeof(int32_t), "row order")) &&
        !(s = spx__cuda_check(
              ctx, spx__cuda_sort_rows_by_bin(key, m, key_bits, P->rows_sorted, NULL, &tmp_bytes, st),
              "sizing the row sort")) &&
        !(s = spx__cuda_alloc(ctx, &tmp, tmp_bytes, "row sort")) &&
        !(s = spx__cuda_check(
              ctx, spx__cuda_sort_rows_by_bin(key, m, key_bits, P->rows_sorted, tmp, &tmp_bytes, st),
              "sorting rows")))
        s = spx__cuda_sync(ctx);
    spx__cuda_free(ctx, tmp);
    return s;
}

/* Bins of every row and, with group_rows, the rows grouped by bin
 * (rows_sorted). When one bin holds every row, the grouping is the identity:
 * rows_sorted is NULL and the kernels read row numbers from their slots (one
 * dependent load less per row, no sort at plan time). Merge path reads only
 * the statistics and leaves the rows ungrouped. */
static spx_status build_bins(spx_ctx *ctx, cuda_plan *P, const int64_t bounds[4], bool group_rows)
{
    unsigned char *bin = NULL;
    unsigned long long host_counts[2 * NBINS + 1];
    spx_status s;
    if ((s = spx__cuda_alloc(ctx, (void **)&bin, (size_t)P->m, "row bins")) ||
        (s = row_bins(ctx, P, bounds, bin, host_counts)))
        goto done;
    int64_t offset = 0, used = 0;
    for (int b = 0; b < NBINS; b++) {
        P->bins[b].nrows = (int64_t)host_counts[b];
        P->bins[b].nnz = (int64_t)host_counts[NBINS + b];
        P->bins[b].offset = offset;
        offset += P->bins[b].nrows;
        used += P->bins[b].nrows > 0;
    }
    if (used > 1 && group_rows)
        s = sort_rows(ctx, P, bin, 4);
    else
        P->rows_sorted = NULL; /* 0, 1, ... (a list from an earlier build would be stale) */
done:
    spx__cuda_free(ctx, bin);
    return s;
}

/* TILED's narrowest column tile: 8 16-byte vectors of the type. */
static int64_t tiled_base_cols(spx_dtype t) { return 8 * (16 / (int64_t)spx_dtype_size(t)); }

/* TILED's shared memory per block: half an SM's (two blocks per SM; the
 * hardware keeps 1 KB a block), within the per-block limit. */
static int64_t tiled_smem_budget(spx_ctx *ctx)
{
    const spx_device_info *in = &spx__cuda(ctx)->info;
    int64_t budget = in->smem_per_sm / 2 - 1024;
    if (budget > in->smem_per_block_optin)
        budget = in->smem_per_block_optin;
    return budget < 48 * 1024 ? 48 * 1024 : budget;
}

/* TILED's wide blocks, for tiles of 8 vectors: where all of k (`row_bytes`
 * a row of the tile) misses half an SM's shared memory but fits a whole SM's,
 * a block of 512 threads holds all of k and cuts every row into two pieces
 * or more: twice the warps on one copy of B's tile, and no barriers between
 * chunks. They run one block an SM, so `blocks` (at 64 rows a block) must
 * make one wave or two at least 3/4 full. (256-thread blocks there held 8
 * warps an SM, waiting at each chunk. H200, DLMC layers of 128 and 256 rows
 * with k = 1024 and 1152: 128 and 256 blocks took 0.71-0.91 of AUTO's time;
 * 152 blocks of a 1200 x 1024 matrix took 1.42 of merge path's, their
 * second wave nearly empty. docs/PERFORMANCE.md) */
static bool tiled_wide(spx_ctx *ctx, const cuda_plan *P, int64_t row_bytes, int64_t blocks)
{
    const int64_t need = (P->k + 1) * row_bytes, sms = spx__cuda_sm_count(ctx); /* and a row of zeros */
    return need > tiled_smem_budget(ctx) && need <= spx__cuda(ctx)->info.smem_per_block_optin &&
           (blocks <= sms || (blocks < 2 * sms && 2 * blocks >= 3 * sms));
}

/* Blocks of TILED at its fewest rows and narrowest tile. */
static int64_t tiled_blocks(const cuda_plan *P)
{
    const int64_t q = SPX_CUDA_TILED_ROW_QUANTUM, cols = tiled_base_cols(P->dtype);
    return (P->m + q - 1) / q * ((P->n + cols - 1) / cols);
}

/* Whether all of k fits one chunk of TILED's narrowest tile (8 16-byte
 * vectors a row), in half an SM's shared memory or in a wide block. */
static bool tiled_one_chunk(spx_ctx *ctx, const cuda_plan *P)
{
    return (P->k + 1) * 8 * 16 <= tiled_smem_budget(ctx) || tiled_wide(ctx, P, 8 * 16, tiled_blocks(P));
}

/* Whether TILED's planned tile is 16 vectors instead of 8: for f32 at N >=
 * TILED_DOUBLE_TILE_MIN_N where k needs chunks at 8 vectors, no wide block
 * holds it, and 64-row blocks of 16-vector tiles still give the GPU one and a
 * half blocks an SM. Every chunk's pass over A's entries then serves twice
 * the columns. H100, DLMC layers of k = 1024-4608, 16 vectors against 8: at
 * N = 4096 1.07-1.15x at 10-50 % of the cells (the 10 % layers hold just
 * under 10 %), 0.97-1.13x at 5 %, 0.96x at 2 %; at N = 2048 1.07-1.28x where
 * such blocks number 256, 0.82x on the 256-row layers (128 blocks); at N =
 * 1024 (128 blocks or fewer) 0.40-1.0x (docs/PERFORMANCE.md). */
static bool tiled_double_tile(spx_ctx *ctx, const cuda_plan *P)
{
    const int64_t q = SPX_CUDA_TILED_ROW_QUANTUM, base = tiled_base_cols(P->dtype), rows = (P->m + q - 1) / q;
    const int64_t wide_tiles = (P->n + 2 * base - 1) / (2 * base);
    return P->dtype == SPX_F32 && P->n >= TILED_DOUBLE_TILE_MIN_N && !tiled_one_chunk(ctx, P) &&
           2 * rows * wide_tiles >= 3 * spx__cuda_sm_count(ctx);
}

/* A row's slots in TILED: `count` pieces of about `piece` entries each. */
typedef struct tiled_unit {
    int64_t piece;
    int32_t row, count;
} tiled_unit;

/* More pieces first (so that every row's pieces start at a multiple of their
 * count), then longer pieces first, then by row. */
static int tiled_unit_order(const void *a, const void *b)
{
    const tiled_unit *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->piece != y->piece)
        return x->piece > y->piece ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* TILED's slots (spx_cuda_tiled_slots) from the sorted units (`slots`
 * pieces in all), given the block shape. A team takes its slot's entries one
 * after another, and a warp's teams run to the longest of theirs, so: a row
 * longer than twice the average (and than one batch of SPX_CUDA_TILED_BATCH
 * entries) is cut into 2, 4 or 8 pieces (at most the warp's `teams`), and
 * slots are listed longest first, a warp's teams side by side. With all of k
 * in one chunk, warps' worth of slots are then dealt to the blocks in turn,
 * forwards then backwards, so that the blocks get about the same entries;
 * with chunks, a block's warps meet at a barrier after each chunk, so its
 * slots stay alike (the list cut in order: longest blocks first). (With whole
 * rows longest first, the 2048 x 512 DLMC layer at 90 % sparsity, whose
 * longest row holds 312 entries against an average of 51, kept the GPU 2.6
 * times as long as it was busy: ncu, N = 256. Dealt with chunks, the 512 x
 * 4608 layers lost 1.4x at N = 1024.) */
static spx_status build_tiled_slots(spx_ctx *ctx, cuda_plan *P, const int64_t *rowptr, const tiled_unit *units,
                                    int64_t nunits, int64_t slots, int teams)
{
    spx_cuda_tiled_shape *t = &P->tiled;
    const int64_t per_block = t->rows / teams, warps_needed = (slots + teams - 1) / teams;
    const int64_t blocks = warps_needed > 0 ? (warps_needed + per_block - 1) / per_block : 1;
    const int64_t count = blocks * t->rows;
    int32_t *row = spx__malloc((size_t)count * sizeof *row);
    int64_t *range = spx__calloc((size_t)count, 2 * sizeof *range);
    spx_status s = SPX_OK;
    if (!row || !range) {
        s = spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (tiled slots)");
        goto done;
    }
    for (int64_t i = 0; i < count; i++)
        row[i] = -1;
    const bool deal = t->kc >= P->k;
    int64_t j = 0; /* slot in the sorted list */
    for (int64_t u = 0; u < nunits; u++) {
        const int64_t r = units[u].row, first = rowptr[r], len = rowptr[r + 1] - first;
        for (int q = 0; q < units[u].count; q++, j++) {
            const int64_t w = j / teams, round = w / blocks, b = round % 2 ? blocks - 1 - w % blocks : w % blocks;
            const int64_t slot = deal ? b * t->rows + round * teams + j % teams : j;
            row[slot] = (int32_t)r;
            range[2 * slot] = first + len * q / units[u].count;
            range[2 * slot + 1] = first + len * (q + 1) / units[u].count;
        }
    }
    P->tiled_slots = count;
    if (!(s = spx__plan_upload(ctx, P, (void **)&P->tiled_row, row, (size_t)count * sizeof *row, "tiled slots")))
        s = spx__plan_upload(ctx, P, (void **)&P->tiled_range, range, (size_t)count * 2 * sizeof *range,
                             "tiled slots");
done:
    spx__free(row);
    spx__free(range);
    return s;
}

/* op(A)'s row offsets copied to the host into *rowptr (m + 1 of them; the
 * caller frees them), for the plans that lay out rows there. */
static spx_status download_row_offsets(spx_ctx *ctx, const cuda_plan *P, int64_t **rowptr)
{
    spx_status s = SPX_OK;
    if (!(*rowptr = spx__malloc((size_t)(P->m + 1) * sizeof **rowptr)))
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (row offsets)");
    (*rowptr)[0] = 0;
    if (P->m > 0 && ((s = spx__cuda_download(ctx, *rowptr, P->csr.rowptr, (size_t)(P->m + 1) * sizeof **rowptr)) ||
                     (s = spx__cuda_sync(ctx)))) {
        spx__free(*rowptr);
        *rowptr = NULL;
    }
    return s;
}

/* TILED's block shape and slots. Columns: 8 16-byte vectors (forced: the
 * caller's panel width, 8, 16 or 32 vectors). Rows (slots): enough that each
 * element of the B tile a block copies is used about 8 times (rows x density
 * >= 8), from 64 to 512, halved while the grid would not fill the GPU once at
 * two blocks per SM. k: all of it when the tile's k rows fit in half an SM's
 * shared memory (two blocks per SM) or, in wide blocks (tiled_wide), in a
 * whole SM's; else chunks that fill that half beside the slots' partial sums
 * (fewer slots if the chunks would be short). */
static spx_status prepare_tiled(spx_ctx *ctx, cuda_plan *P, int64_t forced, char *why, size_t whylen)
{
    spx_cuda_tiled_shape *t = &P->tiled;
    int64_t es = (int64_t)spx_dtype_size(P->dtype), acc = P->dtype == SPX_F64 ? 8 : 4, base = tiled_base_cols(P->dtype);
    t->cols = base;
    if (forced > 0) {
        if (forced != base && forced != 2 * base && forced != 4 * base)
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "tiled: the panel width must be %lld, %lld or %lld columns for %s (got %lld)",
                             (long long)base, (long long)(2 * base), (long long)(4 * base),
                             spx_dtype_name(P->dtype), (long long)forced);
        t->cols = forced;
    } else if (tiled_double_tile(ctx, P)) {
        t->cols = 2 * base;
    }
    const int teams = 32 / spx__cuda_tiled_team_lanes(t->cols / (16 / es)); /* slots of a warp */

    /* the rows' lengths */
    const int64_t m = P->m;
    int64_t *rowptr = NULL;
    tiled_unit *units = NULL;
    spx_status s = download_row_offsets(ctx, P, &rowptr);
    if (s)
        goto done;
    if (!(units = spx__malloc((size_t)(m > 0 ? m : 1) * sizeof *units))) {
        s = spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (tiled slots)");
        goto done;
    }
    int64_t budget = tiled_smem_budget(ctx);
    double density = P->m && P->k ? (double)P->csr.nnz / ((double)P->m * (double)P->k) : 1.0;
    const int64_t q = SPX_CUDA_TILED_ROW_QUANTUM;
    int64_t tiles = (P->n + t->cols - 1) / t->cols, mq = (m + q - 1) / q * q;
    t->rows = q;
    while (t->rows < 512 && t->rows < mq && (double)t->rows * density < 8.0)
        t->rows *= 2;
    while (t->rows > q && (m + t->rows - 1) / t->rows * tiles < 2 * spx__cuda_sm_count(ctx))
        t->rows /= 2;
    int64_t row_bytes = t->cols * es;
    const bool wide = t->cols == base && tiled_wide(ctx, P, row_bytes, (m + t->rows - 1) / t->rows * tiles);
    t->threads = wide ? 512 : 256;
    if (wide) {
        t->rows *= 2; /* slots */
        t->kc = P->k;
    } else if ((P->k + 1) * row_bytes <= budget) { /* k rows and a row of zeros */
        t->kc = P->k > 0 ? P->k : 1;
    } else {
        for (;;) {
            t->kc = (budget - t->rows * (t->cols * acc + 8)) / row_bytes - 1;
            if (t->kc >= 64 || t->rows == q)
                break;
            t->rows /= 2;
        }
        if (t->kc < 1)
            t->kc = 1;
    }
    /* rows cut into pieces; with chunks of k, only while the pieces fit the
     * last block's spare slots: a further block would copy every chunk of B's
     * tile again (1.25-1.5x the copies on the 128- to 512-row DLMC layers) */
    const int64_t average = m > 0 ? (P->csr.nnz + m - 1) / m : 0;
    int64_t cap = 2 * average > SPX_CUDA_TILED_BATCH ? 2 * average : SPX_CUDA_TILED_BATCH, cut = 0, slots = 0;
    for (int pass = 0; pass < 2; pass++) {
        slots = cut = 0;
        for (int64_t i = 0; i < m; i++) {
            const int64_t len = rowptr[i + 1] - rowptr[i];
            int count = wide ? 2 : 1;
            while (count < teams && len > count * cap)
                count *= 2;
            units[i] = (tiled_unit){(len + count - 1) / count, (int32_t)i, count};
            slots += count;
            cut += count > (wide ? 2 : 1);
        }
        if (t->kc >= P->k || (slots + t->rows - 1) / t->rows <= (m + t->rows - 1) / t->rows)
            break;
        cap = INT64_MAX;
    }
    qsort(units, (size_t)m, sizeof *units, tiled_unit_order);
    size_t smem = spx__cuda_tiled_smem(t, P->k, P->dtype);
    if ((int64_t)smem > spx__cuda(ctx)->info.smem_per_block_optin) {
        s = spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                      "tiled: a tile of %lld columns of %s needs %zu bytes of shared memory a block, the device "
                      "allows %lld; force a narrower panel",
                      (long long)t->cols, spx_dtype_name(P->dtype), smem,
                      (long long)spx__cuda(ctx)->info.smem_per_block_optin);
        goto done;
    }
    if ((s = build_tiled_slots(ctx, P, rowptr, units, m, slots, teams)))
        goto done;
    int len = snprintf(why, whylen, "blocks of %d threads, %lld rows x %lld columns, hold ", t->threads,
                       (long long)(wide ? t->rows / 2 : t->rows), (long long)t->cols);
    if (wide)
        len += snprintf(why + len, whylen - (size_t)len,
                        "all of B's column tile in a whole SM's shared memory, every row in 2 pieces or more");
    else if (t->kc >= P->k)
        len += snprintf(why + len, whylen - (size_t)len, "all of B's column tile in shared memory");
    else
        len += snprintf(why + len, whylen - (size_t)len, "B's column tile in shared memory, %lld rows of k at a time",
                        (long long)t->kc);
    if (cut && len < (int)whylen)
        snprintf(why + len, whylen - (size_t)len, "; %lld rows of over %lld entries cut into up to %d pieces",
                 (long long)cut, (long long)cap, teams);
done:
    spx__free(rowptr);
    spx__free(units);
    return s;
}

/* The share of op(A)'s cells that hold entries (m, k > 0). */
static double cell_share(const cuda_plan *P)
{
    return (double)P->csr.nnz / ((double)P->m * (double)P->k);
}

/* AUTO takes TILED on f32, f16 and bf16 data when N >= TILED_MIN_N, A holds at least
 * TILED_MIN_DENSITY of its cells (each block's copy of B's tile is then used
 * several times over), with all of k in one shared-memory chunk or at least
 * TILED_CHUNKED_MIN_DENSITY of the cells (every further chunk costs a refill
 * that the block waits on and a pass over each row), and the grid, at the
 * fewest rows a block, gives at least every other SM a block (else too few
 * SMs share the work). Denser matrices take the dense path first. Measured on
 * an H100 over the DLMC layers at N = 256, 1024 and 4096 (docs/PERFORMANCE.md):
 * within those bounds TILED was ahead of merge path on most layers, behind on
 * most others (at N = 256 the 512-row layers give 64 blocks); on f16 and bf16
 * data (H200, same layers) the same bounds held, with tiles of 64 columns. */
static bool tiled_pays(spx_ctx *ctx, const cuda_plan *P, char *why, size_t whylen)
{
    if (P->dtype == SPX_F64 || P->n < TILED_MIN_N || P->m <= 0 || P->k <= 0)
        return false;
    const double density = cell_share(P);
    const int64_t blocks = tiled_blocks(P);
    const bool one_chunk = tiled_one_chunk(ctx, P);
    const double chunked_min = tiled_double_tile(ctx, P) ? TILED_DOUBLE_TILE_MIN_DENSITY : TILED_CHUNKED_MIN_DENSITY;
    if (density < TILED_MIN_DENSITY || (!one_chunk && density < chunked_min) || 2 * blocks < spx__cuda_sm_count(ctx))
        return false;
    snprintf(why, whylen, "chosen because A holds %.1f%% of its cells, N >= %d and %lld blocks fill the GPU: %s",
             100.0 * density, TILED_MIN_N, (long long)blocks,
             one_chunk ? "all of k fits in shared memory" : "dense enough for chunks of k");
    return true;
}

/* The batches' value types: f32, and 16-bit data (the same column tiles
 * either way, accumulated in f32). */
static bool batches_type(spx_dtype t) { return t == SPX_F32 || t == SPX_F16 || t == SPX_BF16; }

static int64_t batches_blocks(int64_t slots, int64_t rows, int64_t tiles)
{
    return (slots + rows - 1) / rows * tiles;
}
batches_shape spx__batches_shape_of(spx_ctx *ctx, const cuda_plan *P, int64_t slots)
{
    const int64_t sms = spx__cuda_sm_count(ctx);
    batches_shape b = {0};
    b.cols = spx__cuda_batch_tile_cols(P->n);
    b.tiles = (P->n + b.cols - 1) / b.cols;
    b.density = P->m > 0 && P->k > 0 ? cell_share(P) : 0.0;
    b.short_rows = b.density < ROW_BATCHES_MIN_DENSITY && P->k < ROW_BATCHES_MIN_K;
    if (b.short_rows) {
        b.rows = 16;
        b.batch = 8;
        b.blocks = batches_blocks(slots, b.rows, b.tiles);
    } else {
        b.rows = (double)batches_blocks(slots, 32, b.tiles) >= ROW_BATCHES_MIN_WAVES * (double)sms ? 32 : 16;
        b.blocks = batches_blocks(slots, b.rows, b.tiles);
        b.batch = b.rows == 16 && b.blocks <= sms ? 32 : 16;
    }
    b.threads = (int)b.rows * SPX_CUDA_BATCH_LANES(b.batch, (int)b.cols);
    b.blocks_per_sm = SPX_CUDA_BATCH_BLOCKS_PER_SM(b.threads, b.batch);
    b.slice_bytes = (double)P->k * (double)b.cols * (double)spx_dtype_size(P->dtype);
    return b;
}

/* The batches' shape in words; returns the length written. */
static int describe_row_batches(const batches_shape *b, char *why, size_t whylen)
{
    return snprintf(why, whylen,
                    "a team of %d lanes per row and column tile of %lld, the row's entries staged %d at a time in "
                    "shared memory and %d B row segments in flight a lane, %lld rows a block of %d threads (%lld "
                    "blocks, %d an SM)",
                    SPX_CUDA_BATCH_LANES(b->batch, (int)b->cols), (long long)b->cols, b->batch, b->batch,
                    (long long)b->rows, b->threads, (long long)b->blocks, b->blocks_per_sm);
}

/* The waves the batches' blocks make: the blocks over those the SMs hold at
 * once. */
static double batches_waves(spx_ctx *ctx, const batches_shape *b)
{
    return (double)b->blocks / (double)(spx__cuda_sm_count(ctx) * b->blocks_per_sm);
}

/* Whether a column tile's slice of B (k rows) takes at most
 * ROW_BATCHES_L2_SHARE of the L2 cache, so that the batches' gathers find it
 * there. */
static bool slice_in_l2(spx_ctx *ctx, const batches_shape *b)
{
    const double l2 = (double)spx__cuda(ctx)->info.l2_bytes;
    return l2 > 0 && b->slice_bytes <= ROW_BATCHES_L2_SHARE * l2;
}

/* A team's share of the batches' entries: those of every column tile over
 * the teams resident on the SMs at once. */
static double row_batches_share(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    const double resident = (double)spx__cuda_sm_count(ctx) * (double)(b->rows * b->blocks_per_sm);
    return (double)P->csr.nnz * (double)b->tiles / resident;
}

/* The entries beyond which a run on one team is a tail to the batches:
 * ROW_BATCHES_MAX_TAIL times a team's share, at least ROW_BATCHES_NO_TAIL_ROW
 * (a row of a few batches is none; a team serves its slot alone, and the GPU
 * waits for the longest). */
static double row_batches_tail(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    const double tail = ROW_BATCHES_MAX_TAIL * row_batches_share(ctx, P, b);
    return tail > ROW_BATCHES_NO_TAIL_ROW ? tail : ROW_BATCHES_NO_TAIL_ROW;
}

/* The blocks the busiest SM runs, one after another or side by side, in the
 * batches' grid: the blocks over the SMs, rounded up. */
static int64_t batches_rounds(spx_ctx *ctx, const batches_shape *b)
{
    const int64_t sms = spx__cuda_sm_count(ctx);
    return (b->blocks + sms - 1) / sms;
}

/* The rows (slots) the busiest SM runs in the batches' grid. */
static int64_t busiest_sm_rows(spx_ctx *ctx, const batches_shape *b)
{
    return batches_rounds(ctx, b) * b->rows;
}

/* The slots of m rows cut into q pieces each, laid as lay_batch_slots lays
 * them: a cut row's pieces never cross an aligned group of
 * SPX_CUDA_BATCH_PIECE_TEAMS slots. (Rows cut into fewer pieces take no
 * more slots: a group holds at least SPX_CUDA_BATCH_PIECE_TEAMS / q of
 * them.) */
_Static_assert(ROW_BATCHES_ROUNDS_MAX_PIECES <= SPX_CUDA_BATCH_PIECE_TEAMS, "a row's pieces fit a group");
static int64_t pieces_slots(int64_t m, int64_t q)
{
    const int64_t per = SPX_CUDA_BATCH_PIECE_TEAMS / q;
    return m / per * SPX_CUDA_BATCH_PIECE_TEAMS + m % per * q;
}

/* The time of the batches' grid in a model where an SM's throughput is the
 * same whatever the teams it holds (16 or more): the rows the busiest SM
 * runs times a piece's cost, its entries (rows of `entries` on average cut
 * into `pieces`) plus ROW_BATCHES_PIECE_COST entries' worth. */
static double batches_time(spx_ctx *ctx, const batches_shape *b, double entries, int64_t pieces)
{
    return (double)busiest_sm_rows(ctx, b) * (entries / (double)pieces + ROW_BATCHES_PIECE_COST);
}

/* The entries a row of op(A) holds on average (0 without rows). */
static double entries_per_row(const cuda_plan *P)
{
    return P->m > 0 ? (double)P->csr.nnz / (double)P->m : 0.0;
}

/* The pieces q, 2 to ROW_BATCHES_ROUNDS_MAX_PIECES, to cut rows into (rows
 * over the longest's q-th part, into up to q) where that takes the least
 * time in batches_time's model, less than the uncut grid's (no margin: H200,
 * 37 pruned products it put at 0.90-0.99 of the uncut time ran 1.096x as
 * fast cut, 0.96-1.25x, and 60 others, not used to choose the rule, 1.100x,
 * 1.03-1.33x; docs/PERFORMANCE.md), and the rows are of about equal length
 * (the longest at most ROW_BATCHES_ROUNDS_MAX_SPREAD times the average: the
 * model's pieces are the average row's); else 1. Rows of about equal length
 * in 1.2 waves of blocks of 512 threads (one an SM) take two rounds, the
 * second on a fifth of the SMs; cut in three they take four rounds of a
 * third of the length. *cut: the grid over the pieces. */
static int64_t rounds_pieces(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b, batches_shape *cut)
{
    const double entries = entries_per_row(P);
    if ((double)P->max_row > ROW_BATCHES_ROUNDS_MAX_SPREAD * entries)
        return 1;
    double best = batches_time(ctx, b, entries, 1);
    int64_t pieces = 1;
    for (int64_t q = 2; q <= ROW_BATCHES_ROUNDS_MAX_PIECES; q++) {
        const batches_shape shape = spx__batches_shape_of(ctx, P, pieces_slots(P->m, q));
        const double time = batches_time(ctx, &shape, entries, q);
        if (time < best) {
            best = time;
            pieces = q;
            *cut = shape;
        }
    }
    return pieces;
}

/* Where the batches cut rows (spx__lay_cut_slots): the first bound on a piece's
 * entries (0: no row cut; rows over it become equal pieces within it), the
 * most it may be doubled to, the waves the grid over the pieces may make
 * (fill and tail cuts) or the rows it may put on the busiest SM (`sm_rows`,
 * rounds cuts, with the pieces a row may make), and why rows are cut. Short
 * rows are never cut. Where the rows make at most ROW_BATCHES_FILL_MAX_WAVES
 * waves (`BATCH_CUT_FILL`): a bound of
 * ROW_BATCHES_FILL_MIN_CAP (at least a 16th of the longest row), below the
 * longest row, within one wave, so that the teams the GPU holds at once share
 * the longest rows' entries (that bound's doubling always ends within one
 * wave: at half the longest row every row is two pieces at most). Else,
 * where the longest row is a tail (`BATCH_CUT_TAIL`): a bound of
 * ROW_BATCHES_PIECE_SHARE times a team's share (at least
 * ROW_BATCHES_NO_TAIL_ROW), up to the tail, within
 * ROW_BATCHES_PIECE_MAX_WAVES waves, or in a column tile of N <= 32 within
 * ROW_BATCHES_NARROW_CUT_GROWTH times the whole rows' waves where that is
 * more (R-MAT 16 at N = 8 and 16: whole rows 3.88 waves, cut 4.09; the
 * forced batches 0.61-0.63x of merge path's time, H200). Else, where
 * cutting every row into q pieces pays for the rounds of blocks
 * (rounds_pieces, `BATCH_CUT_ROUNDS`):
 * a bound of the longest row over q (so no row makes more than q pieces),
 * not doubled, where the busiest SM runs no more rows than rounds_pieces
 * counted (`sm_rows`). Where a fill or rounds cut passes its bound on the
 * grid at every bound, the rows stay whole; a tail cut, unless forced,
 * drops the batches. */
batch_cut spx__row_batches_cut(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    batch_cut c = {0};
    if (b->short_rows || P->max_row < 2)
        return c;
    if (batches_waves(ctx, b) <= ROW_BATCHES_FILL_MAX_WAVES) {
        const int64_t least = (P->max_row + SPX_CUDA_BATCH_PIECE_TEAMS - 1) / SPX_CUDA_BATCH_PIECE_TEAMS;
        c.kind = BATCH_CUT_FILL;
        c.cap = least > ROW_BATCHES_FILL_MIN_CAP ? least : ROW_BATCHES_FILL_MIN_CAP;
        c.limit = P->max_row - 1;
        c.waves = 1.0;
        if (c.cap > c.limit)
            c.cap = 0;
        return c;
    }
    const double tail = row_batches_tail(ctx, P, b);
    if ((double)P->max_row > tail) {
        const double cap = ROW_BATCHES_PIECE_SHARE * row_batches_share(ctx, P, b);
        c.kind = BATCH_CUT_TAIL;
        c.cap = cap > ROW_BATCHES_NO_TAIL_ROW ? (int64_t)cap : ROW_BATCHES_NO_TAIL_ROW;
        c.limit = (int64_t)tail;
        c.waves = ROW_BATCHES_PIECE_MAX_WAVES;
        if (b->cols < SPX_CUDA_BATCH_COLS && ROW_BATCHES_NARROW_CUT_GROWTH * batches_waves(ctx, b) > c.waves)
            c.waves = ROW_BATCHES_NARROW_CUT_GROWTH * batches_waves(ctx, b);
        return c;
    }
    batches_shape cut;
    if ((c.pieces = rounds_pieces(ctx, P, b, &cut)) > 1) {
        c.kind = BATCH_CUT_ROUNDS;
        c.cap = c.limit = (P->max_row + c.pieces - 1) / c.pieces;
        c.sm_rows = busiest_sm_rows(ctx, &cut);
    }
    return c;
}

/* Whether the row kernels' warp on the longest row would run
 * MERGE_LONG_ROW_MIN_ROUNDS rounds of loads or more (its sub-groups, 32 over
 * the lanes covering N, split the entries) on a row of over
 * MERGE_LONG_ROW_SM_SHARE of an SM's share of the entries: merge path's
 * place (merge_pays). */
static bool longest_row_holds_warp(spx_ctx *ctx, const cuda_plan *P)
{
    const int64_t subgroups = 32 / spx__plan_group_for_n(P->n, P->dtype);
    return P->max_row >= MERGE_LONG_ROW_MIN_ROUNDS * subgroups &&
           (double)P->max_row > MERGE_LONG_ROW_SM_SHARE * (double)P->csr.nnz / (double)spx__cuda_sm_count(ctx);
}

/* The batches in a column tile of N <= 32 (shape b), once the longest row
 * is known. Where it would hold a row kernels' warp (longest_row_holds_warp:
 * merge path's place), at any waves and any slice of B, if the
 * SPX_CUDA_BATCH_PIECE_TEAMS pieces the tail cut makes of it at most hold
 * ROW_BATCHES_NARROW_PIECE_TAILS times the tail bound (row_batches_tail).
 * H200, f32, N = 8-32, the batches forced against merge path: R-MAT of
 * scale 13-20 (4-27 entries a row, the longest 939-39584; 0.5-124 waves,
 * B's slice up to 8.5 times the L2 bound) 0.55-0.91x of its time on all 60
 * products; arrow (its longest row a third of the entries: 16 pieces of
 * 2906, the tail bound 128) 3.8-4.3x. Elsewhere B's slice within
 * ROW_BATCHES_L2_SHARE of L2, and: within ROW_BATCHES_SMALL_N_MAX_WAVES
 * waves, any rows; at any waves, rows of ROW_BATCHES_NARROW_LONG_AVG entries
 * or more on average where the slice is at most ROW_BATCHES_NARROW_L1_SLICE
 * (past 4 waves, forced: pruned layers of 49152-131072 rows, k = 256-1024,
 * 51-102 entries a row, 5.8-15.5 waves, 0.76-0.94x of the time of a group a
 * row and 0.39-0.59x of merge path's on all 14 products; uniform, banded and
 * block-sparse rows of 32-132 entries at k = 65536-262144, slices of 8-34
 * MB, 0.65-1.23x of a group a row's on 28); or, up to
 * ROW_BATCHES_NARROW_TILE_MAX_WAVES, where rows
 * hold ROW_BATCHES_NARROW_LONG_AVG entries on average, or
 * ROW_BATCHES_NARROW_SKEWED_AVG with the longest ROW_BATCHES_NARROW_SKEW
 * times that or more (the batches cut it; the row kernels and merge path
 * wait on it or add its pieces in a second launch). docs/PERFORMANCE.md. */
static bool narrow_tile_pays(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    if (longest_row_holds_warp(ctx, P))
        return (double)P->max_row / SPX_CUDA_BATCH_PIECE_TEAMS <=
               ROW_BATCHES_NARROW_PIECE_TAILS * row_batches_tail(ctx, P, b);
    const double waves = batches_waves(ctx, b), avg = entries_per_row(P);
    if (!slice_in_l2(ctx, b))
        return false;
    if (waves <= ROW_BATCHES_SMALL_N_MAX_WAVES ||
        (avg >= ROW_BATCHES_NARROW_LONG_AVG && b->slice_bytes <= ROW_BATCHES_NARROW_L1_SLICE))
        return true;
    return waves <= ROW_BATCHES_NARROW_TILE_MAX_WAVES &&
           (avg >= ROW_BATCHES_NARROW_LONG_AVG ||
            (avg >= ROW_BATCHES_NARROW_SKEWED_AVG && (double)P->max_row >= ROW_BATCHES_NARROW_SKEW * avg));
}

/* The waves the batches' blocks may make at N < ROW_BATCHES_MIN_N in tiles
 * of SPX_CUDA_BATCH_COLS: ROW_BATCHES_SMALL_N_MAX_WAVES, or
 * ROW_BATCHES_NARROW_N_MAX_WAVES where N leaves part of the tile's lanes
 * idle. (The narrower tiles of N <= 32 are weighed once the longest row is
 * known: narrow_tile_pays.) H200, f32, same
 * binary and call (docs/PERFORMANCE.md, seventy-second round):
 * - Forced, tiles of 16 and 32 columns ran 1.13-1.15x (DLMC, N = 8-32),
 *   1.26-1.36x (generated) and 1.21-1.23x (the shared matrices) as fast as
 *   the tile of 64 with its idle lanes (geometric means), in blocks of the
 *   same rows.
 * - Against AUTO under the bounds before (one wave, 3/4 of one where N left
 *   lanes idle): at N = 24 and 0.97 of a wave 1.33-1.98x on 8192-row pruned
 *   layers and R-MAT 13; at 1.9-3.9 waves 1.28-1.75x on pruned layers of
 *   51-205 entries a row and R-MAT 15, but 0.80-1.25x on graphs of 2-8
 *   entries a row, 0.89-1.04x on uniform rows of 16, 0.67-0.87x on meshes;
 *   past 4 waves 0.72-1.08x (meshes, uniform rows, a graph).
 * - At N = 40-56 tiles of 16 and 32 ran 0.74-0.97x as fast as those of 64
 *   (geometric means over DLMC and four generated products); at N = 80-96
 *   0.84-1.11x. */
static double small_n_max_waves(const cuda_plan *P)
{
    return P->n >= SPX_CUDA_BATCH_COLS ? ROW_BATCHES_SMALL_N_MAX_WAVES : ROW_BATCHES_NARROW_N_MAX_WAVES;
}

/* In the tile of SPX_CUDA_BATCH_COLS columns (64 <= N < ROW_BATCHES_MIN_N),
 * f32 data takes the batches past small_n_max_waves where k >=
 * ROW_BATCHES_WIDE_MIN_K and A holds ROW_BATCHES_WIDE_MIN_DENSITY of its
 * cells or more (pruned weights). H200, f32 (docs/PERFORMANCE.md, seventy-
 * fourth round):
 * - forced, on 39 pruned layers of 2048-65536 rows, k = 1024-8192, 80-98 %
 *   sparse, at N = 64 / 128 / 192, the batches took 0.95-1.59x the speed of
 *   the fastest other kernel at k >= 2048, but down to 0.74x at k = 1024 (on
 *   65536 rows, against merge path at N = 128); under 2 % of the cells at
 *   N >= 128, 0.95-1.18x on uniform rows, 0.74-0.86x on R-MAT graphs;
 * - AUTO against AUTO before (merge path, a warp or a block a row, the
 *   bins), same call: 1.346x over the 106 of those layers' products at N =
 *   64-192 whose plan changed (0.92-1.81x; the 0.92-0.97x on 41 entries a
 *   row at N = 96-192), 1.215x over 35 products of 9 layers not used to
 *   choose the rule (0.84-1.74x; the 0.84-0.93x on 49152 and 32768 rows at
 *   N = 96-128), 1.33x over 5 other generated products; no DLMC,
 *   shared-matrix or family plan changed.
 * 32 < N < 64 (the same tile, part of its lanes idle) was not measured and
 * keeps the one wave's bound. */
static bool wide_tile_batches_pay(const cuda_plan *P, const batches_shape *b)
{
    return P->dtype == SPX_F32 && P->n >= SPX_CUDA_BATCH_COLS && P->k >= ROW_BATCHES_WIDE_MIN_K &&
           b->density >= ROW_BATCHES_WIDE_MIN_DENSITY;
}

/* Under ROW_BATCHES_MIN_DENSITY with k >= ROW_BATCHES_MIN_K (smaller k
 * takes the short-row shape), the batches' usual shape `b` pays where its
 * blocks make at most ROW_BATCHES_SPARSE_MAX_WAVES waves
 * (ROW_BATCHES_SPARSE_MAX_WAVES_16BIT on f16 and bf16 data), or, on f32 data,
 * where rows hold ROW_BATCHES_SPARSE_MIN_AVG entries on average and A at
 * least ROW_BATCHES_SPARSE_LONG_MIN_DENSITY of its cells; never under
 * ROW_BATCHES_SPARSE_MIN_DENSITY. H200, 64 generated pruned layers of
 * 128-4096 rows, k = 1024-8192, 0.7-3.5 % of the cells, and the DLMC 98 %
 * 512 x 2048 layer, at N = 256-4096, against AUTO before (merge path, the
 * row kernels' bins, TILED in wide blocks; the dense path on bf16 data),
 * same binary: within two waves 1.256x over 147 products on f32 data and
 * 1.275x on bf16 data, none slower by over 4 %; past two waves, rows of 48
 * entries or more at 1 % of the cells or more, 1.228x over 88 on f32 data
 * (0.97-1.44x), while on bf16 data such rows lost at 0.7 % and 1.5 %
 * (0.75-0.80x) and ran the dense path from 2.5 %. Past two waves shorter
 * rows on f32 data went either way at 3.9 and 7.8 waves (0.87-1.31x, 1.02x
 * in geometric mean over 50) and lost from 15.5 (0.47-1.03x, 0.78x over
 * 40: 2048-4096 rows of 7-57 entries). The DLMC layer (41 entries a row, the
 * longest 484) went from merge path's 13.6 to 8.2 us at N = 256 and from
 * 24.1 to 19.0 at N = 1024 (f32); at N = 4096 (7.8 waves) the batches lose
 * (0.87x). On 16-bit data the batches past two waves gained at 3.9 and 7.8
 * waves, in rows of every length, against AUTO before (merge path mostly),
 * same binary: 1.286x over the 48 bf16 products whose plan changed
 * (1.01-1.70x), 1.258x over 12 on f16 data (1.11-1.64x); from 15.5 waves
 * they lost (bf16: 0.95x over 30, 0.75x past). Within the 8 waves a warp
 * per row beats them on 16-bit data where it pays (merge_place_first).
 * docs/PERFORMANCE.md */
static bool sparse_batches_pay(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    const double avg = entries_per_row(P);
    const double max_waves =
        P->dtype == SPX_F32 ? ROW_BATCHES_SPARSE_MAX_WAVES : ROW_BATCHES_SPARSE_MAX_WAVES_16BIT;
    return b->density >= ROW_BATCHES_SPARSE_MIN_DENSITY &&
           (batches_waves(ctx, b) <= max_waves ||
            (P->dtype == SPX_F32 && avg >= ROW_BATCHES_SPARSE_MIN_AVG &&
             b->density >= ROW_BATCHES_SPARSE_LONG_MIN_DENSITY));
}

/* AUTO gives every row a team of the row kernels' BATCHES
 * (row_batches_kernel in spmm_rows.cu: a team of 16 lanes a row and 64
 * columns, of 8 lanes with 8 entries a batch, the entries staged 8, 16 or 32
 * at a time in shared memory, as many B row segments in flight a lane) for
 * f32 data, and for f16 and bf16 data (widened at the FMAs: the same tiles;
 * measured for bf16 data with f32's bounds, the dense path taking most
 * layers first; not in the shape of 32 entries, take_row_batches), with FMA
 * in f32 on the operands as given at every precision (at the tensor-core ones where the
 * dense path and whole blocks do not pay, AUTO's other choices run on CUDA
 * cores too), on
 * compute capability 9.0 and later (measured on an H100 alone; for sm_80
 * ptxas spills 0-32 bytes, 0-24 for sm_90), where N >= ROW_BATCHES_MIN_N;
 * either k >= ROW_BATCHES_MIN_K, or k >= ROW_BATCHES_SMALL_K (smaller k was
 * not measured) and either A has at most ROW_BATCHES_FEW_ROWS rows or TILED
 * (which holds all of a smaller k's B tile) would run at most one block an
 * SM at its narrowest tile, and A holds ROW_BATCHES_MIN_DENSITY of its
 * cells or more, so that the rows of a block share their B row segments in
 * L1 (pruned weights: sparser matrices with long rows, such as bands, meshes
 * and graphs, were not measured); or k >= ROW_BATCHES_MIN_K under that
 * density where few waves or long rows let it (sparse_batches_pay); or
 * ROW_BATCHES_SMALL_K <= k <
 * ROW_BATCHES_MIN_K, A holds ROW_BATCHES_SHORT_MIN_DENSITY of its cells or
 * more (but under ROW_BATCHES_MIN_DENSITY) in rows of at most
 * ROW_BATCHES_SHORT_ROW_MAX entries (row_batches_pay), and the blocks, of 8
 * entries a batch, number at most ROW_BATCHES_SHORT_MAX_BLOCKS_PER_SM an SM;
 * a column tile's slice of B (k rows of 256 bytes, 128 for 16-bit data) takes at most
 * ROW_BATCHES_L2_SHARE of the L2 cache, so that the gathers find it there;
 * however many blocks (spx__batches_shape_of: 512 threads, else 256; 128 on
 * short rows) and however long the rows, these being cut where the blocks
 * make at most half a wave,
 * the longest row is a tail or whole rows would leave the last round of
 * blocks part empty (spx__row_batches_cut). H100 unless said, exact f32
 * (docs/PERFORMANCE.md):
 * - Forced (512 threads) on every DLMC layer at N = 256, 1024 and 4096,
 *   against AUTO without them, they won 1.04-1.19x on the 256 x 1024, 128 x
 *   1152 and 512 x 4608 layers from about one wave on, and lost at N = 256
 *   (0.49-0.84x where k >= 1024), on half a wave (0.88-0.95x on 128 x 1152
 *   at N = 1024), at 2 % of the cells (0.87x on 512 x 2048 at N = 1024) and
 *   on the layers of 512 rows and more with k <= 512 (512 x 128, 512 x 512,
 *   2048 x 512: 0.58-1.02x; TILED holds all of B's tile there, two blocks an
 *   SM or more).
 * - With k < 1024, against AUTO's choices before (TILED, the row kernels),
 *   same call: 1.17-1.23x on the 64 x 256 layers at N = 4096; on generated
 *   pruned layers of 32-256 rows (k = 256-1000, and 128 x 1152) at N =
 *   1024-8192, with the 256-thread blocks below, 18 of 56 products gained
 *   1.05-1.44x (1.10-1.43x at N = 8192 on 32-128 rows, where TILED has
 *   256-512 blocks) and none lost more than 4 %.
 * - Blocks of 256 threads where those of 512 make under 0.9 of a wave, on
 *   the 128 x 1152 layers at N = 1024 (64 blocks of 512, 128 of 256) and 64
 *   x 256 at N = 2048: 1.12-1.39x on four of the six, the other two level.
 *   Forced where 512-thread blocks make 0.97 of a wave or more, they lost
 *   (0.95-0.99x on five of six; 0.9x on 512 x 4608).
 * - Against the rule of the fortieth round (TILED in 5 chunks or more, 128
 *   entries a row, 1.5 waves), same call: 1.11x on the 17 DLMC products that
 *   change (1.01-1.28x, but 0.92x on the 10 % 512 x 2048 layer at N = 1024,
 *   which the batches' ordinary loads of B brought to 64.8 us against 65.7
 *   before); generated pruned 1024 x 1024 1.08-1.33x at N = 1024, but 0.94x
 *   at 20 % of the cells at N = 4096.
 * - N from 256 (from 1024 before), k from 128 (from 256), with 32 entries
 *   a batch in the 256-thread blocks that number at most the SMs, and short
 *   longest rows let through (row_batches_pay), against AUTO before, same
 *   call, four runs: DLMC 1.039x at N = 256, 1.110x at N = 512, 1.019x over
 *   N = 256 / 1024 / 4096 (the 512 x 4608 layers at N = 256 1.09-1.27x, at
 *   N = 512 1.32-1.72x; 512 x 128, 512 x 512, 256 x 1024 1.1-1.4x); pruned
 *   layers of 96-4096 rows 1.133x at N = 256, 1.260x at N = 512. Where the
 *   256-thread blocks outnumber the SMs, two blocks of 16 a batch an SM beat
 *   one of 32 (1.06-1.22x on pruned 160-896-row layers).
 * - Under ROW_BATCHES_MIN_DENSITY, short rows (ROW_BATCHES_SHORT_*) in blocks
 *   of 256 threads with 8 entries a batch, three an SM, against AUTO before
 *   (TILED, the row kernels, merge path), same call, two runs: the DLMC 2 %
 *   layers (512 x 512 at N = 256-4096, 2048 x 512 at N = 256-1024, about 10
 *   entries a row) 1.12-1.15x (0.97-1.28x); generated pruned layers of
 *   256-4096 rows at 1.5-3 % of the cells 1.13x over 33 products (0.92-1.34x;
 *   the losses with 12-16 blocks an SM). Forced, the same shape lost on
 *   the DLMC 2 % layer with k = 2048 (longest row 174), on the 2048 x 512
 *   one at N >= 2048 (32 blocks an SM and more) and on the 512 x 128
 *   layers. Since then the same rows a block run in teams of 8 lanes, 128
 *   threads, four blocks an SM: against those, AUTO on DLMC and generated
 *   layers (H200), 1.08-1.17x on the 10 short-row products of 512 blocks
 *   and more, 0.96-0.99x on the 5 of 64-256 blocks.
 * - At the bf16 and tf32 precisions, against AUTO before (the row kernels,
 *   TILED, merge path, all on CUDA cores), same call: 1.117x on the 14 DLMC
 *   products that change at bf16 (0.96-1.24x), 1.132x on 19 at tf32.
 * - Under ROW_BATCHES_MIN_WAVES waves, on rows of at most
 *   64 entries on average, against AUTO before
 *   (the row kernels' bins: warp_row, row_split), same call, two runs each:
 *   generated pruned layers of 32-256 rows (k = 256-2048, 2-20 % of the
 *   cells, N = 256-1024) 1.068x and 1.028x over two sets of 96 products (up
 *   to 1.22x, none slower by over 4 %; short rows among them: the 98 %
 *   layers of 256 and 512 columns); DLMC 1.012x (1.13-1.20x on the 64 x
 *   256 layers at N = 256 and 1024 and the 5 % 128 x 1152 and 256 x 1024
 *   ones at N = 256). On rows of 102-230 entries on average they lost to
 *   block_row and the bins (0.67-0.93x: 64 x 1024, 128 x 1152 and 256 x 1024
 *   at 10-20 % of the cells, N = 256), bar one (64 x 1024 at 10 %, 1.11x).
 * - Since rows are cut where the blocks make at most half a wave
 *   (spx__row_batches_cut), on rows of up to 256 entries on average there (up to
 *   64 before), H200, same call, two runs each: generated pruned layers of
 *   32-256 rows (k = 256-2048, 5-20 % of the cells, N = 256-1024) 1.072x over
 *   108 products (1.49-1.86x on eleven 32- to 128-row layers of 102 entries
 *   a row, 0.95-0.96x on three of 205 entries a row at N = 256), DLMC at N =
 *   256 and 1024 1.25-1.26x on the two products that changed (the rn50 0.8
 *   256 x 1024 and 128 x 1152 layers at N = 256).
 * - On rows of any length (before, where the blocks numbered under
 *   ROW_BATCHES_MIN_WAVES times the SMs: up to 256 entries on average where
 *   they made at most half a wave, 64 elsewhere), the rows cut to fill a
 *   wave first where the blocks make at most half of one (the tail cut
 *   first before), H200, two runs each: against
 *   AUTO before, same call, generated pruned layers of 32-256 rows, k =
 *   1024-4096, N = 256-1024 1.192x over 72 products (up to 2.14x), of
 *   96-896 rows, k = 2048-4096, 1.067x over 96, none slower by over 2.3 %;
 *   in a build that took either rule from the environment (one binary for
 *   both): of 32-768 rows, k = 4096-8192, 1.230x over 72 (up to 2.37x on 32
 *   rows of 1638 entries), of 32-128 rows, k = 384-768, N = 256-2048, 1.044x
 *   over 81 (0.94-0.96x on five products of 5-7 us whose plans do not
 *   change, cuSPARSE 2 % slower in the same runs), of 256-512 rows 0.997x
 *   over 54, DLMC at N = 256, 1024 and 4096 1.019x (1.13-1.26x on
 *   three rn50 layers at N = 256); R-MAT graphs of 512-4096 nodes (31-71
 *   entries a row on average, measured with a bound of 512: the same plans)
 *   0.997x, no product moving by over 2.3 %.
 * - At ROW_BATCHES_SMALL_N_MIN <= N < ROW_BATCHES_MIN_N (any density; before,
 *   none below 256), H200, f32, same call, AUTO against AUTO before: the
 *   plan changed on 147 of 170 DLMC products at N = 16-192 (1.50x over those,
 *   up to 7.4x: a warp a row of 200-460 entries at N = 64), 107 of 165
 *   generated ones (pruned layers of 64-4096 rows, R-MAT 9-13, uniform,
 *   Laplacians; 1.51x), 49 of 75 others not used to choose the bounds (pruned
 *   128-2048 rows, uniform, banded, block-sparse at N = 8-160; 1.26x), 40 of
 *   90 shared-data matrices (1.16x); bf16 data 1.55x over 99, f16 1.13-1.26x
 *   over 36. Losses, on 6-11 us products: up to 0.89x in the short-row shape
 *   at k = 512-1000 (DLMC 2 % 2048 x 512 at N = 16-64), 0.92x on f16 pushpull
 *   at N = 64. Forced past the bounds: 0.63-0.98x on short, even rows
 *   (uniform, meshes, 1.2-3.9 waves) and, at N = 8-32 where the blocks make
 *   0.95-0.97 of a wave, 0.68-0.91x (pruned 4096-row layers), 0.72-0.81x
 *   (pushpull).
 * - Since N up to 32 takes column tiles of 16 or 32 (spx__cuda_batch_tile_cols): see
 *   small_n_max_waves and narrow_tile_pays.
 * The batches' shape in *out. */
static bool row_batches_may_pay(spx_ctx *ctx, const cuda_plan *P, batches_shape *out)
{
    if (!batches_type(P->dtype) || P->n < ROW_BATCHES_SMALL_N_MIN || P->m <= 0 ||
        P->k < ROW_BATCHES_SMALL_K || spx__cuda(ctx)->info.cc_major < 9)
        return false;
    const double sms = (double)spx__cuda_sm_count(ctx);
    const batches_shape b = *out = spx__batches_shape_of(ctx, P, P->m);
    if (b.cols < SPX_CUDA_BATCH_COLS) /* narrow_tile_pays, once the longest row is known */
        return spx__cuda(ctx)->info.l2_bytes > 0;
    const bool shape_pays =
        P->n < ROW_BATCHES_MIN_N
            ? batches_waves(ctx, &b) <= small_n_max_waves(P) || wide_tile_batches_pay(P, &b)
        : b.short_rows ? b.density >= ROW_BATCHES_SHORT_MIN_DENSITY &&
                           (double)b.blocks <= ROW_BATCHES_SHORT_MAX_BLOCKS_PER_SM * sms
        : b.density < ROW_BATCHES_MIN_DENSITY
            ? sparse_batches_pay(ctx, P, &b)
            : P->k >= ROW_BATCHES_MIN_K || P->m <= ROW_BATCHES_FEW_ROWS || (double)tiled_blocks(P) <= sms;
    return shape_pays && slice_in_l2(ctx, &b);
}

/* ... and, once the bins are built, where the rows are short, the longest
 * holds at most ROW_BATCHES_SHORT_ROW_MAX entries. Other shapes take any
 * rows: where the longest is a tail, rows are cut (take_row_batches). H100:
 * uncut, the 512 x 128 DLMC layers at N = 256 and 512, whose longest rows of
 * 39-80 entries are 3-6 times a team's share, ran 1.1-1.3x over AUTO's other
 * choices; the 512 x 2048 ones, 484 and 1179 entries, 6 and 12 times:
 * 0.74-0.89x. In a tile narrower than SPX_CUDA_BATCH_COLS (N <= 32), as
 * narrow_tile_pays weighs them. `shape`: row_batches_may_pay's. */
static bool row_batches_pay(spx_ctx *ctx, const cuda_plan *P, const batches_shape *shape)
{
    if (shape->cols < SPX_CUDA_BATCH_COLS && !narrow_tile_pays(ctx, P, shape))
        return false;
    return !shape->short_rows || P->max_row <= ROW_BATCHES_SHORT_ROW_MAX;
}

/* Bytes of op(A)'s device CSR (values, int32 columns, int64 offsets). */
static double a_bytes(const cuda_plan *P)
{
    return (double)P->csr.nnz * (4.0 + (double)spx_dtype_size(P->dtype)) + 8.0 * (double)(P->m + 1);
}

/* Bytes through L2 of the row kernels and merge path: a B row segment per
 * entry (L1 keeps few of them), A and C once. */
static double rows_traffic(const cuda_plan *P)
{
    const double es = (double)spx_dtype_size(P->dtype);
    return (double)P->csr.nnz * (double)P->n * es + a_bytes(P) + (double)P->m * (double)P->n * es;
}

/* BAND's shared memory per block: a third of an SM's (three blocks per SM
 * hide each other's waits for the ring), within the per-block limit; a
 * forced tile width may take a whole SM's. */
static int64_t band_smem_budget(spx_ctx *ctx, bool forced_width)
{
    const spx_device_info *in = &spx__cuda(ctx)->info;
    int64_t budget = forced_width ? in->smem_per_sm - 1024 : in->smem_per_sm / 3 - 1024;
    if (budget > in->smem_per_block_optin)
        budget = in->smem_per_block_optin;
    return budget < 32 * 1024 ? 32 * 1024 : budget;
}

/* The distances of op(A)'s entries from the diagonal and the longest row, as
 * spx__cuda_diagonal_profile gives them (P->diagonal), from one pass over A
 * per plan: BAND's shape and the rounding of B both read them. The pass also
 * sets P->max_row. */
static spx_status diagonal_profile(spx_ctx *ctx, cuda_plan *P, const unsigned long long **prof)
{
    cudaStream_t st = spx__cuda(ctx)->stream;
    const size_t bytes = sizeof P->diagonal;
    unsigned long long *dev = NULL;
    spx_status s;
    *prof = P->diagonal;
    if (P->has_diagonal)
        return SPX_OK;
    if (!(s = spx__cuda_alloc(ctx, (void **)&dev, bytes, "diagonal profile")) &&
        !(s = spx__cuda_check(ctx, cudaMemsetAsync(dev, 0, bytes, st), "diagonal profile")) &&
        !(s = spx__cuda_check(ctx, spx__cuda_diagonal_profile(&P->csr, dev, st), "diagonal profile kernel")) &&
        !(s = spx__cuda_download(ctx, P->diagonal, dev, bytes)))
        s = spx__cuda_sync(ctx);
    spx__cuda_free(ctx, dev);
    if (!s) {
        P->has_diagonal = true;
        P->max_row = (int64_t)P->diagonal[2 * SPX_CUDA_DIAGONAL_BUCKETS];
    }
    return s;
}

/* BAND's shape. For each halo the profile offers (the largest distance of
 * the buckets up to b, so that the ring serves their entries) and each column
 * tile (8, 16 or 32 16-byte vectors; forced: the caller's panel width), the
 * ring is the least power of two holding 2 (rows + halo) slots, with steps
 * of at least 64 rows and of whole rounds of the block's teams. Of the shapes
 * within the shared-memory budget, the one kept moves the fewest bytes
 * through L2 (*traffic): per column tile, a B row segment for each entry
 * outside the ring, B's tile once and A once; C once. Strips: one per block
 * the GPU holds at once, in whole steps. one_tile (AUTO): only tiles that
 * cover N, and no shape (*traffic < 0) is not an error. */
static spx_status choose_band_shape(spx_ctx *ctx, cuda_plan *P, int64_t forced, bool one_tile, char *why,
                                    size_t whylen, double *traffic)
{
    enum { NB = SPX_CUDA_DIAGONAL_BUCKETS };
    const int64_t es = (int64_t)spx_dtype_size(P->dtype), vec = 16 / es;
    if (forced > 0 && forced != 8 * vec && forced != 16 * vec && forced != 32 * vec)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "band: the panel width must be %lld, %lld or %lld columns for %s (got %lld)",
                         (long long)(8 * vec), (long long)(16 * vec), (long long)(32 * vec),
                         spx_dtype_name(P->dtype), (long long)forced);
    const unsigned long long *prof;
    spx_status s = diagonal_profile(ctx, P, &prof);
    if (s)
        return s;
    const int64_t budget = band_smem_budget(ctx, forced > 0);
    const double other = a_bytes(P) + (double)P->m * (double)P->n * (double)es;
    spx_cuda_band_shape *best = &P->band;
    double near = 0, best_near = 0;
    int64_t halo = 0;
    *traffic = -1;
    for (int b = 0; b < NB; b++) {
        if (b > 0 && !prof[b])
            continue; /* the same shapes as the bucket before */
        near += (double)prof[b];
        if (prof[b])
            halo = (int64_t)prof[NB + b];
        for (int g = 8; g <= 32; g *= 2) {
            if ((forced > 0 && g * vec != forced) || (one_tile && g * vec < P->n))
                continue;
            const int64_t teams = 256 / g, least = teams > 64 ? teams : 64, tile = g * 16;
            int64_t ring = 1;
            while (ring < 2 * (halo + least))
                ring *= 2;
            if (ring * tile > budget)
                continue;
            const double tiles = (double)((P->n + g * vec - 1) / (g * vec));
            const double t = tiles * (((double)P->csr.nnz - near) * (double)tile + (double)P->k * (double)tile + a_bytes(P)) + other;
            if (*traffic >= 0 && t >= *traffic)
                continue;
            *traffic = t;
            best_near = near;
            *best = (spx_cuda_band_shape){.group = g, .halo = halo, .rows = (ring / 2 - halo) / teams * teams, .ring = ring};
        }
    }
    if (*traffic < 0)
        return one_tile ? SPX_OK
                        : spx__fail(ctx, SPX_ERR_UNSUPPORTED, "band: no ring of B rows fits in %lld bytes of shared memory",
                                    (long long)budget);
    const int per_sm = spx__cuda_band_blocks_per_sm(best, P->dtype);
    if (per_sm <= 0 && one_tile)
        *traffic = -1;
    if (per_sm <= 0)
        return one_tile ? SPX_OK
                        : spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                                    "band: a block of %zu bytes of shared memory does not fit on an SM",
                                    spx__cuda_band_smem(best));
    const int64_t tiles = (P->n + best->group * vec - 1) / (best->group * vec);
    int64_t strips = (int64_t)per_sm * spx__cuda_sm_count(ctx) / tiles, steps = (P->m + best->rows - 1) / best->rows;
    if (strips < 1)
        strips = 1;
    best->strip = ((steps + strips - 1) / strips > 0 ? (steps + strips - 1) / strips : 1) * best->rows;
    P->band_near = P->csr.nnz ? best_near / (double)P->csr.nnz : 1.0;
    snprintf(why, whylen,
             "blocks walk strips of %lld rows, %lld rows a step, in column tiles of %lld; a ring of %lld rows of B "
             "in shared memory serves the %.1f%% of entries within %lld of the diagonal",
             (long long)best->strip, (long long)best->rows, (long long)(best->group * vec), (long long)best->ring,
             100.0 * P->band_near, (long long)best->halo);
    return SPX_OK;
}

/* AUTO takes BAND on f32 data that is not a small product when one column
 * tile covers N, N fills over half of the narrowest (BAND_MIN_N: at N = 8 and
 * 16, banded 262144 rows of 33 entries took 141-144 us in BAND's tile of 32
 * columns, 77-90 us with a group of 2 or 4 lanes a row; H200,
 * docs/PERFORMANCE.md), its ring of B rows is at most BAND_MAX_WINDOW_SHARE of k and
 * of m (a band, narrow beside the matrix) and its estimated bytes through L2
 * (choose_band_shape) are at most BAND_MAX_TRAFFIC_SHARE of the row kernels'.
 * One tile: each tile pays a row's whole chain of loads and shuffles again,
 * and BAND's steps are bound by that, not by L2; measured on an H100 (3D
 * Laplacians, banded 1M, docs/PERFORMANCE.md), BAND was 1.5-1.7x faster than
 * merge path at N = 32 (one tile) and 15-55 % slower at N = 128 and 256
 * (2-8 tiles). Rows of at most BAND_MAX_ROW entries: a row has one team of
 * lanes, and a step waits for its longest row. The shape is chosen (which
 * profiles A's diagonals, one pass over A) only for matrices large enough for
 * the smallest ring and N within the widest tile. */
static spx_status band_pays(spx_ctx *ctx, cuda_plan *P, bool *pays, char *why, size_t whylen)
{
    double traffic = 0;
    *pays = false;
    if (P->dtype != SPX_F32 || small_product(ctx, P) || P->m < 1024 || P->k < 1024 || P->n < BAND_MIN_N ||
        P->n > 32 * 4 /* f32 in the widest tile */)
        return SPX_OK;
    char shape[256];
    spx_status s = choose_band_shape(ctx, P, 0, true, shape, sizeof shape, &traffic);
    if (s)
        return s;
    const double rows = rows_traffic(P), window = BAND_MAX_WINDOW_SHARE * (double)(P->m < P->k ? P->m : P->k);
    if (traffic < 0 || P->max_row > BAND_MAX_ROW || (double)P->band.ring > window ||
        traffic > BAND_MAX_TRAFFIC_SHARE * rows)
        return SPX_OK;
    *pays = true;
    snprintf(why, whylen, "%s; chosen because its reads through L2 are estimated at %.0f%% of the row kernels'",
             shape, 100.0 * traffic / rows);
    return SPX_OK;
}

/* Merge-path items (rows + entries) per warp: an equal share over the warps
 * the GPU holds at once (64 per SM; the warps of every column tile of 32
 * 16-byte vectors count), within [MERGE_ITEMS_MIN(_SHORT_ROWS), MERGE_ITEMS_MAX]. Small
 * products thus still fill the GPU instead of leaving most SMs idle; large
 * ones keep long stretches and few carries. */
static int64_t merge_items(spx_ctx *ctx, const cuda_plan *P)
{
    int64_t tile = 32 * (16 / (int64_t)spx_dtype_size(P->dtype)), ntiles = (P->n + tile - 1) / tile;
    int64_t slots = 64 * spx__cuda_sm_count(ctx) / (ntiles > 0 ? ntiles : 1);
    int64_t items = (P->m + P->csr.nnz + slots - 1) / (slots > 0 ? slots : 1);
    /* short rows: at most 32 entries on average and none in the large or huge bins */
    bool short_rows = P->csr.nnz <= 32 * P->m && !P->bins[4].nrows && !P->bins[5].nrows;
    int64_t least = short_rows ? MERGE_ITEMS_MIN_SHORT_ROWS : MERGE_ITEMS_MIN;
    return items < least ? least : items > MERGE_ITEMS_MAX ? MERGE_ITEMS_MAX : items;
}

/* Whether N fills exactly half a warp of 16-byte loads (a row kernels' group
 * of 16 lanes) and nnz x N is 3.2e7 or more. */
static bool half_warp_large(const cuda_plan *P)
{
    return P->n * (int64_t)spx_dtype_size(P->dtype) == 256 && (double)P->csr.nnz * (double)P->n >= 32e6;
}

/* AUTO takes merge path (equal work per warp, rows cut where needed) when N
 * needs more than half a warp of 16-byte loads (over 16 x 16 bytes), when N
 * fills half of it and the product is large (f64 data only: the row kernels'
 * place on f32 and 16-bit data, spx__cuda_spmm_plan_create), when one row is
 * very long, or when long rows (more than bin_bounds[2] entries) hold a large
 * share of the entries; but not for a small product without long rows, which
 * the row kernels finish in one launch, unless `small_too` (merge path has
 * taken the batches' place: merge_place_first). Measured on an H200 (docs/PERFORMANCE.md):
 * merge path is then within a few percent of the binned row kernels or well
 * ahead of them (a power-law graph's longest row holds a row kernel back);
 * the row kernels win at narrow N and on small products. Above half a warp
 * the row kernels give every row, however short, a whole warp: on the H100
 * merge path was 1.6-2.0x faster for pubmed and ca-CondMat at N = 65 and 96
 * (f32), where the products are not large. */
static bool merge_pays(spx_ctx *ctx, const cuda_plan *P, bool small_too, char *why, size_t whylen)
{
    double nnz = (double)P->csr.nnz, work = nnz * (double)P->n;
    double long_share = nnz > 0 ? (double)(P->bins[4].nnz + P->bins[5].nnz) / nnz : 0.0;
    int64_t row_bytes = P->n * (int64_t)spx_dtype_size(P->dtype);
    if (!small_too && small_product(ctx, P) && P->max_row <= 128)
        return false; /* one launch, no row cut; a warp takes any row in a few rounds of loads */
    if (row_bytes > 256) {
        snprintf(why, whylen, "chosen because N needs a whole warp of 16-byte loads (rows are cut so that every "
                              "warp gets an equal share of rows + entries)");
        return true;
    }
    if (half_warp_large(P) && P->dtype == SPX_F64) {
        snprintf(why, whylen, "chosen because the product is large (nnz x N = %.3g) and N fills half a warp with "
                              "16-byte loads", work);
        return true;
    }
    /* A block of HUGE_ROW_WARPS warps takes a row of more than 8192 entries
     * in over 64 rounds of loads one after another (arrow, N = 32: 0.20 ms
     * where cuSPARSE takes 0.04); holding 1% of the entries, it outlasts the
     * rest of the product. */
    if (P->max_row > 8192 && (double)P->max_row * 100.0 >= nnz) {
        snprintf(why, whylen, "chosen because the longest row (%lld entries, %.0f%% of them) would hold one block "
                              "for its whole run; merge path cuts it across warps",
                 (long long)P->max_row, 100.0 * (double)P->max_row / nnz);
        return true;
    }
    if (nnz >= 1e6 && long_share > 0.3) {
        snprintf(why, whylen, "chosen because rows longer than the large-bin bound hold %.0f%% of the entries",
                 100.0 * long_share);
        return true;
    }
    /* The row kernels give a row one warp whose sub-groups (32 over the lanes
     * covering N) split its entries: the longest row's rounds of loads run one
     * after another. H200, AUTO against AUTO before, same call: R-MAT of scale
     * 11-16 (12-15 entries a row, the longest 557-6354) 1.56-5.13x on the 16
     * f32 products at N = 8-64 that went to merge path, 1.96-3.47x on 7 bf16
     * ones at N = 32 and 128, 1.57-5.91x on 10 f64 ones at N = 8 and 32; no
     * shared-data matrix went to it (ca-CondMat's longest row, 280, is under
     * a quarter of an SM's share; docs/PERFORMANCE.md). On GPUs of over 25
     * SMs this also covers every row the rule above takes (only its
     * explanation comes first); both stay for smaller GPUs. */
    if (longest_row_holds_warp(ctx, P)) {
        const int64_t subgroups = 32 / spx__plan_group_for_n(P->n, P->dtype);
        snprintf(why, whylen,
                 "chosen because the longest row (%lld entries) would take one warp %lld rounds of loads, over %.0f%% "
                 "of an SM's share of the entries; merge path cuts it across warps",
                 (long long)P->max_row, (long long)(P->max_row / subgroups), 100.0 * MERGE_LONG_ROW_SM_SHARE);
        return true;
    }
    return false;
}

/* Warps of the row kernels at one warp per row and column tile, the column
 * group covering N (what warp_rows_pay and block_rows_pay count). */
static int64_t row_tile_warps(const cuda_plan *P)
{
    return P->m * column_tiles(P, spx__plan_group_for_n(P->n, P->dtype));
}

/* Where merge path would be taken, AUTO gives every row a warp per column
 * tile instead (the binned row kernels, one launch, no row cut) when rows
 * hold WARP_ROWS_MIN_AVG to WARP_ROWS_MAX_ROW entries (enough that a warp's
 * time goes to loads, not to its start and C's write-back; few enough that it
 * takes any row in a few rounds of loads) and those warps give every SM
 * between WARP_ROWS_MIN_PER_SM and WARP_ROWS_MAX_PER_SM, one wave (bf16:
 * below): the GPU is then busy without cutting rows, and merge path's cuts
 * would only add its fix-up launch.
 * Measured on an H100, f32 (docs/PERFORMANCE.md), on the 11 such products of
 * the benchmark suite: 1.205x (geometric mean); 1.11-1.42x on eight
 * (graphchallenge n1024 at N = 256 0.0117 -> 0.0084 ms, pushpull, bcsstk13
 * at N = 256), equal on two, 0.93x on bcsstk13 at N = 128. Shorter rows
 * (citeseer, ani4, cryg2500 at N = 256) lost 11-23 %; on an H200 ani4 (6.8
 * entries a row) lost 14-24 % again (f32 and bf16, N = 256-1024), while
 * generated pruned rows of 14-15 gained 1.24-1.34x over merge path on f32
 * data (same binary; rows of 7 gained too: WARP_ROWS_MIN_AVG sits between).
 * Also for bf16 data (H200, same binary): where merge path would run,
 * 1.08-1.27x on those layers at up to WARP_ROWS_MAX_PER_SM_16BIT warps an
 * SM, pushpull 1.22x at N = 512 and 1024; on f32 data from 64 to 128 warps
 * an SM 0.98-1.07x, and bcsstk13 at N = 1024 lost (0.84x). Past
 * WARP_ROWS_MAX_PER_SM, 16-bit rows take a warp each only where merge path
 * may cut them (the longest row over its share, prepare_merge): where it
 * keeps them whole, it was 1.02-1.18x faster on 10 of those layers at 124
 * warps an SM (bf16), while pushpull, whose rows it cuts, kept 1.22x. f16
 * data takes bf16's rule since its row kernels keep their loads in flight
 * (fma_rows16): against merge path and the batches before, same binary,
 * 1.20x over the 21 of the 27 generated pruned layers at N = 256-2048 whose
 * plan changed (1.04-1.43x, two runs), pushpull 1.25-1.30x at N = 512 and
 * 1024; no other plan of those layers, the graphs, SuiteSparse or DLMC
 * (N = 256 and 1024) changed. Before that fix f16 lost (0.955x). */
static bool warp_rows_fit(spx_ctx *ctx, const cuda_plan *P, int64_t max_per_sm)
{
    const int64_t warps = row_tile_warps(P), sms = spx__cuda_sm_count(ctx);
    return (P->dtype == SPX_F32 || data16(P)) &&
           P->csr.nnz >= WARP_ROWS_MIN_AVG * P->m &&
           P->max_row <= WARP_ROWS_MAX_ROW && warps >= WARP_ROWS_MIN_PER_SM * sms && warps <= max_per_sm * sms;
}
/* Where merge path would run (`merge`) on 16-bit rows at N of half a warp of
 * 16-byte loads or less, rows of BLOCK_ROWS_MIN_AVG entries or more on
 * average, the longest at most BLOCK_ROWS_MAX_SPREAD times that, take a warp
 * each however long (merge path took them for the long rows' share of the
 * entries): H200, bf16, AUTO against AUTO before, same call, 1.929x over the
 * 16 pruned-layer products at N = 64 and 128 whose plan changed (1.39-2.80x;
 * 4096-16384 rows of 410-819 entries), 2.013x over 5 of layers not used to
 * choose the rule (rows of 307-922 entries), f16 at N = 128 1.594x over 10
 * (1.39-1.80x); the other 116 of 138 bf16 products kept their plans
 * (docs/PERFORMANCE.md). */
static bool warp_rows_pay(spx_ctx *ctx, const cuda_plan *P, bool merge, char *why, size_t whylen)
{
    const int64_t warps = row_tile_warps(P), sms = spx__cuda_sm_count(ctx);
    const bool merge_cuts = P->max_row > merge_items(ctx, P);
    const int64_t max_per_sm = data16(P) && merge_cuts ? WARP_ROWS_MAX_PER_SM_16BIT : WARP_ROWS_MAX_PER_SM;
    const double avg = entries_per_row(P);
    const bool even_long = merge && data16(P) && P->n * (int64_t)spx_dtype_size(P->dtype) <= 256 &&
                           avg >= BLOCK_ROWS_MIN_AVG && (double)P->max_row <= BLOCK_ROWS_MAX_SPREAD * avg &&
                           warps >= WARP_ROWS_MIN_PER_SM * sms;
    if (!warp_rows_fit(ctx, P, max_per_sm) && !even_long)
        return false;
    snprintf(why, whylen,
             "a warp per row and column tile (%lld warps, %.0f an SM) because rows hold %.1f entries on average "
             "and at most %lld: no row is cut, so merge path's fix-up launch is saved",
             (long long)warps, (double)warps / (double)sms, avg, (long long)P->max_row);
    return true;
}

/* On f16 and bf16 data, where the batches would take a sparse A
 * (sparse_batches_pay) and merge path pays, merge path's place comes first
 * (before TILED too, which would follow the batches):
 * - past ROW_BATCHES_SPARSE_MAX_WAVES waves of the batches, where rows hold
 *   under ROW_BATCHES_SPARSE_16BIT_MIN_AVG entries on average (merge path
 *   keeps such rows whole) or fit a warp each at up to
 *   WARP_ROWS_MAX_PER_SM_16BIT an SM (warp_rows_pay picks between the two);
 * - within them, where rows fit a warp each at WARP_ROWS_OVER_BATCHES_MIN_PER_SM
 *   to WARP_ROWS_MAX_PER_SM an SM (warp_rows_pay takes them, at full column
 *   tiles even in a small product: choose_bin_kernels).
 * H200, 27 generated pruned layers (512-4096 rows, k = 1024-4096, 97.5-99.3 %
 * sparse) at N = 256-2048:
 * - At 7.8 waves a warp per row gained 1.15-1.35x on rows of every length.
 *   Rows of 7 entries (1024 columns at 99.3 %) carry little work a team: in
 *   1024 blocks merge path took 11.0-11.5 us where the batches took
 *   19.2-20.2 (1.75-1.77x), in 512 blocks (small products on 128-255 SMs,
 *   hence merge_pays' small_too) it gained 1.18-1.25x.
 * - Since the 16-bit row kernels run in blocks of 64 threads (spmm_rows.cu),
 *   a warp per row took the batches' place on 9 products a type that earlier
 *   bounds (rows under 48 entries, no small product, not where TILED pays, 4
 *   waves for rows of 48 and more) had left to them: f16 1.121x (1.08-1.25x;
 *   4096 x 1024 at 98.5 %, N = 256, where TILED pays, 14.3 -> 11.4 us; rows
 *   of 61 entries 1.08-1.11x; small products of 2048 warps at full tiles
 *   1.11-1.14x, where tiles narrowed to 8 lanes had lost 0.70-0.75x), bf16
 *   1.112x (1.06-1.23x); two builds in one run, no other plan of the 27
 *   layers at N = 256-1024, of DLMC (N = 256 and 1024) or of the graphs and
 *   SuiteSparse matrices (f16, N = 128 and 512) changed.
 * - With 512 and 1024 warps the batches stayed 1.17-1.59x ahead (f16, a warp
 *   per row forced, in blocks of 256 threads).
 * docs/PERFORMANCE.md */
static bool merge_place_first(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    char why[512];
    if (!data16(P) || b->short_rows || b->density >= ROW_BATCHES_MIN_DENSITY ||
        !merge_pays(ctx, P, true, why, sizeof why))
        return false;
    if (batches_waves(ctx, b) <= ROW_BATCHES_SPARSE_MAX_WAVES) /* a warp per row alone, with warps enough */
        return row_tile_warps(P) >= WARP_ROWS_OVER_BATCHES_MIN_PER_SM * spx__cuda_sm_count(ctx) &&
               warp_rows_fit(ctx, P, WARP_ROWS_MAX_PER_SM);
    return P->csr.nnz < ROW_BATCHES_SPARSE_16BIT_MIN_AVG * P->m ||
           warp_rows_fit(ctx, P, WARP_ROWS_MAX_PER_SM_16BIT);
}

/* Where merge path would be taken and a warp per row does not pay, AUTO
 * gives every row a block of W warps that take its entries in turns of 32 and
 * add their sums in shared memory in warp order (the row kernels' BLOCK_ROW,
 * one launch, no fix-up) when rows hold BLOCK_ROWS_MIN_AVG entries or more on
 * average and the longest at most BLOCK_ROWS_MAX_SPREAD times that (a block
 * waits for its row; merge path evens out uneven rows). W, a power of two up
 * to HUGE_ROW_WARPS, brings the warps (one per row, column tile and W) to
 * BLOCK_ROWS_PER_SM per SM, or gives each warp about BLOCK_ROWS_ENTRIES
 * entries of its row, whichever is more. Measured on an H100, f32
 * (docs/PERFORMANCE.md): the 19 products of the benchmark suite that take it
 * (DLMC layers of 128-512 rows holding 51-921 entries, uniform 1M rows of
 * 128) were 1.17x faster than merge path in the same run (1.00-1.43x; W =
 * 2-8), uniform 100K rows of 256 1.06x; with W forced, sparse-images-1024
 * (rows of 102 entries, the longest 276, beyond the spread) lost 3-16 %. */
static int block_rows_pay(spx_ctx *ctx, const cuda_plan *P, char *why, size_t whylen)
{
    if (P->dtype != SPX_F32 || P->m == 0)
        return 0;
    const double avg = entries_per_row(P);
    if (avg < BLOCK_ROWS_MIN_AVG || (double)P->max_row > BLOCK_ROWS_MAX_SPREAD * avg)
        return 0;
    const int64_t rows = row_tile_warps(P), want = BLOCK_ROWS_PER_SM * spx__cuda_sm_count(ctx);
    int w = 1;
    while (w < HUGE_ROW_WARPS && (rows * w < want || 2.0 * w * BLOCK_ROWS_ENTRIES <= avg))
        w *= 2;
    if (w < 2)
        return 0;
    snprintf(why, whylen,
             "%d warps per row and column tile (%lld warps) because rows hold %.1f entries on average and at most "
             "%lld: a block per row adds its warps' sums, so merge path's fix-up launch is saved",
             w, (long long)(rows * w), avg, (long long)P->max_row);
    return w;
}

/* Where merge path would be taken and neither a warp nor a block per row
 * pays, AUTO gives every row a warp per column tile of 32 16-byte vectors,
 * each warp taking SPX_CUDA_ROW_RUN adjacent rows one after another (the row
 * kernels' RUNS), for f32 and f64 values, when rows hold at most
 * ROW_RUNS_MAX_ROW entries and the warps fill the GPU (64 per SM)
 * ROW_RUNS_MIN_WAVES times. Such short rows
 * are bound by what each row costs in instructions and waits: merge path
 * walks its stretches of rows in loops that serve any row length, and a
 * warp per row in rows_kernel pays its team arithmetic and a block's start
 * for every row. Measured on an H100 (docs/PERFORMANCE.md, f32 at N = 128
 * and 256, rows of 5-32 entries): 1.10-1.61x faster than merge path on
 * stencils and bands (3D Laplacian 100^3 at N = 128 0.67 -> 0.54 ms, 2D
 * Laplacian 1000^2 0.78 -> 0.48), 1.00-1.06x on uniform random rows whose B
 * rows come from DRAM; runs of 2 or 8 rows were slower than 4. With each
 * row's entries loaded ahead (thirty-fifth round) the stencils and bands
 * went a further 1.13-1.15x (0.54 -> 0.47, 0.48 -> 0.42 ms), uniform rows
 * 0.995-0.999x. f64 at N = 64 and 128, same products: 1.25-1.73x faster
 * than merge path on stencils and bands, 1.10-1.12x on uniform 8/row. */
static bool row_runs_pay(spx_ctx *ctx, const cuda_plan *P, char *why, size_t whylen)
{
    const int64_t tiles = column_tiles(P, 32), warps = (P->m + SPX_CUDA_ROW_RUN - 1) / SPX_CUDA_ROW_RUN * tiles;
    if ((P->dtype != SPX_F32 && P->dtype != SPX_F64) || spx__plan_group_for_n(P->n, P->dtype) != 32 ||
        P->max_row > ROW_RUNS_MAX_ROW || tiles > 65535 ||
        warps < ROW_RUNS_MIN_WAVES * 64 * spx__cuda_sm_count(ctx))
        return false;
    snprintf(why, whylen,
             "a warp per row and column tile, each warp taking %d adjacent rows one after another (%lld warps), "
             "because rows hold at most %lld entries and the warps fill the GPU %lld times",
             SPX_CUDA_ROW_RUN, (long long)warps, (long long)P->max_row,
             (long long)(warps / (64 * spx__cuda_sm_count(ctx))));
    return true;
}

/* Whether op(A) may be made of whole 16 x 16 blocks (spx__plan_bsr_from_csr
 * finds out, reading every entry). A nonempty row of such blocks holds 16
 * entries a block, fewer only in the last block column, so only a mean of
 * BSR_MIN_MEAN entries a row or more is looked at: a whole-block matrix whose
 * rows are mostly empty is not. */
#define BSR_MIN_MEAN 8
static bool blocks_may_pay(const cuda_plan *P)
{
    return P->m >= 16 && P->k >= 16 && P->csr.nnz >= BSR_MIN_MEAN * P->m;
}

/* AUTO writes op(A) out densely and runs a dense GEMM when A holds at least
 * 1/share of its cells, share being about how many times the sparse kernels'
 * useful flop rate the GEMM's rate is (on CUDA cores for exact f32; on tensor
 * cores for the tf32/bf16/f16 precisions and for f16 and bf16 data, whose own
 * precision the GEMM keeps; with 16-bit operands twice tf32's share: on the
 * DLMC layers of 2 % density at N = 4096 their GEMM took 0.55-0.87 of the
 * sparse kernels' time, tf32's 0.90-1.01); when N is wide enough for the GEMM to reach that
 * rate; when the product is large enough (nnz x N) for the sparse kernels to
 * take over ~10 us on tensor cores and ~20 us exact, below which the dense
 * path's fixed cost is not won back (the GEMM's launch and the non-finite
 * pass, with B's finite copy where beta != 0 or f32 data is rounded: 14-27
 * us, bound by the host's launches, on small products; on CUDA cores the
 * GEMM gains too little to make up for it); and
 * when the dense copy takes at most an eighth of device memory. On f16 and
 * bf16 data, where TILED would run instead (`tiled`), the least work is
 * DENSE_MIN_WORK_16_OVER_TILED: TILED on 16-bit values keeps up with the
 * dense path's fixed cost (about 14 us with beta = 0, B read in place) to
 * about there. Where spx's own GEMM runs the product (small, 16-bit
 * operands) that fixed cost is one launch, and its time grows with k, which
 * each block walks (H200, bf16: 7-8 us at k = 128, 11-12 us at k = 512, at
 * N = 256-4096), while the sparse kernels' grows with nnz x N (about 1 us
 * per 2.5e6): the least work is then DENSE_MIN_WORK_OWN_GEMM_PER_K x k and
 * the share DENSE_SHARE_OWN_GEMM (never more than cuBLASLt's least work,
 * which the own GEMM beats where it runs: its wgmma kernel cuts a long k into
 * parts; 512 x 4608 at 95 % sparsity, N = 256, went from cuBLASLt's route,
 * 18-20 us, to the sparse kernels, 26.7, under 8e3 x k alone; it takes 14 us).
 * On DLMC layers of 64-512 rows it took
 * 7-11 us where AUTO's sparse kernels had taken 9-19, and lost at 2 % of the
 * cells and at k = 512 with nnz x N = 6.7e6 (10.8 us against 8.6); with k
 * up to 1152 for 16-bit data, the 128 x 1152 layers at N = 4096 took 15.5 us
 * where cuBLASLt's route had taken 15-18. Its kernel then got faster for
 * 16-bit B (6.8 us at 512 x 512 x 1024, 8.2 at 128 x 1152 x 1024), so that
 * with nnz x N from 8e3 x k the eight DLMC products that asked for 8e3-2.4e4
 * x k took 5.7-11.9 us where the sparse kernels took 7.2-16.6 (bf16 data);
 * f32 data, which it also rounds, still lost there (the 512 x 512 layer at
 * N = 256: 10.3 us against 8.8) and keeps 2.4e4 x k. Its wgmma kernel (compute
 * capability 9.0, 16-bit operands: f32 data rounded to them too) is as fast as
 * cuBLASLt's route where it runs, so it asks for the share of cuBLASLt's
 * 16-bit GEMMs, DENSE_SHARE_16: at 1/25 the 2 % 512 x 2048 layer at N = 4096
 * went to the sparse kernels (48.8 us against 26.3). Measured on DLMC layers
 * (docs/PERFORMANCE.md): f32 data on an H100, bf16 and f16 data on an H200;
 * f64 takes it only when forced. */
static bool dense_on_tensor_cores(const cuda_plan *P)
{
    return data16(P) || P->precision != SPX_PRECISION_EXACT;
}

static int64_t dense_share(const cuda_plan *P)
{
    if (P->dtype == SPX_F64)
        return 0;
    if (!dense_on_tensor_cores(P))
        return DENSE_SHARE_F32;
    return spx_dtype_size(spx__plan_operand_type(P)) == 2 ? DENSE_SHARE_16 : DENSE_SHARE_TF32;
}

static bool dense_pays(spx_ctx *ctx, const cuda_plan *P, bool tiled, char *why, size_t whylen)
{
    /* B's rows start on 16 bytes where ldb = N (the plan cannot know ldb) */
    const bool own = spx__plan_dense_mma_pays(ctx, P) && P->n * (int64_t)spx_dtype_size(P->dtype) % 16 == 0;
    const double cells = (double)P->m * (double)P->k,
                 cublaslt = data16(P) && tiled           ? DENSE_MIN_WORK_16_OVER_TILED
                            : dense_on_tensor_cores(P) ? DENSE_MIN_WORK_TC
                                                       : DENSE_MIN_WORK_F32,
                 own_k = (data16(P) ? DENSE_MIN_WORK_OWN_GEMM_PER_K : DENSE_MIN_WORK_OWN_GEMM_ROUNDED_PER_K) *
                         (double)P->k,
                 min_work = own && own_k < cublaslt ? own_k : cublaslt;
    const int64_t share = own && !spx__plan_dense_wgmma(ctx, P) ? DENSE_SHARE_OWN_GEMM : dense_share(P);
    /* cuBLASLt's tensor-core GEMM where k's operand row is not whole 16-byte
     * vectors: 4-5x slower (H200, bf16 data, k = 2003 against 2048 at N =
     * 1024: 76-79 us against 15-16, cuBLAS on the same dense A; bcsstk13, k =
     * 2003, at N = 512 and 1024: 49 and 86 us where merge path took 25 and 37) */
    const bool k_whole = P->k * (int64_t)spx_dtype_size(spx__plan_operand_type(P)) % 16 == 0;
    if (!own && dense_on_tensor_cores(P) && !k_whole)
        return false;
    if (!share || P->n < DENSE_MIN_N || cells == 0 || (double)P->csr.nnz * (double)share < cells ||
        (double)P->csr.nnz * (double)P->n < min_work ||
        spx__plan_dense_bytes(P) > spx__cuda(ctx)->info.global_mem_bytes / 8)
        return false;
    snprintf(why, whylen, "chosen because A holds %.1f%% of its cells (at least 1/%lld: a dense GEMM at this precision, "
                          "%s, then beats the sparse kernels), N >= %d and nnz x N = %.3g >= %.3g",
             100.0 * (double)P->csr.nnz / cells, (long long)share, own ? "spx's own in one launch" : "cuBLASLt's",
             DENSE_MIN_N, (double)P->csr.nnz * (double)P->n, min_work);
    return true;
}

/* One partition pass (spx__cuda_merge_partition); *longest as it documents. */
static spx_status run_partition(spx_ctx *ctx, cuda_plan *P, int aligned, unsigned long long *dev_longest,
                                int64_t *longest)
{
    cudaStream_t st = spx__cuda(ctx)->stream;
    unsigned long long host = 0;
    spx_status s;
    if ((s = spx__cuda_check(ctx, cudaMemsetAsync(dev_longest, 0, sizeof host, st), "merge partition")) ||
        (s = spx__cuda_check(ctx,
                             spx__cuda_merge_partition(&P->csr, P->mp_items, P->mp_nwarps, aligned, P->mp_row,
                                                       P->mp_nnz, dev_longest, st),
                             "merge partition kernel")) ||
        (s = spx__cuda_download(ctx, &host, dev_longest, sizeof host)) || (s = spx__cuda_sync(ctx)))
        return s;
    *longest = (int64_t)host;
    return SPX_OK;
}

/* The merge partition. Warp starts move back to row starts (no row is cut:
 * no carries, no fix-up launch) when that moves no start by more than half a
 * warp's share, i.e. no warp gets more than 1.5 times its items. Where they
 * would move further but the longest row is at most a share, the share is
 * raised to twice the longest row, which keeps every row whole with at least
 * half the warps: on an H200 the carries cost more than those warps (26
 * products of pruned layers and meshes, f32 and 16-bit data: 0.98-1.91x,
 * docs/PERFORMANCE.md). Otherwise rows are cut where the equal shares fall.
 * Where a cut row reaches more than MERGE_FIXUP_SERIAL warps past its first,
 * pieces are added in groups of about the square root of that most (every
 * row cut into more pieces than a group), so that no warp of the fix-up adds
 * more than about that many. */
static spx_status prepare_merge(spx_ctx *ctx, cuda_plan *P)
{
    P->mp_items = merge_items(ctx, P);
    P->mp_share = 0;
    P->mp_nwarps = (P->m + P->csr.nnz + P->mp_items - 1) / P->mp_items;
    if (P->mp_nwarps < 1)
        P->mp_nwarps = 1;
    size_t bytes = (size_t)(P->mp_nwarps + 1) * sizeof(int64_t);
    unsigned long long *dev_longest = NULL;
    int64_t longest = 0;
    spx_status s;
    if ((s = spx__plan_alloc(ctx, P, (void **)&P->mp_row, bytes, "merge partition")) ||
        (s = spx__plan_alloc(ctx, P, (void **)&P->mp_nnz, bytes, "merge partition")) ||
        (s = spx__cuda_alloc(ctx, (void **)&dev_longest, sizeof *dev_longest, "merge partition")) ||
        (s = run_partition(ctx, P, 1, dev_longest, &longest)))
        goto done;
    P->mp_row_aligned = 2 * longest <= P->mp_items;
    if (!P->mp_row_aligned && P->max_row <= P->mp_items) {
        P->mp_share = P->mp_items;
        P->mp_items = 2 * P->max_row; /* no start then moves by more than half a share */
        P->mp_nwarps = (P->m + P->csr.nnz + P->mp_items - 1) / P->mp_items;
        if ((s = run_partition(ctx, P, 1, dev_longest, &longest)))
            goto done;
        P->mp_row_aligned = 2 * longest <= P->mp_items;
    }
    if (!P->mp_row_aligned && !(s = run_partition(ctx, P, 0, dev_longest, &longest)) &&
        longest > MERGE_FIXUP_SERIAL)
        for (P->mp_group = 1; P->mp_group * P->mp_group < longest; P->mp_group++)
            ;
done:
    spx__cuda_free(ctx, dev_longest);
    return s;
}

/* Kernel per bin. Every bin shares one group of lanes sized to cover N (or the
 * column panel), a 16-byte vector's worth of columns each; short rows get a
 * team of just that group, rows long enough to keep a warp busy get a
 * warp-wide team whose sub-groups split the entries, huge rows get several
 * warps. Medium rows keep a team of one group where, a group a row, they
 * fill MEDIUM_ROWS_GROUP_FILL of the threads the GPU holds at once; fewer
 * of them are split, so that the longest does not hold up the product. H200,
 * f32, every row forced to a group against a warp, time over time, on rows
 * of 24 entries or more on average and at most 256: 0.29-1.02x at fills of
 * 0.48-7.8 (60 products: 16 generated matrices of 16384-262144 rows, N =
 * 8-32), 0.81-0.99x at 0.24 at N = 8-16 but 1.18-1.24x at N = 64 (6),
 * 1.29-4.8x at 0.12 and under (70: DLMC, SuiteSparse, pruned layers of
 * 64-16384 rows); docs/PERFORMANCE.md. (The bound was four times over
 * before, from 1M rows of 128 at N = 32: 2.93 ms a group a row, 3.86 over a
 * warp.) A small product
 * (small_product) splits its small rows too (splitting them in larger ones,
 * ca-CondMat and p2p-Gnutella31 at N = 32, cost 20 %), and gets narrower
 * column tiles, down to 8 lanes, while its warps still fit two waves: more
 * warps, each with fewer loads one after another; not with `full_tiles`
 * (a warp per row in the batches' place: merge_place_first). */
static void choose_bin_kernels(spx_ctx *ctx, cuda_plan *P, bool full_tiles)
{
    int64_t resident_threads = 2048 * spx__cuda_sm_count(ctx);
    int64_t vec = 16 / (int64_t)spx_dtype_size(P->dtype);
    int gn = P->row_batches ? SPX_CUDA_BATCH_LANES(P->row_batch, P->row_batch_cols)
             : P->panel > 0 ? (int)(P->panel / vec)
                            : spx__plan_group_for_n(P->n, P->dtype);
    /* W warps per row (block_rows_pay) were counted at the full group */
    bool small =
        P->alg == SPX_SPMM_AUTO && P->row_warps < 2 && !P->row_batches && !full_tiles && small_product(ctx, P);
    while (small && !P->panel && gn > 8 && fits_two_waves(ctx, P, gn / 2))
        gn /= 2;
    P->group = P->alg == SPX_SPMM_ROW_SPLIT && gn > 16 ? 16 : gn;
    for (int b = 0; b < NBINS; b++) {
        plan_bin *B = &P->bins[b];
        B->team = P->group;
        B->warps = 0;
        switch (P->alg) {
        case SPX_SPMM_ROW_SPLIT:
        case SPX_SPMM_ROW_BATCHES: /* every row in the one launch of batches (none where m is 0) */
            break;
        case SPX_SPMM_WARP_ROW: B->team = 32; break;
        case SPX_SPMM_BLOCK_ROW: B->warps = HUGE_ROW_WARPS; break;
        default: /* AUTO */
            if (P->row_batches) /* every row in one launch */
                break;
            if (P->row_warps > 1)
                B->warps = P->row_warps;
            else if (b == 5)
                B->warps = HUGE_ROW_WARPS;
            else if (P->row_runs || P->row_warps == 1 || b >= 4 ||
                     (b == 3 && (double)(B->nrows * P->group) < MEDIUM_ROWS_GROUP_FILL * (double)resident_threads) ||
                     (b == 2 && small && B->nrows * P->group < 4 * resident_threads))
                B->team = 32;
        }
        B->alg = P->row_batches ? SPX_SPMM_ROW_BATCHES
                 : B->warps     ? SPX_SPMM_BLOCK_ROW
                 : B->team == 32 ? SPX_SPMM_WARP_ROW
                                 : SPX_SPMM_ROW_SPLIT;
    }
}

/* The batches' slots over rows_sorted's rows (`order`, NULL: 0, 1, ...; A's
 * offsets `rowptr`): the rows in order, those of more than `cap` entries
 * (*cut rows) cut into equal pieces of at most `cap` (into
 * SPX_CUDA_BATCH_PIECE_TEAMS longer pieces where that many do not hold the
 * row), each cut row's pieces within one
 * aligned group of SPX_CUDA_BATCH_PIECE_TEAMS slots (the group's rest left
 * empty where they would cross its end). Writes them to `slots` (NULL: only
 * counts them); returns their count. */
static int64_t lay_batch_slots(int64_t m, const int64_t *rowptr, const int32_t *order, int64_t cap,
                               spx_cuda_batch_slot *slots, int64_t *cut)
{
    const int64_t g = SPX_CUDA_BATCH_PIECE_TEAMS;
    int64_t n = *cut = 0;
    for (int64_t i = 0; i < m; i++) {
        const int32_t r = order ? order[i] : (int32_t)i;
        const int64_t first = rowptr[r], len = rowptr[r + 1] - first;
        int64_t count = len > cap ? (len + cap - 1) / cap : 1;
        if (count > g)
            count = g;
        if (count > 1) {
            *cut += 1;
            for (; n % g + count > g; n++)
                if (slots)
                    slots[n] = (spx_cuda_batch_slot){0, 0, -1, 0};
        }
        for (int64_t q = 0; slots && q < count; q++)
            slots[n + q] = (spx_cuda_batch_slot){first + len * q / count, first + len * (q + 1) / count,
                                                 q ? -1 : r, q ? 0 : (int32_t)count};
        n += count;
    }
    return n;
}

/* The batches' slots where rows are cut (spx__row_batches_cut's c), and the
 * grid over them in *shape; the bound on a piece doubled, up to the cut's
 * limit, while that grid would pass the cut's bound (more waves, or for a
 * rounds cut more rows on the busiest SM). Where it still does: for a fill
 * or rounds cut, no slots and c->cap 0 (the rows stay whole); for a tail
 * cut, unless `forced`, no slots (*shape left as it is). c->cap: the last
 * bound tried; *cut: the rows cut. (A fill cut's grid always fits by the
 * last bound, see spx__row_batches_cut. A rounds cut's fits by its one
 * bound: no row makes more pieces than rounds_pieces counted, so the slots
 * number at most those it counted, and fewer slots never put more rows on
 * the busiest SM, blocks of 256 threads instead of 512 included. The
 * branch is a guard.) */
spx_status spx__lay_cut_slots(spx_ctx *ctx, const cuda_plan *P, const int64_t *rowptr, const int32_t *order,
                              bool forced, batches_shape *shape, batch_cut *c, int64_t *cut,
                              spx_cuda_batch_slot **slots, int64_t *nslots)
{
    *slots = NULL;
    *nslots = *cut = 0;
    for (;;) {
        const int64_t n = lay_batch_slots(P->m, rowptr, order, c->cap, NULL, cut);
        const batches_shape b = spx__batches_shape_of(ctx, P, n);
        const bool fits = c->kind == BATCH_CUT_ROUNDS ? busiest_sm_rows(ctx, &b) <= c->sm_rows
                                                      : batches_waves(ctx, &b) <= c->waves;
        if (!fits && 2 * c->cap <= c->limit) {
            c->cap *= 2;
            continue;
        }
        const bool stay_whole = c->kind != BATCH_CUT_TAIL;
        if (!fits && (stay_whole || !forced)) {
            if (stay_whole)
                c->cap = *cut = 0;
            return SPX_OK;
        }
        if (!(*slots = spx__malloc((size_t)n * sizeof **slots)))
            return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (batch slots)");
        lay_batch_slots(P->m, rowptr, order, c->cap, *slots, cut);
        *nslots = n;
        *shape = b;
        return SPX_OK;
    }
}

/* The batches' cut (spx__row_batches_cut) and its slots (spx__lay_cut_slots)
 * over the row offsets and rows_sorted downloaded from the device, the slots
 * uploaded to P. */
static spx_status cut_batch_rows(spx_ctx *ctx, cuda_plan *P, bool forced, batches_shape *shape, batch_cut *c,
                                 int64_t *cut)
{
    const int64_t m = P->m;
    *cut = 0;
    if (!(*c = spx__row_batches_cut(ctx, P, shape)).cap)
        return SPX_OK;
    int64_t *rowptr = NULL, n = 0;
    int32_t *order = NULL;
    spx_cuda_batch_slot *slots = NULL;
    spx_status s = download_row_offsets(ctx, P, &rowptr);
    if (s)
        goto done;
    if (P->rows_sorted && !(order = spx__malloc((size_t)m * sizeof *order))) {
        s = spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (batch slots)");
        goto done;
    }
    if (order && ((s = spx__cuda_download(ctx, order, P->rows_sorted, (size_t)m * sizeof *order)) ||
                  (s = spx__cuda_sync(ctx))))
        goto done;
    if ((s = spx__lay_cut_slots(ctx, P, rowptr, order, forced, shape, c, cut, &slots, &n)) || !slots)
        goto done;
    if (!(s = spx__plan_upload(ctx, P, (void **)&P->batch_slots, slots, (size_t)n * sizeof *slots, "batch slots")))
        P->batch_nslots = n;
done:
    spx__free(rowptr);
    spx__free(order);
    spx__free(slots);
    return s;
}

/* The rounds of blocks (the blocks over those the SMs hold at once, rounded
 * up) of the batches' grid b with its last column tile `last` wide, in a
 * launch of its own after the others (blocks of the same rows, teams of
 * fewer lanes, so more of them an SM); *whole: with every tile b->cols
 * wide. */
static int64_t last_tile_rounds(spx_ctx *ctx, const batches_shape *b, int64_t last, int64_t *whole)
{
    const int64_t sms = spx__cuda_sm_count(ctx), per_tile = b->blocks / b->tiles;
    const int last_threads = (int)b->rows * SPX_CUDA_BATCH_LANES(b->batch, (int)last);
    const int64_t held = sms * b->blocks_per_sm, last_held = sms * SPX_CUDA_BATCH_BLOCKS_PER_SM(last_threads, b->batch);
    *whole = (b->blocks + held - 1) / held;
    return (b->blocks - per_tile + held - 1) / held + (per_tile + last_held - 1) / last_held;
}

/* The batches' last column tile in grid b: where N leaves 32 columns or
 * fewer past its tiles of b->cols, a tile as narrow as those columns
 * (spx__cuda_batch_tile_cols) in a launch of its own after the others, if
 * that makes fewer rounds of blocks (last_tile_rounds) and A's longest row
 * holds at most ROW_BATCHES_LAST_TILE_MAX_SKEW times the average; else
 * b->cols. The narrower tile's blocks then run side by side and not in
 * the others' last round. H200, f32 and bf16, the last 16 or 32 columns in
 * a launch of their own against the tile of 64 at N = 80, 96, 160 and 288
 * (docs/PERFORMANCE.md, seventy-fifth round):
 * - in AUTO's batches, split wherever N allowed: at 0.1-1.0 waves 0.52-0.73x
 *   of the tile of 64's speed over 66 products (the second launch waits on
 *   the first's longest rows); past a wave 1.02-1.33x (1.163x) over the 58
 *   pruned layers' products whose rounds fell, 0.70-1.10x (0.965x) over the
 *   39 whose rounds did not;
 * - forced, R-MAT of scale 14-18 at N = 96 (the longest row 174-1057 times
 *   the average) 0.78-0.85x though their rounds fell: the longest rows'
 *   blocks, not the rounds, set the time, twice over;
 * - AUTO under this rule against the tile of 64: 1.188x over the 42 pruned
 *   layers' products whose plan changed (1.07-1.32x), 1.123x over 12 held
 *   out (1.02-1.22x); no DLMC or shared-matrix plan changed.
 * The last tile in the same launch (one kernel with both tiles' code) took
 * registers from the other (40-136 bytes spilled with 16 entries a batch):
 * 0.918x over 121 products of up to two waves (0.59-1.09x; 0.701x at N =
 * 80). */
int64_t spx__batches_last_cols(spx_ctx *ctx, const cuda_plan *P, const batches_shape *b)
{
    const int64_t rest = P->n > b->cols ? P->n % b->cols : 0, last = spx__cuda_batch_tile_cols(rest);
    int64_t whole;
    if (!rest || last >= b->cols || (double)P->max_row > ROW_BATCHES_LAST_TILE_MAX_SKEW * entries_per_row(P))
        return b->cols;
    return last_tile_rounds(ctx, b, last, &whole) < whole ? last : b->cols;
}

/* Every row in one launch of the batches (and the last column tile in one of
 * its own where spx__batches_last_cols says so), in shape b (row_batches_may_pay's
 * or, forced, spx__batches_shape_of's), the rows cut where the longest is a tail,
 * the rows make at most half a wave or whole rows would leave the last round
 * of blocks part empty (cut_batch_rows), which shapes the grid again over
 * the slots. AUTO (not `forced`) does not take them where it
 * cannot cut a tail into a grid of at most ROW_BATCHES_PIECE_MAX_WAVES waves.
 * On bf16 data the shape of 32 entries a batch, once 0.77-0.90x of AUTO's
 * other choices on five of the seven DLMC products that take it, runs
 * 1.09-1.50x faster than them on all seven since 16-bit B is loaded ahead of
 * its FMAs (fma_rows16; H200, docs/PERFORMANCE.md); f16 data, the same
 * kernels, was not timed.
 * H200, against AUTO before (merge path, TILED): the 10 % DLMC 512 x 2048
 * layer at N = 256 1.78x (14.0 us, 1.05 waves); R-MAT graphs of 512-1024
 * nodes at 5-17 % of the cells, N = 256 and 512, 1.09-1.80x on eight of nine
 * products (1.0-2.5 waves), 0.89x on one; of 2048 nodes at N = 256 (2.3
 * waves) 0.95-0.97x; with pieces of 1.25 times the share and no bound on the
 * waves, 0.90-0.96x against merge path on four waves. Where the rows make at
 * most half a wave, cut to fill one (bounds of 16 entries or more), against
 * them whole, H200, same call, two runs each: generated pruned layers of 32-256 rows (k = 256-2048, 5-20 % of
 * the cells, N = 256-1024) 1.038x over 108 products (1.05-1.36x on 26 of
 * them, none slower by over 4 %), the DLMC 64 x 256, 128 x 1152 and 256 x
 * 1024 layers at N = 256 and 1024 1.13-1.35x on six products; cut also
 * where the rows made 0.97 of a wave, ten products lost 0.80-0.95x and seven
 * gained 1.05-1.12x. Every row cut into 2-4 pieces where rounds_pieces' model
 * pays (ROW_BATCHES_PIECE_COST 64 entries; then where it put the time under
 * 0.9 of the uncut grid's, now under the uncut grid's: see rounds_pieces),
 * against them whole, H200, same binary, two runs each: 1.18-1.31x on all 19 products it cut
 * out of 180 (generated pruned layers of 96-1536 rows, k = 1024-8192, 10-30
 * % of the cells, and 24 R-MAT graphs; N = 256-1024; the 19 all pruned
 * layers, their longest rows 1.05-1.18 times the average, so that the
 * bound on the spread, which came later, leaves them as they were); none of
 * the 34 DLMC layers cut. A model that counted a grid's rounds but not a
 * block's rows (cost 32) also cut blocks of 256 threads at 0.97 of a wave
 * into as many of 512: 0.91-1.06x (docs/PERFORMANCE.md). *taken says
 * whether it took them.
 * The shape in words in why, and with AUTO why it pays. */
static spx_status take_row_batches(spx_ctx *ctx, cuda_plan *P, const batches_shape *b, bool forced, char *why,
                                   size_t whylen, bool *taken)
{
    batches_shape shape = *b;
    batch_cut c;
    int64_t cut;
    spx_status s;
    *taken = false;
    if ((s = cut_batch_rows(ctx, P, forced, &shape, &c, &cut)) || (c.cap && !P->batch_slots))
        return s;
    *taken = true;
    P->row_batches = shape.threads;
    P->row_batch = shape.batch;
    P->row_batch_cols = (int)shape.cols;
    P->row_batch_last_cols = (int)spx__batches_last_cols(ctx, P, &shape);
    choose_bin_kernels(ctx, P, false);
    int len = describe_row_batches(&shape, why, whylen);
    if (P->row_batch_last_cols < P->row_batch_cols && len < (int)whylen) {
        int64_t whole;
        const int64_t rounds = last_tile_rounds(ctx, &shape, P->row_batch_last_cols, &whole);
        len += snprintf(why + len, whylen - (size_t)len,
                        "; the last %lld columns in a tile of %lld, in a launch of its own after the others: %lld "
                        "rounds of blocks instead of %lld",
                        (long long)(P->n % shape.cols), (long long)P->row_batch_last_cols, (long long)rounds,
                        (long long)whole);
    }
    if (cut && len < (int)whylen) {
        char whose[192];
        if (c.kind == BATCH_CUT_FILL)
            snprintf(whose, sizeof whose, "the rows made %.2f of a wave", batches_waves(ctx, b));
        else if (c.kind == BATCH_CUT_ROUNDS)
            snprintf(whose, sizeof whose,
                     "whole rows made %.2f waves, the busiest SM's blocks %lld x %lld rows; in pieces, %lld x %lld",
                     batches_waves(ctx, b), (long long)batches_rounds(ctx, b), (long long)b->rows,
                     (long long)batches_rounds(ctx, &shape), (long long)shape.rows);
        else
            snprintf(whose, sizeof whose, "over %d times a team's share, %.0f", ROW_BATCHES_MAX_TAIL,
                     row_batches_share(ctx, P, b));
        len += snprintf(why + len, whylen - (size_t)len,
                        "; rows of over %lld entries (%lld; the longest %lld, %s) cut into up to %lld pieces on teams "
                        "beside each other, the first piece's team adding the others' sums in order (%lld slots)",
                        (long long)c.cap, (long long)cut, (long long)P->max_row, whose,
                        (long long)(c.kind == BATCH_CUT_ROUNDS ? c.pieces : SPX_CUDA_BATCH_PIECE_TEAMS),
                        (long long)P->batch_nslots);
    }
    if (forced || len >= (int)whylen)
        return SPX_OK;
    if (P->n < ROW_BATCHES_MIN_N)
        snprintf(why + len, whylen - (size_t)len,
                 ", because N = %lld is small and the blocks make %.2f waves: the product waits on its loads, "
                 "and a team keeps %d of them in flight a lane",
                 (long long)P->n, batches_waves(ctx, b), shape.batch);
    else if (shape.short_rows)
        snprintf(why + len, whylen - (size_t)len,
                 ", because A's rows are short (at most %lld entries, %.1f%% of the cells, k = %lld) and the blocks "
                 "number %.1f an SM in all (at most %d)",
                 (long long)P->max_row, 100.0 * shape.density, (long long)P->k,
                 (double)shape.blocks / (double)spx__cuda_sm_count(ctx), ROW_BATCHES_SHORT_MAX_BLOCKS_PER_SM);
    else
        snprintf(why + len, whylen - (size_t)len,
                 ", because A holds %.1f%% of its cells (a block's rows share B's rows in L1), k = %lld and a tile's "
                 "slice of B (%.1f MB) stays in the L2 cache",
                 100.0 * shape.density, (long long)P->k, shape.slice_bytes / 1e6);
    return SPX_OK;
}

static const int64_t default_bounds[4] = {8, 32, 256, 4096};

/* A column tile of the row kernels near `cols` columns: a power of two of
 * 16-byte vectors, 1 to 32 of them. */
static int64_t panel_of(const cuda_plan *P, int64_t cols)
{
    const int64_t vec = 16 / (int64_t)spx_dtype_size(P->dtype);
    int64_t lanes = 1;
    while (lanes < 32 && 2 * lanes * vec <= cols)
        lanes *= 2;
    return lanes * vec;
}

/* AUTO cuts A's columns into S slabs (spx_spmm_options.k_slabs) when the row
 * kernels' reads of B rows would mostly miss the L2 cache and wait on DRAM:
 * f32 data with B at least SLAB_MIN_B_OVER_L2 times the L2 cache; rows long
 * enough (SLAB_MIN_ENTRIES entries per slab on average) that C's extra reads
 * and writes, once per slab, stay small beside the B rows they save; and
 * neighbouring rows sharing few columns (at most SLAB_MAX_SHARED of the
 * entries): rows that share them (block-sparse, banded, most meshes) find
 * their B rows in L1 or L2 already; and enough B rows read per launch
 * (SLAB_MIN_LAUNCH_BYTES) that the launches' fixed costs stay small. S gives
 * each launch's slice of B, a column tile of SLAB_TILE_BYTES of k / S rows,
 * SLAB_L2_SHARE of the L2 cache. Measured on an H100 (docs/PERFORMANCE.md), f32, uniform 1M x 1M
 * with 128 entries a row: N = 128 21.0 -> 14.3 ms (7 slabs, tiles of 32
 * columns; 5-8 slabs 14.1-14.9 ms), N = 256 42.1 -> 29.0 ms; tiles of 128
 * columns in 16-32 slabs took 14.6-18.2 ms (C's passes). With 32 entries a
 * row slabs lost (N = 128: 5.5 -> 5.8 ms with 4, more with more). Returns
 * S, or 0. */
static int slabs_pay(spx_ctx *ctx, cuda_plan *P, char *why, size_t whylen, spx_status *st)
{
    const double es = (double)spx_dtype_size(P->dtype), l2 = (double)spx__cuda(ctx)->info.l2_bytes,
                 b_bytes = (double)P->k * (double)P->n * es;
    *st = SPX_OK;
    if (P->dtype != SPX_F32 || l2 <= 0 || P->m < 2 || b_bytes < SLAB_MIN_B_OVER_L2 * l2)
        return 0;
    const int64_t narrow = panel_of(P, SLAB_TILE_BYTES / (int64_t)es), tile = P->n < narrow ? P->n : narrow;
    const double slabs = ceil((double)P->k * (double)tile * es / (SLAB_L2_SHARE * l2)),
                 avg = entries_per_row(P);
    const double launches = slabs * (double)((P->n + tile - 1) / tile),
                 gathered = (double)P->csr.nnz * (double)P->n * es; /* bytes of B rows the product reads */
    if (slabs < 2 || slabs > SPX_SPMM_MAX_K_SLABS || avg < SLAB_MIN_ENTRIES * slabs ||
        gathered < SLAB_MIN_LAUNCH_BYTES * launches)
        return 0;
    unsigned long long *dev = NULL, shared = 0;
    cudaStream_t stream = spx__cuda(ctx)->stream;
    if (!(*st = spx__cuda_alloc(ctx, (void **)&dev, sizeof *dev, "shared columns")) &&
        !(*st = spx__cuda_check(ctx, cudaMemsetAsync(dev, 0, sizeof *dev, stream), "shared columns")) &&
        !(*st = spx__cuda_check(ctx, spx__cuda_shared_columns(&P->csr, dev, stream), "shared_columns kernel")) &&
        !(*st = spx__cuda_download(ctx, &shared, dev, sizeof shared)))
        *st = spx__cuda_sync(ctx);
    spx__cuda_free(ctx, dev);
    const double share = (double)shared / (double)P->csr.nnz;
    if (*st || share > SLAB_MAX_SHARED)
        return 0;
    snprintf(why, whylen,
             "because B (%.0f MB) is %.1f times the L2 cache, rows hold %.1f entries on average and %.0f%% of the "
             "entries lie in a column the row before holds",
             b_bytes / 1e6, b_bytes / l2, avg, 100.0 * share);
    return (int)slabs;
}

/* The row kernels slab by slab: `slabs` slabs of A's columns, column tiles
 * of `panel` columns (0: SLAB_TILE_BYTES), rows binned by their whole length
 * over the slabs (bounds scaled by the slab count, in place). */
static spx_status prepare_slabs(spx_ctx *ctx, cuda_plan *P, int slabs, int64_t panel, int64_t bounds[4])
{
    const int64_t es = (int64_t)spx_dtype_size(P->dtype);
    spx_status s;
    P->slabs = slabs;
    P->panel = panel_of(P, panel > 0 ? panel : SLAB_TILE_BYTES / es);
    for (int i = 0; i < 4; i++)
        bounds[i] = bounds[i] > INT64_MAX / slabs ? INT64_MAX : bounds[i] * slabs;
    if ((s = spx__plan_alloc(ctx, P, (void **)&P->slab_starts, (size_t)((slabs - 1) * P->m) * sizeof(int64_t),
                             "slab offsets")) ||
        (s = spx__cuda_check(ctx, spx__cuda_slab_starts(&P->csr, slabs, P->slab_starts, spx__cuda(ctx)->stream),
                             "slab_starts kernel")) ||
        (s = build_bins(ctx, P, bounds, true))) /* on the same stream, which it waits for */
        return s;
    choose_bin_kernels(ctx, P, false);
    return SPX_OK;
}

/* At the bf16 and f16 precisions the row kernels may read f32 data's B
 * rounded to that type, each call (spx__cuda_round_b): a gathered B row
 * segment then takes half the bytes, and A's values are rounded alike.
 * Forced row algorithms always do, but for the batches, which read B as
 * given. AUTO does where the bytes from memory
 * shrink. An entry is far when the B rows within its distance of the
 * diagonal, on both sides, exceed the L2 cache: its segment comes from
 * memory, 4N bytes or 2N rounded. Near entries find B in L2 after its first
 * reading (4kN, or 2kN of the copy), and the rounding pass moves 6kN. So
 * rounding saves 2N (far - 2k) bytes: it pays from ROUND_B_MIN_FAR_PER_COLUMN
 * far entries a column. From ROUND_B_MIN_N only, and not with slabs of A's
 * columns or asked panels under 64 columns: where a rounded segment is half a
 * 128-byte line (N = 32, or the slabs' 32-column tiles) uniform products
 * with 8, 32 and 128 entries a row took 1.11-1.48x the time (H100,
 * docs/PERFORMANCE.md). *st: the profile's errors. */
static spx_dtype row_kernels_round_b(spx_ctx *ctx, cuda_plan *P, spx_status *st)
{
    enum { NB = SPX_CUDA_DIAGONAL_BUCKETS };
    *st = SPX_OK;
    if (P->dtype != SPX_F32 || P->m == 0 || P->k == 0 || P->n == 0 || P->row_batches ||
        P->alg == SPX_SPMM_ROW_BATCHES || /* they read B as given */
        (P->precision != SPX_PRECISION_BF16 && P->precision != SPX_PRECISION_F16))
        return 0;
    const spx_dtype to = P->precision == SPX_PRECISION_BF16 ? SPX_BF16 : SPX_F16;
    if (P->alg != SPX_SPMM_AUTO)
        return to;
    const double l2 = (double)spx__cuda(ctx)->info.l2_bytes, row_bytes = 4.0 * (double)P->n;
    if (P->n < ROUND_B_MIN_N || P->slabs > 1 || (P->panel > 0 && P->panel < 64) || l2 <= 0 ||
        (double)P->k * row_bytes < l2 ||
        (double)P->csr.nnz < ROUND_B_MIN_FAR_PER_COLUMN * (double)P->k)
        return 0;
    const unsigned long long *prof;
    if ((*st = diagonal_profile(ctx, P, &prof)))
        return 0;
    double far = 0;
    for (int b = 1; b < NB; b++) /* bucket b: distances of bit length b, from 2^(b - 1) */
        if (2.0 * ldexp(1.0, b - 1) * row_bytes >= l2)
            far += (double)prof[b];
    return far >= ROUND_B_MIN_FAR_PER_COLUMN * (double)P->k ? to : 0;
}

spx_status spx__cuda_spmm_plan_create(spx_ctx *ctx, const spx_spmm_args *a, void **out, char **explain)
{
    const spx_matrix *A = a->A;
    spx_spmm_options opts = a->opts ? *a->opts : (spx_spmm_options){0};
    int64_t bounds[4];
    for (int i = 0; i < 4; i++)
        bounds[i] = opts.bin_bounds[i] > 0 ? opts.bin_bounds[i] : default_bounds[i];
    for (int i = 1; i < 4; i++) /* defaults mixed with given bounds must still increase */
        if (bounds[i] < bounds[i - 1])
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "bin bounds must increase (%lld after %lld)",
                             (long long)bounds[i], (long long)bounds[i - 1]);
    if (a->m > INT32_MAX || a->k > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "the cuda backend handles up to 2^31-1 rows and columns (op(A) is %lld x %lld)",
                         (long long)a->m, (long long)a->k);
    /* device matrices are checked here once per version (host ones by ops) */
    if (A->memory == SPX_MEM_DEVICE && ctx->validate && A->checked_version != A->version) {
        spx_matrix *h = NULL;
        spx_status s = spx__cuda_matrix_to_host(ctx, A, &h);
        if (!s)
            s = spx_matrix_check(ctx, h);
        spx_matrix_destroy(h);
        if (s)
            return s;
        ((spx_matrix *)A)->checked_version = A->version;
    }

    cuda_plan *P = spx__calloc(1, sizeof *P);
    if (!P)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (spmm plan)");
    P->op = a->op;
    P->dtype = a->B->dtype;
    P->m = a->m;
    P->k = a->k;
    P->n = a->n;
    P->alg = opts.alg;
    P->precision = opts.precision;
    P->deterministic = ctx->deterministic;
    char why[1024] = "", slab_why[256] = "";
    spx_status s = SPX_OK;
    switch (P->alg) {
    case SPX_SPMM_SELL: s = spx__plan_prepare_sell(ctx, P, A, why, sizeof why); break;
    case SPX_SPMM_BSR:
        s = spx__plan_prepare_bsr(ctx, P, A, why, sizeof why);
        if (!s && P->precision != SPX_PRECISION_EXACT && !spx__cuda_bsr_tc_supported(&P->bsr, P->dtype, P->precision))
            P->precision = SPX_PRECISION_EXACT; /* block shape not fit for the MMA: exact kernel */
        break;
    case SPX_SPMM_OUTER: s = spx__plan_prepare_outer(ctx, P, A); break;
    case SPX_SPMM_GATHER_TC: s = spx__plan_prepare_gather(ctx, P, A, why, sizeof why); break;
    case SPX_SPMM_MERGE_PATH: /* the rows' statistics as AUTO has them (merge_items, prepare_merge) */
        if (!(s = prepare_csr(ctx, P, A, &P->csr)) && !(s = build_bins(ctx, P, bounds, false)))
            s = prepare_merge(ctx, P);
        break;
    case SPX_SPMM_TILED:
        if (!(s = prepare_csr(ctx, P, A, &P->csr)))
            s = prepare_tiled(ctx, P, opts.panel_cols, why, sizeof why);
        break;
    case SPX_SPMM_DENSE:
        if (!(s = prepare_csr(ctx, P, A, &P->csr)))
            s = spx__plan_prepare_dense(ctx, P, A, why, sizeof why);
        break;
    case SPX_SPMM_ROW_BATCHES: /* forced: the shape AUTO would give them */
        if (!batches_type(P->dtype)) {
            s = spx__fail(ctx, SPX_ERR_UNSUPPORTED, "row_batches: f32, f16 or bf16 data only (got %s data)",
                          spx_dtype_name(P->dtype));
            break;
        }
        if ((s = prepare_csr(ctx, P, A, &P->csr)) || (s = build_bins(ctx, P, bounds, true)))
            break;
        if (P->m > 0) {
            const batches_shape b = spx__batches_shape_of(ctx, P, P->m);
            bool taken;
            s = take_row_batches(ctx, P, &b, true, why, sizeof why, &taken);
        } else {
            choose_bin_kernels(ctx, P, false);
        }
        break;
    case SPX_SPMM_BAND: {
        double traffic;
        if (!(s = prepare_csr(ctx, P, A, &P->csr)))
            s = choose_band_shape(ctx, P, opts.panel_cols, false, why, sizeof why, &traffic);
        break;
    }
    default: /* AUTO and the row kernels */
        if ((s = prepare_csr(ctx, P, A, &P->csr)))
            break;
        if (opts.k_slabs > 1 && P->k > 1) { /* asked: no other algorithm */
            s = prepare_slabs(ctx, P, (int)(opts.k_slabs < P->k ? opts.k_slabs : P->k), opts.panel_cols, bounds);
            snprintf(slab_why, sizeof slab_why, "as asked");
            break;
        }
        char reason[256], tiled_reason[256];
        const bool tiled = P->alg == SPX_SPMM_AUTO && tiled_pays(ctx, P, tiled_reason, sizeof tiled_reason);
        if (P->alg == SPX_SPMM_AUTO && dense_pays(ctx, P, tiled, reason, sizeof reason)) {
            P->alg = SPX_SPMM_DENSE;
            if (!(s = spx__plan_prepare_dense(ctx, P, A, why, sizeof why)))
                snprintf(why + strlen(why), sizeof why - strlen(why), "; %s", reason);
            break;
        }
        bool blocks = false;
        if (P->alg == SPX_SPMM_AUTO && blocks_may_pay(P) && (s = spx__plan_bsr_from_csr(ctx, P, &blocks)))
            break;
        if (blocks) {
            /* A tensor-core precision runs on tensor cores. Against the
             * CUDA-core kernel on 16 x 16 blocks at N = 8-256: 1.10-1.55x its
             * speed for f32 data, 1.27-2.0x for bf16 and f16 data; on 32 x 32
             * ones 1.53-1.64x at N = 8, within 3 % at N = 32-256 (H100,
             * docs/PERFORMANCE.md). */
            P->alg = SPX_SPMM_BSR;
            const bool tc = P->precision != SPX_PRECISION_EXACT &&
                            spx__cuda_bsr_tc_supported(&P->bsr, P->dtype, P->precision);
            if (!tc)
                P->precision = SPX_PRECISION_EXACT;
            snprintf(why, sizeof why,
                     "A is made of whole 16x16 blocks (%lld, every cell in the matrix an entry), built on the device: "
                     "each B row segment loaded feeds 16 rows, and B is read as it is; on %s%s%s",
                     (long long)P->bsr.nblocks, tc ? "tensor cores" : "CUDA cores",
                     tc && P->dtype != SPX_F32 ? ", the MMA in the data's own type, " : "",
                     tc && P->dtype != SPX_F32 ? spx_dtype_name(P->dtype) : "");
            break;
        }
        bool binned = false;     /* the bins below are built already */
        bool merge_first = false; /* merge path has taken the batches' place */
        batches_shape batches;
        /* not with asked column panels: the batches choose their own tiles */
        if (P->alg == SPX_SPMM_AUTO && !(opts.panel_cols > 0 && opts.panel_cols < P->n) &&
            row_batches_may_pay(ctx, P, &batches)) {
            /* the longest row is known once the bins are built */
            if ((s = build_bins(ctx, P, bounds, true)))
                break;
            binned = true;
            bool taken = false;
            if (row_batches_pay(ctx, P, &batches) && !(merge_first = merge_place_first(ctx, P, &batches)) &&
                ((s = take_row_batches(ctx, P, &batches, false, why, sizeof why, &taken)) || taken))
                break;
        }
        if (tiled && !merge_first) { /* merge path's place first: merge_place_first */
            P->alg = SPX_SPMM_TILED;
            if (!(s = prepare_tiled(ctx, P, 0, why, sizeof why)))
                snprintf(why + strlen(why), sizeof why - strlen(why), "; %s", tiled_reason);
            break;
        }
        bool band = false;
        if (P->alg == SPX_SPMM_AUTO && ((s = band_pays(ctx, P, &band, why, sizeof why)) || band)) {
            if (band)
                P->alg = SPX_SPMM_BAND;
            break;
        }
        int slabs = P->alg == SPX_SPMM_AUTO && opts.k_slabs == 0 ? slabs_pay(ctx, P, slab_why, sizeof slab_why, &s) : 0;
        if (s || slabs > 1) {
            if (slabs > 1)
                s = prepare_slabs(ctx, P, slabs, opts.panel_cols, bounds);
            break;
        }
        if (!binned && (s = build_bins(ctx, P, bounds, true)))
            break;
        /* f32 and 16-bit data at half a warp a row (N = 64 / 128) on a large
         * product without a long row: the row kernels (a warp or a block a
         * row, runs, else the bins) rather than merge path. H200, AUTO against
         * AUTO before (merge path), same call (docs/PERFORMANCE.md):
         * - f32: 1.206x over all 16 products whose plan changed, 1.03-1.71x
         *   (uniform 16384-1M rows of 8-48, pruned layers of 12288-131072
         *   rows, 2D and 3D Laplacians); R-MAT 16 stays on merge path by the
         *   long-row test (the bins took 3.4 times its time);
         * - bf16 / f16: 1.450x / 1.467x over 17 products each, 1.23-1.83x,
         *   and bf16 1.229x over 4 families of 1M rows; no DLMC or
         *   shared-matrix plan changed.
         * f64 (N = 32) keeps merge path (merge_pays takes its large products):
         * the row kernels ran at 0.78x of its speed over the 15 products they
         * would take (0.61x on Laplacians and a band). */
        const bool merge = P->alg == SPX_SPMM_AUTO && merge_pays(ctx, P, merge_first, why, sizeof why);
        if (merge || (P->alg == SPX_SPMM_AUTO && half_warp_large(P))) {
            P->row_warps = warp_rows_pay(ctx, P, merge, why, sizeof why) ? 1 : block_rows_pay(ctx, P, why, sizeof why);
            /* not with asked column panels: the runs' tiles are 32 vectors wide
             * (spx.h: panels apply where AUTO ends on the row kernels) */
            const bool panels = opts.panel_cols > 0 && opts.panel_cols < P->n;
            P->row_runs = !P->row_warps && !panels && row_runs_pay(ctx, P, why, sizeof why);
            if (merge_first)
                snprintf(why + strlen(why), sizeof why - strlen(why),
                         "; taken before the row batches, whose blocks would make %.1f waves for rows of %.1f "
                         "entries on average",
                         batches_waves(ctx, &batches), entries_per_row(P));
            if (merge && !P->row_warps && !P->row_runs) {
                P->alg = SPX_SPMM_MERGE_PATH;
                s = prepare_merge(ctx, P);
                break;
            }
        }
        /* Column panels only when asked: sized to keep B's slice in L2 (at the
         * price of reading A once a panel), they were 1.5-4x slower than none
         * on uniform products with B of 19-96 MB and N = 16-48 (H100,
         * docs/PERFORMANCE.md) */
        if (P->alg == SPX_SPMM_AUTO && opts.panel_cols > 0 && opts.panel_cols < P->n)
            P->panel = panel_of(P, opts.panel_cols);
        choose_bin_kernels(ctx, P, merge_first);
        break;
    }
    if (s) {
        spx__cuda_spmm_plan_destroy(P);
        return s;
    }
    const bool row_kernels = P->alg == SPX_SPMM_AUTO || P->alg == SPX_SPMM_ROW_SPLIT ||
                             P->alg == SPX_SPMM_WARP_ROW || P->alg == SPX_SPMM_BLOCK_ROW ||
                             P->alg == SPX_SPMM_ROW_BATCHES;
    if (row_kernels && !(P->b_round = row_kernels_round_b(ctx, P, &s)) && s) {
        spx__cuda_spmm_plan_destroy(P);
        return s;
    }

    /* the explanation */
    size_t cap = 4096;
    char *txt = spx__malloc(cap);
    if (txt) {
        int len = snprintf(txt, cap,
                           "spmm plan (cuda): op(A) %lld x %lld, nnz %lld, N=%lld, %s, op %s, precision %s%s\n",
                           (long long)P->m, (long long)P->k, (long long)A->nnz, (long long)P->n,
                           spx_dtype_name(P->dtype), P->op ? "T" : "N", spx_precision_name(P->precision),
                           P->deterministic ? ", deterministic" : "");
        if (row_kernels) {
            /* the batches' tiles: row_batch_cols columns whatever the type */
            const int64_t tile = P->row_batches ? (int64_t)P->row_batch_cols : row_tile_cols(P, P->group),
                          tiles = (P->n + tile - 1) / tile;
            /* the batches' last tile, in a launch of its own where narrower (last_tile_rounds) */
            const int64_t last = P->row_batches ? (int64_t)P->row_batch_last_cols : tile;
            len += snprintf(txt + len, cap - (size_t)len, "%s%s%s; rows binned by length:\n",
                            P->alg == SPX_SPMM_AUTO ? "automatic choice per bin"
                                                    : "algorithm forced for every row",
                            P->row_warps || P->row_runs || P->row_batches ? ": " : "",
                            P->row_warps || P->row_runs || P->row_batches ? why : "");
            if (P->b_round)
                len += snprintf(txt + len, cap - (size_t)len,
                                "  B rounded to %s each call (%.1f MB of f32 values%s), A's values alike: each "
                                "gathered B row segment takes half the bytes; sums in f32 on CUDA cores\n",
                                spx_dtype_name(P->b_round), (double)P->k * (double)P->n * 4.0 / 1e6,
                                P->alg == SPX_SPMM_AUTO ? "; entries far enough from the diagonal that their B rows "
                                                          "come from memory"
                                                        : "");
            else if (P->precision != SPX_PRECISION_EXACT)
                len += snprintf(txt + len, cap - (size_t)len, "  operands as given (not rounded), FMA on CUDA cores\n");
            if (P->slabs > 1)
                len += snprintf(txt + len, cap - (size_t)len,
                                "  A's columns in %d slabs of about %lld, %s: each column tile of %lld runs slab by "
                                "slab, one launch each, so that the launch's slice of B (%.1f MB) stays in the L2 "
                                "cache; C is read and written once per slab (bins count whole rows)\n",
                                P->slabs, (long long)(P->k / P->slabs), slab_why, (long long)P->panel,
                                (double)(P->k / P->slabs * P->panel) * (double)spx_dtype_size(P->dtype) / 1e6);
            else if (P->panel > 0)
                len += snprintf(txt + len, cap - (size_t)len,
                                "  columns in panels of %lld (asked, as a power of two of 16-byte vectors): each "
                                "panel's slice of B is %.1f MB, and A is read %lld times\n",
                                (long long)P->panel, (double)(P->k * P->panel) * (double)spx_dtype_size(P->dtype) / 1e6,
                                (long long)((P->n + P->panel - 1) / P->panel));
            else if (last < tile)
                len += snprintf(txt + len, cap - (size_t)len,
                                "  columns in %lld tile%s of %lld and, in a launch of its own after %s, the last "
                                "%lld in a tile of %lld (teams of fewer lanes, blocks of the same rows)\n",
                                (long long)(tiles - 1), tiles > 2 ? "s" : "", (long long)tile,
                                tiles > 2 ? "them" : "it", (long long)(P->n % tile), (long long)last);
            else if (tiles > 1)
                len += snprintf(txt + len, cap - (size_t)len, "  columns in %lld tiles of %lld, each tile its own warps\n",
                                (long long)tiles, (long long)tile);
            for (int b = 0; b < NBINS && len < (int)cap; b++) {
                plan_bin *B = &P->bins[b];
                char range[64];
                if (b == 0)
                    snprintf(range, sizeof range, "0");
                else if (b == 5)
                    snprintf(range, sizeof range, "> %lld", (long long)bounds[3]);
                else
                    snprintf(range, sizeof range, "%lld-%lld", (long long)(b == 1 ? 1 : bounds[b - 2] + 1),
                             (long long)bounds[b - 1]);
                if (!B->nrows)
                    continue;
                len += snprintf(txt + len, cap - (size_t)len, "  %-6s (%s entries): %lld rows, %lld nnz -> %s",
                                bin_names[b], range, (long long)B->nrows, (long long)B->nnz,
                                spx_spmm_alg_name(B->alg));
                if (P->row_batches)
                    len += snprintf(txt + len, cap - (size_t)len, " (in the one launch of batches, above)\n");
                else if (B->warps)
                    len += snprintf(txt + len, cap - (size_t)len,
                                    " (%d warps per row, their sums added in shared memory)\n", B->warps);
                else if (B->team > P->group)
                    len += snprintf(txt + len, cap - (size_t)len,
                                    " (a warp per row: %d lanes cover the columns, %d sub-groups split the entries)\n",
                                    P->group, B->team / P->group);
                else
                    len += snprintf(txt + len, cap - (size_t)len,
                                    " (%d lanes per row cover the columns with %d-byte loads)\n", B->team,
                                    P->b_round ? 8 : 16);
            }
        } else {
            len += snprintf(txt + len, cap - (size_t)len, "%s: %s%s%s\n",
                            opts.alg == SPX_SPMM_AUTO ? "automatic choice for every row"
                                                      : "algorithm forced for every row",
                            spx_spmm_alg_name(P->alg), why[0] ? "; " : "", why);
            if (P->alg == SPX_SPMM_MERGE_PATH && len < (int)cap) {
                char raised[96] = "";
                if (P->mp_share)
                    snprintf(raised, sizeof raised, ", twice the longest row (an equal share is %lld)",
                             (long long)P->mp_share);
                len += snprintf(txt + len, cap - (size_t)len,
                                "  %lld warps per column tile, %lld rows + entries each%s%s\n",
                                (long long)P->mp_nwarps, (long long)P->mp_items, raised,
                                P->mp_row_aligned ? " (moved to row starts: no row is cut, no fix-up)" : "");
            }
            if (P->mp_group && len < (int)cap)
                snprintf(txt + len, cap - (size_t)len,
                         "  the fix-up adds rows cut into more than %lld pieces in groups of %lld first\n",
                         (long long)P->mp_group, (long long)P->mp_group);
        }
        *explain = txt;
    }
    *out = P;
    return SPX_OK;
}


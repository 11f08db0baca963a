/* Operand forms of the SpMM algorithms that do not run on plain CSR: BSR,
 * SELL-C-sigma, outer products (compressed along k), the dense row groups of
 * gather-GEMM and the dense copy of the dense path. */
#include "backend/cuda/dense_gemm.h"
#include "backend/cuda/spgemm_cuda.h"
#include "backend/cuda/spmm_plan.h"
#include "format/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct br x bc blocks of a host CSR (for deciding whether BSR pays). */
static spx_status count_blocks(spx_ctx *ctx, const spx_matrix *H, int64_t br, int64_t bc, int64_t *out)
{
    int64_t bcols = (H->cols + bc - 1) / bc, count = 0;
    int64_t *mark = NULL;
    spx_status s = spx__alloc(ctx, (void **)&mark, bcols > 0 ? bcols : 1, sizeof *mark, "block count");
    if (s)
        return s;
    for (int64_t j = 0; j < bcols; j++)
        mark[j] = -1;
    for (int64_t i = 0; i < H->rows; i++) {
        int64_t b = spx__idx_get(H->offsets, H->itype, i), e = spx__idx_get(H->offsets, H->itype, i + 1);
        for (int64_t p = b; p < e; p++) {
            int64_t bj = spx__idx_get(H->indices, H->itype, p) / bc;
            if (mark[bj] != i / br) {
                mark[bj] = i / br;
                count++;
            }
        }
    }
    spx__free(mark);
    *out = count;
    return SPX_OK;
}

/* op(A) compressed along k into P->outer: for OUTER, and for the terms of
 * B's non-finite values in the algorithms that multiply zeros A does not hold
 * (spmm_dense.cu). */
static spx_status compress_along_k(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A)
{
    const spx_matrix *H;
    spx_matrix *tmp;
    spx_status s = spx__plan_host_operand(ctx, A, P->op, 1, &H, &tmp);
    if (!s)
        s = spx__plan_upload_compressed(ctx, P, H, P->k, P->m, &P->outer);
    spx_matrix_destroy(tmp);
    return s;
}

/* The cells of a host BSR's blocks that lie in the matrix. */
static int64_t cells_in_matrix(const spx_matrix *B)
{
    int64_t cells = 0;
    for (int64_t i = 0; i < spx__bsr_block_rows(B); i++) {
        const int64_t rows = B->rows - i * B->br < B->br ? B->rows - i * B->br : B->br;
        for (int64_t p = spx__idx_get(B->offsets, B->itype, i); p < spx__idx_get(B->offsets, B->itype, i + 1); p++) {
            const int64_t c0 = spx__idx_get(B->indices, B->itype, p) * B->bc;
            cells += rows * (B->cols - c0 < B->bc ? B->cols - c0 : B->bc);
        }
    }
    return cells;
}

spx_status spx__plan_prepare_bsr(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen)
{
    spx_matrix *host = NULL, *bsr = NULL, *tmp = NULL;
    const spx_matrix *src = A;
    int64_t entries = 0; /* of op(A), where converted here */
    spx_status s = SPX_OK;
    if (A->memory == SPX_MEM_DEVICE) {
        if ((s = spx__cuda_matrix_to_host(ctx, A, &host)))
            return s;
        src = host;
    }
    if (!(src->format == SPX_BSR && P->op == SPX_OP_NONE)) {
        const spx_matrix *H;
        if ((s = spx__plan_host_csr(ctx, src, P->op, &H, &tmp)))
            goto done;
        /* 16 x 16 blocks feed the tensor cores; take them unless they store
         * more than 4 values per entry, then 4 x 4 up to 8 per entry */
        int64_t nb16, nb4;
        if ((s = count_blocks(ctx, H, 16, 16, &nb16)) || (s = count_blocks(ctx, H, 4, 4, &nb4)))
            goto done;
        int64_t bs = nb16 * 256 <= 4 * (H->nnz > 0 ? H->nnz : 1) ? 16 : 4;
        if (bs == 4 && nb4 * 16 > 8 * (H->nnz > 0 ? H->nnz : 1)) {
            s = spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                          "bsr: the matrix has no block structure (4x4 blocks would store %.1f values per entry)",
                          (double)nb4 * 16 / (double)H->nnz);
            goto done;
        }
        spx_format_params fp = {.block_rows = bs, .block_cols = bs};
        if (H->dtype == SPX_PATTERN) { /* blocks need explicit ones and zeros */
            spx_matrix *valued = NULL;
            if ((s = spx_matrix_astype(ctx, H, P->dtype, SPX_INDEX_DEFAULT, &valued)))
                goto done;
            spx_matrix_destroy(tmp);
            tmp = valued;
            H = valued;
        }
        entries = H->nnz;
        if ((s = spx_matrix_convert(ctx, H, SPX_BSR, &fp, &bsr)))
            goto done;
        snprintf(why, whylen, "converted to %lldx%lld blocks (%.2f stored values per entry)", (long long)bs,
                 (long long)bs, (double)bsr->nblocks * (double)(bs * bs) / (double)(H->nnz ? H->nnz : 1));
        src = bsr;
    } else {
        snprintf(why, whylen, "the matrix's own %lldx%lld blocks", (long long)src->br, (long long)src->bc);
    }
    spx_cuda_bsr *D = &P->bsr;
    /* every slot of a BSR's blocks is an entry (spx.h); converted here, they
     * hold zeros A does not where A's blocks are not whole */
    D->full = src != bsr || cells_in_matrix(bsr) == entries;
    D->rows = src->rows;
    D->cols = src->cols;
    D->br = src->br;
    D->bc = src->bc;
    D->brows = spx__bsr_block_rows(src);
    D->nblocks = src->nblocks;
    {
        spx_matrix fake = *src; /* reuse the compressed upload for block structure */
        fake.nnz = src->nblocks;
        fake.dtype = SPX_PATTERN;
        spx_cuda_csr c;
        if ((s = spx__plan_upload_compressed(ctx, P, &fake, D->brows, spx__bsr_block_cols(src), &c)))
            goto done;
        D->rowptr = c.rowptr;
        D->colidx = c.colidx;
    }
    D->vals = NULL;
    if (src->dtype != SPX_PATTERN &&
        (s = spx__plan_upload(ctx, P, &D->vals, src->values,
                              (size_t)(src->nblocks * src->br * src->bc) * spx_dtype_size(src->dtype), "plan blocks")))
        goto done;
    if (!D->full)
        s = compress_along_k(ctx, P, A); /* blocks hold zeros A does not: B's non-finite values go apart */
done:
    spx_matrix_destroy(tmp);
    spx_matrix_destroy(bsr);
    spx_matrix_destroy(host);
    return s;
}

spx_status spx__plan_bsr_from_csr(spx_ctx *ctx, cuda_plan *P, bool *full)
{
    const spx_cuda_csr *A = &P->csr;
    const int64_t brows = (A->rows + 15) / 16;
    cudaStream_t st = spx__cuda(ctx)->stream;
    int64_t *counts = NULL, *browptr = NULL, nblocks = 0;
    int *broken = NULL, host_broken = 1;
    void *tmp = NULL, *bvals = NULL;
    int32_t *bcol = NULL;
    size_t tmp_bytes = 0;
    *full = false;
    if (A->nnz == 0 || A->row_end)
        return SPX_OK;
    spx_status s;
    if ((s = spx__cuda_alloc(ctx, (void **)&counts, (size_t)(brows + 1) * 8, "block count")) ||
        (s = spx__cuda_alloc(ctx, (void **)&broken, sizeof *broken, "block count")) ||
        (s = spx__cuda_check(ctx, cudaMemsetAsync(counts, 0, (size_t)(brows + 1) * 8, st), "block count")) ||
        (s = spx__cuda_check(ctx, cudaMemsetAsync(broken, 0, sizeof *broken, st), "block count")) ||
        (s = spx__cuda_check(ctx, spx__cuda_csr_blocks(A, P->dtype, 1, counts, broken, NULL, NULL, NULL, st),
                             "block count kernel")) ||
        (s = spx__cuda_download(ctx, &host_broken, broken, sizeof host_broken)) || (s = spx__cuda_sync(ctx)))
        goto done;
    if (host_broken)
        goto done;
    if ((s = spx__cuda_check(ctx, spx__cuda_gemm_scan(NULL, NULL, brows + 1, NULL, &tmp_bytes, st), "block scan")) ||
        (s = spx__cuda_alloc(ctx, &tmp, tmp_bytes, "block scan")) ||
        (s = spx__plan_alloc(ctx, P, (void **)&browptr, (size_t)(brows + 1) * 8, "plan blocks")) ||
        (s = spx__cuda_check(ctx, spx__cuda_gemm_scan(counts, browptr, brows + 1, tmp, &tmp_bytes, st),
                             "block scan")) ||
        (s = spx__cuda_download(ctx, &nblocks, browptr + brows, 8)) || (s = spx__cuda_sync(ctx)))
        goto done;
    const size_t vbytes = (size_t)nblocks * 256 * spx_dtype_size(P->dtype);
    if ((s = spx__plan_alloc(ctx, P, (void **)&bcol, (size_t)nblocks * 4, "plan blocks")) ||
        (s = spx__plan_alloc(ctx, P, &bvals, vbytes, "plan blocks")) ||
        (s = spx__cuda_check(ctx, cudaMemsetAsync(bvals, 0, vbytes, st), "plan blocks")) ||
        (s = spx__cuda_check(ctx, spx__cuda_csr_blocks(A, P->dtype, 0, NULL, NULL, browptr, bcol, bvals, st),
                             "block fill kernel")) ||
        (s = spx__cuda_sync(ctx)))
        goto done;
    P->bsr = (spx_cuda_bsr){.rows = A->rows, .cols = A->cols, .br = 16, .bc = 16, .brows = brows,
                            .nblocks = nblocks, .rowptr = browptr, .colidx = bcol, .vals = bvals, .full = true};
    *full = true;
done:
    spx__cuda_free(ctx, counts);
    spx__cuda_free(ctx, broken);
    spx__cuda_free(ctx, tmp);
    return s;
}

spx_status spx__plan_prepare_sell(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen)
{
    spx_matrix *host = NULL, *sell = NULL, *tmp = NULL;
    const spx_matrix *src = A;
    spx_status s = SPX_OK;
    int32_t *perm = NULL, *len = NULL;
    if (A->memory == SPX_MEM_DEVICE) {
        if ((s = spx__cuda_matrix_to_host(ctx, A, &host)))
            return s;
        src = host;
    }
    if (!(src->format == SPX_SELL && P->op == SPX_OP_NONE)) {
        const spx_matrix *H;
        spx_format_params fp = {.sell_c = 32, .sell_sigma = 1024};
        if ((s = spx__plan_host_csr(ctx, src, P->op, &H, &tmp)) ||
            (s = spx_matrix_convert(ctx, H, SPX_SELL, &fp, &sell)))
            goto done;
        src = sell;
        snprintf(why, whylen, "converted to SELL-32-1024");
    } else {
        snprintf(why, whylen, "the matrix's own SELL-%lld-%lld", (long long)src->sell_c, (long long)src->sell_sigma);
    }
    spx_cuda_sell *D = &P->sell;
    D->rows = src->rows;
    D->cols = src->cols;
    D->nslices = src->nslices;
    D->c = src->sell_c;
    int64_t npos = src->nslices * src->sell_c;
    {
        spx_matrix fake = *src; /* slice offsets and slot columns */
        fake.format = SPX_CSR;
        fake.rows = src->nslices;
        fake.nnz = src->sell_slots;
        fake.dtype = SPX_PATTERN;
        fake.indices = src->indices;
        spx_cuda_csr c;
        /* padding slots hold column -1, which the int32 copy keeps */
        if ((s = spx__plan_upload_compressed(ctx, P, &fake, src->nslices, src->cols, &c)))
            goto done;
        D->slice_ptr = c.rowptr;
        D->colidx = c.colidx;
    }
    if ((s = spx__alloc(ctx, (void **)&perm, npos, sizeof *perm, "SELL perm")) ||
        (s = spx__alloc(ctx, (void **)&len, npos, sizeof *len, "SELL lengths")))
        goto done;
    for (int64_t p = 0; p < npos; p++) {
        perm[p] = (int32_t)spx__idx_get(src->perm, src->itype, p);
        len[p] = (int32_t)spx__idx_get(src->row_lengths, src->itype, p);
    }
    D->vals = NULL;
    if ((s = spx__plan_upload(ctx, P, (void **)&D->perm, perm, (size_t)npos * 4, "SELL perm")) ||
        (s = spx__plan_upload(ctx, P, (void **)&D->rowlen, len, (size_t)npos * 4, "SELL lengths")))
        goto done;
    if (src->dtype != SPX_PATTERN)
        s = spx__plan_upload(ctx, P, &D->vals, src->values, (size_t)src->sell_slots * spx_dtype_size(src->dtype),
                        "SELL values");
done:
    spx__free(perm);
    spx__free(len);
    spx_matrix_destroy(tmp);
    spx_matrix_destroy(sell);
    spx_matrix_destroy(host);
    return s;
}

spx_status spx__plan_prepare_outer(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A)
{
    if (P->deterministic)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "outer: float atomics make it non-deterministic (deterministic mode is on)");
    if (P->dtype != SPX_F32 && P->dtype != SPX_F64)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "outer: needs f32 or f64 values (atomics), not %s",
                         spx_dtype_name(P->dtype));
    return compress_along_k(ctx, P, A);
}

/* GATHER_TC's order of one chunk's union columns (sorted, u of them) in its
 * slots (u rounded up to 16): each run of `spread` slots takes columns of
 * distinct residues mod spread, the most numerous first, while any remain
 * (so the run's shared rows fall in distinct banks, spx_cuda_gather); when
 * fewer residues than that remain, a run repeats one. Padding slots (value 0)
 * name a row of the chunk (rows chunk_rows) of a residue the run lacks.
 * slot_of[column] = first_slot + its slot. */
static void gather_arrange(const int32_t *cols, int64_t u, int64_t k0, int64_t chunk_rows, int spread,
                           int32_t *by_res, int32_t *out, int64_t first_slot, int64_t *slot_of)
{
    int64_t start[8] = {0}, left[8] = {0};
    for (int64_t t = 0; t < u; t++)
        left[cols[t] % spread]++;
    for (int r = 1; r < spread; r++)
        start[r] = start[r - 1] + left[r - 1];
    int64_t fill[8];
    memcpy(fill, start, sizeof fill);
    for (int64_t t = 0; t < u; t++)
        by_res[fill[cols[t] % spread]++] = cols[t];
    const int64_t slots = (u + 15) / 16 * 16;
    for (int64_t run = 0; run < slots; run += spread) {
        unsigned used = 0;
        for (int pos = 0; pos < spread; pos++) {
            int best = -1;
            for (int pass = 0; pass < 2 && best < 0; pass++) /* a residue the run lacks, then any */
                for (int r = 0; r < spread; r++)
                    if (left[r] > 0 && (pass || !(used >> r & 1u)) && (best < 0 || left[r] > left[best]))
                        best = r;
            if (best >= 0) {
                const int32_t j = by_res[start[best]++];
                out[run + pos] = j;
                slot_of[j] = first_slot + run + pos;
                left[best]--;
            } else {
                int r = 0;
                while (r < spread - 1 && (used >> r & 1u))
                    r++;
                best = r;
                out[run + pos] = (int32_t)(r < chunk_rows ? k0 + r : k0);
            }
            used |= 1u << best;
        }
    }
}

/* Index of row r (0-15) of a group and slot t (0-15) of step s in the
 * fragments: mma.sync's A operand in lane order (spmm_gather_tc.cu). */
static int64_t gather_frag_index(int64_t s, int r, int t, bool tf32)
{
    const int g = r & 7, hr = r >> 3;
    if (tf32) { /* m16n8k8 twice: lane (g, q) holds (g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4) */
        const int sub = t >> 3, q = t & 3, hs = (t >> 2) & 1;
        return 256 * s + 128 * sub + 4 * (4 * g + q) + 2 * hs + hr;
    }
    /* m16n8k16: lane (g, q) holds pairs (g, 2q), (g + 8, 2q), (g, 2q + 8), (g + 8, 2q + 8) */
    const int q = (t & 7) >> 1, hs = t >> 3, lo = t & 1;
    return 256 * s + 8 * (4 * g + q) + 2 * (2 * hs + hr) + lo;
}

static int cmp_int32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* GATHER_TC (spx_cuda_gather): groups of 16 consecutive rows, their column
 * unions cut into chunks of B's rows that fit half an SM's shared memory (two
 * blocks an SM), and column tiles of 256 bytes, or 128 where N fits in that
 * or 256-byte tiles would give fewer than two blocks an SM (measured on DLMC
 * layers, H100, docs/PERFORMANCE.md). */
spx_status spx__plan_prepare_gather(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen)
{
    if (P->precision == SPX_PRECISION_EXACT)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "gather_tc: needs a tensor-core precision (tf32, bf16 or f16); exact runs on CUDA cores");
    if (P->dtype == SPX_F64)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "gather_tc: no tensor-core path for f64 values");
    const bool tf32 = P->dtype == SPX_F32 && P->precision == SPX_PRECISION_TF32;
    const spx_dtype ht = spx__plan_operand_type(P); /* f32 for tf32, else f16 or bf16 */
    const int spread = tf32 ? 4 : 8, esz = (int)spx_dtype_size(ht);
    const spx_device_info *in = &spx__cuda(ctx)->info;
    const int64_t blocks_wide = ((P->m + 15) / 16 + SPX_CUDA_GATHER_WARPS - 1) / SPX_CUDA_GATHER_WARPS *
                                ((P->n * esz + 255) / 256);
    const int tile_bytes = P->n * esz <= 128 || blocks_wide < 2 * spx__cuda_sm_count(ctx) ? 128 : 256;
    int64_t budget = in->smem_per_sm / 2 - 1024;
    if (budget > in->smem_per_block_optin)
        budget = in->smem_per_block_optin;
    const int64_t row_bytes = (int64_t)spx__cuda_gather_smem(1, tile_bytes, (size_t)esz);
    const int64_t kcmax = budget / row_bytes / 8 * 8;
    if (kcmax < 8)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "gather_tc: %lld bytes of shared memory hold too few rows of B",
                         (long long)budget);
    const int64_t nchunks = P->k > 0 ? (P->k + kcmax - 1) / kcmax : 1;
    const int64_t kc = P->k > 0 ? ((P->k + nchunks - 1) / nchunks + 7) / 8 * 8 : 8;

    const spx_matrix *H;
    spx_matrix *tmp = NULL;
    spx_status s = spx__plan_host_csr(ctx, A, P->op, &H, &tmp);
    if (s)
        return s;
    const int64_t m = H->rows, ngroups = (m + 15) / 16;
    int64_t *seen = NULL, *slot = NULL, *sptr = NULL, *cnt = NULL, *uptr = NULL, total = 0, maxu = 0;
    int32_t *ucols = NULL, *by_res = NULL, *scols = NULL, *grows = NULL;
    void *frags = NULL;
    if ((s = spx__alloc(ctx, (void **)&seen, H->cols > 0 ? H->cols : 1, sizeof *seen, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&slot, H->cols > 0 ? H->cols : 1, sizeof *slot, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&cnt, nchunks, sizeof *cnt, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&sptr, ngroups * nchunks + 1, sizeof *sptr, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&uptr, ngroups + 1, sizeof *uptr, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&ucols, H->nnz > 0 ? H->nnz : 1, sizeof *ucols, "gather plan")))
        goto done;
    for (int64_t j = 0; j < H->cols; j++)
        seen[j] = -1;
    /* each group's column union (ucols[uptr[g] ..]) and its steps per chunk */
    sptr[0] = uptr[0] = 0;
    for (int64_t g = 0; g < ngroups; g++) {
        int64_t u = 0;
        int32_t *list = ucols + uptr[g];
        memset(cnt, 0, (size_t)nchunks * sizeof *cnt);
        for (int64_t i = g * 16; i < m && i < g * 16 + 16; i++)
            for (int64_t p = spx__idx_get(H->offsets, H->itype, i); p < spx__idx_get(H->offsets, H->itype, i + 1); p++) {
                const int64_t j = spx__idx_get(H->indices, H->itype, p);
                if (seen[j] != g) {
                    seen[j] = g;
                    cnt[j / kc]++;
                    list[u++] = (int32_t)j;
                }
            }
        uptr[g + 1] = uptr[g] + u;
        maxu = u > maxu ? u : maxu;
        for (int64_t c = 0; c < nchunks; c++) {
            total += (cnt[c] + 15) / 16;
            sptr[g * nchunks + c + 1] = total;
        }
    }
    const double per_entry = H->nnz ? 256.0 * (double)total / (double)H->nnz : 0.0,
                 share = m && H->cols ? 256.0 * (double)total / ((double)m * (double)H->cols) : 0.0;
    const int64_t frag_bytes = 256 * total * esz;
    if (per_entry > 64.0 || frag_bytes > in->global_mem_bytes / 4) {
        s = spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                      "gather_tc: groups of 16 rows share too few columns (dense tiles would hold %.1f values per entry)",
                      per_entry);
        goto done;
    }
    if ((s = spx__alloc(ctx, (void **)&by_res, maxu > 0 ? maxu : 1, sizeof *by_res, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&scols, total > 0 ? 16 * total : 1, sizeof *scols, "gather plan")) ||
        (s = spx__alloc(ctx, (void **)&grows, ngroups * 16, sizeof *grows, "gather plan")) ||
        (s = spx__alloc_zero(ctx, &frags, total > 0 ? 256 * total : 1, (size_t)esz, "gather tiles")))
        goto done;
    /* each chunk's columns in slot order, then the values */
    for (int64_t g = 0; g < ngroups; g++) {
        int32_t *list = ucols + uptr[g];
        const int64_t u = uptr[g + 1] - uptr[g];
        for (int64_t i = g * 16; i < g * 16 + 16; i++)
            grows[i] = i < m ? (int32_t)i : -1;
        qsort(list, (size_t)u, sizeof *list, cmp_int32);
        int64_t from = 0;
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t to = from;
            while (to < u && list[to] < (c + 1) * kc)
                to++;
            const int64_t s0 = sptr[g * nchunks + c], k0 = c * kc;
            gather_arrange(list + from, to - from, k0, (P->k - k0 < kc ? P->k - k0 : kc), spread, by_res,
                           scols + 16 * s0, 16 * s0, slot);
            from = to;
        }
        for (int64_t i = g * 16; i < m && i < g * 16 + 16; i++)
            for (int64_t p = spx__idx_get(H->offsets, H->itype, i); p < spx__idx_get(H->offsets, H->itype, i + 1); p++) {
                const int64_t at = slot[spx__idx_get(H->indices, H->itype, p)];
                const double v = H->dtype == SPX_PATTERN ? 1.0 : spx__val_get(H->values, H->dtype, p);
                const int64_t f = gather_frag_index(at / 16, (int)(i - g * 16), (int)(at % 16), tf32);
                spx__val_set(frags, ht, f, spx__val_get(frags, ht, f) + v); /* duplicates add up */
            }
    }
    spx_cuda_gather *G = &P->gather;
    G->ngroups = ngroups;
    G->k = P->k;
    G->kc = kc;
    G->tile_bytes = tile_bytes;
    if ((s = spx__plan_upload(ctx, P, (void **)&G->group_rows, grows, (size_t)(ngroups * 16) * 4, "gather plan")) ||
        (s = spx__plan_upload(ctx, P, (void **)&G->step_ptr, sptr, (size_t)(ngroups * nchunks + 1) * 8,
                              "gather plan")) ||
        (s = spx__plan_upload(ctx, P, (void **)&G->slot_cols, scols, (size_t)(16 * total) * 4, "gather plan")) ||
        (s = spx__plan_upload(ctx, P, &G->frags, frags, (size_t)frag_bytes, "gather tiles")) ||
        (s = compress_along_k(ctx, P, A))) /* tiles hold zeros A does not: B's non-finite values go apart */
        goto done;
    snprintf(why, whylen,
             "%lld groups of 16 rows, mean column union %.1f, tiles hold %.2f values per entry (%.1f%% of A's cells), "
             "%s operands; %lld chunk(s) of %lld rows of B x %d bytes in shared memory",
             (long long)ngroups, ngroups ? 16.0 * (double)total / (double)ngroups : 0.0, per_entry, 100.0 * share,
             tf32 ? "tf32" : spx_dtype_name(ht), (long long)nchunks, (long long)kc, tile_bytes);
done:
    spx__free(seen);
    spx__free(slot);
    spx__free(cnt);
    spx__free(sptr);
    spx__free(uptr);
    spx__free(ucols);
    spx__free(by_res);
    spx__free(scols);
    spx__free(grows);
    spx__free(frags);
    spx_matrix_destroy(tmp);
    return s;
}


spx_dtype spx__plan_operand_type(const cuda_plan *P)
{
    if (P->dtype == SPX_F32 && P->precision == SPX_PRECISION_BF16)
        return SPX_BF16;
    if (P->dtype == SPX_F32 && P->precision == SPX_PRECISION_F16)
        return SPX_F16;
    return P->dtype;
}

bool spx__plan_dense_in_place(const cuda_plan *P) { return spx__plan_operand_type(P) == P->dtype; }

bool spx__plan_dense_fix_from_c(spx_ctx *ctx, const cuda_plan *P)
{
    return P->m <= P->k || !spx__cuda(ctx)->cooperative;
}

/* The dense path's own GEMM (spmm_dense_mma.cu) runs 16-bit operands in one
 * launch where cuBLASLt's route, bound by its launches and cuBLASLt's host
 * work, took 12-28 us (H200). Each of its blocks walks all of k, so its time
 * grows with k (kernel times, bf16 data, N = 1024: 6.8 us at 512 x 512, 8.2
 * us at 128 x 1152, 17 us at 512 x 2048, 35 us at 512 x 4608, where
 * cuBLASLt's GEMM alone took 3.6-10 us); larger products run at a third of
 * cuBLASLt's rate. So it takes products of at most DENSE_MMA_MAX_FLOPS and
 * k of at most DENSE_MMA_MAX_K; f32 data, whose blocks also round B's tiles
 * (10-75 % slower), at most the _ROUNDED bounds: at 128 x 1152 x 4096 it took
 * 26 us where cuBLASLt's route took 19-21.
 *
 * On compute capability 9.0 its wgmma kernel (spmm_dense_wgmma.cu) takes
 * 16-bit data instead (and f32 data, below): 1.0-2.6x faster (512 x 2048 x 4096: 19.6 us against
 * 43; 512 x 4608 x 4096: 36.5 against 91), but 1.2-2.3x slower than
 * cuBLASLt's GEMM. cuBLASLt's route, whose fix-up reads C (m <= k) and whose
 * host work takes it to 14-20 us on small products, wins from about
 * DENSE_WGMMA_MAX_FLOPS (H200, bf16, one run each: 512 x 2048 x 1024, 2.1e9
 * flops, 13.2 us against 18-19; 512 x 4608 x 1024, 4.8e9, 21.8 against
 * 17-19; 512 x 2048 x 4096 22.4 against 20.3; 512 x 4608 x 4096 38.3 against
 * 32.9). It still writes C pair by pair, and one tile's stores do not
 * overlap another's loads, so a large C with a short k runs at half
 * cuBLASLt's rate (2048 x 512 x 4096: 31.5 us against 15.2, 24 by cuBLASLt's
 * route): C of at most DENSE_WGMMA_MAX_OUTPUT elements. And past
 * DENSE_MMA_MAX_K it needs 64 x 64 tiles for nine SMs in ten, or k cut into
 * parts (spx__cuda_dense_wgmma_shape), which a block would otherwise walk
 * whole (512 x 4608 x 256 gives 32 blocks: 27.5 us against 16.5 by
 * cuBLASLt's route; in 4-8 parts 13-14 us against 18-20).
 *
 * f32 data at bf16 and f16 precision runs on the wgmma kernel too, its blocks
 * rounding B in shared memory, where cuBLASLt's route first writes B rounded
 * in a pass of its own. Up to DENSE_WGMMA_MAX_FLOPS_ROUNDED it won on 65 of
 * 142 DLMC and generated pruned products at N = 256-4096, by up to 2.9x
 * (generated 512 x 1024 x 512: 13.6 us against 39.9; 128 x 1152 x 256: 10.6 us
 * against 14.8-23.4; 2048 x 512 x 256: 9.7 against 12.0; 512 x 512 x 1024:
 * 10.5 against 12.5-13.3; H100, forced dense path, bf16 precision, two runs),
 * and lost on 13, ten by under 10 % (the others: 512 x 128 x 256 on two
 * layers, where mma.sync took 5.6 and 6.7 us, 7.5 and 8.6; 384 x 1536 x 1024,
 * 24.9 against 21.4). Past it, its blocks copy twice B's bytes of the 16-bit
 * kernel and fewer fit an SM: 512 x 2048 x 1024 took 23.2 us against
 * 18.1-18.5, 2048 x 512 x 4096 49 against 34.5. */
#define DENSE_MMA_MAX_FLOPS 1.3e9
#define DENSE_MMA_MAX_K 1152
#define DENSE_MMA_MAX_FLOPS_ROUNDED 6e8
#define DENSE_MMA_MAX_K_ROUNDED 512
#define DENSE_WGMMA_MAX_FLOPS 3.5e9
#define DENSE_WGMMA_MAX_OUTPUT 4.2e6
#define DENSE_WGMMA_MAX_FLOPS_ROUNDED 1.3e9

bool spx__plan_dense_wgmma(spx_ctx *ctx, const cuda_plan *P)
{
#ifdef SPX_HAVE_WGMMA
    const spx_device_info *di = &spx__cuda(ctx)->info;
    const spx_dtype t = spx__plan_operand_type(P);
    return di->cc_major == 9 && di->cc_minor == 0 && (t == SPX_BF16 || t == SPX_F16) &&
           (P->dtype == t || P->dtype == SPX_F32);
#else
    (void)ctx;
    (void)P;
    return false;
#endif
}

bool spx__plan_dense_mma_pays(spx_ctx *ctx, const cuda_plan *P)
{
    const spx_dtype t = spx__plan_operand_type(P);
    const bool rounded = P->dtype != t;
    const double flops = 2.0 * (double)P->m * (double)P->k * (double)P->n;
#ifdef SPX_HAVE_WGMMA
    if (spx__plan_dense_wgmma(ctx, P))
        return flops <= (rounded ? DENSE_WGMMA_MAX_FLOPS_ROUNDED : DENSE_WGMMA_MAX_FLOPS) &&
               (double)P->m * (double)P->n <= DENSE_WGMMA_MAX_OUTPUT &&
               (P->k <= DENSE_MMA_MAX_K ||
                10 * ((P->m + 63) / 64) * ((P->n + 63) / 64) >= 9 * spx__cuda_sm_count(ctx) ||
                spx__cuda_dense_wgmma_shape(P->m, P->n, P->k, spx__cuda_sm_count(ctx), rounded).splits > 1);
#else
    (void)ctx;
#endif
    return (t == SPX_BF16 || t == SPX_F16) && P->k <= (rounded ? DENSE_MMA_MAX_K_ROUNDED : DENSE_MMA_MAX_K) &&
           flops <= (rounded ? DENSE_MMA_MAX_FLOPS_ROUNDED : DENSE_MMA_MAX_FLOPS);
}

static int64_t dense_ld(const cuda_plan *P) { return spx__cuda_row16(P->k, spx__plan_operand_type(P)); }

int64_t spx__plan_dense_bytes(const cuda_plan *P)
{
    return P->m * dense_ld(P) * (int64_t)spx_dtype_size(spx__plan_operand_type(P));
}

static const char *dense_gemm_name(const cuda_plan *P)
{
    if (P->dtype == SPX_F64)
        return "f64";
    if (P->dtype != SPX_F32)
        return "tensor-core (f32 accumulation)";
    switch (P->precision) {
    case SPX_PRECISION_TF32: return "tf32 tensor-core";
    case SPX_PRECISION_BF16: return "bf16 tensor-core";
    case SPX_PRECISION_F16: return "f16 tensor-core";
    default: return "f32 (CUDA cores, no tf32)";
    }
}

spx_status spx__plan_prepare_dense(spx_ctx *ctx, cuda_plan *P, const spx_matrix *A, char *why, size_t whylen)
{
    const int64_t bytes = spx__plan_dense_bytes(P), ld = dense_ld(P);
    const int64_t limit = spx__cuda(ctx)->info.global_mem_bytes / 4;
    if (P->n > INT32_MAX || ld > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "dense: at most 2^31-1 columns are supported (N=%lld, k=%lld)",
                         (long long)P->n, (long long)P->k);
    if (bytes > limit)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "dense: op(A) written out densely would take %.1f MB, more than a quarter of the device's "
                         "memory",
                         (double)bytes / 1e6);
    P->dense.type = spx__plan_operand_type(P);
    P->dense.ld = ld;
    P->dense_mma = spx__plan_dense_mma_pays(ctx, P);
    P->dense_wgmma = P->dense_mma && spx__plan_dense_wgmma(ctx, P);
    spx_status s;
    if ((s = spx__cuda_gemm_start(ctx)) || /* cuBLASLt starts up here, not in the first run */
        (s = spx__plan_alloc(ctx, P, &P->dense.vals, (size_t)(bytes > 0 ? bytes : 1), "dense copy of A")) ||
        (s = spx__cuda_check(ctx,
                             spx__cuda_dense_fill(&P->csr, P->dtype, P->dense.type, P->dense.vals, ld,
                                                  spx__cuda(ctx)->stream),
                             "writing A out densely")))
        return s;
    char parts[128] = "";
#ifdef SPX_HAVE_WGMMA
    if (P->dense_wgmma) {
        P->wgmma = spx__cuda_dense_wgmma_shape(P->m, P->n, P->k, spx__cuda_sm_count(ctx),
                                               P->dtype != P->dense.type);
        const spx_cuda_wgmma_shape *w = &P->wgmma;
        if (w->splits > 1 &&
            ((s = spx__plan_alloc(ctx, P, (void **)&P->wgmma_partial,
                                  (size_t)(w->tiles * w->splits * w->bm * w->bn) * sizeof(float),
                                  "the own GEMM's parts of k")) ||
             (s = spx__plan_alloc(ctx, P, (void **)&P->wgmma_arrived, (size_t)w->tiles * sizeof(int),
                                  "the own GEMM's parts of k")) ||
             (s = spx__cuda_check(ctx,
                                  cudaMemsetAsync(P->wgmma_arrived, 0, (size_t)w->tiles * sizeof(int),
                                                  spx__cuda(ctx)->stream),
                                  "the own GEMM's parts of k"))))
            return s;
        if (w->splits > 1)
            snprintf(parts, sizeof parts, ", k in %d parts of %d whose sums are added in a fixed order", w->splits,
                     64 * w->part);
        snprintf(parts + strlen(parts), sizeof parts - strlen(parts), ", %d x %d tiles", w->bm, w->bn);
    }
#endif
    if ((s = compress_along_k(ctx, P, A)) || (s = spx__cuda_sync(ctx)))
        return s;
    const double cells = (double)P->m * (double)P->k;
    char b_read[256] = "a copy of B in the GEMM's type";
    if (spx__plan_dense_in_place(P))
        snprintf(b_read, sizeof b_read,
                 "B in place when beta = 0 (then %s computed again from A's rows), else on a copy of B",
                 spx__plan_dense_fix_from_c(ctx, P) ? "the pieces of C's rows that hold Inf or NaN"
                                                    : "the columns where B holds Inf or NaN");
    char gemm[512];
    if (P->dense_mma)
        snprintf(gemm, sizeof gemm,
                 "spx's own kernel in one launch (%s)%s: B read in place%s, the elements whose sum is not finite "
                 "computed again from A's rows (where B's rows do not start on 16 bytes: cuBLASLt on %s)",
                 P->dense_wgmma ? "wgmma" : "mma.sync", parts,
                 P->dtype == SPX_F32 ? " and rounded in shared memory" : "", b_read);
    else
        snprintf(gemm, sizeof gemm, "cuBLASLt on %s", b_read);
    snprintf(why, whylen, "op(A) written out densely (%.1f MB, %.1f%% of its cells hold entries), %s GEMM by %s",
             (double)bytes / 1e6, cells > 0 ? 100.0 * (double)P->csr.nnz / cells : 0.0, dense_gemm_name(P), gemm);
    return SPX_OK;
}

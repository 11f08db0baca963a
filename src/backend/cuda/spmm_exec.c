/* Running CUDA SpMM plans: staging of host or column-major operands, kernel
 * launches per bin or algorithm, and the one-shot entry point that caches
 * plans on the matrix. */
#include "backend/cuda/dense_gemm.h"
#include "backend/cuda/spmm_plan.h"

#include <stdint.h>
#include <string.h>

/* ---- execution ---- */

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The GEMM of the dense path on B (or its copy) g. Row-major C = A B is
 * column-major C^T = B^T A^T, so B is the GEMM's first operand. */
static spx_status dense_gemm(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *g)
{
    const spx_cuda_gemm gemm = {.m = P->n,
                                .n = P->m,
                                .k = P->k,
                                .ab_type = P->dense.type,
                                .c_type = P->dtype,
                                .tf32 = P->dense.type == SPX_F32 && P->precision == SPX_PRECISION_TF32,
                                .alpha = g->alpha,
                                .beta = g->beta,
                                .A = g->B,
                                .lda = g->ldb,
                                .B = P->dense.vals,
                                .ldb = P->dense.ld,
                                .C = g->C,
                                .ldc = g->ldc};
    return spx__cuda_gemm(ctx, &gemm);
}

/* The dense path's column-chunk flags for the next call (at least `need`):
 * they stay from call to call and each call marks with its own epoch, so that
 * the kernel needs no grid-wide barrier after clearing them (1.7 us on an
 * H200). A stale flag that matched would only cost a recomputed chunk. */
static spx_status next_dense_flags(spx_ctx *ctx, int64_t need)
{
    spx_cuda_state *st = spx__cuda(ctx);
    if (st->dense_flags_len < need) {
        const int64_t len = need < 64 ? 64 : need;
        int32_t *old = st->dense_flags, *flags = NULL;
        st->dense_flags = NULL;
        st->dense_flags_len = 0;
        if (old)
            SPX_CUDA_TRY(ctx, cudaFree(old), "non-finite flags"); /* waits for their last use */
        SPX_CUDA_TRY(ctx, cudaMalloc((void **)&flags, (size_t)len * sizeof *flags), "non-finite flags");
        st->dense_flags = flags;
        st->dense_flags_len = len;
        st->dense_epoch = INT32_MAX; /* cleared below */
    }
    if (st->dense_epoch == INT32_MAX) {
        SPX_CUDA_TRY(ctx,
                     cudaMemsetAsync(st->dense_flags, 0, (size_t)st->dense_flags_len * sizeof *st->dense_flags,
                                     st->stream),
                     "non-finite flags");
        st->dense_epoch = 0;
    }
    st->dense_epoch++;
    return SPX_OK;
}

/* The dense path with beta = 0 and B already in the GEMM's type: the GEMM
 * runs on B itself, then one kernel computes again, from A's rows, the
 * elements the GEMM got wrong (spmm_dense.cu): those of the pieces of C's
 * rows that hold Inf or NaN, or (a cooperative kernel, where C is the larger)
 * of the columns of C where B holds a non-finite value. One launch besides
 * the GEMM where a copy of B takes two: on small products the host's time to
 * launch is the product's time. */
static spx_status dense_in_place(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *d)
{
    spx_cuda_state *st = spx__cuda(ctx);
    spx_status s;
    if (spx__plan_dense_fix_from_c(ctx, P))
        return (s = dense_gemm(ctx, P, d))
                   ? s
                   : spx__cuda_check(ctx, spx__cuda_dense_fix_from_c(&P->csr, d), "non-finite values of C");
    if ((s = next_dense_flags(ctx, spx__cuda_dense_chunks(P->n) + 1)) || (s = dense_gemm(ctx, P, d)))
        return s;
    return spx__cuda_check(ctx,
                           spx__cuda_dense_fix_in_place(&P->csr, st->dense_flags, st->dense_epoch,
                                                        &st->dense_fix_blocks, d, P->k),
                           "non-finite values of B");
}

/* The dense path's own GEMM: on wgmma where the plan says so (compute
 * capability 9.0, builds with its sm_90a code), else on mma.sync. */
static cudaError_t own_gemm(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *d)
{
#ifdef SPX_HAVE_WGMMA
    if (P->dense_wgmma)
        return spx__cuda_dense_wgmma(&P->csr, &P->dense, d, P->k, &P->wgmma, P->wgmma_partial, P->wgmma_arrived);
#endif
    return spx__cuda_dense_mma(&P->csr, &P->dense, d, P->k, spx__cuda_sm_count(ctx));
}

/* The algorithms that multiply zeros A does not hold (dense, BSR, gather_tc;
 * spmm_dense.cu says why): a copy of B without its non-finite values (in the
 * operands' type for the dense path and gather_tc, B's own for BSR), the algorithm on
 * it, then those values' terms; or, on the dense path with beta = 0, no copy
 * (dense_in_place); or, for the dense path's small products of 16-bit
 * operands, spx's own GEMM, which keeps those values apart itself
 * (spmm_dense_mma.cu). */
static spx_status run_on_finite_b(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *d)
{
    const bool dense = P->alg == SPX_SPMM_DENSE, as_operand = dense || P->alg == SPX_SPMM_GATHER_TC;
    const spx_dtype t = spx__plan_operand_type(P), copy = as_operand ? t : P->dtype;
    const int64_t ldo = spx__cuda_row16(P->n, copy), chunks = spx__cuda_dense_chunks(P->n);
    if (P->m == 0 || P->n == 0)
        return SPX_OK;
    if (P->k == 0)
        return spx__cuda_check(ctx, spx__cuda_scale(d, P->m), "scale kernel");
    if (dense && P->dense_mma && spx__cuda_dense_mma_fits(&P->dense, d, P->m))
        return spx__cuda_check(ctx, own_gemm(ctx, P, d), "dense GEMM kernel");
    if (dense && (d->ldc > INT32_MAX || ldo > INT32_MAX))
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "dense: leading dimensions of 2^31 or more are not supported (C: %lld)", (long long)d->ldc);
    if (dense && d->beta == 0.0 && d->ldb <= INT32_MAX && spx__plan_dense_in_place(P))
        return dense_in_place(ctx, P, d);
    void *Bc = NULL;
    int32_t *bad = NULL;
    spx_cuda_dense_args g = *d;
    spx_status s;
    if ((s = spx__cuda_alloc(ctx, &Bc, (size_t)(P->k * ldo) * spx_dtype_size(copy), "finite copy of B")) ||
        (s = spx__cuda_alloc(ctx, (void **)&bad, (size_t)(P->k * chunks) * 4, "finite copy of B")) ||
        (s = spx__cuda_check(ctx, spx__cuda_dense_take_b(d, P->k, t, as_operand, Bc, ldo, bad), "finite copy of B")))
        goto done;
    g.B = Bc;
    g.ldb = ldo;
    g.vec = (int)(16 / spx_dtype_size(copy)); /* the copy's rows start on 16 bytes */
    if (dense)
        s = dense_gemm(ctx, P, &g);
    else if (P->alg == SPX_SPMM_BSR)
        s = spx__cuda_check(ctx, spx__cuda_launch_bsr(&P->bsr, P->precision, &g), "bsr kernel");
    else
        s = spx__cuda_check(ctx, spx__cuda_launch_gather_tc(&P->gather, P->precision, &g), "gather_tc kernel");
    if (!s)
        s = spx__cuda_check(ctx, spx__cuda_dense_add_nonfinite(&P->outer, t, bad, d), "non-finite values of B");
done:
    spx__cuda_free(ctx, Bc);
    spx__cuda_free(ctx, bad);
    return s;
}

/* The row kernels over A (op(A), or a view of one slab of its columns): bins
 * of a team of lanes in one launch, then each run of adjacent bins with the
 * same warps per row (rows_sorted lists the bins in order) in one. */
static spx_status run_rows(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_csr *A, const spx_cuda_dense_args *d)
{
    spx_status s = SPX_OK;
    if (P->row_runs) /* every bin a warp per row: the whole list in runs */
        return spx__cuda_check(ctx, spx__cuda_launch_row_runs(A, P->rows_sorted, P->m, d), "row kernel (runs)");
    if (P->row_batches) /* every bin a team staging batches: the whole list, or its slots */
        return spx__cuda_check(ctx,
                               spx__cuda_launch_row_batches(A, P->rows_sorted, P->batch_slots,
                                                            P->batch_slots ? P->batch_nslots : P->m, P->row_batches,
                                                            P->row_batch, P->row_batch_cols,
                                                            P->row_batch_last_cols, d),
                               "row kernel (batches)");
    spx_cuda_row_segment segs[NBINS];
    int nsegs = 0;
    for (int b = 0; b < NBINS; b++)
        if (P->bins[b].nrows && !P->bins[b].warps)
            segs[nsegs++] = (spx_cuda_row_segment){P->bins[b].offset, P->bins[b].nrows, P->bins[b].team};
    if (nsegs &&
        (s = spx__cuda_check(ctx, spx__cuda_launch_rows(A, P->rows_sorted, segs, nsegs, P->group, d),
                             "row kernel")))
        return s;
    for (int b = 0; b < NBINS && !s; b++) {
        const plan_bin *B = &P->bins[b];
        if (!B->nrows || !B->warps)
            continue;
        int64_t nrows = B->nrows;
        while (b + 1 < NBINS && (!P->bins[b + 1].nrows || P->bins[b + 1].warps == B->warps))
            nrows += P->bins[++b].nrows;
        s = spx__cuda_check(ctx,
                            spx__cuda_launch_block_rows(A, P->rows_sorted, B->offset, nrows, B->warps,
                                                        P->group, d),
                            "block_row kernel");
    }
    return s;
}

/* Slabs of A's columns: each column tile of B and C (P->panel wide) slab by
 * slab, so that one launch's B rows stay in the L2 cache; C adds up the
 * slabs' sums, beta applying to the first (fixed order: bit-exact from run
 * to run). */
static spx_status run_slabs(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *d)
{
    const size_t es = spx_dtype_size(P->dtype), bs = d->b_round ? spx_dtype_size(d->b_round) : es;
    spx_status s = SPX_OK;
    for (int64_t c0 = 0; c0 < P->n && !s; c0 += P->panel) {
        spx_cuda_dense_args t = *d;
        t.n = P->n - c0 < P->panel ? P->n - c0 : P->panel;
        t.B = (const char *)d->B + (size_t)c0 * bs; /* P->panel: whole vectors of 16 bytes (8 rounded) */
        t.C = (char *)d->C + (size_t)c0 * es;
        for (int i = 0; i < P->slabs && !s; i++) {
            spx_cuda_csr slab = P->csr;
            slab.rowptr = i == 0 ? P->csr.rowptr : P->slab_starts + (i - 1) * P->m;
            slab.row_end = i + 1 == P->slabs ? P->csr.rowptr + 1 : P->slab_starts + i * P->m;
            t.beta = i == 0 ? d->beta : 1.0;
            s = run_rows(ctx, P, &slab, &t);
        }
    }
    return s;
}

/* The row kernels, in slabs or not; on B rounded to 16 bits where the plan
 * says so (row_kernels_round_b in spmm_plan.c). */
static spx_status run_row_kernels(spx_ctx *ctx, const cuda_plan *P, const spx_cuda_dense_args *d)
{
    if (!P->b_round)
        return P->slabs > 1 ? run_slabs(ctx, P, d) : run_rows(ctx, P, &P->csr, d);
    spx_cuda_dense_args r = *d;
    r.ldb = spx__cuda_row16(P->n, P->b_round);
    r.vec = 4; /* four f32 columns a lane, one 8-byte load of the copy */
    r.b_round = P->b_round;
    void *copy = NULL;
    spx_status s = spx__cuda_alloc(ctx, &copy, (size_t)(P->k * r.ldb) * spx_dtype_size(P->b_round), "rounded B");
    if (!s)
        s = spx__cuda_check(ctx, spx__cuda_round_b(d, P->k, P->b_round, copy, r.ldb), "rounding B");
    if (!s) {
        r.B = copy;
        s = P->slabs > 1 ? run_slabs(ctx, P, &r) : run_rows(ctx, P, &P->csr, &r);
    }
    spx__cuda_free(ctx, copy);
    return s;
}

static spx_status run_kernels(spx_ctx *ctx, const cuda_plan *P, spx_cuda_dense_args *d)
{
    spx_status s = SPX_OK;
    if (d->alpha == 0.0) /* BLAS convention: A and B are not read, C = beta * C */
        return spx__cuda_check(ctx, spx__cuda_scale(d, P->m), "scale kernel");
    switch (P->alg) {
    case SPX_SPMM_SELL:
        return spx__cuda_check(ctx, spx__cuda_launch_sell(&P->sell, spx__plan_group_for_n(P->n, P->dtype), d), "sell kernel");
    case SPX_SPMM_BSR:
        if (P->bsr.full) /* its blocks hold no zero A does not: B as it is */
            return spx__cuda_check(ctx, spx__cuda_launch_bsr(&P->bsr, P->precision, d), "bsr kernel");
        return run_on_finite_b(ctx, P, d);
    case SPX_SPMM_GATHER_TC:
    case SPX_SPMM_DENSE:
        return run_on_finite_b(ctx, P, d);
    case SPX_SPMM_OUTER:
        if ((s = spx__cuda_check(ctx, spx__cuda_scale(d, P->m), "scale kernel")))
            return s;
        return spx__cuda_check(ctx, spx__cuda_launch_outer(&P->outer, spx__plan_group_for_n(P->n, P->dtype), d),
                               "outer kernel");
    case SPX_SPMM_MERGE_PATH: {
        int32_t *rows = NULL;
        void *vals = NULL;
        size_t acc = P->dtype == SPX_F64 ? 8 : 4;
        if (P->mp_row_aligned || /* no row is cut: no carries */
            (!(s = spx__cuda_alloc(ctx, (void **)&rows, (size_t)(2 * P->mp_nwarps) * 4, "merge carries")) &&
             !(s = spx__cuda_alloc(ctx, &vals, (size_t)(2 * P->mp_nwarps) * (size_t)P->n * acc, "merge carries"))))
            s = spx__cuda_check(ctx,
                                spx__cuda_launch_merge(&P->csr, P->mp_nwarps, P->mp_items, P->mp_group, P->mp_row,
                                                       P->mp_nnz, rows, vals, d),
                                "merge kernel");
        spx__cuda_free(ctx, rows);
        spx__cuda_free(ctx, vals);
        return s;
    }
    case SPX_SPMM_TILED: {
        const spx_cuda_tiled_slots slots = {P->tiled_row, P->tiled_range, P->tiled_slots};
        return spx__cuda_check(ctx, spx__cuda_launch_tiled(&P->csr, &slots, &P->tiled, d), "tiled kernel");
    }
    case SPX_SPMM_BAND:
        return spx__cuda_check(ctx, spx__cuda_launch_band(&P->csr, &P->band, d), "band kernel");
    default:
        return run_row_kernels(ctx, P, d);
    }
}

/* Device, row-major views of B and C (staging host or column-major operands
 * through pooled workspace, rows padded to start on 16 bytes), run, then
 * write C back where it was staged. */
spx_status spx__cuda_spmm_plan_execute(spx_ctx *ctx, void *plan, const spx_spmm_args *a)
{
    const cuda_plan *P = plan;
    cudaStream_t st = spx__cuda(ctx)->stream;
    const spx_dense *B = a->B;
    spx_dense *C = a->C;
    size_t es = spx_dtype_size(P->dtype);
    const int64_t ld16 = spx__cuda_row16(P->n, P->dtype); /* staged rows start on 16 bytes */
    void *bstage = NULL, *cstage = NULL, *hostbuf = NULL;
    spx_status s = SPX_OK;
    bool host_io = B->memory == SPX_MEM_HOST || C->memory == SPX_MEM_HOST;

    spx_cuda_dense_args d = {.dtype = P->dtype, .n = P->n, .alpha = a->alpha, .beta = a->beta, .stream = st};
    /* B */
    if (B->memory == SPX_MEM_DEVICE && B->layout == SPX_ROW_MAJOR) {
        d.B = B->data;
        d.ldb = B->ld;
    } else {
        if ((s = spx__cuda_alloc(ctx, &bstage, (size_t)(P->k * ld16) * es, "staging B")))
            goto done;
        const void *src = B->data;
        if (B->memory == SPX_MEM_HOST) { /* upload as stored, then transpose on the device if needed */
            int64_t outer = B->layout == SPX_ROW_MAJOR ? P->k : P->n, inner = B->layout == SPX_ROW_MAJOR ? P->n : P->k;
            if (B->layout == SPX_COL_MAJOR &&
                (s = spx__cuda_alloc(ctx, &hostbuf, (size_t)(outer * inner) * es, "staging B")))
                goto done;
            void *dst = B->layout == SPX_ROW_MAJOR ? bstage : hostbuf;
            const int64_t dst_ld = B->layout == SPX_ROW_MAJOR ? ld16 : inner;
            cudaError_t e = cudaMemcpy2DAsync(dst, (size_t)dst_ld * es, B->data, (size_t)B->ld * es,
                                              (size_t)inner * es, (size_t)outer, cudaMemcpyHostToDevice, st);
            if ((s = spx__cuda_check(ctx, e, "copying B to the device")))
                goto done;
            src = dst;
            if (B->layout == SPX_COL_MAJOR &&
                (s = spx__cuda_check(ctx, spx__cuda_transpose(P->dtype, src, P->k, bstage, ld16, P->n, P->k, st),
                                     "transposing B")))
                goto done;
        } else if ((s = spx__cuda_check(ctx, spx__cuda_transpose(P->dtype, src, B->ld, bstage, ld16, P->n, P->k, st),
                                        "transposing B")))
            goto done;
        d.B = bstage;
        d.ldb = ld16;
    }
    /* C */
    bool stage_c = !(C->memory == SPX_MEM_DEVICE && C->layout == SPX_ROW_MAJOR);
    if (!stage_c) {
        d.C = C->data;
        d.ldc = C->ld;
    } else {
        if ((s = spx__cuda_alloc(ctx, &cstage, (size_t)(P->m * ld16) * es, "staging C")))
            goto done;
        d.C = cstage;
        d.ldc = ld16;
        if (a->beta != 0.0) {
            if (C->memory == SPX_MEM_HOST && C->layout == SPX_ROW_MAJOR) {
                cudaError_t e = cudaMemcpy2DAsync(cstage, (size_t)ld16 * es, C->data, (size_t)C->ld * es,
                                                  (size_t)P->n * es, (size_t)P->m, cudaMemcpyHostToDevice, st);
                if ((s = spx__cuda_check(ctx, e, "copying C to the device")))
                    goto done;
            } else {
                const void *src = C->data;
                int64_t ld = C->ld;
                if (C->memory == SPX_MEM_HOST) { /* column-major host C: upload, then transpose */
                    spx__cuda_free(ctx, hostbuf);
                    hostbuf = NULL;
                    if ((s = spx__cuda_alloc(ctx, &hostbuf, (size_t)(P->m * P->n) * es, "staging C")))
                        goto done;
                    cudaError_t e = cudaMemcpy2DAsync(hostbuf, (size_t)P->m * es, C->data, (size_t)C->ld * es,
                                                      (size_t)P->m * es, (size_t)P->n, cudaMemcpyHostToDevice, st);
                    if ((s = spx__cuda_check(ctx, e, "copying C to the device")))
                        goto done;
                    src = hostbuf;
                    ld = P->m;
                }
                if ((s = spx__cuda_check(ctx, spx__cuda_transpose(P->dtype, src, ld, cstage, ld16, P->n, P->m, st),
                                         "transposing C")))
                    goto done;
            }
        }
    }
    if ((uint64_t)d.ldb * es > UINT32_MAX) {
        s = spx__fail(ctx, SPX_ERR_UNSUPPORTED, "the cuda backend needs rows of B shorter than 4 GiB (leading dimension %lld)",
                      (long long)d.ldb);
        goto done;
    }
    d.vec = aligned16(d.B) && (size_t)d.ldb * es % 16 == 0 ? (int)(16 / es) : 1;
    d.c_vec = aligned16(d.C) && (size_t)d.ldc * es % 16 == 0;
    if ((s = run_kernels(ctx, P, &d)))
        goto done;
    /* write staged C back */
    if (stage_c) {
        if (C->layout == SPX_ROW_MAJOR) { /* host row-major */
            cudaError_t e = cudaMemcpy2DAsync(C->data, (size_t)C->ld * es, cstage, (size_t)ld16 * es,
                                              (size_t)P->n * es, (size_t)P->m, cudaMemcpyDeviceToHost, st);
            if ((s = spx__cuda_check(ctx, e, "copying C to the host")))
                goto done;
        } else if (C->memory == SPX_MEM_DEVICE) {
            if ((s = spx__cuda_check(ctx, spx__cuda_transpose(P->dtype, cstage, ld16, C->data, C->ld, P->m, P->n, st),
                                     "transposing C")))
                goto done;
        } else {
            spx__cuda_free(ctx, hostbuf);
            hostbuf = NULL;
            if ((s = spx__cuda_alloc(ctx, &hostbuf, (size_t)(P->m * P->n) * es, "staging C")) ||
                (s = spx__cuda_check(ctx, spx__cuda_transpose(P->dtype, cstage, ld16, hostbuf, P->m, P->m, P->n, st),
                                     "transposing C")))
                goto done;
            cudaError_t e = cudaMemcpy2DAsync(C->data, (size_t)C->ld * es, hostbuf, (size_t)P->m * es,
                                              (size_t)P->m * es, (size_t)P->n, cudaMemcpyDeviceToHost, st);
            if ((s = spx__cuda_check(ctx, e, "copying C to the host")))
                goto done;
        }
    }
    if (host_io)
        s = spx__cuda_sync(ctx);
    else
        s = spx__cuda_launch_check(ctx, "spmm");
done:
    if (s && host_io)
        cudaStreamSynchronize(st); /* staged buffers may still be in use */
    spx__cuda_free(ctx, bstage);
    spx__cuda_free(ctx, cstage);
    spx__cuda_free(ctx, hostbuf);
    return s;
}

/* ---- one-shot calls: plans cached on the matrix ---- */

typedef struct cached_plan {
    spx_op op;
    spx_dtype dtype;
    int64_t n;
    spx_spmm_options opts;
    int deterministic;
    void *plan;
    struct cached_plan *next;
} cached_plan;

static const char plan_cache_key = 0;

static void release_cache(void *data)
{
    cached_plan *c = data;
    while (c) {
        cached_plan *next = c->next;
        spx__cuda_spmm_plan_destroy(c->plan);
        spx__free(c);
        c = next;
    }
}

spx_status spx__cuda_spmm(spx_ctx *ctx, const spx_spmm_args *a)
{
    spx_spmm_options opts = a->opts ? *a->opts : (spx_spmm_options){0};
    cached_plan *head = spx__matrix_attachment(a->A, &plan_cache_key), *c;
    for (c = head; c; c = c->next)
        if (c->op == a->op && c->dtype == a->B->dtype && c->n == a->n && c->deterministic == ctx->deterministic &&
            memcmp(&c->opts, &opts, sizeof opts) == 0)
            return spx__cuda_spmm_plan_execute(ctx, c->plan, a);
    void *plan = NULL;
    char *explain = NULL;
    spx_status s = spx__cuda_spmm_plan_create(ctx, a, &plan, &explain);
    spx__free(explain);
    if (s)
        return s;
    c = spx__calloc(1, sizeof *c);
    if (!c) {
        spx__cuda_spmm_plan_destroy(plan);
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (plan cache)");
    }
    *c = (cached_plan){a->op, a->B->dtype, a->n, opts, ctx->deterministic, plan, NULL};
    if (head) { /* add behind the head that the attachment owns */
        c->next = head->next;
        head->next = c;
    } else if ((s = spx__matrix_attach(ctx, a->A, &plan_cache_key, c, release_cache))) {
        release_cache(c);
        return s;
    }
    return spx__cuda_spmm_plan_execute(ctx, plan, a);
}

/* CUDA SpGEMM driver: working memory, the plan (row bins, table regions,
 * output staging) and the phases up to the numeric one.
 *
 *  1. operands on the device (spgemm_cuda_io.c), per-row arrays in one
 *     pool block;
 *  2. work pass: per row a bound on its product's entries (products under
 *     the mask window, the window, a plain mask row) and the span of columns
 *     they reach;
 *  3. symbolic binning by that bound, CUB radix sort of the rows by bin;
 *     its statistics size the regions of device memory for rows whose table
 *     does not fit shared memory and the output staging; the memory budget
 *     is checked here;
 *  4. symbolic kernels: exact counts per row (product, then with accum's
 *     row), exclusive scan into C's row offsets;
 *  5. numeric binning by the exact counts; then spgemm_cuda_io.c runs the
 *     numeric kernels and builds the result.
 * Two host synchronisations: after each binning, the numeric one with C's
 * size (more for host results, chunks and the flags). Products of at most
 * SPX_GEMM_SMALL_ROWS rows bin in one launch each time, the numeric one
 * with the scan. */
#include "backend/cuda/spgemm_cuda_host.h"

#include <limits.h>
#include <string.h>

/* Bins with tables in shared memory after the sorted ones (make_bins), in
 * order: (threads per row, slots). Those whose memory per block fits the
 * device's limit are used. Warp bins step by 2x: a row's table is cleared
 * and compacted slot by slot, so a table twice the needed size costs twice
 * that. */
static const struct {
    int group;
    int64_t slots;
} bin_candidates[] = {
    {32, 64}, {32, 128}, {32, 256}, {SPX_GEMM_BLOCK, 2048}, {SPX_GEMM_BLOCK, 8192}, {SPX_GEMM_BLOCK, 32768}};

/* Blocks per SM that get a table region (rows too large for shared memory). */
enum { REGION_BLOCKS_PER_SM = 4 };

static int64_t round256(int64_t b) { return (b + 255) & ~(int64_t)255; }
static int64_t pool_bytes(int64_t b) { return (int64_t)spx__cuda_alloc_size((size_t)(b > 0 ? b : 1)); }

spx_status spx__gemm_alloc(spx_gemm *g, void **p, int64_t bytes, const char *what)
{
    if (g->nblocks == SPX_GEMM_MAX_BLOCKS)
        return spx__fail(g->ctx, SPX_ERR_INTERNAL, "SpGEMM holds too many device buffers");
    spx_status s = spx__cuda_alloc(g->ctx, p, (size_t)(bytes > 0 ? bytes : 1), what);
    if (s)
        return s;
    g->block[g->nblocks] = *p;
    g->block_bytes[g->nblocks++] = pool_bytes(bytes);
    g->live += pool_bytes(bytes);
    if (g->live > g->peak)
        g->peak = g->live;
    return SPX_OK;
}

void spx__gemm_free(spx_gemm *g, void *p)
{
    for (int b = 0; p && b < g->nblocks; b++)
        if (g->block[b] == p) {
            spx__cuda_free(g->ctx, p);
            g->live -= g->block_bytes[b];
            g->nblocks--;
            g->block[b] = g->block[g->nblocks];
            g->block_bytes[b] = g->block_bytes[g->nblocks];
            return;
        }
}

/* The numeric kernels must combine in k order: integer sums (overflow is
 * decided in that order) and, in deterministic mode, floating-point sums,
 * min and max. Everything else gives the same bits in any order. */
static int needs_order(const spx_spgemm_args *a)
{
    int fl = a->type == SPX_F32 || a->type == SPX_F64;
    switch (a->kind) {
    case SPX_SEMIRING_PLUS_TIMES: return !fl || a->deterministic;
    case SPX_SEMIRING_MIN_PLUS:
    case SPX_SEMIRING_MAX_PLUS:
    case SPX_SEMIRING_MIN_TIMES:
    case SPX_SEMIRING_MAX_TIMES: return fl && a->deterministic;
    default: return 0;
    }
}

/* sorted: numeric bins of rows sorted in registers first; lanes: threads of
 * the table bins up to 128 slots (8 or 32, see short_lanes) */
static void make_bins(const spx_gemm *g, int numeric, int sorted, int lanes, spx_gemm_bins *b)
{
    memset(b, 0, sizeof *b);
    const int64_t optin = spx__cuda(g->ctx)->info.smem_per_block_optin;
    const int64_t vsz = numeric ? g->vsz : 4; /* symbolic kernels stage int32 */
    /* numeric rows of 33-64 and 65-128 products (see spx__gemm_sorted_row):
     * keys and values in a warp's "table" of that many slots (a few KB a
     * block, always fits) */
    for (int64_t P = 2 * SPX_GEMM_SORT_MIN; numeric && sorted && P <= SPX_GEMM_SORT_MAX; P *= 2) {
        const int x = ++b->nsorted;
        b->nshared = x;
        b->max_size[x] = P;
        b->group[x] = 32;
        b->slots[x] = (uint32_t)P;
    }
    /* with 8-lane tables the sort replaces a table only where the unordered
     * path's rule says so, on both paths */
    b->sort_every = numeric && g->ordered && lanes == 32;
    for (size_t c = 0; c < sizeof bin_candidates / sizeof bin_candidates[0]; c++) {
        const int64_t S = bin_candidates[c].slots;
        int G = bin_candidates[c].group;
        int64_t bytes = 0;
        for (int pass = 0; pass < 2; pass++) { /* 8 lanes where asked and they fit */
            if (pass == 0 && !(G == 32 && S <= 128 && lanes == 8))
                continue;
            const int lg = pass == 0 ? 8 : G;
            bytes = (SPX_GEMM_BLOCK / lg) * (spx__gemm_stage_bytes(lg, vsz) +
                                             spx__gemm_table_bytes(S, vsz, numeric, numeric && g->ordered));
            G = lg;
            if (bytes <= optin)
                break;
        }
        if (bytes > optin)
            break;
        const int x = ++b->nshared;
        b->max_size[x] = S / 2;
        b->group[x] = G;
        b->slots[x] = (uint32_t)S;
    }
    /* windows: a block's table, sized for the numeric phase in both (one
     * rule places a row in both phases) */
    for (int64_t S = SPX_GEMM_WINDOW_SLOTS; S >= 1024 && !b->window_slots; S /= 4)
        if (spx__gemm_stage_bytes(SPX_GEMM_BLOCK, g->vsz) +
                spx__gemm_table_bytes(S, g->vsz, 1, g->ordered) <= optin)
            b->window_slots = (uint32_t)S;
    const int w = spx__gemm_bin_window(b);
    b->group[w] = SPX_GEMM_BLOCK;
    b->slots[w] = b->window_slots;
}

/* Threads of the table rows up to 128 slots: 8 when there are many short,
 * even rows (A's rows average at most 8 entries, none over 32, 2^17 rows or
 * more): a warp then works on four rows at once, which shares the per-row
 * instructions and overlaps four rows' chains of dependent loads, the
 * latency these rows wait on (H200, 3D Laplacian 100^3 squared: symbolic
 * kernel 876 -> 342 us, numeric 1338 -> 974 us). With fewer rows the GPU
 * is not filled, and with uneven ones (power-law graphs) each warp waits for
 * the longest of its four: citeseer, cora, pubmed and p2p-Gnutella31
 * squared lost 15-50 %. */
static int short_lanes(const spx_gemm *g)
{
    const int64_t nnz = g->a->A->nnz;
    return g->m >= (1 << 17) && nnz <= 8 * g->m && g->hstats[SPX_GEMM_STAT_A_MAX] <= 32 ? 8 : 32;
}

/* Rows binned, grouped and (numeric) scanned by spx__cuda_gemm_bin_small. */
static int small_rows(const spx_gemm *g) { return g->m > 0 && g->m <= SPX_GEMM_SMALL_ROWS; }

/* The per-row arrays, CUB's scratch, statistics and flags: one pool block. */
static spx_status alloc_rows(spx_gemm *g)
{
    spx_ctx *ctx = g->ctx;
    const int64_t m = g->m;
    g->sort_bytes = 0;
    g->scan_bytes = 0;
    if (!small_rows(g))
        SPX_CUDA_TRY(ctx,
                     spx__cuda_sort_rows_by_bin(NULL, m, 4, NULL, NULL, &g->sort_bytes, g->stream),
                     "sizing the row sort");
    if (!small_rows(g) || g->a->drop_identity) /* the rows' scan, C's compaction */
        SPX_CUDA_TRY(ctx, spx__cuda_gemm_scan(NULL, NULL, m + 1, NULL, &g->scan_bytes, g->stream),
                     "sizing the scan");
    enum { CAP, PROD, RLO, RHI, CNT, TOT, OFF, ACT, BIN, ROWS, SORT, SCAN, STATS, RANGES, STATUS, NPARTS };
    const int64_t bytes[NPARTS] = {
        [CAP] = 4 * m, [PROD] = 4 * m, [RLO] = 4 * m, [RHI] = 4 * m, [CNT] = 4 * m,
        [TOT] = 8 * (m + 1), [OFF] = 8 * (m + 1), [ACT] = g->a->drop_identity ? 8 * (m + 1) : 0,
        [BIN] = m, [ROWS] = 4 * m, [SORT] = (int64_t)g->sort_bytes, [SCAN] = (int64_t)g->scan_bytes,
        [STATS] = 8 * SPX_GEMM_NSTATS, [RANGES] = 16 * SPX_GEMM_MAX_BINS,
        [STATUS] = (int64_t)sizeof(spx_gemm_status)};
    int64_t at[NPARTS], total = 0;
    for (int x = 0; x < NPARTS; x++) {
        at[x] = total;
        total += round256(bytes[x]);
    }
    unsigned char *base = NULL;
    spx_status s = spx__gemm_alloc(g, (void **)&base, total, "SpGEMM row arrays");
    if (s)
        return s;
    g->d.cap = (int32_t *)(base + at[CAP]);
    g->d.prod = (int32_t *)(base + at[PROD]);
    g->d.rlo = (int32_t *)(base + at[RLO]);
    g->d.rhi = (int32_t *)(base + at[RHI]);
    g->d.cnt = (int32_t *)(base + at[CNT]);
    g->d.tot = (int64_t *)(base + at[TOT]);
    g->d.off = (const int64_t *)(base + at[OFF]);
    g->d.act = bytes[ACT] ? (int64_t *)(base + at[ACT]) : NULL;
    g->bin = base + at[BIN];
    g->rows = (int32_t *)(base + at[ROWS]);
    g->sort_tmp = base + at[SORT];
    g->scan_tmp = base + at[SCAN];
    g->stats = (unsigned long long *)(base + at[STATS]);
    g->ranges = (int64_t *)(base + at[RANGES]);
    g->d.status = (spx_gemm_status *)(base + at[STATUS]);
    return SPX_OK;
}

/* Bin the rows by cap (symbolic) or cnt (numeric), group them by bin and
 * read the statistics (bin starts; the symbolic ones kept in hstats;
 * numeric: C's size): one synchronization, which also completes downloads
 * queued before (m > 0). */
static spx_status bin_rows(spx_gemm *g, int numeric)
{
    spx_ctx *ctx = g->ctx;
    const spx_gemm_bins *b = numeric ? &g->num : &g->sym;
    const int32_t *size = numeric ? g->d.cnt : g->d.cap;
    unsigned long long hs[SPX_GEMM_NSTATS];
    memset(hs, 0, sizeof hs);
    if (small_rows(g)) {
        SPX_CUDA_TRY(ctx,
                     spx__cuda_gemm_bin_small(&g->d, size, b, numeric, g->bin, g->stats, g->rows,
                                              (int64_t *)g->d.off, g->stream),
                     "binning rows");
    } else if (g->m > 0) {
        SPX_CUDA_TRY(ctx, cudaMemsetAsync(g->stats, 0, sizeof hs, g->stream), "clearing statistics");
        SPX_CUDA_TRY(ctx, spx__cuda_gemm_bin(&g->d, size, b, numeric, g->bin, g->stats, g->stream),
                     "binning rows");
        SPX_CUDA_TRY(ctx,
                     spx__cuda_sort_rows_by_bin(g->bin, g->m, 4, g->rows, g->sort_tmp, &g->sort_bytes,
                                                g->stream),
                     "sorting rows by bin");
    }
    if (g->m > 0) {
        spx_status s = spx__cuda_download(ctx, hs, g->stats, sizeof hs);
        if (s || (s = spx__cuda_sync(ctx)))
            return s;
    }
    g->start[0] = 0;
    for (int x = 0; x <= spx__gemm_bin_global(b); x++)
        g->start[x + 1] = g->start[x] + (int64_t)hs[SPX_GEMM_STAT_ROWS + x];
    for (int x = spx__gemm_bin_global(b) + 1; x < SPX_GEMM_MAX_BINS; x++)
        g->start[x + 1] = g->start[x];
    if (numeric)
        g->total = (int64_t)hs[SPX_GEMM_STAT_C_ENTRIES];
    else
        memcpy(g->hstats, hs, sizeof hs);
    return SPX_OK;
}

static int64_t stage_entry_bytes(const spx_gemm *g, spx_index_type out)
{
    /* host results stage int32 columns (widened on the host if needed) */
    return (g->a->out_memory == SPX_MEM_HOST ? 4 : (int64_t)spx__index_size(out)) + g->vsz;
}

/* Pool bytes of a staging buffer of e entries: columns, then values. */
static int64_t stage_bytes(const spx_gemm *g, int64_t e, spx_index_type out)
{
    return pool_bytes(round256(e * (stage_entry_bytes(g, out) - g->vsz)) + e * g->vsz);
}

/* Regions for rows whose tables need device memory, and the budget: the
 * minimum is the operands and row arrays, one region and staging for the
 * largest row C can have. */
static spx_status plan_memory(spx_gemm *g)
{
    const spx_spgemm_args *a = g->a;
    const spx_device_info *in = &spx__cuda(g->ctx)->info;
    const int global = spx__gemm_bin_global(&g->sym);
    const int64_t sym_global = g->start[global + 1] - g->start[global];
    const int64_t num_global = (int64_t)g->hstats[SPX_GEMM_STAT_NUM_ROWS];
    const int64_t want = sym_global > num_global ? sym_global : num_global;
    g->nregions = 0;
    g->region_bytes = 0;
    if (want > 0) {
        int64_t sym = spx__gemm_table_bytes((int64_t)g->hstats[SPX_GEMM_STAT_SYM_SLOTS], 4, 0, 0);
        int64_t num = spx__gemm_table_bytes((int64_t)g->hstats[SPX_GEMM_STAT_NUM_SLOTS], g->vsz, 1,
                                            g->ordered);
        g->region_bytes = round256(sym > num ? sym : num);
        int64_t x = (int64_t)REGION_BLOCKS_PER_SM * spx__cuda_sm_count(g->ctx);
        int64_t by_memory = in->global_mem_bytes / 8 / g->region_bytes;
        x = x < want ? x : want;
        x = x < by_memory ? x : by_memory;
        g->nregions = (int)(x > 1 ? x : 1);
    }
    g->stage = a->out_memory == SPX_MEM_HOST || a->drop_identity;
    const int64_t row_bound = (int64_t)g->hstats[SPX_GEMM_STAT_ROW_BOUND];
    const spx_index_type out0 = spx__spgemm_out_itype(a, 0);
    const int64_t stage_min = g->stage && row_bound > 0 ? stage_bytes(g, row_bound, out0) : 0;
    const int64_t region_min = g->nregions ? pool_bytes(g->region_bytes) : 0;
    const int64_t budget = spx__spgemm_backend_budget(a);
    if (g->fixed + region_min + stage_min > budget)
        return spx__spgemm_budget_error(g->ctx, a, g->fixed + region_min + stage_min,
                                        "the cuda backend's operands and row arrays, a table region "
                                        "and output staging for the largest row");
    if (g->nregions > 1 && a->memory_budget) {
        int64_t fit = (budget - g->fixed - stage_min - 511) / g->region_bytes;
        if (fit < g->nregions)
            g->nregions = (int)(fit > 1 ? fit : 1);
    }
    return SPX_OK;
}

/* Staging capacity once C's size is known: all of C, or what the budget
 * leaves (at least the largest row). */
static spx_status plan_staging(spx_gemm *g)
{
    const spx_spgemm_args *a = g->a;
    g->cap = 0;
    if (!g->stage || g->total == 0)
        return SPX_OK;
    const spx_index_type out = spx__spgemm_out_itype(a, g->total);
    const int64_t regions = g->nregions ? pool_bytes(g->nregions * g->region_bytes) : 0;
    const int64_t row_bound = (int64_t)g->hstats[SPX_GEMM_STAT_ROW_BOUND];
    int64_t cap = g->total;
    if (a->memory_budget) {
        const int64_t avail = spx__spgemm_backend_budget(a) - g->fixed - regions;
        int64_t fit = avail > 0 ? avail / stage_entry_bytes(g, out) : 0;
        while (fit > 0 && stage_bytes(g, fit, out) > avail) /* the pool's rounding */
            fit--;
        cap = fit < cap ? fit : cap;
        if (cap < g->total && cap < row_bound) /* only when C's indices had to widen */
            return spx__spgemm_budget_error(
                g->ctx, a, g->fixed + regions + stage_bytes(g, row_bound, out),
                "the cuda backend's operands and row arrays, the table regions and output "
                "staging for the largest row");
    }
    g->cap = cap;
    return SPX_OK;
}

static spx_gemm_launch make_launch(const spx_gemm *g, const spx_gemm_bins *b)
{
    spx_gemm_launch L;
    memset(&L, 0, sizeof L);
    L.rows = g->rows;
    for (int x = 0; x < SPX_GEMM_MAX_BINS; x++) {
        L.lo[x] = g->start[x];
        L.hi[x] = g->start[x + 1];
    }
    L.bins = *b;
    L.regions = g->regions;
    L.region_bytes = g->region_bytes;
    L.nregions = g->nregions;
    L.ordered = g->ordered;
    L.sorted_blocks = spx__cuda(g->ctx)->info.sm_count * SPX_GEMM_SORTED_BLOCKS_PER_SM;
    L.stream = g->stream;
    L.side = g->side;
    return L;
}

spx_status spx__gemm_numeric_rows(spx_gemm *g, int64_t r0, int64_t r1)
{
    spx_ctx *ctx = g->ctx;
    spx_gemm_launch L = make_launch(g, &g->num);
    if (r0 > 0 || r1 < g->m) { /* the chunk's part of each bin */
        const int nbins = spx__gemm_bin_global(&g->num) + 1;
        int64_t h[2 * SPX_GEMM_MAX_BINS];
        SPX_CUDA_TRY(ctx,
                     spx__cuda_gemm_chunk_ranges(g->rows, g->start, nbins, r0, r1, g->ranges,
                                                 g->stream),
                     "finding a chunk's rows");
        spx_status s = spx__cuda_download(ctx, h, g->ranges, sizeof(int64_t) * 2 * (size_t)nbins);
        if (s || (s = spx__cuda_sync(ctx)))
            return s;
        for (int x = 0; x < nbins; x++) {
            L.lo[x] = h[2 * x];
            L.hi[x] = h[2 * x + 1];
        }
    }
    SPX_CUDA_TRY(ctx, spx__cuda_gemm_numeric(g->a->kind, g->a->type, &g->d, &L),
                 "numeric SpGEMM kernels");
    return spx__cuda_launch_check(ctx, "numeric SpGEMM kernels");
}

/* Steps 2 to 5, then the query's answer or the result. */
static spx_status run(spx_gemm *g)
{
    spx_ctx *ctx = g->ctx;
    spx_status s;
    if ((s = alloc_rows(g)))
        return s;
    g->fixed = g->live;
    SPX_CUDA_TRY(ctx, spx__cuda_gemm_work(&g->d, g->a->A->nnz, g->stream), "SpGEMM work pass");
    if ((s = spx__cuda_launch_check(ctx, "SpGEMM work pass")))
        return s;
    if ((s = bin_rows(g, 0)) || (s = plan_memory(g)))
        return s;
    /* the kernels of the bins, now that the rows are known (the bins' sizes
     * stay as they were) */
    const int lanes = short_lanes(g);
    const int64_t num_smax = g->sym.num_smax;
    make_bins(g, 0, 0, lanes, &g->sym);
    g->sym.num_smax = num_smax;
    make_bins(g, 1, g->hstats[SPX_GEMM_STAT_FEW_ROWS] >= SPX_GEMM_SORT_MIN_ROWS, lanes, &g->num);
    if (g->nregions &&
        (s = spx__gemm_alloc(g, (void **)&g->regions, g->nregions * g->region_bytes,
                             "SpGEMM table regions")))
        return s;
    spx_gemm_launch L = make_launch(g, &g->sym);
    SPX_CUDA_TRY(ctx, spx__cuda_gemm_symbolic(&g->d, &L), "symbolic SpGEMM kernels");
    if ((s = spx__cuda_launch_check(ctx, "symbolic SpGEMM kernels")))
        return s;
    if (!small_rows(g)) /* else the numeric binning scans */
        SPX_CUDA_TRY(ctx,
                     spx__cuda_gemm_scan(g->d.tot, (int64_t *)g->d.off, g->m + 1, g->scan_tmp,
                                         &g->scan_bytes, g->stream),
                     "scanning row counts");
    /* C's size comes back with the numeric binning's statistics (0 rows: 0) */
    if ((s = bin_rows(g, 1)) || (s = plan_staging(g)))
        return s;
    if (g->a->workspace) {
        const spx_index_type out = spx__spgemm_out_itype(g->a, g->total);
        *g->a->workspace = g->peak + (g->cap ? stage_bytes(g, g->cap, out) : 0);
        return SPX_OK;
    }
    return spx__gemm_output(g);
}

spx_status spx__cuda_spgemm(spx_ctx *ctx, const spx_spgemm_args *a)
{
    if (a->kind == SPX_SEMIRING_CUSTOM)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "the cuda backend has SpGEMM kernels for the built-in semirings only; "
                         "run custom semirings on the cpu or ref backend");
    const int64_t m = a->A->rows, k = a->A->cols, n = a->B->cols;
    if (m > INT32_MAX || k > INT32_MAX || n > INT32_MAX)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "the cuda backend's SpGEMM handles up to 2^31-1 rows and columns "
                         "(op(A) is %lld x %lld, op(B) %lld x %lld)",
                         (long long)m, (long long)k, (long long)k, (long long)n);
    spx_gemm g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    g.a = a;
    g.stream = spx__cuda(ctx)->stream;
    g.m = m;
    g.n = n;
    g.vsz = (int64_t)spx_dtype_size(a->type);
    g.ordered = needs_order(a);
    g.d.m = m;
    g.d.n = n;
    g.d.mask = a->mask;
    g.d.complement = a->complement;
    g.d.drop = a->drop_identity;
    g.d.track_changed = a->changed && a->accum;
    make_bins(&g, 0, 0, 32, &g.sym);
    make_bins(&g, 1, 1, 32, &g.num);
    g.sym.num_smax = g.num.nshared ? g.num.max_size[g.num.nshared] : 0;
    spx_status s = spx__cuda_side_streams(ctx, &g.side);
    if (!s)
        s = spx__gemm_stage_operands(&g);
    if (!s)
        s = run(&g);
    if (s)
        cudaStreamSynchronize(g.stream); /* nothing may still use the buffers after an error */
    while (g.nblocks)
        spx__gemm_free(&g, g.block[g.nblocks - 1]);
    spx__free(g.hoff);
    return s;
}

/* CPU SpGEMM driver: symbolic then numeric phase over row chunks, OpenMP
 * over row tasks of balanced work, the output allocated once.
 *
 * Plan. One pass over the rows sizes each thread's accumulator from the
 * rows' needs (cpu_row_info): a hash table as large as the largest hashed
 * row needs, a dense column array only if some row is nearly dense, and a
 * list for one row's columns. All working memory is one arena: the
 * accumulators, a count per row of the chunk and the task bounds, so the
 * plan knows it to the byte (spx_spgemm_workspace_size).
 *
 * Memory budget. Without one, all rows are one chunk and every thread gets
 * an accumulator. Under a budget, fewer threads are used first; then rows
 * are processed in chunks, which shrinks the count array to a chunk and
 * costs one more symbolic pass (the output's size must be known before any
 * numeric work). The minimum is one accumulator plus 192 bytes (a one-row
 * chunk, one task, one accumulator descriptor, each rounded to 64 bytes).
 *
 * Phases. Tasks are contiguous row ranges of equal work (products of the
 * row, plus one), taken dynamically by the threads. The symbolic phase
 * counts each row's entries under the mask (and accum's pattern) exactly;
 * the numeric phase computes each row on one thread, in k order, straight
 * into its place in C. So results never depend on the thread count: this
 * backend is always deterministic. With drop_identity the counts are upper
 * bounds; rows are then compacted after each chunk and the arrays shrunk. */
#include "backend/cpu/spgemm_cpu.h"
#include "format/matrix.h"

#ifdef SPX_HAVE_OPENMP
#include <omp.h>
#define THREAD_ID() omp_get_thread_num()
#else
#define THREAD_ID() 0
#endif

enum { ARENA_ALIGN = 64, TASKS_PER_THREAD = 8 };
/* Below this many products (rows, for the planning pass) one thread is
 * faster than waking the others. */
#define SERIAL_FLOPS ((int64_t)1 << 16)
#define SERIAL_ROWS ((int64_t)1 << 14)

typedef struct {
    int threads;
    int64_t chunk_rows;  /* rows per chunk */
    int dense;           /* accumulators hold a dense column array */
    int64_t hash_cap;    /* hash slots per accumulator (0: no hashed rows) */
    int64_t list_cap;    /* column list entries per accumulator */
    int64_t acc_bytes;   /* one accumulator */
    int64_t bytes;       /* the arena */
} cpu_plan;

static int64_t round_up(int64_t bytes) { return (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN; }

static int64_t tasks_for(int threads, int64_t rows)
{
    int64_t t = threads > 1 ? TASKS_PER_THREAD * (int64_t)threads : 1;
    return rows < t ? (rows > 1 ? rows : 1) : t;
}

/* Arena bytes for `threads` accumulators and chunks of `rows` rows. */
static int64_t arena_bytes(const cpu_plan *p, int threads, int64_t rows)
{
    return threads * p->acc_bytes + round_up(threads * (int64_t)sizeof(cpu_acc)) +
           round_up(8 * (rows + 1)) + round_up(8 * (tasks_for(threads, rows) + 1));
}

static int requested_threads(const spx_ctx *ctx)
{
#ifdef SPX_HAVE_OPENMP
    return ctx->num_threads > 0 ? ctx->num_threads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}

/* Size the accumulators, then fit threads and chunks to the budget. */
static spx_status plan_make(spx_ctx *ctx, const cpu_shared *sh, cpu_plan *p)
{
    const spx_spgemm_args *a = sh->a;
    int64_t m = a->A->rows, n = sh->n;
    int64_t hash_cap = 0, list_cap = 0, flops = 0;
    int dense = 0, threads = requested_threads(ctx);
#pragma omp parallel for num_threads(threads) if (m >= SERIAL_ROWS) schedule(static) \
    reduction(max : hash_cap, list_cap) reduction(| : dense) reduction(+ : flops)
    for (int64_t i = 0; i < m; i++) {
        cpu_row_info ri;
        spx__cpu_row_info(sh, i, &ri);
        flops += ri.flops;
        if (ri.flops == 0 || ri.lo >= ri.hi)
            continue; /* no products: the row needs no accumulator */
        int64_t products = ri.flops < ri.hi - ri.lo ? ri.flops : ri.hi - ri.lo;
        list_cap = products > list_cap ? products : list_cap;
        if (ri.dense)
            dense = 1;
        else
            hash_cap = ri.hsize > hash_cap ? ri.hsize : hash_cap;
    }
    size_t isz = spx__index_size(a->A->itype);
    int64_t vsz = (int64_t)sh->vsz;
    p->dense = dense;
    p->hash_cap = hash_cap;
    p->list_cap = list_cap < n ? list_cap : n;
    double acc = (dense ? (double)round_up(n) + (double)round_up(n * vsz) : 0) +
                 (double)round_up(hash_cap * (int64_t)isz) + (double)round_up(hash_cap) +
                 (double)round_up(hash_cap * vsz) + (double)round_up(p->list_cap * (int64_t)isz);
    if (acc > (double)INT64_MAX / 4096)
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "SpGEMM accumulator of %.3g bytes is too large",
                         acc);
    p->acc_bytes = (int64_t)acc;
    if (flops < SERIAL_FLOPS)
        threads = 1;
    if (threads > m)
        threads = m > 1 ? (int)m : 1;

    int64_t budget = spx__spgemm_backend_budget(a);
    for (int t = threads; t >= 1; t--) { /* all rows in one chunk, as many threads as fit */
        if (arena_bytes(p, t, m) <= budget) {
            p->threads = t;
            p->chunk_rows = m;
            p->bytes = arena_bytes(p, t, m);
            return SPX_OK;
        }
    }
    for (int t = threads; t >= 1; t--) { /* chunks of rows, enough rows to keep t threads busy */
        /* an estimate a little high (rounding), lowered until it fits */
        int64_t rows = (budget - arena_bytes(p, t, 0)) / 8 + ARENA_ALIGN / 8;
        while (rows > 0 && arena_bytes(p, t, rows) > budget)
            rows--;
        if (rows >= (t > 1 ? TASKS_PER_THREAD * (int64_t)t : 1)) {
            p->threads = t;
            p->chunk_rows = rows;
            p->bytes = arena_bytes(p, t, rows);
            return SPX_OK;
        }
    }
    return spx__spgemm_budget_error(ctx, a, arena_bytes(p, 1, 1),
                                    "one row accumulator and one-row chunks");
}

/* Cut rows [r0, r0 + rows) into tasks of equal work: tasks[k] is the first
 * row (relative to r0) of task k. Uses cnt as scratch. Returns the task count. */
static int64_t make_tasks(const cpu_shared *sh, int threads, int64_t r0, int64_t rows,
                          int64_t *cnt, int64_t *tasks)
{
    int64_t ntasks = tasks_for(threads, rows), total = 0;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static) \
    reduction(+ : total)
    for (int64_t r = 0; r < rows; r++) {
        cnt[r] = spx__cpu_row_flops(sh, r0 + r) + 1;
        total += cnt[r];
    }
    int64_t k = 1, done = 0;
    tasks[0] = 0;
    for (int64_t r = 0; r < rows && k < ntasks; r++) {
        done += cnt[r];
        while (k < ntasks && (double)done >= (double)total * (double)k / (double)ntasks)
            tasks[k++] = r + 1;
    }
    while (k <= ntasks)
        tasks[k++] = rows;
    return ntasks;
}

/* Run kernel over the rows of the chunk. Symbolic (C NULL): cnt[r] = the
 * count of row r0 + r. Numeric: row r0 + r is written from entry cnt[r]; on
 * overflow the lowest failing row and its column go to *bad_i, *bad_j. */
static void run_rows(const cpu_shared *sh, cpu_acc *accs, int threads, cpu_row_fn kernel,
                     int64_t r0, const int64_t *tasks, int64_t ntasks, int64_t *cnt,
                     int64_t *bad_i, int64_t *bad_j)
{
    int numeric = sh->C != NULL;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        cpu_acc *w = &accs[THREAD_ID()];
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < ntasks; t++) {
            for (int64_t r = tasks[t]; r < tasks[t + 1]; r++) {
                if (!numeric) {
                    cnt[r] = kernel(sh, w, r0 + r, 0, NULL);
                    continue;
                }
                int64_t first_bad, j;
#pragma omp atomic read
                first_bad = *bad_i;
                if (r0 + r > first_bad)
                    continue; /* a lower row already failed */
                if (kernel(sh, w, r0 + r, cnt[r], &j) >= 0)
                    continue;
#pragma omp critical(spx_spgemm_overflow)
                if (r0 + r < *bad_i) {
                    *bad_j = j;
#pragma omp atomic write
                    *bad_i = r0 + r;
                }
            }
        }
    }
}

/* Move the rows of a chunk down to `cursor` after drop_identity left gaps;
 * starts[r] is where row r0 + r was written, C's offsets hold its end. */
static int64_t compact_rows(spx_matrix *C, int64_t r0, int64_t rows, const int64_t *starts,
                            int64_t cursor)
{
    size_t isz = spx__index_size(C->itype), vsz = spx_dtype_size(C->dtype);
    for (int64_t r = 0; r < rows; r++) {
        int64_t len = spx__idx_get(C->offsets, C->itype, r0 + r + 1) - starts[r];
        if (cursor != starts[r] && len > 0) {
            memmove((char *)C->indices + cursor * isz, (char *)C->indices + starts[r] * isz,
                    (size_t)len * isz);
            memmove((char *)C->values + cursor * vsz, (char *)C->values + starts[r] * vsz,
                    (size_t)len * vsz);
        }
        cursor += len;
        spx__idx_set(C->offsets, C->itype, r0 + r + 1, cursor);
    }
    return cursor;
}

/* Give back the tail that dropped entries left unused (keeps the larger
 * arrays if the allocator says no: they stay valid). */
static void shrink(spx_matrix *C, int64_t nnz)
{
    size_t isz = spx__index_size(C->itype), vsz = spx_dtype_size(C->dtype);
    size_t keep = nnz > 0 ? (size_t)nnz : 1;
    void *p = spx__realloc(C->indices, keep * isz);
    if (p)
        C->indices = p;
    if ((p = spx__realloc(C->values, keep * vsz)))
        C->values = p;
    C->nnz = nnz;
}

static void carve(unsigned char *arena, const cpu_plan *p, const cpu_shared *sh, int64_t **cnt,
                  int64_t **tasks, cpu_acc **accs)
{
    size_t isz = spx__index_size(sh->a->A->itype);
    int64_t n = sh->n, vsz = (int64_t)sh->vsz;
    unsigned char *at = arena;
    *cnt = (int64_t *)at;
    at += round_up(8 * (p->chunk_rows + 1));
    *tasks = (int64_t *)at;
    at += round_up(8 * (tasks_for(p->threads, p->chunk_rows) + 1));
    *accs = (cpu_acc *)at;
    at += round_up(p->threads * (int64_t)sizeof(cpu_acc));
    for (int t = 0; t < p->threads; t++) {
        cpu_acc *w = &(*accs)[t];
        w->dstate = p->dense ? at : NULL;
        at += p->dense ? round_up(n) : 0;
        w->dval = at;
        at += p->dense ? round_up(n * vsz) : 0;
        w->hkey = at;
        at += round_up(p->hash_cap * (int64_t)isz);
        w->hstate = at;
        at += round_up(p->hash_cap);
        w->hval = at;
        at += round_up(p->hash_cap * vsz);
        w->touched = at;
        at += round_up(p->list_cap * (int64_t)isz);
    }
}

spx_status spx__cpu_spgemm(spx_ctx *ctx, const spx_spgemm_args *a)
{
    cpu_shared sh = {.a = a, .n = a->B->cols, .vsz = spx_dtype_size(a->type)};
    cpu_plan p = {0};
    spx_status s = plan_make(ctx, &sh, &p);
    if (s)
        return s;
    if (a->workspace) {
        *a->workspace = p.bytes;
        return SPX_OK;
    }
    cpu_row_fn symbolic = spx__cpu_symbolic_kernel(a), numeric = spx__cpu_numeric_kernel(a);
    if (!numeric)
        return spx__fail(ctx, SPX_ERR_INTERNAL, "no CPU SpGEMM kernel for %s over %s",
                         spx_semiring_name(a->kind), spx_dtype_name(a->type));
    spx__spgemm_one(a, sh.one.bytes);
    spx__spgemm_identity(a, sh.identity.bytes);
    unsigned char *arena = NULL;
    /* zeroed: dense accumulator states must start at 0 */
    if ((s = spx__alloc_zero(ctx, (void **)&arena, p.bytes, 1, "SpGEMM working memory")))
        return s;
    int64_t *cnt, *tasks;
    cpu_acc *accs;
    carve(arena, &p, &sh, &cnt, &tasks, &accs);

    int64_t m = a->A->rows, R = p.chunk_rows, total = 0;
    int chunked = R < m;
    for (int64_t r0 = 0; chunked && r0 < m; r0 += R) { /* chunked: count everything first */
        int64_t rows = m - r0 < R ? m - r0 : R;
        int64_t nt = make_tasks(&sh, p.threads, r0, rows, cnt, tasks);
        run_rows(&sh, accs, p.threads, symbolic, r0, tasks, nt, cnt, NULL, NULL);
        for (int64_t r = 0; r < rows; r++)
            total += cnt[r];
    }
    spx_matrix *C = NULL;
    int64_t planned = 0, cursor = 0, bad_i = INT64_MAX, bad_j = -1;
    for (int64_t r0 = 0; r0 < m; r0 += R) {
        int64_t rows = m - r0 < R ? m - r0 : R;
        int64_t nt = make_tasks(&sh, p.threads, r0, rows, cnt, tasks);
        sh.C = NULL;
        run_rows(&sh, accs, p.threads, symbolic, r0, tasks, nt, cnt, NULL, NULL);
        for (int64_t r = 0; r < rows; r++) { /* counts -> start of each row */
            int64_t c = cnt[r];
            cnt[r] = planned;
            planned += c;
        }
        if (!C) {
            if ((s = spx__matrix_create(ctx, SPX_CSR, m, sh.n, chunked ? total : planned,
                                        spx__spgemm_out_itype(a, chunked ? total : planned),
                                        a->type, &C)))
                goto done;
            spx__idx_set(C->offsets, C->itype, 0, 0);
        }
        sh.C = C;
        run_rows(&sh, accs, p.threads, numeric, r0, tasks, nt, cnt, &bad_i, &bad_j);
        if (bad_i != INT64_MAX) {
            s = spx__spgemm_overflow(ctx, a, bad_i, bad_j);
            goto done;
        }
        cursor = a->drop_identity ? compact_rows(C, r0, rows, cnt, cursor) : planned;
    }
    if (!C && (s = spx__matrix_create(ctx, SPX_CSR, m, sh.n, 0, spx__spgemm_out_itype(a, 0),
                                      a->type, &C)))
        goto done;
    if (m == 0)
        spx__idx_set(C->offsets, C->itype, 0, 0);
    if (cursor < C->nnz)
        shrink(C, cursor);
    C->checked_version = C->version;
    *a->C = C;
    C = NULL;
done:
    spx_matrix_destroy(C);
    spx__free(arena);
    return s;
}

/* The CUDA planner's host logic, run without a GPU: where the row batches
 * cut rows into pieces (spx__row_batches_cut and spx__lay_cut_slots in
 * src/backend/cuda/spmm_plan.c), on random row lengths, orders, N and SM
 * counts. Every slot list laid covers each row's entries once, in the rows'
 * order, each cut row's pieces within one aligned group of teams and none
 * over the bound; the grid over the slots keeps the cut's bound on waves or
 * on the busiest SM's rows; a rounds cut comes only where the rows are of
 * about equal length and the model's time falls; the batches' last column
 * tile is narrower only where N leaves 32 columns or fewer past the others
 * and the rows are about even. A few layers pin the plans measured in
 * docs/PERFORMANCE.md. Skipped (77) in builds without CUDA. */
#include "testutil.h"

#ifdef SPX_HAVE_CUDA
#include "backend/cuda/spmm_plan.h"

#define LL(x) ((long long)(x))

static uint64_t rng;

static uint64_t next_u64(void)
{
    rng += 0x9e3779b97f4a7c15ull;
    uint64_t z = rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static int64_t uniform(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }

/* A context whose CUDA state says `sms` SMs (the planner reads nothing
 * else of the device here), and a plan of f32 data over the row lengths. */
typedef struct {
    struct spx_ctx ctx;
    spx_cuda_state state;
    cuda_plan P;
    int64_t *rowptr;
} fake_plan;

static void fake_init(fake_plan *f, int sms, int64_t m, int64_t k, int64_t n, const int64_t *len)
{
    memset(f, 0, sizeof *f);
    f->state.info.sm_count = sms;
    f->ctx.backend_state = &f->state;
    f->P.dtype = SPX_F32;
    f->P.m = m;
    f->P.k = k;
    f->P.n = n;
    f->rowptr = malloc((size_t)(m + 1) * sizeof *f->rowptr);
    f->rowptr[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        f->rowptr[i + 1] = f->rowptr[i] + len[i];
        if (len[i] > f->P.max_row)
            f->P.max_row = len[i];
    }
    f->P.csr.nnz = f->rowptr[m];
}

static int64_t busiest_rows(int sms, const batches_shape *b) { return (b->blocks + sms - 1) / sms * b->rows; }
static double waves(int sms, const batches_shape *b) { return (double)b->blocks / ((double)sms * b->blocks_per_sm); }

/* The cut and slots the planner gives the uncut grid over the rows, checked;
 * returns the cut (its pieces through *pieces_of_row[r] when non-NULL). */
static batch_cut plan_and_check(fake_plan *f, const int32_t *order, bool forced, int64_t *pieces_of_row,
                                const char *what)
{
    spx_ctx *ctx = &f->ctx;
    const cuda_plan *P = &f->P;
    const int sms = f->state.info.sm_count;
    const int64_t m = P->m, g = SPX_CUDA_BATCH_PIECE_TEAMS;
    const batches_shape whole = spx__batches_shape_of(ctx, P, m);
    batch_cut c = spx__row_batches_cut(ctx, P, &whole);
    const batch_cut first = c;
    batches_shape shape = whole;
    spx_cuda_batch_slot *slots = NULL;
    int64_t cut = 0, n = 0;
    if (pieces_of_row)
        for (int64_t r = 0; r < m; r++)
            pieces_of_row[r] = 1;
    if (!c.cap)
        return c;
    CHECK(!whole.short_rows, "%s: short rows are never cut", what);
    const double avg = (double)P->csr.nnz / (double)m;
    if (c.kind == BATCH_CUT_ROUNDS) {
        CHECK((double)P->max_row <= ROW_BATCHES_ROUNDS_MAX_SPREAD * avg,
              "%s: a rounds cut of rows of unequal length (longest %lld, average %.1f)", what, LL(P->max_row), avg);
        CHECK(c.pieces >= 2 && c.pieces <= ROW_BATCHES_ROUNDS_MAX_PIECES, "%s: %lld pieces", what, LL(c.pieces));
        const double t_whole = (double)busiest_rows(sms, &whole) * (avg + ROW_BATCHES_PIECE_COST);
        const double t_cut = (double)c.sm_rows * (avg / (double)c.pieces + ROW_BATCHES_PIECE_COST);
        CHECK(t_cut < t_whole, "%s: a rounds cut the model does not gain by (%.0f against %.0f)", what, t_cut,
              t_whole);
    }
    if (c.kind == BATCH_CUT_FILL)
        CHECK(waves(sms, &whole) <= ROW_BATCHES_FILL_MAX_WAVES, "%s: a fill cut at %.2f waves", what,
              waves(sms, &whole));
    CHECK_OK(ctx, spx__lay_cut_slots(ctx, P, f->rowptr, order, forced, &shape, &c, &cut, &slots, &n));
    if (!slots) {
        /* only a tail not forced, once the bound has been doubled as far as
         * it may go (fill and rounds cuts always fit: spx__lay_cut_slots) */
        CHECK(c.kind == BATCH_CUT_TAIL && !forced && 2 * c.cap > c.limit,
              "%s: no slots for cut kind %d (forced %d, cap %lld, limit %lld, rows cut %lld)", what, (int)c.kind,
              (int)forced, LL(c.cap), LL(c.limit), LL(cut));
        CHECK(shape.blocks == whole.blocks && shape.threads == whole.threads, "%s: the grid changed, no slots", what);
        return c;
    }
    if (c.cap > first.cap) { /* the bound doubled: half of it did not fit */
        batch_cut half = c;
        batches_shape s_half = whole;
        spx_cuda_batch_slot *h_slots = NULL;
        int64_t h_cut = 0, h_n = 0;
        half.cap = half.limit = c.cap / 2;
        CHECK_OK(ctx, spx__lay_cut_slots(ctx, P, f->rowptr, order, false, &s_half, &half, &h_cut, &h_slots, &h_n));
        CHECK(!h_slots, "%s: bound %lld laid where %lld (first %lld) fits", what, LL(c.cap), LL(c.cap / 2),
              LL(first.cap));
        free(h_slots);
    }
    CHECK(c.cap >= first.cap && c.cap <= (first.limit > first.cap ? first.limit : first.cap),
          "%s: bound %lld outside [%lld, %lld]", what, LL(c.cap), LL(first.cap), LL(first.limit));
    if (c.kind == BATCH_CUT_ROUNDS)
        CHECK(c.cap == first.cap && busiest_rows(sms, &shape) <= c.sm_rows,
              "%s: rounds cut laid at bound %lld (first %lld), busiest SM %lld rows (counted %lld)", what,
              LL(c.cap), LL(first.cap), LL(busiest_rows(sms, &shape)), LL(c.sm_rows));
    else if (waves(sms, &shape) > c.waves) /* a forced tail only, at the last bound */
        CHECK(forced && c.kind == BATCH_CUT_TAIL && 2 * c.cap > c.limit,
              "%s: %.2f waves over the slots (bound %.2f, cap %lld, limit %lld)", what, waves(sms, &shape), c.waves,
              LL(c.cap), LL(c.limit));
    const batches_shape again = spx__batches_shape_of(ctx, P, n);
    CHECK(again.blocks == shape.blocks && again.threads == shape.threads, "%s: the grid is not the slots'", what);
    /* every row once, in order, its pieces adjacent, contiguous, within one
     * group and the bound; the rest of the slots empty */
    int64_t i = 0, s = 0, rows_cut = 0;
    while (s < n && i <= m) {
        const spx_cuda_batch_slot *sl = &slots[s];
        if (sl->row < 0) {
            CHECK(sl->pieces == 0 && sl->start == sl->end, "%s: slot %lld neither a row nor empty", what, LL(s));
            s++;
            continue;
        }
        if (i >= m) {
            CHECK(0, "%s: slot %lld holds a row past the last", what, LL(s));
            break;
        }
        const int64_t r = order ? order[i] : i, q = sl->pieces;
        CHECK(sl->row == r, "%s: slot %lld holds row %d, expected %lld", what, LL(s), sl->row, LL(r));
        CHECK(q >= 1 && q <= g && s + q <= n, "%s: row %lld in %lld pieces", what, LL(r), LL(q));
        if (!(q >= 1 && q <= g && s + q <= n))
            break;
        CHECK(s / g == (s + q - 1) / g, "%s: row %lld's pieces cross a group (slots %lld-%lld)", what, LL(r), LL(s),
              LL(s + q - 1));
        /* pieces within the bound, or a row of more than g bounds' entries in g pieces */
        const int64_t len = f->rowptr[r + 1] - f->rowptr[r], most = q < g ? c.cap : (len + g - 1) / g;
        CHECK(q == (len > c.cap ? (len + c.cap - 1) / c.cap < g ? (len + c.cap - 1) / c.cap : g : 1),
              "%s: row %lld of %lld entries in %lld pieces (bound %lld)", what, LL(r), LL(len), LL(q), LL(c.cap));
        int64_t at = f->rowptr[r];
        for (int64_t j = 0; j < q; j++) {
            const spx_cuda_batch_slot *p = &slots[s + j];
            const bool ok = p->start == at && p->end >= p->start && (j == 0 || (p->row == -1 && p->pieces == 0)) &&
                            (q == 1 || p->end - p->start <= most);
            CHECK(ok, "%s: row %lld piece %lld [%lld, %lld) (expected from %lld, at most %lld entries)", what, LL(r),
                  LL(j), LL(p->start), LL(p->end), LL(at), LL(most));
            if (!ok)
                break;
            at = p->end;
        }
        CHECK(at == f->rowptr[r + 1], "%s: row %lld's pieces end at %lld, not %lld", what, LL(r), LL(at),
              LL(f->rowptr[r + 1]));
        rows_cut += q > 1;
        if (pieces_of_row)
            pieces_of_row[r] = q;
        s += q;
        i++;
    }
    CHECK(i == m, "%s: %lld of %lld rows laid", what, LL(i), LL(m));
    CHECK(rows_cut == cut, "%s: %lld rows cut, %lld counted", what, LL(rows_cut), LL(cut));
    free(slots);
    return c;
}

/* Row lengths of a random family: about equal (within a random spread),
 * one long row among short ones, a few rows, or heavy-tailed. */
static void random_lengths(int64_t m, int64_t k, int64_t *len)
{
    const int family = (int)uniform(0, 3);
    const int64_t avg = uniform(1, k < 2048 ? k : 2048), spread = uniform(0, 60);
    for (int64_t i = 0; i < m; i++) {
        int64_t l;
        if (family == 0)
            l = avg + (int64_t)((double)avg * (double)uniform(-spread, spread) / 100.0);
        else if (family == 1)
            l = uniform(0, avg / 8 + 1);
        else if (family == 2)
            l = uniform(0, k);
        else
            l = (int64_t)((double)avg * exp((double)uniform(-300, 300) / 100.0) / 8.0);
        len[i] = l < 0 ? 0 : l > k ? k : l;
    }
    if (family == 1)
        len[uniform(0, m - 1)] = uniform(avg, k);
}

/* The batches' last column tile over f's whole rows: the tile's width, or,
 * only where N leaves 32 columns or fewer past the tiles and the longest row
 * is at most ROW_BATCHES_LAST_TILE_MAX_SKEW times the average, as narrow as
 * those columns; returns it. */
static int64_t last_tile_checked(fake_plan *f, const char *what)
{
    const cuda_plan *P = &f->P;
    const batches_shape b = spx__batches_shape_of(&f->ctx, P, P->m);
    const int64_t last = spx__batches_last_cols(&f->ctx, P, &b), rest = P->n > b.cols ? P->n % b.cols : 0;
    const bool even = (double)P->max_row * (double)P->m <= ROW_BATCHES_LAST_TILE_MAX_SKEW * (double)P->csr.nnz;
    CHECK(last == b.cols || (rest > 0 && rest <= 32 && last == spx__cuda_batch_tile_cols(rest) && last < b.cols && even),
          "%s: tiles of %lld, the last %lld", what, LL(b.cols), LL(last));
    return last;
}

/* m rows of `each` entries, row m / 2 of `one` where not 0 (k columns), on
 * 132 SMs at N: the batches' last column tile. */
static int64_t last_tile_of(int64_t m, int64_t each, int64_t one, int64_t k, int64_t n)
{
    int64_t *len = malloc((size_t)m * sizeof *len);
    for (int64_t i = 0; i < m; i++)
        len[i] = i == m / 2 && one ? one : each;
    fake_plan f;
    fake_init(&f, 132, m, k, n, len);
    char what[96];
    snprintf(what, sizeof what, "%lld rows of %lld (one of %lld), N = %lld", LL(m), LL(each), LL(one), LL(n));
    const int64_t last = last_tile_checked(&f, what);
    free(f.rowptr);
    free(len);
    return last;
}

static void random_plans(int iterations)
{
    int kinds[3] = {0, 0, 0};
    for (int it = 0; it < iterations; it++) {
        const int sms = (int)uniform(1, 200);
        const int64_t m = uniform(0, 5) == 0 ? uniform(1, 64) : uniform(1, 3000);
        const int64_t k = uniform(64, 16384), n = uniform(1, 4096);
        int64_t *len = malloc((size_t)m * sizeof *len);
        int32_t *order = NULL;
        random_lengths(m, k, len);
        if (uniform(0, 1)) { /* a permutation, as rows_sorted's */
            order = malloc((size_t)m * sizeof *order);
            for (int64_t i = 0; i < m; i++)
                order[i] = (int32_t)i;
            for (int64_t i = m - 1; i > 0; i--) {
                const int64_t j = uniform(0, i);
                const int32_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
        fake_plan f;
        fake_init(&f, sms, m, k, n, len);
        char what[160];
        snprintf(what, sizeof what, "%lld x %lld (nnz %lld, longest %lld), N = %lld, %d SMs%s", LL(m), LL(k),
                 LL(f.P.csr.nnz), LL(f.P.max_row), LL(n), sms, order ? ", permuted" : "");
        const batch_cut c = plan_and_check(&f, order, uniform(0, 1) != 0, NULL, what);
        if (c.cap)
            kinds[c.kind]++;
        last_tile_checked(&f, what);
        free(f.rowptr);
        free(order);
        free(len);
    }
    /* the families reach every kind of cut */
    CHECK(kinds[BATCH_CUT_FILL] > 0 && kinds[BATCH_CUT_TAIL] > 0 && kinds[BATCH_CUT_ROUNDS] > 0,
          "cuts by kind: fill %d, tail %d, rounds %d", kinds[0], kinds[1], kinds[2]);
    printf("random plans: %d, cut: fill %d, tail %d, rounds %d\n", iterations, kinds[0], kinds[1], kinds[2]);
}

/* m rows of `each` entries (k columns) at N on `sms` SMs: the rounds cut's
 * pieces a row (1: whole). */
static int64_t equal_rows_pieces(int sms, int64_t m, int64_t each, int64_t k, int64_t n)
{
    int64_t *len = malloc((size_t)m * sizeof *len), *pieces = malloc((size_t)m * sizeof *pieces);
    for (int64_t i = 0; i < m; i++)
        len[i] = each;
    fake_plan f;
    fake_init(&f, sms, m, k, n, len);
    char what[96];
    snprintf(what, sizeof what, "%lld rows of %lld, N = %lld, %d SMs", LL(m), LL(each), LL(n), sms);
    const batch_cut c = plan_and_check(&f, NULL, false, pieces, what);
    int64_t q = pieces[0];
    for (int64_t i = 1; i < m; i++)
        CHECK(pieces[i] == q, "%s: rows of equal length in %lld and %lld pieces", what, LL(q), LL(pieces[i]));
    CHECK(q == 1 || c.kind == BATCH_CUT_ROUNDS, "%s: cut %d", what, (int)c.kind);
    free(f.rowptr);
    free(len);
    free(pieces);
    return q;
}

/* `few` rows of `shorter` entries then `many` of `longer` (k columns) on
 * 132 SMs at N: the blocks of the grid over the slots (0: none laid), the
 * long rows checked to be in min(16, what the bound makes) pieces. */
static int64_t tail_plan(int64_t few, int64_t shorter, int64_t many, int64_t longer, int64_t k, int64_t n, bool forced)
{
    const int64_t m = few + many;
    int64_t *len = malloc((size_t)m * sizeof *len), *pieces = malloc((size_t)m * sizeof *pieces);
    for (int64_t i = 0; i < m; i++)
        len[i] = i < few ? shorter : longer;
    fake_plan f;
    fake_init(&f, 132, m, k, n, len);
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld + %lld x %lld, N = %lld%s", LL(few), LL(shorter), LL(many), LL(longer),
             LL(n), forced ? ", forced" : "");
    batch_cut c = plan_and_check(&f, NULL, forced, pieces, what);
    CHECK(c.cap && c.kind == BATCH_CUT_TAIL, "%s: cut %lld of kind %d", what, LL(c.cap), (int)c.kind);
    /* laid again, for the grid (plan_and_check checked the slots) */
    batches_shape shape = spx__batches_shape_of(&f.ctx, &f.P, m);
    spx_cuda_batch_slot *slots = NULL;
    int64_t cut = 0, nslots = 0, blocks = 0;
    c = spx__row_batches_cut(&f.ctx, &f.P, &shape);
    CHECK_OK(&f.ctx, spx__lay_cut_slots(&f.ctx, &f.P, f.rowptr, NULL, forced, &shape, &c, &cut, &slots, &nslots));
    if (slots) {
        blocks = shape.blocks;
        const int64_t q = (longer + c.cap - 1) / c.cap;
        CHECK(cut == many && pieces[m - 1] == (q < SPX_CUDA_BATCH_PIECE_TEAMS ? q : SPX_CUDA_BATCH_PIECE_TEAMS),
              "%s: %lld rows cut, the last in %lld pieces (bound %lld)", what, LL(cut), LL(pieces[m - 1]),
              LL(c.cap));
    }
    free(slots);
    free(f.rowptr);
    free(len);
    free(pieces);
    return blocks;
}

/* Plans measured on an H200 (132 SMs; docs/PERFORMANCE.md, fifty-sixth and
 * fifty-seventh rounds): 640 rows of 410 entries (a 640 x 4096 layer at 90
 * %) at N = 512 make 1.21 waves whole and run 1.24x faster in 3 pieces; rows
 * of 205 (640 x 2048 at 90 %) 1.15x faster in 2 pieces (the model's time
 * 0.93 of the whole rows'); 300 rows of 960, 640 and 320 entries stay whole
 * (their longest is 1.65 times the average). */
static void measured_plans(void)
{
    const int64_t q410 = equal_rows_pieces(132, 640, 410, 4096, 512);
    const int64_t q205 = equal_rows_pieces(132, 640, 205, 2048, 512);
    CHECK(q410 == 3, "640 x 4096 at 90 %%, N = 512: %lld pieces", LL(q410));
    CHECK(q205 == 2, "640 x 2048 at 90 %%, N = 512: %lld pieces", LL(q205));
    /* many rounds of blocks: pieces only add blocks */
    CHECK(equal_rows_pieces(132, 100000, 128, 4096, 256) == 1, "100000 rows of 128 cut");
    int64_t len[300];
    for (int i = 0; i < 300; i++)
        len[i] = i < 2 ? 960 : i < 226 ? 640 : 320;
    fake_plan f;
    fake_init(&f, 132, 300, 4096, 256, len);
    const batch_cut c = plan_and_check(&f, NULL, false, NULL, "300 x 4096 of 960 / 640 / 320 a row");
    CHECK(!c.cap || c.kind != BATCH_CUT_ROUNDS, "rows of unequal length in a rounds cut");
    free(f.rowptr);
    /* tails, the rows in bins (short first), as tests/gpu/test_gpu_spmm.c
     * asserts on the GPU: 511 rows of 230 and one of 4608 at N = 1024, the
     * long one in 14 pieces after one empty slot, 17 x 16 blocks; 480 rows
     * of 100 and 32 of 4608 at N = 512, 16 pieces each, 31 x 8 blocks; 992
     * rows of 10 and 32 of 1024 at N = 1024, no bound within 2.5 waves (AUTO
     * drops the batches; forced, they are cut) */
    CHECK(tail_plan(511, 230, 1, 4608, 4608, 1024, false) == 17 * 16, "511 x 230 + 1 x 4608: blocks");
    CHECK(tail_plan(480, 100, 32, 4608, 4608, 512, false) == 31 * 8, "480 x 100 + 32 x 4608: blocks");
    CHECK(tail_plan(992, 10, 32, 1024, 1024, 1024, false) == 0, "992 x 10 + 32 x 1024: laid");
    CHECK(tail_plan(992, 10, 32, 1024, 1024, 1024, true) > 0, "992 x 10 + 32 x 1024 forced: not laid");
    /* the batches' last column tile (seventy-fifth round): 16384 rows of 205
     * entries (a 16384 x 2048 layer at 90 %) at N = 96, 80 and 160 take a
     * last tile of 32, 16 and 32 in a launch of its own (6, 5 and 10 rounds
     * of blocks instead of 8, 8 and 12); they keep the tile of 64 with one
     * row of 2048 (10 times the average), at N = 100 (36 columns past the
     * tile) and at 128; 2048 rows of 819 (2048 x 8192 at 90 %, one round
     * either way) keep it at N = 96 */
    CHECK(last_tile_of(16384, 205, 0, 2048, 96) == 32, "16384 rows of 205, N = 96: last tile");
    CHECK(last_tile_of(16384, 205, 0, 2048, 80) == 16, "16384 rows of 205, N = 80: last tile");
    CHECK(last_tile_of(16384, 205, 0, 2048, 160) == 32, "16384 rows of 205, N = 160: last tile");
    CHECK(last_tile_of(16384, 205, 2048, 2048, 96) == 64, "16384 rows of 205, one of 2048, N = 96: last tile");
    CHECK(last_tile_of(16384, 205, 0, 2048, 100) == 64, "16384 rows of 205, N = 100: last tile");
    CHECK(last_tile_of(16384, 205, 0, 2048, 128) == 64, "16384 rows of 205, N = 128: last tile");
    CHECK(last_tile_of(2048, 819, 0, 8192, 96) == 64, "2048 rows of 819, N = 96: last tile");
}
#endif

int main(void)
{
#ifndef SPX_HAVE_CUDA
    printf("test_cuda_plan: skipped (a build without CUDA)\n");
    return 77;
#else
    test_init();
    rng = test_seed;
    measured_plans();
    random_plans(getenv("SPX_TEST_QUICK") ? 500 : 4000);
    return test_finish("test_cuda_plan");
#endif
}

/* Matrix statistics for the planner: row-length distribution, empty rows and
 * columns, bandwidths and the diagonal, in O(nnz + rows + cols).
 *
 * Every format is scanned in place (nothing is converted): CSR from its
 * offsets (the fast path; one binary search per row finds the diagonal), CSC
 * per column, COO per stored entry (duplicates count as stored), BSR per
 * block (slots inside the matrix count, explicit zeros included; padding
 * outside it does not), SELL per real entry. Scans run in parallel; every
 * result is an integer count or maximum, so it does not depend on the thread
 * count. */
#include "format/matrix.h"

#include <math.h>

/* Below this much work a parallel region costs more than it saves. */
#define SERIAL_MAX_WORK 65536
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

typedef struct {
    int64_t *len;    /* entries per row */
    uint8_t *marked; /* 1 where a column holds an entry */
    int64_t lower, upper; /* max(i - j) and max(j - i) over entries (INT64_MIN if none) */
    int64_t diag;
} scan;

/* Columns are marked from several threads: race-free single-byte stores. */
#define MARK(S, j)                                                                            \
    do {                                                                                      \
        _Pragma("omp atomic write")                                                           \
        (S)->marked[j] = 1;                                                                   \
    } while (0)

/* Position of value x in the sorted idx[b, e), or -1. */
#define BSEARCH(T, idx, b, e, x, out)                                                         \
    do {                                                                                      \
        int64_t lo_ = (b), hi_ = (e);                                                         \
        (out) = -1;                                                                           \
        while (lo_ < hi_) {                                                                   \
            int64_t mid_ = lo_ + (hi_ - lo_) / 2;                                             \
            if ((int64_t)(idx)[mid_] < (x))                                                   \
                lo_ = mid_ + 1;                                                               \
            else                                                                              \
                hi_ = mid_;                                                                   \
        }                                                                                     \
        if (lo_ < (e) && (int64_t)(idx)[lo_] == (x))                                          \
            (out) = lo_;                                                                      \
    } while (0)

/* CSR (rows of sorted columns) or CSC (columns of sorted rows): segment s
 * holds indices idx[off[s], off[s+1]). */
#define SCAN_COMPRESSED(T)                                                                    \
    do {                                                                                      \
        const T *off = A->offsets, *idx = A->indices;                                         \
        bool by_rows = A->format == SPX_CSR;                                                  \
        int64_t nseg = by_rows ? A->rows : A->cols;                                           \
        _Pragma("omp parallel for num_threads(nt) schedule(dynamic, 256) \
                 reduction(max: lower, upper) reduction(+: diag) if (big)")                            \
        for (int64_t s = 0; s < nseg; s++) {                                                  \
            int64_t b = off[s], e = off[s + 1], at;                                           \
            if (by_rows)                                                                      \
                S->len[s] = e - b;                                                            \
            if (b == e)                                                                       \
                continue;                                                                     \
            /* first and last index of the segment bound both bandwidths */                   \
            int64_t first = idx[b], last = idx[e - 1];                                        \
            lower = MAX(lower, by_rows ? s - first : last - s);                               \
            upper = MAX(upper, by_rows ? last - s : s - first);                               \
            BSEARCH(T, idx, b, e, s, at);                                                     \
            diag += at >= 0;                                                                  \
            if (by_rows) {                                                                    \
                for (int64_t p = b; p < e; p++)                                               \
                    MARK(S, idx[p]);                                                          \
            } else {                                                                          \
                S->marked[s] = 1;                                                             \
                for (int64_t p = b; p < e; p++) {                                             \
                    _Pragma("omp atomic")                                                     \
                    S->len[idx[p]]++;                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#define SCAN_COO(T)                                                                           \
    do {                                                                                      \
        const T *ri = A->row_indices, *ci = A->indices;                                       \
        _Pragma("omp parallel for num_threads(nt) schedule(static) \
                 reduction(max: lower, upper) reduction(+: diag) if (big)")                            \
        for (int64_t p = 0; p < A->nnz; p++) {                                                \
            int64_t i = ri[p], j = ci[p];                                                     \
            _Pragma("omp atomic")                                                             \
            S->len[i]++;                                                                      \
            MARK(S, j);                                                                       \
            lower = MAX(lower, i - j);                                                        \
            upper = MAX(upper, j - i);                                                        \
            diag += i == j;                                                                   \
        }                                                                                     \
    } while (0)

/* Each block adds its clipped width to every row of its block row. */
#define SCAN_BSR(T)                                                                           \
    do {                                                                                      \
        const T *off = A->offsets, *idx = A->indices;                                         \
        int64_t nbr = spx__bsr_block_rows(A);                                                 \
        _Pragma("omp parallel for num_threads(nt) schedule(dynamic, 64) \
                 reduction(max: lower, upper) reduction(+: diag) if (big)")                            \
        for (int64_t I = 0; I < nbr; I++) {                                                   \
            int64_t r0 = I * A->br, rh = MIN(A->br, A->rows - r0), width = 0;                 \
            for (int64_t p = off[I]; p < off[I + 1]; p++) {                                   \
                int64_t c0 = (int64_t)idx[p] * A->bc, cw = MIN(A->bc, A->cols - c0);          \
                width += cw;                                                                  \
                for (int64_t j = c0; j < c0 + cw; j++)                                        \
                    MARK(S, j);                                                               \
                lower = MAX(lower, r0 + rh - 1 - c0);                                         \
                upper = MAX(upper, c0 + cw - 1 - r0);                                         \
                diag += MAX(0, MIN(r0 + rh, c0 + cw) - MAX(r0, c0));                          \
            }                                                                                 \
            for (int64_t i = r0; i < r0 + rh; i++)                                            \
                S->len[i] = width;                                                            \
        }                                                                                     \
    } while (0)

/* Slot k of local row r of slice s is at off[s] + k*C + r. */
#define SCAN_SELL(T)                                                                          \
    do {                                                                                      \
        const T *off = A->offsets, *idx = A->indices, *perm = A->perm, *rl = A->row_lengths;  \
        int64_t C = A->sell_c;                                                                \
        _Pragma("omp parallel for num_threads(nt) schedule(dynamic, 16) \
                 reduction(max: lower, upper) reduction(+: diag) if (big)")                            \
        for (int64_t s = 0; s < A->nslices; s++)                                              \
            for (int64_t r = 0; r < C; r++) {                                                 \
                int64_t i = perm[s * C + r], n = rl[s * C + r];                               \
                if (i < 0)                                                                    \
                    continue;                                                                 \
                S->len[i] = n;                                                                \
                for (int64_t k = 0; k < n; k++) {                                             \
                    int64_t j = idx[off[s] + k * C + r];                                      \
                    MARK(S, j);                                                               \
                    lower = MAX(lower, i - j);                                                \
                    upper = MAX(upper, j - i);                                                \
                    diag += i == j;                                                           \
                }                                                                             \
            }                                                                                 \
    } while (0)

static void scan_matrix(const spx_matrix *A, scan *S, int nt)
{
    int64_t lower = INT64_MIN, upper = INT64_MIN, diag = 0;
    bool wide = A->itype == SPX_INDEX_I64;
    bool big = A->nnz + A->rows + A->cols > SERIAL_MAX_WORK;
    (void)nt, (void)big; /* only read by OpenMP */
    switch (A->format) {
    case SPX_CSR:
    case SPX_CSC:
        if (wide)
            SCAN_COMPRESSED(int64_t);
        else
            SCAN_COMPRESSED(int32_t);
        break;
    case SPX_COO:
        if (wide)
            SCAN_COO(int64_t);
        else
            SCAN_COO(int32_t);
        break;
    case SPX_BSR:
        if (wide)
            SCAN_BSR(int64_t);
        else
            SCAN_BSR(int32_t);
        break;
    default:
        if (wide)
            SCAN_SELL(int64_t);
        else
            SCAN_SELL(int32_t);
        break;
    }
    S->lower = lower;
    S->upper = upper;
    S->diag = diag;
}

/* Rearrange a[0, n) so that a[k] is its k-th smallest value, everything
 * before it no larger; returns that value (three-way quickselect, so equal
 * values, common among row lengths, cost nothing extra). */
static int64_t select_kth(int64_t *a, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        int64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
        int64_t pivot = MAX(MIN(x, y), MIN(MAX(x, y), z));
        int64_t lt = lo, i = lo, gt = hi, t;
        while (i < gt) {
            if (a[i] < pivot) {
                t = a[i], a[i++] = a[lt], a[lt++] = t;
            } else if (a[i] > pivot) {
                t = a[i], a[i] = a[--gt], a[gt] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return a[k];
}

static int hist_bin(int64_t len)
{
    int b = len > 0 ? 64 - __builtin_clzll((unsigned long long)len) : 0;
    return b < SPX_STATS_HIST_BINS ? b : SPX_STATS_HIST_BINS - 1;
}

/* Everything that follows from the row lengths; reorders len (median). */
static void summarise_rows(int64_t *len, int64_t rows, spx_matrix_stats *st)
{
    int64_t nnz = 0, mn = rows > 0 ? INT64_MAX : 0, mx = 0;
    unsigned __int128 sum_sq = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t l = len[i];
        nnz += l;
        mn = MIN(mn, l);
        mx = MAX(mx, l);
        sum_sq += (unsigned __int128)l * (unsigned __int128)l;
        st->empty_rows += l == 0;
        st->row_hist[hist_bin(l)]++;
    }
    st->nnz = nnz;
    st->row_min = mn;
    st->row_max = mx;
    if (rows == 0)
        return;
    st->row_mean = (double)nnz / (double)rows;
    /* population variance from exact integer sums: (rows * sum l^2 - nnz^2) / rows^2 */
    unsigned __int128 num = (unsigned __int128)rows * sum_sq - (unsigned __int128)nnz * (unsigned __int128)nnz;
    st->row_std = sqrt((double)num / ((double)rows * (double)rows));
    st->row_cv = st->row_mean > 0 ? st->row_std / st->row_mean : 0.0;
    int64_t upper_mid = select_kth(len, rows, rows / 2);
    if (rows % 2) {
        st->row_median = (double)upper_mid;
    } else {
        int64_t lower_mid = len[0];
        for (int64_t i = 1; i < rows / 2; i++)
            lower_mid = MAX(lower_mid, len[i]);
        st->row_median = ((double)lower_mid + (double)upper_mid) / 2.0;
    }
}

spx_status spx_matrix_stats_compute(spx_ctx *ctx, const spx_matrix *A, spx_matrix_stats *out)
{
    spx_status s = spx__check_matrix_arg(ctx, A, "A");
    if (s || (s = spx__check_host(ctx, A, "A")))
        return s;
    if (!out)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "out is NULL");
    if ((s = spx__matrix_ensure_valid(ctx, A)))
        return s;
    scan S = {0};
    if ((s = spx__alloc_zero(ctx, (void **)&S.len, A->rows, sizeof *S.len, "row lengths")) ||
        (s = spx__alloc_zero(ctx, (void **)&S.marked, A->cols, 1, "column marks"))) {
        spx__free(S.len);
        return s;
    }
    scan_matrix(A, &S, spx__num_threads(ctx));

    spx_matrix_stats st = {0};
    st.rows = A->rows;
    st.cols = A->cols;
    summarise_rows(S.len, A->rows, &st);
    for (int64_t j = 0; j < A->cols; j++)
        st.empty_cols += !S.marked[j];
    if (A->rows > 0 && A->cols > 0)
        st.density = (double)st.nnz / ((double)A->rows * (double)A->cols);
    if (st.nnz > 0) {
        st.lower_bandwidth = MAX(S.lower, 0);
        st.upper_bandwidth = MAX(S.upper, 0);
        st.bandwidth = st.lower_bandwidth + st.upper_bandwidth + 1;
    }
    st.diagonal_nnz = S.diag;
    spx__free(S.len);
    spx__free(S.marked);
    *out = st;
    return SPX_OK;
}

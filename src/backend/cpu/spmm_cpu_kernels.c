/* CPU SpMM kernels. One body per kind (CSR rows, BSR, SELL), instantiated by
 * macro for int32/int64 indices and for each way of reading A's values (f32,
 * f16, bf16, pattern into an f32 accumulator; f64, pattern into f64).
 *
 * A row of C is computed in column panels: acc[0..w) += a_ik * B[k, c0..c0+w)
 * over the row's stored entries in storage order, then written once as
 * alpha * acc + beta * C. B rows are contiguous, so the inner loop vectorises
 * across columns; constant panel widths (64, 32, 16, 8 for f32) let the
 * compiler keep the accumulator in registers. Each element of C is produced by
 * one call in a fixed order, so results do not depend on how units are split
 * among threads. */
#include "backend/cpu/spmm_cpu.h"

/* GCC's unroll-and-jam (on at -O3) fuses pairs of entries into a scalar loop
 * over the panel, which stops vectorisation: about 2x slower here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-loop-unroll-and-jam")
#endif

#define LOAD_F32(v, p) (((const float *)(v))[p])
#define LOAD_F16(v, p) spx__half_to_float(((const uint16_t *)(v))[p])
#define LOAD_BF16(v, p) spx__bf16_to_float(((const uint16_t *)(v))[p])
#define LOAD_ONE_F32(v, p) 1.0f
#define LOAD_F64(v, p) (((const double *)(v))[p])
#define LOAD_ONE_F64(v, p) 1.0

/* C(i, c0 .. c0+w) = alpha * acc + beta * C; C is not read when beta == 0.
 * Arithmetic is in the accumulator type T; f16/bf16 C (T float) is converted
 * on load and store. */
#define DEFINE_STORE(NAME, T)                                                                     \
    static inline void NAME(const cpu_spmm_job *j, int64_t i, int64_t c0, int64_t w,           \
                            const T *acc)                                                       \
    {                                                                                           \
        const T alpha = (T)j->alpha, beta = (T)j->beta;                                         \
        const bool read_c = j->beta != 0;                                                       \
        const int64_t cs = j->c_cs;                                                             \
        if (j->c_dtype == SPX_F16 || j->c_dtype == SPX_BF16) {                                  \
            uint16_t *c = (uint16_t *)j->C + i * j->c_rs + c0 * cs;                             \
            const bool half = j->c_dtype == SPX_F16;                                            \
            for (int64_t x = 0; x < w; x++) {                                                   \
                float v = (float)(alpha * acc[x]);                                              \
                if (read_c)                                                                     \
                    v += (float)beta * (half ? spx__half_to_float(c[x * cs])                    \
                                             : spx__bf16_to_float(c[x * cs]));                  \
                c[x * cs] = half ? spx__float_to_half(v) : spx__float_to_bf16(v);               \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        T *c = (T *)j->C + i * j->c_rs + c0 * cs;                                               \
        if (cs == 1 && read_c)                                                                  \
            for (int64_t x = 0; x < w; x++)                                                     \
                c[x] = alpha * acc[x] + beta * c[x];                                            \
        else if (cs == 1)                                                                       \
            for (int64_t x = 0; x < w; x++)                                                     \
                c[x] = alpha * acc[x];                                                          \
        else                                                                                    \
            for (int64_t x = 0; x < w; x++)                                                     \
                c[x * cs] = read_c ? alpha * acc[x] + beta * c[x * cs] : alpha * acc[x];        \
    }

DEFINE_STORE(store_f32, float)
DEFINE_STORE(store_f64, double)
#define STORE(j, i, c0, w, acc)                                                                 \
    _Generic((acc), float *: store_f32, double *: store_f64)(j, i, c0, w, acc)

/* Run BODY(W, LOAD) for the column panels of a row: full panels of PW
 * columns, then at most one each of PW/2, PW/4, PW/8 (all constants), then
 * the remainder (< PW/8). BODY sees the panel's first column as c0. */
#define FOR_PANELS(n, PW, BODY, LOAD)                                                           \
    do {                                                                                        \
        int64_t c0 = 0;                                                                         \
        for (; c0 + (PW) <= (n); c0 += (PW))                                                    \
            BODY(PW, LOAD);                                                                     \
        if (c0 + (PW) / 2 <= (n)) {                                                             \
            BODY((PW) / 2, LOAD);                                                               \
            c0 += (PW) / 2;                                                                     \
        }                                                                                       \
        if (c0 + (PW) / 4 <= (n)) {                                                             \
            BODY((PW) / 4, LOAD);                                                               \
            c0 += (PW) / 4;                                                                     \
        }                                                                                       \
        if (c0 + (PW) / 8 <= (n)) {                                                             \
            BODY((PW) / 8, LOAD);                                                               \
            c0 += (PW) / 8;                                                                     \
        }                                                                                       \
        if (c0 < (n)) {                                                                         \
            const int64_t rest_ = (n) - c0;                                                     \
            BODY(rest_, LOAD);                                                                  \
        }                                                                                       \
    } while (0)

/* Gathering rows of B at random columns is bound by memory latency: asking
 * for the B panel of the entry PREFETCH_AHEAD places ahead (across rows of the
 * same chunk) about halves the time of a large CSR SpMM. */
#define PREFETCH_AHEAD 16

static inline void prefetch_bytes(const void *p, int64_t bytes)
{
#if defined(__GNUC__)
    for (int64_t o = 0; o < bytes; o += 64)
        __builtin_prefetch((const char *)p + o);
#else
    (void)p;
    (void)bytes;
#endif
}

/* ---- CSR rows: entries [off[i], off[i+1]) of row i ---- */

#define CSR_PANEL(W, LOAD)                                                                      \
    do {                                                                                        \
        for (int64_t x = 0; x < (W); x++)                                                       \
            acc[x] = 0;                                                                         \
        for (int64_t p = b; p < e; p++) {                                                       \
            if (p + PREFETCH_AHEAD < prefetch_end)                                              \
                prefetch_bytes(B + (int64_t)col[p + PREFETCH_AHEAD] * ldb + c0,                 \
                               (int64_t)((W) * sizeof(acc_t)));                                 \
            const acc_t a = LOAD(val, p);                                                       \
            const acc_t *restrict brow = B + (int64_t)col[p] * ldb + c0;                        \
            for (int64_t x = 0; x < (W); x++)                                                   \
                acc[x] += a * brow[x];                                                          \
        }                                                                                       \
        STORE(j, i, c0, (W), &acc[0]);                                                          \
    } while (0)

#define DEFINE_CSR(NAME, I, T, LOAD, PW)                                                        \
    static void NAME(const cpu_spmm_job *j, int64_t u0, int64_t u1, void *scratch)            \
    {                                                                                           \
        typedef T acc_t;                                                                        \
        (void)scratch;                                                                          \
        const I *restrict off = j->offsets, *restrict col = j->indices;                        \
        const void *val = j->values;                                                            \
        (void)val;                                                                              \
        const acc_t *B = j->B;                                                                  \
        const int64_t ldb = j->ldb, n = j->n;                                                   \
        const int64_t prefetch_end = off[u1];                                                   \
        acc_t acc[PW];                                                                          \
        for (int64_t i = u0; i < u1; i++) {                                                     \
            const int64_t b = off[i], e = off[i + 1];                                           \
            FOR_PANELS(n, PW, CSR_PANEL, LOAD);                                                 \
        }                                                                                       \
    }

/* ---- BSR: block row bi covers rows bi*br .. ; dense br x bc blocks ---- */

#define BSR_PANEL(W, LOAD)                                                                      \
    do {                                                                                        \
        for (int64_t y = 0; y < rmax; y++)                                                      \
            for (int64_t x = 0; x < (W); x++)                                                   \
                acc[y * PWMAX + x] = 0;                                                         \
        for (int64_t p = b; p < e; p++) {                                                       \
            const int64_t j0 = (int64_t)col[p] * bc;                                            \
            const int64_t qmax = k - j0 < bc ? k - j0 : bc; /* edge block: skip padding */     \
            for (int64_t q = 0; q < qmax; q++) {                                                \
                const acc_t *restrict brow = B + (j0 + q) * ldb + c0;                           \
                for (int64_t y = 0; y < rmax; y++) {                                            \
                    const acc_t a = LOAD(val, (p * br + y) * bc + q);                           \
                    acc_t *restrict ay = acc + y * PWMAX;                                       \
                    for (int64_t x = 0; x < (W); x++)                                           \
                        ay[x] += a * brow[x];                                                   \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (int64_t y = 0; y < rmax; y++)                                                      \
            STORE(j, i0 + y, c0, (W), acc + y * PWMAX);                                         \
    } while (0)

#define DEFINE_BSR(NAME, I, T, LOAD, PW)                                                        \
    static void NAME(const cpu_spmm_job *j, int64_t u0, int64_t u1, void *scratch)            \
    {                                                                                           \
        typedef T acc_t;                                                                        \
        enum { PWMAX = PW };                                                                    \
        const I *restrict off = j->offsets, *restrict col = j->indices;                        \
        const void *val = j->values;                                                            \
        (void)val;                                                                              \
        const acc_t *B = j->B;                                                                  \
        const int64_t ldb = j->ldb, n = j->n, k = j->k, br = j->br, bc = j->bc;                 \
        acc_t *acc = scratch; /* br x PW */                                                     \
        for (int64_t bi = u0; bi < u1; bi++) {                                                  \
            const int64_t b = off[bi], e = off[bi + 1], i0 = bi * br;                           \
            const int64_t rmax = j->m - i0 < br ? j->m - i0 : br;                               \
            FOR_PANELS(n, PW, BSR_PANEL, LOAD);                                                 \
        }                                                                                       \
    }

/* ---- SELL-C-sigma: slice s holds C rows; slot q of local row y at base + q*C + y ---- */

#define SELL_PANEL(W, LOAD)                                                                     \
    do {                                                                                        \
        for (int64_t x = 0; x < (W); x++)                                                       \
            acc[x] = 0;                                                                         \
        for (int64_t q = 0; q < len; q++) {                                                     \
            const int64_t slot = base + q * sc + y;                                             \
            const acc_t a = LOAD(val, slot);                                                    \
            const acc_t *restrict brow = B + (int64_t)col[slot] * ldb + c0;                     \
            for (int64_t x = 0; x < (W); x++)                                                   \
                acc[x] += a * brow[x];                                                          \
        }                                                                                       \
        STORE(j, i, c0, (W), &acc[0]);                                                          \
    } while (0)

#define DEFINE_SELL(NAME, I, T, LOAD, PW)                                                       \
    static void NAME(const cpu_spmm_job *j, int64_t u0, int64_t u1, void *scratch)            \
    {                                                                                           \
        typedef T acc_t;                                                                        \
        (void)scratch;                                                                          \
        const I *restrict off = j->offsets, *restrict col = j->indices;                        \
        const I *restrict perm = j->perm, *restrict lens = j->row_lengths;                     \
        const void *val = j->values;                                                            \
        (void)val;                                                                              \
        const acc_t *B = j->B;                                                                  \
        const int64_t ldb = j->ldb, n = j->n, sc = j->sell_c;                                   \
        acc_t acc[PW];                                                                          \
        for (int64_t s = u0; s < u1; s++) {                                                     \
            const int64_t base = off[s];                                                        \
            for (int64_t y = 0; y < sc; y++) {                                                  \
                const int64_t i = perm[s * sc + y], len = lens[s * sc + y];                     \
                if (i < 0) /* position past the last row */                                    \
                    continue;                                                                   \
                FOR_PANELS(n, PW, SELL_PANEL, LOAD);                                            \
            }                                                                                   \
        }                                                                                       \
    }

/* ---- C = beta * C (alpha == 0): rows u0..u1 stored from a zero accumulator ---- */

#define DEFINE_SCALE(NAME, T, PW)                                                               \
    static void NAME(const cpu_spmm_job *j, int64_t u0, int64_t u1, void *scratch)            \
    {                                                                                           \
        (void)scratch;                                                                          \
        T zero[PW] = {0};                                                                       \
        for (int64_t i = u0; i < u1; i++)                                                       \
            for (int64_t c0 = 0; c0 < j->n; c0 += PW)                                           \
                STORE(j, i, c0, j->n - c0 < PW ? j->n - c0 : PW, &zero[0]);                     \
    }

DEFINE_SCALE(scale_f32, float, CPU_PANEL_F32)
DEFINE_SCALE(scale_f64, double, CPU_PANEL_F64)

/* Every (index type, loader) instance of a kind, named KIND_i32_f32 etc., in
 * the order of cpu_load. */
#define INSTANTIATE(DEFINE, KIND)                                                               \
    DEFINE(KIND##_i32_f32, int32_t, float, LOAD_F32, CPU_PANEL_F32)                             \
    DEFINE(KIND##_i32_f16, int32_t, float, LOAD_F16, CPU_PANEL_F32)                             \
    DEFINE(KIND##_i32_bf16, int32_t, float, LOAD_BF16, CPU_PANEL_F32)                           \
    DEFINE(KIND##_i32_one32, int32_t, float, LOAD_ONE_F32, CPU_PANEL_F32)                       \
    DEFINE(KIND##_i32_f64, int32_t, double, LOAD_F64, CPU_PANEL_F64)                            \
    DEFINE(KIND##_i32_one64, int32_t, double, LOAD_ONE_F64, CPU_PANEL_F64)                      \
    DEFINE(KIND##_i64_f32, int64_t, float, LOAD_F32, CPU_PANEL_F32)                             \
    DEFINE(KIND##_i64_f16, int64_t, float, LOAD_F16, CPU_PANEL_F32)                             \
    DEFINE(KIND##_i64_bf16, int64_t, float, LOAD_BF16, CPU_PANEL_F32)                           \
    DEFINE(KIND##_i64_one32, int64_t, float, LOAD_ONE_F32, CPU_PANEL_F32)                       \
    DEFINE(KIND##_i64_f64, int64_t, double, LOAD_F64, CPU_PANEL_F64)                            \
    DEFINE(KIND##_i64_one64, int64_t, double, LOAD_ONE_F64, CPU_PANEL_F64)

#define TABLE_ROW(KIND, IT)                                                                     \
    {KIND##_##IT##_f32, KIND##_##IT##_f16, KIND##_##IT##_bf16,                                  \
     KIND##_##IT##_one32, KIND##_##IT##_f64, KIND##_##IT##_one64}

INSTANTIATE(DEFINE_CSR, csr)
INSTANTIATE(DEFINE_BSR, bsr)
INSTANTIATE(DEFINE_SELL, sell)

static const cpu_spmm_kernel kernels[3][2][CPU_LOAD_COUNT] = {
    {TABLE_ROW(csr, i32), TABLE_ROW(csr, i64)},
    {TABLE_ROW(bsr, i32), TABLE_ROW(bsr, i64)},
    {TABLE_ROW(sell, i32), TABLE_ROW(sell, i64)},
};

cpu_spmm_kernel spx__cpu_spmm_kernel(cpu_kind kind, spx_index_type itype, cpu_load load)
{
    return kernels[kind][itype == SPX_INDEX_I64][load];
}

cpu_spmm_kernel spx__cpu_spmm_scale_kernel(bool f64) { return f64 ? scale_f64 : scale_f32; }

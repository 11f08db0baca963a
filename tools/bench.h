/* Internals of `spx bench spmm`: spx SpMM plans against cuSPARSE and cuBLAS
 * on the same device inputs in the same process, timed with CUDA events.
 * Everything here exists in CUDA builds only. */
#ifndef SPX_BENCH_H
#define SPX_BENCH_H
#ifdef SPX_HAVE_CUDA

#include "cli.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_N 16     /* N values per matrix */
#define BENCH_MAX_ALGS 16  /* spx algorithms per run */
#define BENCH_MAX_SETS 1024 /* rotated copies of B and C */
#define BENCH_LATENCY_US 20.0 /* below this expected time a case is launch-latency bound */
#define BENCH_MSG 320 /* bytes of a row's message */

/* ---- what to run -------------------------------------------------------- */

typedef enum {
    GEN_UNIFORM, GEN_RMAT, GEN_LAPLACIAN, GEN_BANDED, GEN_BLOCKSPARSE, GEN_PRUNED, GEN_NM,
    GEN_FAMILIES
} gen_family;

/* Keys of a generator spec ("rmat:scale=20,ef=16"); one value slot each. */
typedef enum {
    K_ROWS, K_COLS, K_PER_ROW, K_SCALE, K_EF, K_A, K_B, K_C, K_DIMS, K_GRID, K_LOWER, K_UPPER,
    K_BLOCK, K_DENSITY, K_SPARSITY, K_NM_N, K_NM_M, K_SEED, K_KEYS
} gen_key;

typedef struct gen_spec {
    gen_family family;
    double v[K_KEYS];
    bool set[K_KEYS];
} gen_spec;

/* One matrix of the run: a generator spec or a file, and its N values. */
typedef struct bench_case {
    char name[256];   /* label: the spec, or the path relative to the data folder */
    char path[4096];  /* file to read; "" for generated matrices */
    gen_spec gen;
    const char *kind; /* "generated", "file" or "dlmc" */
    int64_t n[BENCH_MAX_N];
    int nn;
} bench_case;

typedef struct bench_opts {
    int64_t repeat, warmup;
    double budget_ms; /* per implementation and case: fewer repeats past this */
    spx_precision precision;
    spx_dtype dtype;    /* values of A, B and C: f32, f64, f16 or bf16 (cuSPARSE gets the same) */
    int64_t panel_cols; /* spx_spmm_options.panel_cols for every spx plan */
    int64_t k_slabs;    /* spx_spmm_options.k_slabs for every spx plan that takes it */
    spx_spmm_alg algs[BENCH_MAX_ALGS];
    int nalgs;
    bool dense, cusparse;
    uint64_t seed;
    const char *csv, *json;
} bench_opts;

/* ---- results -------------------------------------------------------------- */

typedef enum { ROW_RAN, ROW_NA, ROW_ERROR } row_state;
typedef enum { CHECK_NOT_RUN, CHECK_OK, CHECK_FAIL } check_state;

/* One line of the table: one implementation on one matrix at one N.
 * Doubles that do not apply are NAN. */
typedef struct bench_row {
    char matrix[256];
    const char *kind;
    int64_t m, k, nnz, n;
    const char *impl; /* "spx", "cusparse", "cublas" or "-" */
    char alg[32];
    const char *precision;
    row_state state;
    char reason[BENCH_MSG]; /* why n/a, or what failed */
    double build_ms;  /* spx plan build or cuSPARSE preprocessing */
    double median_ms, min_ms;
    double host_us; /* the host's time to queue one timed run (mean) */
    int repeats;
    double gflops, gbs, pct_copy, speedup;
    check_state check;
    double err_ref;  /* relative Frobenius error against cuSPARSE's result */
    double err_rows; /* the same against a float64 host product on sampled rows */
    double bound;
    double bytes; /* compulsory bytes */
    bool latency_bound;
} bench_row;

/* One line of the summary: one matrix at one N. */
typedef struct bench_summary {
    char matrix[256];
    int64_t n;
    char best_spx[32], best_cusparse[32];
    double best_spx_ms, auto_ms, best_cusparse_ms, dense_tf32_ms;
    bool latency_bound;
    int failures;
} bench_summary;

/* Where the stream waits while the host queues the timed runs (bench_time):
 * up to BENCH_GATED_RUNS at a time, for at most BENCH_GATE_TIMEOUT_S. */
#define BENCH_GATED_RUNS 32
#define BENCH_GATE_TIMEOUT_S 2.0
typedef struct bench_gate {
    atomic_int open, timed_out;
} bench_gate;

typedef struct bench {
    bench_opts o;
    spx_ctx *ctx;
    cudaStream_t stream;
    cusparseHandle_t sparse; /* NULL when off or unavailable (see sparse_na) */
    char sparse_na[160];
    cublasHandle_t blas;     /* NULL when off or unavailable (see blas_na) */
    char blas_na[160];
    cudaEvent_t *ev; /* nev events */
    int nev;
    bench_gate gate;
    spx_device_info dev;
    double copy_gbs; /* measured device copy bandwidth (read + write); 0 if unknown */
    bool broken;     /* the CUDA context failed: nothing more can run */
    char broken_msg[400];
    int failures;    /* failed result checks */
    char command[2048], date[40];
    bench_row *rows;
    size_t nrows, caprows;
    bench_summary *sums;
    size_t nsums, capsums;
    FILE *csv;
} bench;

/* A matrix on the host and on the device, kept across its N values. */
typedef struct bench_mat {
    const bench_case *c;
    char values[128]; /* where the values came from */
    spx_matrix *A, *dA; /* A on the host in f32; on the device in the run's value type */
    spx_matrix_info info;
    spx_matrix_arrays ha, da;
    int64_t nonempty_cols, longest_row;
    cusparseSpMatDescr_t spA; /* NULL when there is no cuSPARSE descriptor (see spA_na) */
    char spA_na[200];
    float *dense;           /* device, A densified, row-major m x k; NULL: see dense_na */
    uint16_t *dense16;      /* the same rounded to f16 for f16 data, else to bf16 */
    char dense_na[200];
    bool dense_tried;
} bench_mat;

/* One matrix at one N: the rotated device operands and the references. */
typedef struct bench_job {
    bench_mat *mat;
    int64_t m, k, nnz, n;
    double bytes; /* compulsory */
    int nsets;
    int next_set;     /* the set the next timed or warm-up run takes: the runs of every implementation go
                         round the sets in turn, so that none starts on the sets the one before just used */
    void **dB, **dC;  /* device sets, in the run's value type */
    float *hB;        /* host copies of the B sets, nsets * k * n, rounded to the value type */
    int64_t *sample;  /* rows checked against the float64 host product */
    int nsample;
    double *ref_rows; /* nsample * n */
    float *cref;      /* cuSPARSE's result on the host, once has_ref */
    float *cwork;     /* host scratch for a result */
    void *craw;       /* 16-bit types: the result as stored, before widening to f32; NULL for f32 */
    bool has_ref;
    char *explain;    /* spx auto plan's explanation */
    size_t row0;      /* this job's first row in bench.rows */
} bench_job;

/* Index i of an int32 or int64 index array. */
static inline int64_t bench_idx(const void *p, bool i64, int64_t i)
{
    return i64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

/* ---- shared helpers (bench_run.c) ------------------------------------------ */

/* Run one implementation once on set s (asynchronously, on b->stream). On
 * failure write a message to err and return false. */
typedef bool (*bench_step)(bench *b, bench_job *j, void *arg, int s, char *err, size_t en);

/* Warm up, then time the repeats with events, taking the sets in turn from
 * j->next_set on; fills r's times. */
bool bench_time(bench *b, bench_job *j, bench_step fn, void *arg, bench_row *r);
/* Poison C of set 0, run once, copy back and compare with the references.
 * With reference set, a result that passes becomes the job's reference if it
 * has none yet. */
void bench_check(bench *b, bench_job *j, bench_step fn, void *arg, bench_row *r, bool reference);
/* After a failure: false (and b->broken) if the CUDA context is unusable. */
bool bench_healthy(bench *b);
/* Time a step's run alone with two events (preprocessing, say). */
bool bench_time_once(bench *b, bench_step fn, bench_job *j, void *arg, double *ms, char *err,
                     size_t en);
bool bench_cuda_ok(cudaError_t e, const char *what, char *err, size_t en);
double bench_median(double *t, int n);
/* Value types of a run (f32, f64, f16, bf16): the CUDA type, cuSPARSE's
 * compute type (f64 for f64, else f32), and n f32 values converted to the
 * type (16 bits: round to nearest even). */
cudaDataType bench_cuda_type(spx_dtype t);
cudaDataType bench_compute_type(spx_dtype t);
void bench_narrow(spx_dtype t, const float *x, void *y, size_t n);
static inline bool bench_data16(spx_dtype t) { return t == SPX_F16 || t == SPX_BF16; }

/* ---- cases (bench_cases.c) ---------------------------------------------------- */

bool bench_parse_gen(const char *spec, gen_spec *g, char *err, size_t en);
/* Append the suite's matrices ("quick" or "full") found under data (may be NULL). */
bool bench_add_suite(const char *suite, const char *data, const int64_t *n, int nn,
                     const int64_t *dlmc_n, int ndlmc, bench_case **cases, int *ncases);
bool bench_add_case(bench_case **cases, int *ncases, const bench_case *c);
/* Generate or read the host matrix of c into M (A, info, arrays, values, counts). */
bool bench_load(bench *b, const bench_case *c, bench_mat *M, char *err, size_t en);

/* ---- matrices and runs (bench_run.c) ---------------------------------------- */

void bench_run_matrix(bench *b, const bench_case *c, int index, int total);

/* ---- baselines (bench_baselines.c) ------------------------------------------ */

double bench_copy_bandwidth(bench *b);
void bench_cusparse_matrix(bench *b, bench_mat *M);
void bench_cusparse(bench *b, bench_job *j);
void bench_dense(bench *b, bench_job *j);
void bench_free_dense(bench_mat *M);

/* ---- output (bench_output.c) ------------------------------------------------ */

/* A new row for job j (NULL if out of memory: then b->broken is set). The
 * pointer stays valid until the next call. */
bench_row *bench_row_new(bench *b, const bench_job *j, const bench_mat *M, int64_t n,
                         const char *impl, const char *alg);
/* Progress line on stderr for a finished row. */
void bench_progress(const bench_row *r);
bool bench_open_outputs(bench *b);
/* Write rows [row0, nrows) to the CSV file and rewrite the JSON file. */
void bench_emit_rows(bench *b, size_t row0);
/* Speedups, the job's table, its summary line, and the files. */
void bench_finish_job(bench *b, bench_job *j, int64_t n);
void bench_print_matrix(const bench *b, const bench_mat *M, double load_ms);
void bench_print_summary(bench *b);
void bench_write_json(const bench *b);
void bench_close_outputs(bench *b);

#endif /* SPX_HAVE_CUDA */
#endif

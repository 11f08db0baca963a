/* SpMM and SpMV on every matrix of the shared data folder (Matrix Market
 * coordinate files and DLMC .smtx; complex ones skipped), read by a small
 * parser of the test's own, each in one of the formats of the sweep: cpu
 * against ref (error bounds: see spmm_fixture.h). */
#include "spmm_fixture.h"

#include <dirent.h>
#include <strings.h>

/* Matrix Market coordinate files (real, integer, pattern; general, symmetric,
 * skew-symmetric), expanded to full storage. 0 if skipped (why says so). */
static int read_mtx(const char *path, trip *t, bool *pattern, const char **why)
{
    FILE *f = fopen(path, "r");
    char line[1024], obj[64], fmt[64], field[64], sym[64];
    *why = "unreadable";
    if (!f)
        return 0;
    int ok = 0;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4)
        goto done;
    *why = "not a coordinate file";
    if (strcasecmp(fmt, "coordinate"))
        goto done;
    *why = "complex";
    if (!strcasecmp(field, "complex") || !strcasecmp(sym, "hermitian"))
        goto done;
    *pattern = !strcasecmp(field, "pattern");
    bool symm = !strcasecmp(sym, "symmetric"), skew = !strcasecmp(sym, "skew-symmetric");
    do {
        if (!fgets(line, sizeof line, f))
            goto done;
    } while (line[0] == '%');
    long long m, k, nnz;
    *why = "bad size line";
    if (sscanf(line, "%lld %lld %lld", &m, &k, &nnz) != 3)
        goto done;
    t->rows = m;
    t->cols = k;
    for (long long e = 0; e < nnz; e++) {
        long long i, j;
        double v = 1;
        *why = "bad entry";
        if (fscanf(f, "%lld %lld", &i, &j) != 2 || (!*pattern && fscanf(f, "%lf", &v) != 1))
            goto done;
        trip_push(t, i - 1, j - 1, v);
        if ((symm || skew) && i != j)
            trip_push(t, j - 1, i - 1, skew ? -v : v);
    }
    ok = 1;
done:
    fclose(f);
    return ok;
}

/* DLMC .smtx: "rows, cols, nnz", row offsets, column indices; values random. */
static int read_smtx(const char *path, trip *t)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long long m, k, nnz;
    int ok = fscanf(f, "%lld , %lld , %lld", &m, &k, &nnz) == 3;
    long long *off = ok ? malloc((size_t)(m + 1) * sizeof *off) : NULL;
    for (long long i = 0; ok && i <= m; i++)
        ok = fscanf(f, "%lld", &off[i]) == 1;
    t->rows = m;
    t->cols = k;
    for (long long i = 0; ok && i < m; i++)
        for (long long p = off[i]; ok && p < off[i + 1]; p++) {
            long long j;
            ok = fscanf(f, "%lld", &j) == 1;
            trip_push(t, i, j, urand_sym());
        }
    free(off);
    fclose(f);
    return ok;
}

static int data_files_seen;

static void check_data_file(const char *path)
{
    trip T = {0};
    bool pattern = false;
    const char *why = "";
    size_t len = strlen(path);
    int ok = len > 5 && !strcmp(path + len - 5, ".smtx") ? read_smtx(path, &T)
                                                         : read_mtx(path, &T, &pattern, &why);
    if (!ok) {
        printf("  skipped %s (%s)\n", path, why);
        trip_free(&T);
        return;
    }
    const variant *v = &variants[data_files_seen++ % NVARIANTS];
    spx_index_type it = data_files_seen % 2 ? SPX_INDEX_I64 : SPX_INDEX_I32;
    spx_dtype dts[2] = {pattern ? SPX_PATTERN : SPX_F64, pattern ? SPX_PATTERN : SPX_F32};
    spx_dtype ddts[2] = {SPX_F64, SPX_F32};
    for (int d = 0; d < (quick ? 1 : 2); d++) {
        spx_matrix *A = make_matrix(&T, v, dts[d], it);
        char label[600];
        snprintf(label, sizeof label, "%s as %s", path, v->name);
        /* f64: SpMV both ways; f32: op none with 32 columns */
        spmm_case spmv = {
            .lb = SPX_COL_MAJOR, .lc = SPX_COL_MAJOR, .n = 1, .alpha = 1, .spmv = true};
        spmm_case spmm = {.n = 32, .alpha = -0.5, .beta = 2};
        if (A && d == 0) {
            check_case(A, ddts[d], &spmv, label);
            spmv.op = SPX_OP_TRANSPOSE;
            spmv.beta = 2;
            check_case(A, ddts[d], &spmv, label);
        } else if (A) {
            check_case(A, ddts[d], &spmm, label);
        }
        spx_matrix_destroy(A);
    }
    trip_free(&T);
}

static void walk_data(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "bad"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = strlen(path);
        if (test_is_dir(path))
            walk_data(path);
        else if ((n > 4 && !strcmp(path + n - 4, ".mtx")) ||
                 (n > 5 && !strcmp(path + n - 5, ".smtx")))
            check_data_file(path);
    }
    closedir(d);
}

static void test_shared_data(void)
{
    const char *dir = test_shared_data_dir();
    if (!dir) {
        printf("  shared data folder not found: real-matrix checks skipped\n");
        return;
    }
    walk_data(dir);
    printf("  %d real matrices checked\n", data_files_seen);
    CHECK(data_files_seen > 0, "no matrices found in %s", dir);
}

int main(void)
{
    if (!spmm_fixture_init())
        return 1;
    test_shared_data();
    spmm_fixture_fini();
    return test_finish("test_spmm_data");
}

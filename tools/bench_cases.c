/* spx bench: the matrices of a run. Generator specs ("rmat:scale=20,ef=16"),
 * the quick and full suites, data-folder scans, and loading A on the host. */
#ifdef SPX_HAVE_CUDA
#include "bench.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- generator specs -------------------------------------------------------- */

static const char *const family_names[GEN_FAMILIES] = {
    "uniform", "rmat", "laplacian", "banded", "blocksparse", "pruned", "nm"};
static const char *const key_names[K_KEYS] = {
    "rows", "cols", "per_row", "scale", "ef", "a", "b", "c", "dims", "grid", "lower", "upper",
    "block", "density", "sparsity", "n", "m", "seed"};

/* The keys each family takes, required ones first; K_KEYS ends a list. */
static const struct {
    int nrequired;
    gen_key keys[8];
} family_keys[GEN_FAMILIES] = {
    [GEN_UNIFORM] = {2, {K_ROWS, K_PER_ROW, K_COLS, K_SEED, K_KEYS}},
    [GEN_RMAT] = {1, {K_SCALE, K_EF, K_A, K_B, K_C, K_SEED, K_KEYS}},
    [GEN_LAPLACIAN] = {1, {K_GRID, K_DIMS, K_KEYS}},
    [GEN_BANDED] = {2, {K_ROWS, K_LOWER, K_COLS, K_UPPER, K_SEED, K_KEYS}},
    [GEN_BLOCKSPARSE] = {2, {K_ROWS, K_DENSITY, K_COLS, K_BLOCK, K_SEED, K_KEYS}},
    [GEN_PRUNED] = {3, {K_ROWS, K_COLS, K_SPARSITY, K_SEED, K_KEYS}},
    [GEN_NM] = {2, {K_ROWS, K_COLS, K_NM_N, K_NM_M, K_SEED, K_KEYS}},
};

static bool family_takes(gen_family f, gen_key k)
{
    for (int i = 0; family_keys[f].keys[i] != K_KEYS; i++)
        if (family_keys[f].keys[i] == k)
            return true;
    return false;
}

/* Keys that must hold whole numbers (everything but probabilities). */
static bool key_is_integer(gen_key k)
{
    return k != K_A && k != K_B && k != K_C && k != K_DENSITY && k != K_SPARSITY;
}

static void list_keys(gen_family f, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; family_keys[f].keys[i] != K_KEYS && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s%s", i ? ", " : "",
                                 key_names[family_keys[f].keys[i]],
                                 i < family_keys[f].nrequired ? " (required)" : "");
}

bool bench_parse_gen(const char *spec, gen_spec *g, char *err, size_t en)
{
    memset(g, 0, sizeof *g);
    const char *colon = strchr(spec, ':');
    size_t flen = colon ? (size_t)(colon - spec) : strlen(spec);
    int f = -1;
    for (int i = 0; i < GEN_FAMILIES; i++)
        if (strlen(family_names[i]) == flen && strncmp(spec, family_names[i], flen) == 0)
            f = i;
    if (flen == 12 && strncmp(spec, "block-sparse", 12) == 0)
        f = GEN_BLOCKSPARSE;
    if (f < 0) {
        snprintf(err, en, "unknown generator '%.*s' in '%s' (uniform, rmat, laplacian, banded, "
                 "blocksparse, pruned, nm)", (int)flen, spec, spec);
        return false;
    }
    g->family = (gen_family)f;
    char keys[256];
    list_keys(g->family, keys, sizeof keys);
    for (const char *p = colon ? colon + 1 : spec + flen; *p;) {
        const char *end = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!eq || (size_t)(eq - p) >= len) {
            snprintf(err, en, "'%.*s' in '%s' is not key=value", (int)len, p, spec);
            return false;
        }
        char key[32];
        size_t klen = (size_t)(eq - p);
        if (klen >= sizeof key)
            klen = sizeof key - 1;
        for (size_t i = 0; i < klen; i++)
            key[i] = p[i] == '-' ? '_' : (char)tolower((unsigned char)p[i]);
        key[klen] = '\0';
        int k = -1;
        for (int i = 0; i < K_KEYS; i++)
            if (strcmp(key, key_names[i]) == 0)
                k = i;
        if (k < 0 && strcmp(key, "edge_factor") == 0)
            k = K_EF;
        if (k < 0 || !family_takes(g->family, (gen_key)k)) {
            snprintf(err, en, "%s takes no key '%s' (it takes %s)", family_names[f], key, keys);
            return false;
        }
        char val[64], *vend;
        size_t vlen = len - (size_t)(eq + 1 - p);
        if (vlen == 0 || vlen >= sizeof val) {
            snprintf(err, en, "bad value for '%s' in '%s'", key, spec);
            return false;
        }
        memcpy(val, eq + 1, vlen);
        val[vlen] = '\0';
        double v = strtod(val, &vend);
        bool whole = v == floor(v) && fabs(v) < 9.0e15;
        if (*vend || !isfinite(v) || v < 0 || (key_is_integer((gen_key)k) && !whole)) {
            snprintf(err, en, "%s=%s in '%s' is not a non-negative %s", key, val, spec,
                     key_is_integer((gen_key)k) ? "integer" : "number");
            return false;
        }
        g->v[k] = v;
        g->set[k] = true;
        p = end ? end + 1 : p + len;
    }
    for (int i = 0; i < family_keys[f].nrequired; i++)
        if (!g->set[family_keys[f].keys[i]]) {
            snprintf(err, en, "'%s' lacks %s (%s takes %s)", spec,
                     key_names[family_keys[f].keys[i]], family_names[f], keys);
            return false;
        }
    /* defaults of the optional keys */
    if (!g->set[K_COLS])
        g->v[K_COLS] = g->v[K_ROWS];
    if (!g->set[K_EF])
        g->v[K_EF] = 16;
    if (!g->set[K_DIMS])
        g->v[K_DIMS] = 3;
    if (!g->set[K_UPPER])
        g->v[K_UPPER] = g->v[K_LOWER];
    if (!g->set[K_BLOCK])
        g->v[K_BLOCK] = 16;
    if (!g->set[K_NM_N])
        g->v[K_NM_N] = 2;
    if (!g->set[K_NM_M])
        g->v[K_NM_M] = 4;
    return true;
}

/* Generate with the given seed; *values says what the values are. */
static spx_status gen_make(spx_ctx *ctx, const gen_spec *g, uint64_t seed, spx_matrix **A,
                           const char **values)
{
    const double *v = g->v;
    int64_t rows = (int64_t)v[K_ROWS], cols = (int64_t)v[K_COLS];
    *values = "uniform random in [-1, 1)";
    switch (g->family) {
    case GEN_UNIFORM:
        return spx_gen_uniform(ctx, rows, cols, (int64_t)v[K_PER_ROW], seed, SPX_F32,
                               SPX_INDEX_DEFAULT, A);
    case GEN_RMAT:
        return spx_gen_rmat(ctx, (int)v[K_SCALE], (int64_t)v[K_EF], v[K_A], v[K_B], v[K_C], seed,
                            SPX_F32, SPX_INDEX_DEFAULT, A);
    case GEN_LAPLACIAN:
        *values = "the stencil's (2*dims on the diagonal, -1 off it)";
        return spx_gen_laplacian(ctx, (int)v[K_DIMS], (int64_t)v[K_GRID], SPX_F32,
                                 SPX_INDEX_DEFAULT, A);
    case GEN_BANDED:
        return spx_gen_banded(ctx, rows, cols, (int64_t)v[K_LOWER], (int64_t)v[K_UPPER], seed,
                              SPX_F32, SPX_INDEX_DEFAULT, A);
    case GEN_BLOCKSPARSE:
        return spx_gen_block_sparse(ctx, rows, cols, (int64_t)v[K_BLOCK], (int64_t)v[K_BLOCK],
                                    v[K_DENSITY], seed, SPX_F32, SPX_INDEX_DEFAULT, A);
    case GEN_PRUNED:
        *values = "Gaussian weights, magnitude-pruned";
        return spx_gen_pruned(ctx, rows, cols, v[K_SPARSITY], seed, SPX_F32, SPX_INDEX_DEFAULT, A);
    case GEN_NM:
        *values = "Gaussian weights, N:M-pruned";
        return spx_gen_nm(ctx, rows, cols, (int)v[K_NM_N], (int)v[K_NM_M], seed, SPX_F32,
                          SPX_INDEX_DEFAULT, A);
    default:
        return SPX_ERR_INTERNAL;
    }
}

/* ---- case lists ------------------------------------------------------------------ */

bool bench_add_case(bench_case **cases, int *ncases, const bench_case *c)
{
    bench_case *grown = realloc(*cases, sizeof **cases * (size_t)(*ncases + 1));
    if (!grown) {
        fprintf(stderr, "spx bench: out of memory listing matrices\n");
        return false;
    }
    *cases = grown;
    grown[(*ncases)++] = *c;
    return true;
}

static bool add_generated(const char *spec, const int64_t *n, int nn, bench_case **cases,
                          int *ncases)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    char err[512];
    if (!bench_parse_gen(spec, &c.gen, err, sizeof err)) { /* a bug in the suite table */
        fprintf(stderr, "spx bench: suite generator %s\n", err);
        return false;
    }
    snprintf(c.name, sizeof c.name, "%s", spec);
    c.kind = "generated";
    memcpy(c.n, n, sizeof *n * (size_t)nn);
    c.nn = nn;
    return bench_add_case(cases, ncases, &c);
}

static bool add_file(const char *data, const char *rel, const char *kind, const int64_t *n, int nn,
                     bench_case **cases, int *ncases)
{
    bench_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "%s/%s", data, rel);
    snprintf(c.name, sizeof c.name, "%s", rel);
    char *dot = strrchr(c.name, '.');
    if (dot && (strcmp(dot, ".mtx") == 0 || strcmp(dot, ".smtx") == 0))
        *dot = '\0';
    c.kind = kind;
    memcpy(c.n, n, sizeof *n * (size_t)nn);
    c.nn = nn;
    return bench_add_case(cases, ncases, &c);
}

typedef struct {
    char **v;
    int n;
} name_list;

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool has_ext(const char *name, const char *ext)
{
    size_t a = strlen(name), b = strlen(ext);
    return a > b && strcmp(name + a - b, ext) == 0;
}

/* Every .mtx/.smtx below root/rel (paths relative to root), recursively. */
static bool scan(const char *root, const char *rel, name_list *out)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) { /* a missing folder leaves its matrices out; only memory is fatal */
        fprintf(stderr, "spx bench: cannot open folder %s: its matrices are left out\n", dir);
        return true;
    }
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096], full[4096 + 256];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (stat(full, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            ok = scan(root, sub, out);
        } else if (S_ISREG(st.st_mode) && (has_ext(sub, ".mtx") || has_ext(sub, ".smtx"))) {
            char **grown = realloc(out->v, sizeof *grown * (size_t)(out->n + 1));
            char *copy = strdup(sub);
            if (grown)
                out->v = grown;
            if (!grown || !copy) {
                free(copy);
                fprintf(stderr, "spx bench: out of memory listing %s\n", dir);
                ok = false;
            } else {
                out->v[out->n++] = copy;
            }
        }
    }
    closedir(d);
    return ok;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Files of the data folder under sub ("" for all), skipping bad/; DLMC
 * layers get the dlmc N values. */
static bool add_folder(const char *data, const char *sub, const int64_t *n, int nn,
                       const int64_t *dlmc_n, int ndlmc, bench_case **cases, int *ncases)
{
    name_list files = {NULL, 0};
    bool ok = scan(data, sub, &files);
    if (ok)
        qsort(files.v, (size_t)files.n, sizeof *files.v, cmp_str);
    for (int i = 0; ok && i < files.n; i++) {
        if (starts_with(files.v[i], "bad/"))
            continue;
        bool dlmc = starts_with(files.v[i], "dnn/dlmc/");
        ok = add_file(data, files.v[i], dlmc ? "dlmc" : "file", dlmc ? dlmc_n : n,
                      dlmc ? ndlmc : nn, cases, ncases);
    }
    for (int i = 0; i < files.n; i++)
        free(files.v[i]);
    free(files.v);
    return ok;
}

bool bench_add_suite(const char *suite, const char *data, const int64_t *n, int nn,
                     const int64_t *dlmc_n, int ndlmc, bench_case **cases, int *ncases)
{
    static const char *const quick[] = {
        "uniform:rows=1000000,cols=1000000,per_row=8", "rmat:scale=18,ef=16",
        "laplacian:dims=3,grid=64"};
    /* ~50M nnz in 16x16 blocks: 62500^2 block slots at density 5e-5 */
    static const char *const full[] = {
        "uniform:rows=1000000,cols=1000000,per_row=8",
        "uniform:rows=1000000,cols=1000000,per_row=32",
        "uniform:rows=1000000,cols=1000000,per_row=128",
        "rmat:scale=20,ef=16",
        "laplacian:dims=3,grid=100",
        "banded:rows=1000000,lower=8,upper=8",
        "blocksparse:rows=1000000,cols=1000000,block=16,density=0.00005"};
    static const char quick_dlmc[] =
        "dnn/dlmc/transformer_magnitude_0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx";
    bool is_full = strcmp(suite, "full") == 0;
    const char *const *gens = is_full ? full : quick;
    size_t ngens = is_full ? sizeof full / sizeof *full : sizeof quick / sizeof *quick;
    for (size_t i = 0; i < ngens; i++)
        if (!add_generated(gens[i], n, nn, cases, ncases))
            return false;
    if (!data) {
        fprintf(stderr, "spx bench: no data folder (--data or SPX_DATA_DIR): the suite's file "
                        "matrices are left out\n");
        return true;
    }
    if (is_full)
        return add_folder(data, "", n, nn, dlmc_n, ndlmc, cases, ncases);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data, quick_dlmc);
    struct stat st;
    if (!add_folder(data, "graphs", n, nn, dlmc_n, ndlmc, cases, ncases))
        return false;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "spx bench: %s not found: the quick suite's DLMC layer is left out\n", path);
        return true;
    }
    return add_file(data, quick_dlmc, "dlmc", dlmc_n, ndlmc, cases, ncases);
}

/* ---- loading ----------------------------------------------------------------------- */

/* Whether a Matrix Market file's banner says "pattern". */
static bool mtx_is_pattern(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool pattern = false;
    if (f && fgets(line, sizeof line, f)) {
        for (char *p = line; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        pattern = starts_with(line, "%%matrixmarket") && strstr(line, " pattern") != NULL;
    }
    if (f)
        fclose(f);
    return pattern;
}

static void count_columns(bench_mat *M, uint8_t *seen)
{
    bool i64 = M->info.index_type == SPX_INDEX_I64;
    int64_t longest = 0, len = 0;
    for (int64_t i = 0; i < M->info.rows; i++) {
        int64_t p0 = bench_idx(M->ha.offsets, i64, i), p1 = bench_idx(M->ha.offsets, i64, i + 1);
        if (p1 - p0 > len) {
            len = p1 - p0;
            longest = i;
        }
        for (int64_t p = p0; p < p1; p++)
            seen[bench_idx(M->ha.indices, i64, p)] = 1;
    }
    int64_t nonempty = 0;
    for (int64_t j = 0; j < M->info.cols; j++)
        nonempty += seen[j];
    M->nonempty_cols = nonempty;
    M->longest_row = longest;
}

bool bench_load(bench *b, const bench_case *c, bench_mat *M, char *err, size_t en)
{
    spx_status s;
    const char *values = "from the file, as f32";
    uint64_t seed = c->gen.set[K_SEED] ? (uint64_t)c->gen.v[K_SEED] : b->o.seed;
    bool seeded = !c->path[0] && c->gen.family != GEN_LAPLACIAN;
    if (c->path[0]) {
        spx_read_options ro = {0};
        ro.format = SPX_CSR;
        ro.dtype = SPX_F32; /* pattern files: every value 1 */
        ro.seed = seed;
        s = spx_matrix_read(b->ctx, c->path, &ro, &M->A);
        if (has_ext(c->path, ".smtx")) {
            values = "uniform random in [-1, 1) (.smtx files carry none)";
            seeded = true;
        } else if (mtx_is_pattern(c->path)) {
            values = "1 (pattern file)";
        }
    } else {
        s = gen_make(b->ctx, &c->gen, seed, &M->A, &values);
    }
    if (s) {
        snprintf(err, en, "%s (%s)", spx_last_error(b->ctx), spx_status_name(s));
        return false;
    }
    if (seeded)
        snprintf(M->values, sizeof M->values, "%s, seed %llu", values, (unsigned long long)seed);
    else
        snprintf(M->values, sizeof M->values, "%s", values);
    if ((s = spx_matrix_info_get(M->A, &M->info)) || (s = spx_matrix_arrays_get(M->A, &M->ha))) {
        snprintf(err, en, "cannot inspect the matrix (%s)", spx_status_name(s));
        return false;
    }
    const spx_matrix_info *in = &M->info;
    if (in->format != SPX_CSR || in->dtype != SPX_F32 || in->memory != SPX_MEM_HOST) {
        snprintf(err, en, "expected a host f32 CSR matrix, got %s %s", spx_dtype_name(in->dtype),
                 spx_format_name(in->format));
        return false;
    }
    if (in->rows == 0 || in->cols == 0 || in->nnz == 0) {
        snprintf(err, en, "empty matrix (%lld x %lld, %lld entries): nothing to time",
                 (long long)in->rows, (long long)in->cols, (long long)in->nnz);
        return false;
    }
    uint8_t *seen = calloc((size_t)in->cols, 1);
    if (!seen) {
        snprintf(err, en, "out of host memory counting the columns of A");
        return false;
    }
    count_columns(M, seen);
    free(seen);
    return true;
}

#endif /* SPX_HAVE_CUDA */

/* Text formats: Matrix Market and DLMC .smtx. Known matrices are checked
 * against numbers computed independently; malformed input must fail with a
 * message naming the problem and the line; dense array files round-trip. */
#include "io_testutil.h"

/* ---- known matrices ---- */

/* Computed by a throwaway pure-Python script (no spx): it parses each file,
 * expands symmetric (mirror), skew (negate) and hermitian (conjugate)
 * entries off the diagonal, sums duplicates in a dict, then over the unique
 * entries (i, j 1-based, v real part, pattern and .smtx v = 1): nnz,
 * posh = sum of i*j*j mod 2^61-1, sum v, sum |v|, sum i*v, sum imag(v). */
typedef struct {
    const char *rel;
    int64_t rows, cols, nnz;
    uint64_t posh;
    double sum, abssum, wsum, imsum;
} known;
static const known known_files[] = {
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_1_block_group1_1_1.smtx", 64, 256, 3276, 2343145316ull, 3276, 3276, 105719, 0},
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_1_block_group3_5_1.smtx", 256, 1024, 52428, 2338592554829ull, 52428, 52428, 6753752, 0},
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_2_block_group2_1_1.smtx", 128, 1152, 29491, 865227473872ull, 29491, 29491, 1885840, 0},
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_2_block_group4_2_1.smtx", 512, 4608, 471859, 889304683915066ull, 471859, 471859, 121036397, 0},
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_3_block_group2_3_1.smtx", 512, 128, 13107, 18059310156ull, 13107, 13107, 3271938, 0},
    {"dnn/dlmc/rn50_magnitude_0.8/bottleneck_3_block_group_projection_block_group2.smtx", 512, 128, 13107, 18273504845ull, 13107, 13107, 3331344, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_1_block_group1_1_1.smtx", 64, 256, 1638, 1198300627ull, 1638, 1638, 55146, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_1_block_group3_5_1.smtx", 256, 1024, 26214, 1188988991343ull, 26214, 26214, 3421465, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_2_block_group2_1_1.smtx", 128, 1152, 14745, 439024597216ull, 14745, 14745, 965104, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_2_block_group4_2_1.smtx", 512, 4608, 235929, 449520277883357ull, 235929, 235929, 60716381, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_3_block_group2_3_1.smtx", 512, 128, 6553, 9516500652ull, 6553, 6553, 1712043, 0},
    {"dnn/dlmc/rn50_magnitude_0.9/bottleneck_3_block_group_projection_block_group2.smtx", 512, 128, 6553, 8839450155ull, 6553, 6553, 1663711, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_1_block_group1_1_1.smtx", 64, 256, 819, 683842693ull, 819, 819, 27142, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_1_block_group3_5_1.smtx", 256, 1024, 13107, 590935487704ull, 13107, 13107, 1680551, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_2_block_group2_1_1.smtx", 128, 1152, 7372, 214455936570ull, 7372, 7372, 467320, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_2_block_group4_2_1.smtx", 512, 4608, 117964, 225025961009782ull, 117964, 117964, 30391344, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_3_block_group2_3_1.smtx", 512, 128, 3276, 4745261969ull, 3276, 3276, 848305, 0},
    {"dnn/dlmc/rn50_magnitude_0.95/bottleneck_3_block_group_projection_block_group2.smtx", 512, 128, 3276, 4685466595ull, 3276, 3276, 858095, 0},
    {"dnn/dlmc/transformer_magnitude_0.5/body_decoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 524288, 47258173765972ull, 524288, 524288, 537539218, 0},
    {"dnn/dlmc/transformer_magnitude_0.5/body_decoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", 512, 512, 131072, 2768074791039ull, 131072, 131072, 31659631, 0},
    {"dnn/dlmc/transformer_magnitude_0.5/body_decoder_layer_5_ffn_conv2_fully_connected.smtx", 512, 2048, 524288, 188401416818375ull, 524288, 524288, 134796156, 0},
    {"dnn/dlmc/transformer_magnitude_0.5/body_encoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 524288, 40715785849263ull, 524288, 524288, 536159464, 0},
    {"dnn/dlmc/transformer_magnitude_0.7/body_decoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 314572, 28336689871551ull, 314572, 314572, 322759483, 0},
    {"dnn/dlmc/transformer_magnitude_0.7/body_decoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", 512, 512, 78643, 1798271199141ull, 78643, 78643, 20159884, 0},
    {"dnn/dlmc/transformer_magnitude_0.7/body_decoder_layer_5_ffn_conv2_fully_connected.smtx", 512, 2048, 314572, 113539612856805ull, 314572, 314572, 80380727, 0},
    {"dnn/dlmc/transformer_magnitude_0.7/body_encoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 314572, 21837858503020ull, 314572, 314572, 322591455, 0},
    {"dnn/dlmc/transformer_magnitude_0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 104857, 9486769602637ull, 104857, 104857, 107434773, 0},
    {"dnn/dlmc/transformer_magnitude_0.9/body_decoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", 512, 512, 26214, 512261471197ull, 26214, 26214, 6191540, 0},
    {"dnn/dlmc/transformer_magnitude_0.9/body_decoder_layer_5_ffn_conv2_fully_connected.smtx", 512, 2048, 104857, 37294166084554ull, 104857, 104857, 26587215, 0},
    {"dnn/dlmc/transformer_magnitude_0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 104857, 9569919385574ull, 104857, 104857, 107189476, 0},
    {"dnn/dlmc/transformer_magnitude_0.98/body_decoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 20971, 1918825594359ull, 20971, 20971, 21702833, 0},
    {"dnn/dlmc/transformer_magnitude_0.98/body_decoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", 512, 512, 5242, 108813813665ull, 5242, 5242, 1227922, 0},
    {"dnn/dlmc/transformer_magnitude_0.98/body_decoder_layer_5_ffn_conv2_fully_connected.smtx", 512, 2048, 20971, 7382691553475ull, 20971, 20971, 5245715, 0},
    {"dnn/dlmc/transformer_magnitude_0.98/body_encoder_layer_0_ffn_conv1_fully_connected.smtx", 2048, 512, 20971, 1882292386018ull, 20971, 20971, 21388129, 0},
    {"dnn/graphchallenge/n1024-l1.mtx", 1024, 1024, 32768, 5889311727616ull, 2048, 2048, 1049600, 0},
    {"dnn/graphchallenge/n1024-l2.mtx", 1024, 1024, 32768, 5888789872640ull, 2048, 2048, 1049600, 0},
    {"dnn/graphchallenge/n1024-l3.mtx", 1024, 1024, 32768, 5887799459840ull, 2048, 2048, 1049600, 0},
    {"dnn/graphchallenge/n1024-l4.mtx", 1024, 1024, 32768, 5886030905344ull, 2048, 2048, 1049600, 0},
    {"dnn/graphchallenge/sparse-images-1024_subset.mtx", 1200, 1024, 122713, 22163991510344ull, 122713, 122713, 73390724, 0},
    {"graphs/ca-CondMat.mtx", 23133, 23133, 186936, 390109900823360799ull, 186936, 186936, 2166145728, 0},
    {"graphs/citeseer.mtx", 3327, 3327, 9228, 53066524100453ull, 9228, 9228, 15068317, 0},
    {"graphs/cora.mtx", 2708, 2708, 13264, 44822402749006ull, 13264, 13264, 16274664, 0},
    {"graphs/p2p-Gnutella31.mtx", 62586, 62586, 147892, 2025235079025366016ull, 664651, 664651, 21619012355, 0},
    {"graphs/pubmed.mtx", 19717, 19717, 88651, 110393057167364121ull, 88651, 88651, 864553054, 0},
    {"suitesparse/1138_bus.mtx", 1138, 1138, 4054, 1352274631003ull, 1460.0402678998553, 1946340.7791787002, 1470.7220106028544, 0},
    {"suitesparse/ani4.mtx", 3081, 3081, 20971, 152622428999561ull, 73.80158931256949, 7256.5571772958237, 101138.6017398486, 0},
    {"suitesparse/arrow.mtx", 46500, 46500, 139498, 1168915055515343498ull, 185998, 185998, 3243491248, 0},
    {"suitesparse/bcspwr10.mtx", 5300, 5300, 21842, 855622734501434ull, 21842, 21842, 67073752, 0},
    {"suitesparse/bcsstk13.mtx", 2003, 2003, 83883, 199655434112132ull, 30220739908119.996, 242559567119845.72, 29962305285615128, 0},
    {"suitesparse/c.mtx", 3, 3, 7, 78ull, 54, 54, 152, 0},
    {"suitesparse/cryg2500.mtx", 2500, 2500, 12349, 46224657056021ull, -13508.421748371433, 1448868.0837892699, -2320192.3457493596, 0},
    {"suitesparse/dwt_992.mtx", 992, 992, 16744, 3050172679200ull, 16744, 16744, 8313396, 0},
    {"suitesparse/olm1000.mtx", 1000, 1000, 3996, 999666166504ull, -48513.386879999074, 50810723.393117972, -24256693.439998839, 0},
    {"suitesparse/pushpull.mtx", 4000, 4000, 196305, 1664084806446502ull, 196305, 196305, 300343373, 0},
};
#define NKNOWN (sizeof known_files / sizeof known_files[0])

/* The copies in tests/data and where they came from. */
static const struct { const char *local, *rel; } local_files[] = {
    {"1138_bus.mtx", "suitesparse/1138_bus.mtx"},
    {"c.mtx", "suitesparse/c.mtx"},
    {"dwt_992.mtx", "suitesparse/dwt_992.mtx"},
    {"citeseer.mtx", "graphs/citeseer.mtx"},
    {"n1024-l1.mtx", "dnn/graphchallenge/n1024-l1.mtx"},
    {"rn50_0.95_bottleneck_1_block_group1_1_1.smtx",
     "dnn/dlmc/rn50_magnitude_0.95/bottleneck_1_block_group1_1_1.smtx"},
};

static void check_known(const char *path, const known *k, int threads)
{
    spx_read_options o = {0};
    if (spx__has_extension(path, ".smtx"))
        o.dtype = SPX_PATTERN; /* its values are random; the structure is known */
    spx_ctx_set_num_threads(ctx, threads);
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &A));
    spx_ctx_set_num_threads(ctx, 0);
    if (!A)
        return;
    summary s = summarize(A);
    double tol = 1e-12 * (k->abssum * (double)(k->rows + 1) + 1);
    CHECK(s.rows == k->rows && s.cols == k->cols && s.nnz == k->nnz,
          "%s: %lld x %lld nnz %lld, expected %lld x %lld nnz %lld", path, (long long)s.rows,
          (long long)s.cols, (long long)s.nnz, (long long)k->rows, (long long)k->cols, (long long)k->nnz);
    CHECK(s.posh == k->posh, "%s: positions hash %llu, expected %llu", path,
          (unsigned long long)s.posh, (unsigned long long)k->posh);
    CHECK(fabs(s.sum - k->sum) <= tol && fabs(s.abssum - k->abssum) <= tol &&
              fabs(s.wsum - k->wsum) <= tol * (double)k->rows && fabs(s.imsum - k->imsum) <= tol,
          "%s: sums %.17g %.17g %.17g %.17g, expected %.17g %.17g %.17g %.17g", path, s.sum,
          s.abssum, s.wsum, s.imsum, k->sum, k->abssum, k->wsum, k->imsum);
    spx_matrix_destroy(A);
}

static void test_known_matrices(void)
{
    char path[4096];
    for (size_t f = 0; f < sizeof local_files / sizeof local_files[0]; f++)
        for (size_t k = 0; k < NKNOWN; k++)
            if (!strcmp(known_files[k].rel, local_files[f].rel)) {
                snprintf(path, sizeof path, "%s/%s", test_local_data_dir(), local_files[f].local);
                check_known(path, &known_files[k], 1);
                check_known(path, &known_files[k], 2);
            }
    const char *shared = test_shared_data_dir();
    if (!shared) {
        printf("test_io: shared data folder not found; checked the tests/data copies only\n");
        return;
    }
    for (size_t k = 0; k < NKNOWN; k++) {
        snprintf(path, sizeof path, "%s/%s", shared, known_files[k].rel);
        check_known(path, &known_files[k], 0);
    }
}

/* c.mtx is complex hermitian: every expanded entry, conjugates included. */
static void test_hermitian_exact(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/c.mtx", test_local_data_dir());
    spx_read_options o = opts_of(SPX_COO, SPX_DTYPE_DEFAULT);
    spx_matrix *A = NULL;
    CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &A));
    if (!A)
        return;
    spx_matrix_info in;
    spx_matrix_arrays ar;
    spx_matrix_info_get(A, &in), spx_matrix_arrays_get(A, &ar);
    static const struct { int i, j; double re, im; } want[] = {
        {0, 0, 1, 0}, {0, 2, 2, 1}, {1, 1, 1, 0}, {1, 2, 3, 0}, {2, 0, 2, -1}, {2, 1, 3, 0}, {2, 2, 42, 0}};
    CHECK(in.dtype == SPX_C128 && in.nnz == 7, "c.mtx: %s nnz %lld", spx_dtype_name(in.dtype),
          (long long)in.nnz);
    for (int k = 0; k < 7 && in.nnz == 7; k++) {
        const double *v = (const double *)ar.values + 2 * k;
        CHECK(spx__idx_get(ar.row_indices, in.index_type, k) == want[k].i &&
                  spx__idx_get(ar.indices, in.index_type, k) == want[k].j && v[0] == want[k].re &&
                  v[1] == want[k].im,
              "c.mtx entry %d: (%lld, %lld) = %g%+gi", k,
              (long long)spx__idx_get(ar.row_indices, in.index_type, k),
              (long long)spx__idx_get(ar.indices, in.index_type, k), v[0], v[1]);
    }
    spx_matrix_destroy(A);
}

/* ---- malformed files ---- */

static const struct { const char *file, *needle; } bad_files[] = {
    {"bad_header.mtx", "line 1: unknown symmetry 'bogus'"},
    {"full_noheader.mtx", "line 1: missing %%MatrixMarket banner"},
    {"mangle1.mtx", "line 1: unknown object 'junk'"},
    {"mangle2.mtx", "line 1: unknown format 'junk'"},
    {"mangle3.mtx", "line 1: unknown field 'junk' (expected real, integer, complex or pattern)"},
    {"mangle4.mtx", "line 1: unknown symmetry 'junk'"},
    {"mangled1.mtx", "line 1: unknown object 'mangled'"},
    {"mangled2.mtx", "line 1: unknown format 'mangled'"},
    {"mangled3.mtx", "line 1: unknown field 'mangled'"},
    {"mangled4.mtx", "line 1: unknown symmetry 'mangled'"},
    {"mangled5.mtx", "line 1: a pattern matrix cannot be hermitian"},
    {"mangled6.mtx", "line 1: hermitian needs the complex field, not 'real'"},
    {"mangled7.mtx", "line 2: unknown %%GraphBLAS type 'gunk'"},
    {"mangled8.mtx", "line 4: size line has 1 number, expected 3"},
};

static void check_bad_dir(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot list %s", dir);
    struct dirent *e;
    int seen = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        const char *needle = "line ";
        for (size_t k = 0; k < sizeof bad_files / sizeof bad_files[0]; k++)
            if (!strcmp(bad_files[k].file, e->d_name))
                needle = bad_files[k].needle, seen++;
        spx_matrix *A = NULL;
        spx_status s = spx_matrix_read(ctx, path, NULL, &A);
        CHECK(s == SPX_ERR_PARSE && strstr(spx_last_error(ctx), needle) &&
                  strstr(spx_last_error(ctx), path) && !A,
              "%s: %s \"%s\", expected SPX_ERR_PARSE with \"%s\"", path, spx_status_name(s),
              spx_last_error(ctx), needle);
        spx_matrix_destroy(A);
    }
    if (d)
        closedir(d);
    CHECK(seen == (int)(sizeof bad_files / sizeof bad_files[0]), "%s: %d of the known bad files", dir, seen);
}

static void test_bad_files(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bad", test_local_data_dir());
    check_bad_dir(dir);
    const char *shared = test_shared_data_dir();
    if (shared) {
        snprintf(dir, sizeof dir, "%s/bad", shared);
        if (test_is_dir(dir))
            check_bad_dir(dir);
    }
}

static void test_malformed_mtx(void)
{
    EXPECT_MTX(BANNER "3 3 3\n1 1 1\n2 2 2\n", SPX_ERR_PARSE,
               "t.in: line 4: premature end of file: 3 entries declared on line 2, 2 found");
    EXPECT_MTX(BANNER "2 2 1\n1 1 1\n2 2 2\n", SPX_ERR_PARSE,
               "line 4: more entries than the 1 declared on line 2");
    EXPECT_MTX(BANNER "3 3 1\n4 1 1\n", SPX_ERR_PARSE, "line 3: row index 4 out of range [1, 3]");
    EXPECT_MTX(BANNER "3 3 1\n1 9 1\n", SPX_ERR_PARSE, "line 3: column index 9 out of range [1, 3]");
    EXPECT_MTX(BANNER "3 3 1\n0 1 1\n", SPX_ERR_PARSE, "line 3: row index 0 out of range [1, 3]");
    EXPECT_MTX(BANNER "3 3 1\n-1 1 1\n", SPX_ERR_PARSE, "line 3: row index -1 out of range");
    EXPECT_MTX(BANNER "3 3 1\n99999999999999999999 1 1\n", SPX_ERR_PARSE,
               "line 3: row index 99999999999999999999 out of range [1, 3]");
    EXPECT_MTX(BANNER "3 3 1\n1 x 1\n", SPX_ERR_PARSE, "line 3: bad column index 'x'");
    EXPECT_MTX(BANNER "3 3 1\n1.0 1 1\n", SPX_ERR_PARSE, "line 3: bad row index '1.0'");
    EXPECT_MTX(BANNER "3 3 1\n1 1 1.2.3\n", SPX_ERR_PARSE, "line 3: bad value '1.2.3'");
    EXPECT_MTX(BANNER "3 3 1\n1 1 abc\n", SPX_ERR_PARSE, "line 3: bad value 'abc'");
    EXPECT_MTX(BANNER "3 3 1\n1 1 1e\n", SPX_ERR_PARSE, "line 3: bad value '1e'");
    EXPECT_MTX(BANNER "3 3 1\n1 1 0x10\n", SPX_ERR_PARSE, "line 3: bad value '0x10'");
    EXPECT_MTX(BANNER "3 3 1\n1 1 1e999\n", SPX_ERR_PARSE, "line 3: value 1e999 is out of range for f64");
    spx_read_options f32 = opts_of(SPX_CSR, SPX_F32), i32 = opts_of(SPX_CSR, SPX_I32),
                     f16 = opts_of(SPX_CSR, SPX_F16);
    EXPECT_MTX_OPT(BANNER "3 3 1\n1 1 1e39\n", &f32, SPX_ERR_PARSE, "value 1e39 is out of range for f32");
    EXPECT_MTX_OPT(BANNER "3 3 1\n1 1 70000\n", &f16, SPX_ERR_PARSE, "line 3: value 70000 overflows f16");
    EXPECT_MTX_OPT(BANNER "3 3 1\n1 1 2.5\n", &i32, SPX_ERR_PARSE,
                   "line 3: value 2.5 is not an integer (reading as i32)");
    EXPECT_MTX_OPT(BANNER "3 3 1\n1 1 3000000000\n", &i32, SPX_ERR_PARSE, "line 3: value 3000000000 does not fit i32");
    EXPECT_MTX_OPT(BANNER "3 3 1\n1 1 nan\n", &i32, SPX_ERR_PARSE, "value nan is not an integer");
    EXPECT_MTX("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 9223372036854775808\n",
               SPX_ERR_PARSE, "line 3: integer value 9223372036854775808 does not fit int64");
    EXPECT_MTX("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", SPX_ERR_PARSE,
               "line 3: bad integer value '1.5'");
    EXPECT_MTX(BANNER "3 3 1\n1 1\n", SPX_ERR_PARSE, "line 3: expected 3 numbers (row column value), found 2");
    EXPECT_MTX(BANNER "3 3 1\n1 1 1 1\n", SPX_ERR_PARSE, "line 3: expected 3 numbers (row column value), found 4");
    EXPECT_MTX("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", SPX_ERR_PARSE,
               "line 3: expected 2 numbers (row column), found 3");
    EXPECT_MTX("%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1\n", SPX_ERR_PARSE,
               "line 3: expected 4 numbers (row column real imaginary), found 3");
    EXPECT_MTX("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0\n",
               SPX_ERR_PARSE, "line 4: skew-symmetric matrix has a diagonal entry (2, 2)");
    EXPECT_MTX("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 2 1 0.5\n", SPX_ERR_PARSE,
               "line 3: diagonal entry of a hermitian matrix has nonzero imaginary part 0.5");
    spx_read_options i32c = opts_of(SPX_COO, SPX_I32);
    EXPECT_MTX_OPT("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -2147483648\n",
                   &i32c, SPX_ERR_PARSE, "value -2147483648 does not fit i32 with its negation");
    EXPECT_MTX(BANNER "% only comments\n\n", SPX_ERR_PARSE, "premature end of file: no size line");
    EXPECT_MTX(BANNER "3 3\n", SPX_ERR_PARSE, "line 2: size line has 2 numbers, expected 3");
    EXPECT_MTX(BANNER "3 3 1 1\n", SPX_ERR_PARSE, "line 2: size line has 4 numbers, expected 3");
    EXPECT_MTX(BANNER "3 -3 1\n", SPX_ERR_PARSE, "line 2: negative size -3");
    EXPECT_MTX(BANNER "3 x 1\n", SPX_ERR_PARSE, "line 2: bad number 'x' in the size line");
    EXPECT_MTX(BANNER "99999999999999999999 1 1\n", SPX_ERR_PARSE, "does not fit int64");
    EXPECT_MTX("%%MatrixMarket matrix array real general\n3 3 1\n", SPX_ERR_PARSE,
               "line 2: size line has 3 numbers, expected 2 (rows columns)");
    EXPECT_MTX("%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", SPX_ERR_PARSE,
               "line 2: a symmetric matrix must be square, not 3 x 4");
    EXPECT_MTX("%%MatrixMarket matrix array pattern general\n", SPX_ERR_PARSE, "cannot be stored as an array");
    EXPECT_MTX("%%MatrixMarket matrix coordinate pattern skew-symmetric\n", SPX_ERR_PARSE, "cannot be skew-symmetric");
    EXPECT_MTX("%%MatrixMarket matrix coordinate real\n", SPX_ERR_PARSE, "line 1: incomplete banner");
    EXPECT_MTX("%%MatrixMarket matrix coordinate real general extra\n", SPX_ERR_PARSE,
               "line 1: unexpected 'extra' after the symmetry");
    EXPECT_MTX("", SPX_ERR_PARSE, "line 1: missing %%MatrixMarket banner");
    EXPECT_MTX("%%GraphBLAS type double\n", SPX_ERR_PARSE, "line 1: missing %%MatrixMarket banner");
    spx_read_options cf = opts_of(SPX_CSR, SPX_F32);
    EXPECT_MTX_OPT("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n", &cf,
                   SPX_ERR_UNSUPPORTED, "complex matrix cannot be read as f32");
    const char nul[] = BANNER "1 1 1\n1 1 \0\n";
    expect_fail("mtx", nul, sizeof nul - 1, NULL, SPX_ERR_PARSE, "line 3: bad value '?'", __LINE__);
    spx_read_options dup = {0};
    dup.dup = SPX_DUP_ERROR;
    EXPECT_MTX_OPT(BANNER "2 2 2\n1 1 1\n1 1 2\n", &dup, SPX_ERR_INVALID_MATRIX, "duplicate");
    /* random bytes never crash, whatever they are read as */
    uint64_t st = test_seed;
    for (int rep = 0; rep < 300; rep++) {
        size_t n = (size_t)spx__rand_below(&st, 200);
        char buf[200];
        for (size_t i = 0; i < n; i++)
            buf[i] = rep % 2 ? (char)spx__splitmix64(&st) : " 0123456789.%\n-e"[spx__rand_below(&st, 16)];
        if (rep % 3 == 0 && n > 46)
            memcpy(buf, BANNER, 46);
        const char *kinds[] = {"mtx", "smtx", "spx", NULL};
        for (int k = 0; k < 4; k++) {
            spx_matrix *A = NULL;
            if (spx_matrix_read_buffer(ctx, buf, n, kinds[k], "rand", NULL, &A) == SPX_OK)
                CHECK_OK(ctx, spx_matrix_check(ctx, A));
            spx_matrix_destroy(A);
        }
    }
}

/* ---- accepted variants and value semantics ---- */

static void test_accepted_variants(void)
{
    spx_matrix *ref = NULL, *A = NULL;
    CHECK_OK(ctx, read_text(BANNER "3 4 3\n1 1 1.5\n3 4 -2\n2 2 1e3\n", NULL, &ref));
    const char *variants[] = {
        "%%MatrixMarket matrix coordinate real general\r\n3 4 3\r\n1 1 1.5\r\n3 4 -2\r\n2 2 1e3\r\n",
        "%%MatrixMarket  MATRIX\tCoordinate REAL General  \n% c\n\n  3\t4   3  \n\n1 1 1.5\n% mid\n\t3 4\t-2 \r\n\n2 2 1000",
        "%%matrixmarket matrix coordinate double general\n%%GraphBLAS type double\n3 4 3\n1 1 +1.50\n3 4 -2.0\n2 2 .1e4\n\n\n",
        "%%MatrixMarket matrix coordinate real general\n3 4 3\n2 2 1000\n3 4 -2\n1 1 1.5",
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0] && ref; v++) {
        A = NULL;
        CHECK_OK(ctx, read_text(variants[v], NULL, &A));
        CHECK(A && same_matrix(A, ref), "variant %zu differs", v);
        spx_matrix_destroy(A);
    }
    spx_matrix_destroy(ref);

    /* symmetric: whichever triangle an entry is in; the diagonal once */
    spx_read_options coo = opts_of(SPX_COO, SPX_DTYPE_DEFAULT);
    A = NULL;
    CHECK_OK(ctx, read_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n1 3 3\n3 3 4\n", &coo, &A));
    double dense[9] = {0};
    spx_dense D = spx_dense_make(dense, 3, 3, 3, SPX_F64, SPX_ROW_MAJOR, SPX_MEM_HOST);
    static const double sym[9] = {1, 2, 3, 2, 0, 0, 3, 0, 4};
    if (A) {
        spx_matrix_arrays ar;
        spx_matrix_arrays_get(A, &ar);
        for (int k = 0; k < 6; k++)
            dense[((int32_t *)ar.row_indices)[k] * 3 + ((int32_t *)ar.indices)[k]] += ((double *)ar.values)[k];
        CHECK(summarize(A).nnz == 6 && !memcmp(dense, sym, sizeof sym), "symmetric expansion");
    }
    spx_matrix_destroy(A);
    (void)D;

    /* skew: mirrored negated; integer into i32 */
    spx_read_options i32 = opts_of(SPX_COO, SPX_I32);
    A = NULL;
    CHECK_OK(ctx, read_text("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n1 3 -2\n", &i32, &A));
    if (A) {
        spx_matrix_arrays ar;
        spx_matrix_arrays_get(A, &ar);
        const int32_t *r = ar.row_indices, *c = ar.indices, *v = ar.values;
        CHECK(r[0] == 0 && c[0] == 1 && v[0] == -5 && r[1] == 0 && c[1] == 2 && v[1] == -2 &&
                  r[2] == 1 && c[2] == 0 && v[2] == 5 && r[3] == 2 && c[3] == 0 && v[3] == 2,
              "skew expansion");
    }
    spx_matrix_destroy(A);

    /* duplicates summed by default; pattern gives ones in a float type */
    struct { const char *text; spx_dtype want, ask; double v00; } cases[] = {
        {BANNER "2 2 3\n1 1 1\n1 1 2.5\n2 2 1\n", SPX_F64, 0, 3.5},
        {"%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n", SPX_PATTERN, 0, 1},
        {"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", SPX_F32, SPX_F32, 1},
        {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 -7\n", SPX_I64, 0, -7},
        {"%%MatrixMarket matrix coordinate integer general\n%%GraphBLAS type int8_t\n2 2 1\n1 1 -7\n", SPX_I32, 0, -7},
        {"%%MatrixMarket matrix coordinate real general\n%%GraphBLAS type float\n2 2 1\n1 1 0.1\n", SPX_F32, 0, 0.1f},
        {"%%MatrixMarket matrix coordinate real general\n%%GraphBLAS type float\n2 2 1\n1 1 0.1\n", SPX_F64, SPX_F64, 0.1},
        {"%%MatrixMarket matrix coordinate complex general\n%%GraphBLAS type GxB_FC32_t\n2 2 1\n1 1 0.5 2\n", SPX_C64, 0, 0.5},
        {BANNER "2 2 1\n1 1 9007199254740993\n", SPX_I64, SPX_I64, 9007199254740992.0},
        {BANNER "2 2 2\n1 1 1\n2 2 0\n", SPX_BOOL, SPX_BOOL, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        spx_read_options o = opts_of(SPX_CSR, cases[k].ask);
        A = NULL;
        CHECK_OK(ctx, read_text(cases[k].text, &o, &A));
        if (!A)
            continue;
        spx_matrix_info in;
        spx_matrix_arrays ar;
        spx_matrix_info_get(A, &in), spx_matrix_arrays_get(A, &ar);
        CHECK(in.dtype == cases[k].want && spx__val_get(ar.values, in.dtype, 0) == cases[k].v00,
              "case %zu: %s, first value %.17g", k, spx_dtype_name(in.dtype), spx__val_get(ar.values, in.dtype, 0));
        if (in.dtype == SPX_I64 && cases[k].ask == SPX_I64)
            CHECK(((int64_t *)ar.values)[0] == 9007199254740993ll, "integer-looking real keeps every digit");
        spx_matrix_destroy(A);
    }

    /* 64-bit sizes: int64 indices chosen, no rows-sized arrays built for COO */
    A = NULL;
    CHECK_OK(ctx, read_text(BANNER "3000000000 3000000000 1\n3000000000 2999999999 7\n", &coo, &A));
    if (A) {
        spx_matrix_info in;
        spx_matrix_arrays ar;
        spx_matrix_info_get(A, &in), spx_matrix_arrays_get(A, &ar);
        CHECK(in.index_type == SPX_INDEX_I64 && in.rows == 3000000000ll &&
                  ((int64_t *)ar.row_indices)[0] == 2999999999ll && ((int64_t *)ar.indices)[0] == 2999999998ll,
              "64-bit shape");
        spx_matrix *B = NULL;
        CHECK_OK(ctx, spx_matrix_write(ctx, A, tmp_path("big.mtx")));
        CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("big.mtx"), &coo, &B));
        CHECK(B && same_matrix(A, B), "64-bit shape round trip through .mtx");
        spx_matrix_destroy(B);
        B = NULL;
        CHECK_OK(ctx, spx_matrix_write(ctx, A, tmp_path("big.spx")));
        CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("big.spx"), NULL, &B));
        CHECK(B && same_matrix(A, B), "64-bit shape round trip through .spx");
        spx_matrix_destroy(B);
    }
    spx_matrix_destroy(A);
    spx_read_options forced = opts_of(SPX_COO, SPX_DTYPE_DEFAULT);
    forced.index_type = SPX_INDEX_I32;
    EXPECT_MTX_OPT(BANNER "3000000000 3 0\n", &forced, SPX_ERR_OVERFLOW, "does not fit int32 indices");
}

/* The number parser against the C library on hard and random inputs. */
static void test_number_parsing(void)
{
    static const char *hard[] = {
        "0", "-0", "0.1", "1e23", "9007199254740993", "2.2250738585072011e-308", "4.9e-324", "5e-325",
        "1.7976931348623157e308", "1.7976931348623158e308", "123456789012345678901234567890",
        "0.000000000000000000000000000000000000000000001", "3.4028235e38", "1.17549435e-38", "7.038531e-26",
        "1.00000005960464477550", "8.589973e9", "1e-45", "2e-45", "100000000000000000000000",
        "0.30000000000000004", "1e22", "1e-22", "123.456e+5", ".5", "5.", "-.25E-3",
    };
    uint64_t st = test_seed ^ 99;
    char buf[64];
    for (int rep = 0; rep < 40000; rep++) {
        const char *text = buf;
        if (rep < (int)(sizeof hard / sizeof hard[0])) {
            text = hard[rep];
        } else {
            uint64_t bits = spx__splitmix64(&st);
            double d;
            memcpy(&d, &bits, 8);
            if (!isfinite(d))
                d = spx__rand_unit(&st);
            static const char *fmts[] = {"%.17g", "%.16g", "%.9g", "%.6e", "%.3f", "%.20g"};
            int f = rep % 6;
            if (f == 4)
                d = (spx__rand_unit(&st) - 0.5) * 1e6;
            snprintf(buf, sizeof buf, fmts[f], d);
        }
        const char *end = text + strlen(text), *stop;
        double got, gotf;
        int rc = spx__parse_real(text, end, false, &stop, &got);
        int rcf = spx__parse_real(text, end, true, &stop, &gotf);
        double want = strtod(text, NULL);
        float wantf = strtof(text, NULL);
        bool ovf = isinf(want), ovff = isinf(wantf);
        CHECK(rc == (ovf ? SPX__NUM_RANGE : SPX__NUM_OK) && (ovf || !memcmp(&got, &want, 8)),
              "'%s' -> %.17g, strtod gives %.17g", text, got, want);
        float gf = (float)gotf;
        CHECK(rcf == (ovff ? SPX__NUM_RANGE : SPX__NUM_OK) && (ovff || (!memcmp(&gf, &wantf, 4) && gotf == (double)gf)),
              "'%s' as float -> %.9g, strtof gives %.9g", text, gotf, wantf);
    }
    const char *spec[] = {"inf", "-Infinity", "NaN", "+INF"};
    for (int k = 0; k < 4; k++) {
        const char *stop;
        double v;
        CHECK(spx__parse_real(spec[k], spec[k] + strlen(spec[k]), false, &stop, &v) == SPX__NUM_OK &&
                  *stop == '\0' && (k == 2 ? isnan(v) : isinf(v) && (v < 0) == (k == 1)),
              "special %s", spec[k]);
    }
    int64_t iv;
    const char *stop, *i1 = "-9223372036854775808", *i2 = "9223372036854775808";
    CHECK(spx__parse_i64(i1, i1 + strlen(i1), &stop, &iv) == SPX__NUM_OK && iv == INT64_MIN, "int64 min");
    CHECK(spx__parse_i64(i2, i2 + strlen(i2), &stop, &iv) == SPX__NUM_RANGE, "int64 overflow");
    /* XXH64 reference values (from the python xxhash package) */
    unsigned char seq[768];
    for (int k = 0; k < 768; k++)
        seq[k] = (unsigned char)k;
    CHECK(spx__xxh64_once("", 0, 0) == 0xef46db3751d8e999ull && spx__xxh64_once("a", 1, 0) == 0xd24ec4f1a98c6e5bull &&
              spx__xxh64_once("abc", 3, 0) == 0x44bc2cf5ad770999ull &&
              spx__xxh64_once(seq, 100, 0) == 0x6ac1e58032166597ull && spx__xxh64_once(seq, 768, 0) == 0x8e03c838c596036full,
          "xxh64 test vectors");
    spx__xxh64 h;
    spx__xxh64_init(&h, 0);
    for (int k = 0; k < 768; k += 7)
        spx__xxh64_update(&h, seq + k, k + 7 <= 768 ? 7 : (size_t)(768 - k));
    CHECK(spx__xxh64_digest(&h) == 0x8e03c838c596036full, "xxh64 streaming");
}

/* ---- array files and dense matrices ---- */

static void test_arrays(void)
{
    /* general 2 x 3, column-major, one zero */
    const char *gen = "%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n6\n";
    spx_read_options coo = opts_of(SPX_COO, SPX_DTYPE_DEFAULT);
    spx_matrix *A = NULL;
    CHECK_OK(ctx, read_text(gen, &coo, &A));
    CHECK(A && summarize(A).nnz == 5 && summarize(A).sum == 18, "array as sparse keeps the nonzeros");
    spx_matrix_destroy(A);
    spit(tmp_path("gen.mtx"), gen, strlen(gen));
    for (int lay = 0; lay < 2; lay++) {
        spx_dense D = {0};
        CHECK_OK(ctx, spx_dense_read(ctx, tmp_path("gen.mtx"), SPX_DTYPE_DEFAULT, (spx_layout)lay, &D));
        static const double want[2][3] = {{1, 0, 5}, {2, 4, 6}};
        for (int i = 0; i < 2 && D.data; i++)
            for (int j = 0; j < 3; j++)
                CHECK(((double *)D.data)[lay == SPX_ROW_MAJOR ? i * 3 + j : j * 2 + i] == want[i][j],
                      "dense (%d, %d) layout %d", i, j, lay);
        spx_dense_free(&D);
    }
    /* symmetric kinds store one triangle by columns */
    struct { const char *text; double want[9]; } tri[] = {
        {"%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n", {1, 2, 3, 2, 4, 5, 3, 5, 6}},
        {"%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n", {0, -1, -2, 1, 0, -3, 2, 3, 0}},
        {"%%MatrixMarket matrix array integer symmetric\n3 3\n1\n0\n0\n1\n0\n1\n", {1, 0, 0, 0, 1, 0, 0, 0, 1}},
    };
    for (size_t k = 0; k < sizeof tri / sizeof tri[0]; k++) {
        spit(tmp_path("tri.mtx"), tri[k].text, strlen(tri[k].text));
        spx_dense D = {0};
        CHECK_OK(ctx, spx_dense_read(ctx, tmp_path("tri.mtx"), SPX_F64, SPX_ROW_MAJOR, &D));
        CHECK(D.data && !memcmp(D.data, tri[k].want, sizeof tri[k].want), "triangle case %zu", k);
        spx_dense_free(&D);
    }
    const char *herm = "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n";
    spit(tmp_path("herm.mtx"), herm, strlen(herm));
    spx_dense H = {0};
    CHECK_OK(ctx, spx_dense_read(ctx, tmp_path("herm.mtx"), SPX_DTYPE_DEFAULT, SPX_ROW_MAJOR, &H));
    static const double hw[8] = {1, 0, 2, -3, 2, 3, 4, 0};
    CHECK(H.data && H.dtype == SPX_C128 && !memcmp(H.data, hw, sizeof hw), "hermitian array");
    spx_dense_free(&H);
    EXPECT_MTX("%%MatrixMarket matrix array complex hermitian\n2 2\n1 1\n2 3\n4 0\n", SPX_ERR_PARSE,
               "line 3: diagonal entry of a hermitian matrix has nonzero imaginary part 1");
    EXPECT_MTX("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", SPX_ERR_PARSE,
               "line 5: premature end of file: 4 entries declared on line 2, 3 found");
    EXPECT_MTX("%%MatrixMarket matrix array real general\n1 1\n1\n2\n", SPX_ERR_PARSE,
               "line 4: more entries than the 1 declared on line 2");
    EXPECT_MTX("%%MatrixMarket matrix array real general\n1 1\n1 2\n", SPX_ERR_PARSE,
               "line 3: expected 1 number (value), found 2");
    /* a coordinate file read as dense: scattered, duplicates summed */
    const char *co = BANNER "2 2 3\n1 2 1\n1 2 2\n2 1 -1\n";
    spit(tmp_path("co.mtx"), co, strlen(co));
    spx_dense C = {0};
    CHECK_OK(ctx, spx_dense_read(ctx, tmp_path("co.mtx"), SPX_F32, SPX_COL_MAJOR, &C));
    static const float cw[4] = {0, -1, 3, 0};
    CHECK(C.data && !memcmp(C.data, cw, sizeof cw), "coordinate file as dense");
    spx_dense_free(&C);

    /* dense round trips, any ld and layout, bit for bit */
    spx_dtype types[] = {SPX_F64, SPX_F32, SPX_I32, SPX_C128};
    uint64_t st = test_seed ^ 7;
    for (size_t t = 0; t < 4; t++) {
        double buf[4 * 7 * 2] = {0};
        spx_dense W = spx_dense_make(buf, 4, 5, 7, types[t], SPX_ROW_MAJOR, SPX_MEM_HOST);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++) {
                double v = (spx__rand_unit(&st) - 0.5) * pow(10, (double)spx__rand_below(&st, 40) - 20);
                if (types[t] == SPX_I32)
                    ((int32_t *)buf)[i * 7 + j] = (int32_t)spx__splitmix64(&st);
                else if (types[t] == SPX_C128)
                    ((double *)buf)[2 * (i * 7 + j)] = v, ((double *)buf)[2 * (i * 7 + j) + 1] = -v / 3;
                else
                    spx__val_set(buf, types[t], i * 7 + j, i == 1 && j == 1 ? -0.0 : v);
            }
        CHECK_OK(ctx, spx_dense_write(ctx, &W, tmp_path("d.mtx")));
        spx_dense R = {0};
        CHECK_OK(ctx, spx_dense_read(ctx, tmp_path("d.mtx"), types[t], SPX_COL_MAJOR, &R));
        size_t vs = spx_dtype_size(types[t]);
        for (int i = 0; i < 4 && R.data; i++)
            for (int j = 0; j < 5; j++)
                CHECK(!memcmp((char *)R.data + (j * 4 + i) * vs, (char *)buf + (i * 7 + j) * vs, vs),
                      "dense %s (%d, %d) round trip", spx_dtype_name(types[t]), i, j);
        spx_dense_free(&R);
    }
}

/* ---- DLMC .smtx ---- */

static void test_smtx(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rn50_0.95_bottleneck_1_block_group1_1_1.smtx", test_local_data_dir());
    spx_read_options o = {0};
    o.seed = test_seed;
    spx_matrix *A = NULL, *B = NULL, *H = NULL;
    CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &A));
    CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &B));
    o.dtype = SPX_F16;
    CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &H));
    if (A && B && H) {
        spx_matrix_info in;
        spx_matrix_arrays ar, hr;
        spx_matrix_info_get(A, &in), spx_matrix_arrays_get(A, &ar), spx_matrix_arrays_get(H, &hr);
        CHECK(in.dtype == SPX_F32 && in.format == SPX_CSR, "smtx default f32 CSR");
        CHECK(same_matrix(A, B), "same seed, same values");
        double lo = 1, hi = -1, mean = 0;
        for (int64_t k = 0; k < in.nnz; k++) {
            double v = ((float *)ar.values)[k], h = spx__val_get(hr.values, SPX_F16, k);
            lo = v < lo ? v : lo, hi = v > hi ? v : hi, mean += v / (double)in.nnz;
            CHECK(h >= -1 && h < 1, "f16 value %g in [-1, 1)", h);
        }
        CHECK(lo >= -1 && hi < 1 && lo < -0.9 && hi > 0.9 && fabs(mean) < 0.1, "values in [-1, 1): %g %g mean %g", lo, hi, mean);
        o.seed = test_seed + 1;
        o.dtype = SPX_DTYPE_DEFAULT;
        spx_matrix *D = NULL;
        CHECK_OK(ctx, spx_matrix_read(ctx, path, &o, &D));
        CHECK(D && !same_matrix(A, D), "another seed, other values");
        spx_matrix_destroy(D);
    }
    spx_matrix_destroy(A), spx_matrix_destroy(B), spx_matrix_destroy(H);
    /* unsorted columns within a row come out sorted */
    spx_read_options pat = opts_of(SPX_COO, SPX_PATTERN);
    A = NULL;
    CHECK_OK(ctx, spx_matrix_read_buffer(ctx, "2, 3, 3\n0 2 3\n2 0 1\n", 20, "smtx", "s", &pat, &A));
    if (A) {
        spx_matrix_arrays ar;
        spx_matrix_arrays_get(A, &ar);
        const int32_t *r = ar.row_indices, *c = ar.indices;
        CHECK(r[0] == 0 && c[0] == 0 && r[1] == 0 && c[1] == 2 && r[2] == 1 && c[2] == 1, "smtx sorted");
    }
    spx_matrix_destroy(A);
    EXPECT_SMTX("", "line 1: empty file");
    EXPECT_SMTX("2, 2\n0 1 1\n0\n", "line 1: expected 3 numbers (rows, columns, nonzeros), found 2");
    EXPECT_SMTX("2, x, 1\n0 1 1\n0\n", "line 1: bad column count 'x' at position 2");
    EXPECT_SMTX("2, 2, 1\n0 1\n0\n", "line 2: expected 3 row offsets, found 2");
    EXPECT_SMTX("2, 2, 1\n1 1 1\n0\n", "line 2: row offset 1 at position 1 must be 0");
    EXPECT_SMTX("2, 2, 1\n0 1 0\n0\n", "line 2: row offset 0 at position 3 is less than the one before it");
    EXPECT_SMTX("2, 2, 2\n0 1 1\n0 1\n", "line 2: row offset 1 at position 3 must equal the nonzero count");
    EXPECT_SMTX("2, 2, 1\n0 5 1\n0\n", "line 2: row offset 5 at position 2 exceeds the nonzero count");
    EXPECT_SMTX("2, 2, 1\n0 0 1\n5\n", "line 3: column index 5 at position 1 out of range [0, 2)");
    EXPECT_SMTX("2, 2, 1\n0 0 1\n-1\n", "line 3: column index -1 at position 1 is negative");
    EXPECT_SMTX("2, 2, 1\n0 0 1\n", "line 3: premature end of file: expected 1 column indices");
    EXPECT_SMTX("2, 2, 1\n0 0 1\n1 1\n", "line 3: expected 1 column indices, found 2");
    EXPECT_SMTX("2, 2, 1\n0 0 1\n1\nxx\n", "line 4: unexpected text after the column indices");
    EXPECT_SMTX("9999999999999, 2, 1\n0 1\n0\n", "line 2: expected 10000000000000 row offsets, found 2");
    spx_read_options i32 = opts_of(SPX_CSR, SPX_I32);
    expect_fail("smtx", "1, 1, 0\n0 0\n", 11, &i32, SPX_ERR_UNSUPPORTED, "random values need a float type, not i32", __LINE__);
}

/* ---- threads ---- */

static void test_threads(void)
{
    /* about 2 MB: several parse chunks */
    size_t cap = 3 << 20, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate real symmetric\n%% c\n3000 3000 60000\n");
    uint64_t st = test_seed ^ 13;
    for (int k = 0; k < 60000; k++) {
        if (k % 5000 == 0)
            n += (size_t)snprintf(text + n, cap - n, "%% comment %d\n\n", k);
        n += (size_t)snprintf(text + n, cap - n, "%d %d %.17g\n", (int)spx__rand_below(&st, 3000) + 1,
                              (int)spx__rand_below(&st, 3000) + 1, spx__rand_unit(&st));
    }
    spx_matrix *A1 = NULL, *A2 = NULL;
    spx_ctx_set_num_threads(ctx, 1);
    CHECK_OK(ctx, spx_matrix_read_buffer(ctx, text, n, "mtx", "big", NULL, &A1));
    spx_ctx_set_num_threads(ctx, 2);
    CHECK_OK(ctx, spx_matrix_read_buffer(ctx, text, n, "mtx", "big", NULL, &A2));
    CHECK(A1 && A2 && same_matrix(A1, A2), "same result on 1 and 2 threads");
    spx_matrix_destroy(A1), spx_matrix_destroy(A2);
    /* the first error in file order, whatever the thread count */
    char *late = strstr(text + n - 2000, "\n") + 1, *early = strstr(text + n / 3, "\n") + 1;
    late[0] = 'x', early[0] = '-'; /* a bad token late, a negative index early */
    char msg1[512], msg2[512];
    for (int t = 1; t <= 2; t++) {
        spx_ctx_set_num_threads(ctx, t);
        A1 = NULL;
        CHECK(spx_matrix_read_buffer(ctx, text, n, "mtx", "big", NULL, &A1) == SPX_ERR_PARSE, "error found");
        snprintf(t == 1 ? msg1 : msg2, 512, "%s", spx_last_error(ctx));
    }
    int64_t line = 1;
    for (char *p = text; p < early; p++)
        line += *p == '\n';
    char want[64];
    snprintf(want, sizeof want, "big: line %lld: ", (long long)line);
    CHECK(!strcmp(msg1, msg2) && strstr(msg1, want) && strstr(msg1, "row index"), "first error: '%s' / '%s', want '%s'", msg1, msg2, want);
    spx_ctx_set_num_threads(ctx, 0);
    free(text);
}

int main(void)
{
    test_init();
    io_test_setup();
    long live = spx__debug_live_allocations();
    test_known_matrices();
    test_hermitian_exact();
    test_bad_files();
    test_malformed_mtx();
    test_accepted_variants();
    test_number_parsing();
    test_arrays();
    test_smtx();
    test_threads();
    CHECK(spx__debug_live_allocations() == live, "%ld allocations leaked", spx__debug_live_allocations() - live);
    io_test_teardown();
    return test_finish("test_io");
}

/* Files and the binary container: .mtx and .spx round trips of every value
 * type and format, corrupted .spx files, dispatch by extension and content,
 * I/O errors and atomic writes, allocation failures. */
#include "io_testutil.h"

/* ---- round trips ---- */

static void test_roundtrips(void)
{
    uint64_t st = test_seed ^ 3;
    spx_dtype types[] = {SPX_F32, SPX_F64, SPX_F16, SPX_BF16, SPX_I32, SPX_I64, SPX_BOOL, SPX_C64, SPX_C128, SPX_PATTERN};
    struct { int64_t r, c, nnz; spx_index_type it; } shapes[] = {
        {37, 53, 400, SPX_INDEX_I32}, {0, 0, 0, SPX_INDEX_I32}, {5, 7, 0, SPX_INDEX_I32},
        {1, 1, 1, SPX_INDEX_I32}, {19, 3, 40, SPX_INDEX_I64}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            spx_matrix *A = random_coo(shapes[sh].r, shapes[sh].c, shapes[sh].nnz, types[t], shapes[sh].it, &st);
            spx_matrix *canon = NULL, *B = NULL;
            if (!A)
                continue;
            CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_COO, NULL, &canon));
            CHECK_OK(ctx, spx_matrix_write(ctx, A, tmp_path("rt.mtx")));
            spx_read_options o = opts_of(SPX_COO, types[t]);
            o.index_type = shapes[sh].it;
            CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("rt.mtx"), &o, &B));
            CHECK(B && canon && same_matrix(B, canon), ".mtx round trip %s shape %zu", spx_dtype_name(types[t]), sh);
            spx_matrix_destroy(B);
            /* .spx keeps every format as it is, COO unsorted and with duplicates included */
            spx_format fmts[] = {SPX_COO, SPX_CSR, SPX_CSC, SPX_BSR, SPX_SELL};
            for (size_t f = 0; f < 5; f++) {
                spx_matrix *F = NULL;
                spx_format_params p = {.block_rows = 2, .block_cols = 3, .sell_c = 4, .sell_sigma = 8};
                if (fmts[f] == SPX_COO)
                    CHECK_OK(ctx, spx_matrix_copy(ctx, A, &F));
                else if (spx_matrix_convert(ctx, A, fmts[f], &p, &F) != SPX_OK) {
                    CHECK(spx_last_status(ctx) == SPX_ERR_UNSUPPORTED && fmts[f] >= SPX_BSR,
                          "convert to %s: %s", spx_format_name(fmts[f]), spx_last_error(ctx));
                    continue; /* BSR/SELL conversions may not exist in this build yet */
                }
                B = NULL;
                CHECK_OK(ctx, spx_matrix_write(ctx, F, tmp_path("rt.spx")));
                CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("rt.spx"), NULL, &B));
                CHECK(B && same_matrix(B, F), ".spx round trip %s %s shape %zu", spx_format_name(fmts[f]),
                      spx_dtype_name(types[t]), sh);
                spx_matrix_destroy(B);
                spx_matrix_destroy(F);
            }
            spx_matrix_destroy(canon);
            spx_matrix_destroy(A);
        }
}

/* ---- corrupted .spx ---- */

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void reseal(unsigned char *b, size_t n) { put_u64(b + n - 8, spx__xxh64_once(b, n - 8, 0)); }

static void test_corrupt_spx(void)
{
    uint64_t st = test_seed ^ 5;
    spx_matrix *A = random_coo(9, 11, 30, SPX_F64, SPX_INDEX_I32, &st), *C = NULL;
    if (!A)
        return;
    CHECK_OK(ctx, spx_matrix_convert(ctx, A, SPX_CSR, NULL, &C));
    CHECK_OK(ctx, spx_matrix_write(ctx, C, tmp_path("c.spx")));
    size_t n = 0;
    unsigned char *b = (unsigned char *)slurp(tmp_path("c.spx"), &n);
    CHECK(b && n > 136, "read back c.spx");
    for (size_t pos = 0; b && pos < n; pos++) {
        b[pos] ^= (unsigned char)(1u << (pos % 8));
        expect_fail("spx", (char *)b, n, NULL, SPX_ERR_CORRUPT, pos < 8 ? "bad magic" : pos < 12 ? "version"
                                                                 : pos < n - 8 ? "checksum mismatch (stored 0x"
                                                                               : "checksum mismatch", __LINE__);
        b[pos] ^= (unsigned char)(1u << (pos % 8));
    }
    size_t cuts[] = {0, 1, 7, 8, 100, 128, 135, 136, n / 2, n - 9, n - 1};
    for (size_t k = 0; b && k < sizeof cuts / sizeof cuts[0]; k++)
        expect_fail("spx", (char *)b, cuts[k], NULL, SPX_ERR_CORRUPT, "t.in: ", __LINE__);
    if (b) {
        unsigned char *h = malloc(n);
        /* hostile sizes with a valid checksum: refused before any allocation */
        int64_t fields[] = {32, 40, 48}; /* rows, cols, nnz */
        for (int f = 0; f < 3; f++) {
            memcpy(h, b, n);
            put_u64(h + fields[f], (uint64_t)1 << 40);
            reseal(h, n);
            long live = spx__debug_live_allocations();
            expect_fail("spx", (char *)h, n, NULL, SPX_ERR_CORRUPT, "t.in: ", __LINE__);
            CHECK(spx__debug_live_allocations() == live, "no leak on hostile header");
        }
        memcpy(h, b, n);
        put_u64(h + 32, (uint64_t)-5);
        reseal(h, n);
        expect_fail("spx", (char *)h, n, NULL, SPX_ERR_CORRUPT, "negative or huge count", __LINE__);
        /* a valid checksum over an invalid structure: column index out of range */
        memcpy(h, b, n);
        size_t idx = 128 + 8 + (9 + 1) * 4 + 4 /* padding */ + 8;
        h[idx] = 200;
        reseal(h, n);
        expect_fail("spx", (char *)h, n, NULL, SPX_ERR_CORRUPT, "stored csr matrix is invalid", __LINE__);
        memcpy(h, b, n);
        h[8] = 2;
        expect_fail("spx", (char *)h, n, NULL, SPX_ERR_CORRUPT, "unsupported .spx version 2", __LINE__);
        free(h);
    }
    /* conversion on load and refused retyping */
    spx_read_options o = opts_of(SPX_CSC, SPX_DTYPE_DEFAULT);
    spx_matrix *B = NULL, *csc = NULL;
    CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("c.spx"), &o, &B));
    CHECK_OK(ctx, spx_matrix_convert(ctx, C, SPX_CSC, NULL, &csc));
    CHECK(B && csc && same_matrix(B, csc), ".spx converted on load");
    spx_matrix_destroy(B);
    spx_matrix_destroy(csc);
    o = opts_of(SPX_FORMAT_DEFAULT, SPX_F32);
    B = NULL;
    CHECK_FAILS(ctx, spx_matrix_read(ctx, tmp_path("c.spx"), &o, &B), SPX_ERR_UNSUPPORTED, "stores f64 values");
    free(b);
    spx_matrix_destroy(A);
    spx_matrix_destroy(C);
}

/* ---- dispatch, I/O errors, atomic writes ---- */

static int count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_dispatch_and_errors(void)
{
    spx_matrix *A = NULL;
    CHECK_FAILS(ctx, spx_matrix_read(ctx, "/nonexistent/x.mtx", NULL, &A), SPX_ERR_IO,
                "cannot open '/nonexistent/x.mtx': No such file");
    CHECK_FAILS(ctx, spx_matrix_read(ctx, tmpdir, NULL, &A), SPX_ERR_IO, "Is a directory");
    CHECK_FAILS(ctx, spx_matrix_read_buffer(ctx, "", 0, "csv", "x", NULL, &A), SPX_ERR_INVALID_ARGUMENT, "unknown kind 'csv'");
    spx_read_options bad = {0};
    bad.dtype = (spx_dtype)77;
    CHECK_FAILS(ctx, read_text(BANNER "1 1 0\n", &bad, &A), SPX_ERR_INVALID_ARGUMENT, "invalid value type 77");
    CHECK(!A, "outputs untouched on error");
    /* by content when the extension says nothing */
    uint64_t st = test_seed ^ 11;
    spx_matrix *R = random_coo(6, 5, 9, SPX_F64, SPX_INDEX_I32, &st), *C = NULL, *B = NULL;
    if (!R)
        return;
    CHECK_OK(ctx, spx_matrix_convert(ctx, R, SPX_CSR, NULL, &C));
    CHECK_OK(ctx, spx_matrix_write(ctx, C, tmp_path("m.spx")));
    CHECK_OK(ctx, spx_matrix_write(ctx, C, tmp_path("m.mtx")));
    CHECK(rename(tmp_path("m.spx"), tmp_path("m_spx.bin")) == 0 && rename(tmp_path("m.mtx"), tmp_path("m_mtx.txt")) == 0, "rename");
    const char *names[] = {"m_spx.bin", "m_mtx.txt"};
    for (int k = 0; k < 2; k++) {
        B = NULL;
        CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path(names[k]), NULL, &B));
        CHECK(B && same_matrix(B, C), "content detection %s", names[k]);
        spx_matrix_destroy(B);
    }
    spit(tmp_path("s.dat"), "1, 2, 1\n0 1\n1\n", 14);
    B = NULL;
    CHECK_OK(ctx, spx_matrix_read(ctx, tmp_path("s.dat"), NULL, &B));
    CHECK(B && summarize(B).nnz == 1, "smtx by content");
    spx_matrix_destroy(B);
    spit(tmp_path("z.dat"), "\x1f\x8b\x08\x00", 4);
    CHECK_FAILS(ctx, spx_matrix_read(ctx, tmp_path("z.dat"), NULL, &B), SPX_ERR_PARSE, "gzip-compressed");
    CHECK_FAILS(ctx, spx_matrix_write(ctx, C, tmp_path("m.txt")), SPX_ERR_INVALID_ARGUMENT, "use .mtx or .spx");
    CHECK_FAILS(ctx, spx_matrix_write(ctx, C, "/nonexistent/dir/x.mtx"), SPX_ERR_IO,
                "cannot create '/nonexistent/dir/x.mtx': No such file");
    /* a failed rename leaves nothing behind, and an old file stays whole */
    CHECK(mkdir(tmp_path("sub"), 0700) == 0 && mkdir(tmp_path("sub/occupied.mtx"), 0700) == 0 &&
              mkdir(tmp_path("sub/occupied.mtx/x"), 0700) == 0, "mkdir");
    CHECK_FAILS(ctx, spx_matrix_write(ctx, C, tmp_path("sub/occupied.mtx")), SPX_ERR_IO, "sub/occupied.mtx");
    CHECK(count_dir_entries(tmp_path("sub")) == 1, "temporary file removed after a failed write");
    rmdir(tmp_path("sub/occupied.mtx/x")), rmdir(tmp_path("sub/occupied.mtx")), rmdir(tmp_path("sub"));
    spx_matrix_destroy(R);
    spx_matrix_destroy(C);
}

/* ---- allocation failures ---- */

static void test_allocation_failures(void)
{
    uint64_t st = test_seed ^ 17;
    spx_matrix *R = random_coo(8, 8, 20, SPX_F32, SPX_INDEX_I32, &st);
    CHECK_OK(ctx, spx_matrix_write(ctx, R, tmp_path("af.spx")));
    CHECK_OK(ctx, spx_matrix_write(ctx, R, tmp_path("af.mtx")));
    char path[4096];
    snprintf(path, sizeof path, "%s/1138_bus.mtx", test_local_data_dir());
    spit(tmp_path("af.smtx"), "1, 2, 1\n0 1\n1\n", 14);
    const char *reads[] = {path, tmp_path("af.spx"), tmp_path("af.mtx"), tmp_path("af.smtx")};
    for (int r = 0; r < 6; r++) {
        long live = spx__debug_live_allocations();
        int fails = 0;
        for (long n = 1; n < 200; n++) {
            spx__debug_fail_alloc_after(n);
            spx_matrix *A = NULL;
            spx_dense D = {0};
            spx_status s = r < 4 ? spx_matrix_read(ctx, reads[r], NULL, &A)
                           : r == 4 ? spx_matrix_write(ctx, R, tmp_path("af2.mtx"))
                                    : spx_dense_read(ctx, tmp_path("af.mtx"), SPX_F64, SPX_ROW_MAJOR, &D);
            spx__debug_fail_alloc_after(0);
            spx_matrix_destroy(A);
            spx_dense_free(&D);
            CHECK(s == SPX_OK || s == SPX_ERR_OUT_OF_MEMORY, "case %d, failing allocation %ld: %s %s", r, n,
                  spx_status_name(s), spx_last_error(ctx));
            CHECK(spx__debug_live_allocations() == live, "case %d, failing allocation %ld leaks", r, n);
            if (s == SPX_OK)
                break;
            fails++;
        }
        CHECK(fails > 0, "case %d saw allocation failures", r);
    }
    spx_matrix_destroy(R);
}

int main(void)
{
    test_init();
    io_test_setup();
    long live = spx__debug_live_allocations();
    test_roundtrips();
    test_corrupt_spx();
    test_dispatch_and_errors();
    test_allocation_failures();
    CHECK(spx__debug_live_allocations() == live, "%ld allocations leaked", spx__debug_live_allocations() - live);
    io_test_teardown();
    return test_finish("test_io_files");
}

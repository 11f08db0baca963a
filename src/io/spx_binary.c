/* The binary .spx container: any format stored natively, little-endian.
 *
 *   0   magic "SPXMAT\0\1"            8 bytes
 *   8   u32 version (1), u32 header size (128)
 *   16  u32 format, index type, dtype, number of arrays
 *   32  i64 rows, cols, nnz, block rows, block cols, nblocks,
 *           sell C, sell sigma, nslices, sell slots
 *   112 16 zero bytes (reserved)
 *   128 for each array the format has, in the order offsets, indices,
 *       row_indices, values, perm, row_lengths: u64 byte length, the bytes,
 *       zero padding to a multiple of 8
 *   end u64 XXH64 (seed 0) of every byte before it
 *
 * Loading checks magic, version, checksum and that the header's counts
 * describe exactly the file's size before allocating anything, then runs
 * spx_matrix_check on the result. */
#include "io/io.h"

#include <string.h>

#define LL(x) ((long long)(x))
#define HEADER_SIZE 128
#define VERSION 1
#define MAX_ARRAYS 6

static bool little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

typedef struct {
    spx_format format;
    spx_index_type itype;
    spx_dtype dtype;
    int64_t rows, cols, nnz, br, bc, nblocks, sell_c, sigma, nslices, slots;
} header;

typedef struct {
    const char *name;
    int64_t bytes;
    size_t member; /* offset of the pointer inside spx_matrix */
} array_desc;

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* The arrays a header calls for, with their byte lengths; -1 if a length
 * overflows. */
static int describe_arrays(const header *h, array_desc d[MAX_ARRAYS])
{
    int64_t isz = (int64_t)spx__index_size(h->itype), vsz = (int64_t)spx_dtype_size(h->dtype);
    int64_t noff = 0, nidx = h->nnz, nval = h->nnz, nperm = 0, t;
    switch (h->format) {
    case SPX_CSR: noff = h->rows + 1; break;
    case SPX_CSC: noff = h->cols + 1; break;
    case SPX_BSR:
        noff = ceil_div(h->rows, h->br) + 1;
        nidx = h->nblocks;
        if (spx__mul_overflows(h->br, h->bc, &t) || spx__mul_overflows(t, h->nblocks, &nval))
            return -1;
        break;
    case SPX_SELL:
        noff = h->nslices + 1;
        nidx = nval = h->slots;
        if (spx__mul_overflows(h->nslices, h->sell_c, &nperm))
            return -1;
        break;
    default: break;
    }
    struct {
        const char *name;
        int64_t count, elem;
        size_t member;
        bool present;
    } all[MAX_ARRAYS] = {
        {"offsets", noff, isz, offsetof(spx_matrix, offsets), h->format != SPX_COO},
        {"indices", nidx, isz, offsetof(spx_matrix, indices), true},
        {"row_indices", h->nnz, isz, offsetof(spx_matrix, row_indices), h->format == SPX_COO},
        {"values", nval, vsz, offsetof(spx_matrix, values), vsz > 0},
        {"perm", nperm, isz, offsetof(spx_matrix, perm), h->format == SPX_SELL},
        {"row_lengths", nperm, isz, offsetof(spx_matrix, row_lengths), h->format == SPX_SELL},
    };
    int n = 0;
    for (int i = 0; i < MAX_ARRAYS; i++) {
        if (!all[i].present)
            continue;
        d[n].name = all[i].name;
        d[n].member = all[i].member;
        if (spx__mul_overflows(all[i].count, all[i].elem, &d[n].bytes) || d[n].bytes > INT64_MAX - 16)
            return -1;
        n++;
    }
    return n;
}

static inline void **member_ptr(const spx_matrix *A, size_t member)
{
    return (void **)((char *)A + member);
}

static int64_t padded(int64_t bytes) { return (bytes + 7) / 8 * 8; }

/* ---- writing ---- */

spx_status spx__spx_write(spx_ctx *ctx, const spx_matrix *A, const char *path)
{
    if (!little_endian())
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, ".spx files are written on little-endian hosts only");
    header h = {A->format, A->itype, A->dtype, A->rows, A->cols, A->nnz, A->br, A->bc,
                A->nblocks, A->sell_c, A->sell_sigma, A->nslices, A->sell_slots};
    array_desc d[MAX_ARRAYS];
    int n = describe_arrays(&h, d);
    if (n < 0)
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "'%s': array sizes of the matrix overflow", path);
    unsigned char head[HEADER_SIZE] = {0};
    memcpy(head, spx__spx_magic, 8);
    put32(head + 8, VERSION);
    put32(head + 12, HEADER_SIZE);
    put32(head + 16, (uint32_t)h.format);
    put32(head + 20, (uint32_t)h.itype);
    put32(head + 24, (uint32_t)h.dtype);
    put32(head + 28, (uint32_t)n);
    const int64_t counts[10] = {h.rows, h.cols, h.nnz, h.br, h.bc, h.nblocks,
                                h.sell_c, h.sigma, h.nslices, h.slots};
    for (int i = 0; i < 10; i++)
        put64(head + 32 + 8 * i, (uint64_t)counts[i]);

    spx__xxh64 hash;
    spx__xxh64_init(&hash, 0);
    spx__outfile o;
    spx_status s = spx__out_open(ctx, path, &o);
    if (s)
        return s;
    o.hash = &hash;
    static const unsigned char zeros[8] = {0};
    s = spx__out_write(ctx, &o, head, sizeof head);
    for (int i = 0; i < n && !s; i++) {
        unsigned char len[8];
        put64(len, (uint64_t)d[i].bytes);
        const void *src = *member_ptr(A, d[i].member);
        if (!(s = spx__out_write(ctx, &o, len, 8)) && d[i].bytes)
            s = spx__out_write(ctx, &o, src, (size_t)d[i].bytes);
        if (!s)
            s = spx__out_write(ctx, &o, zeros, (size_t)(padded(d[i].bytes) - d[i].bytes));
    }
    if (!s) {
        unsigned char sum[8];
        put64(sum, spx__xxh64_digest(&hash));
        o.hash = NULL;
        s = spx__out_write(ctx, &o, sum, 8);
    }
    if (s) {
        spx__out_abort(&o);
        return s;
    }
    return spx__out_commit(ctx, &o);
}

/* ---- reading ---- */

static spx_status corrupt(spx_ctx *ctx, const spx__input *in, const char *why)
{
    return spx__fail(ctx, SPX_ERR_CORRUPT, "%s: %s", in->name, why);
}

/* Every header field against the rules of its format. */
static spx_status check_header(spx_ctx *ctx, const spx__input *in, const header *h)
{
    char why[200];
    if ((int)h->format < SPX_COO || (int)h->format > SPX_SELL ||
        (h->itype != SPX_INDEX_I32 && h->itype != SPX_INDEX_I64) || !spx__dtype_valid(h->dtype)) {
        snprintf(why, sizeof why, "invalid format %d, index type %d or value type %d in the header",
                 (int)h->format, (int)h->itype, (int)h->dtype);
        return corrupt(ctx, in, why);
    }
    const int64_t all[10] = {h->rows, h->cols, h->nnz, h->br, h->bc, h->nblocks,
                             h->sell_c, h->sigma, h->nslices, h->slots};
    for (int i = 0; i < 10; i++)
        if (all[i] < 0 || all[i] == INT64_MAX)
            return corrupt(ctx, in, "negative or huge count in the header");
    bool blocked = h->format == SPX_BSR, sliced = h->format == SPX_SELL;
    if (blocked != (h->br > 0) || blocked != (h->bc > 0) || (!blocked && h->nblocks))
        return corrupt(ctx, in, "block fields do not match the format in the header");
    if (sliced != (h->sell_c > 0) || sliced != (h->sigma > 0) || (!sliced && (h->nslices || h->slots)))
        return corrupt(ctx, in, "SELL fields do not match the format in the header");
    int64_t per;
    if (blocked && (spx__mul_overflows(h->br, h->bc, &per) || spx__mul_overflows(per, h->nblocks, &per) ||
                    per != h->nnz))
        return corrupt(ctx, in, "BSR entry count does not match blocks x block size");
    if (sliced && h->nslices != ceil_div(h->rows, h->sell_c))
        return corrupt(ctx, in, "SELL slice count does not match rows / C");
    if (h->itype == SPX_INDEX_I32)
        for (int i = 0; i < 10; i++)
            if (all[i] > INT32_MAX)
                return corrupt(ctx, in, "count too large for int32 indices in the header");
    return SPX_OK;
}

static spx_status load(spx_ctx *ctx, const spx__input *in, spx_matrix **out)
{
    char why[200];
    const unsigned char *b = (const unsigned char *)in->data;
    if (in->size < HEADER_SIZE + 8 || memcmp(b, spx__spx_magic, 8) != 0) {
        snprintf(why, sizeof why, "not a .spx file (%s)",
                 in->size >= 8 && memcmp(b, spx__spx_magic, 8) == 0 ? "too short" : "bad magic");
        return corrupt(ctx, in, why);
    }
    if (get32(b + 8) != VERSION) {
        snprintf(why, sizeof why, "unsupported .spx version %u (this spx reads version %d)",
                 (unsigned)get32(b + 8), VERSION);
        return corrupt(ctx, in, why);
    }
    uint64_t stored = get64(b + in->size - 8), computed = spx__xxh64_once(b, in->size - 8, 0);
    if (stored != computed)
        return spx__fail(ctx, SPX_ERR_CORRUPT, "%s: checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                         in->name, (unsigned long long)stored, (unsigned long long)computed);
    if (get32(b + 12) != HEADER_SIZE)
        return corrupt(ctx, in, "unexpected header size");
    for (int i = 112; i < HEADER_SIZE; i++)
        if (b[i])
            return corrupt(ctx, in, "reserved header bytes are not zero");
    header h = {.format = (spx_format)get32(b + 16), .itype = (spx_index_type)get32(b + 20),
                .dtype = (spx_dtype)get32(b + 24)};
    int64_t *fields[10] = {&h.rows, &h.cols, &h.nnz, &h.br, &h.bc, &h.nblocks,
                           &h.sell_c, &h.sigma, &h.nslices, &h.slots};
    for (int i = 0; i < 10; i++)
        *fields[i] = (int64_t)get64(b + 32 + 8 * i);
    spx_status s = check_header(ctx, in, &h);
    if (s)
        return s;
    array_desc d[MAX_ARRAYS];
    int n = describe_arrays(&h, d);
    if (n < 0 || (uint32_t)n != get32(b + 28))
        return corrupt(ctx, in, "array count or sizes in the header do not match the format");
    /* the file must be exactly as long as the header says, before any allocation */
    int64_t expect = HEADER_SIZE + 8;
    for (int i = 0; i < n; i++) {
        if (padded(d[i].bytes) > INT64_MAX - 8 - expect)
            return corrupt(ctx, in, "array sizes in the header overflow");
        expect += 8 + padded(d[i].bytes);
    }
    if ((uint64_t)expect != in->size) {
        snprintf(why, sizeof why, "file is %llu bytes but its header describes %lld",
                 (unsigned long long)in->size, LL(expect));
        return corrupt(ctx, in, why);
    }
    int64_t pos = HEADER_SIZE;
    for (int i = 0; i < n; i++) {
        if ((int64_t)get64(b + pos) != d[i].bytes) {
            snprintf(why, sizeof why, "array %s holds %llu bytes, the header implies %lld", d[i].name,
                     (unsigned long long)get64(b + pos), LL(d[i].bytes));
            return corrupt(ctx, in, why);
        }
        pos += 8 + padded(d[i].bytes);
        for (int64_t z = pos - (padded(d[i].bytes) - d[i].bytes); z < pos; z++)
            if (b[z])
                return corrupt(ctx, in, "nonzero padding after an array");
    }

    spx_matrix *A = NULL;
    if ((s = spx__matrix_new(ctx, h.format, h.rows, h.cols, h.itype, h.dtype, &A)))
        return s;
    A->nnz = h.nnz;
    A->br = h.br;
    A->bc = h.bc;
    A->nblocks = h.nblocks;
    A->sell_c = h.sell_c;
    A->sell_sigma = h.sigma;
    A->nslices = h.nslices;
    A->sell_slots = h.slots;
    if ((s = spx__matrix_alloc(ctx, A))) {
        spx_matrix_destroy(A);
        return s;
    }
    pos = HEADER_SIZE;
    for (int i = 0; i < n; i++) {
        if (d[i].bytes)
            memcpy(*member_ptr(A, d[i].member), b + pos + 8, (size_t)d[i].bytes);
        pos += 8 + padded(d[i].bytes);
    }
    if ((s = spx_matrix_check(ctx, A))) {
        spx__error_prefix(ctx, "%s: the stored %s matrix is invalid", in->name, spx_format_name(h.format));
        if (ctx)
            ctx->last_status = SPX_ERR_CORRUPT;
        spx_matrix_destroy(A);
        return SPX_ERR_CORRUPT;
    }
    *out = A;
    return SPX_OK;
}

spx_status spx__spx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                         spx_matrix **out)
{
    if (!little_endian())
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "%s: .spx files are read on little-endian hosts only",
                         in->name);
    spx_matrix *A = NULL;
    spx_status s = load(ctx, in, &A);
    if (s)
        return s;
    if ((opts->dtype && opts->dtype != A->dtype) || (opts->index_type && opts->index_type != A->itype)) {
        s = spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                      "%s stores %s values with %s indices; reading it as %s / %s is not supported "
                      "(convert with spx_matrix_astype)",
                      in->name, spx_dtype_name(A->dtype), A->itype == SPX_INDEX_I32 ? "int32" : "int64",
                      spx_dtype_name(opts->dtype ? opts->dtype : A->dtype),
                      (opts->index_type ? opts->index_type : A->itype) == SPX_INDEX_I32 ? "int32" : "int64");
        spx_matrix_destroy(A);
        return s;
    }
    if (!opts->format || opts->format == A->format) {
        *out = A;
        return SPX_OK;
    }
    spx_format_params p = {.dup = opts->dup};
    s = spx_matrix_convert(ctx, A, opts->format, &p, out);
    spx_matrix_destroy(A);
    return s;
}

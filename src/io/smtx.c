/* DLMC .smtx reader. Line 1: "rows, cols, nnz"; line 2: the rows+1 row
 * offsets; line 3: the nnz column indices (0-based); numbers separated by
 * spaces and/or commas. The files carry no values: value k is uniform in
 * [-1, 1) from spx__rand_stream(seed, k), drawn on the grid of the target
 * type's precision so that it is exact in that type. */
#include "io/io.h"

#include <math.h>
#include <string.h>

#define LL(x) ((long long)(x))

typedef struct {
    const char *p, *end;
    int64_t line;
} cursor;

/* The next line as [*ls, *le); false at end of input. */
static bool get_line(cursor *c, const char **ls, const char **le)
{
    if (c->p >= c->end)
        return false;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    *ls = c->p;
    *le = nl ? nl : c->end;
    c->p = nl ? nl + 1 : c->end;
    c->line++;
    return true;
}

static inline bool is_sep(char c) { return spx__is_space(c) || c == ','; }

static const char *skip_sep(const char *p, const char *le)
{
    while (p < le && is_sep(*p))
        p++;
    return p;
}

static int64_t count_numbers(const char *p, const char *le)
{
    int64_t n = 0;
    for (;;) {
        p = skip_sep(p, le);
        if (p == le)
            return n;
        n++;
        while (p < le && !is_sep(*p))
            p++;
    }
}

/* Next integer on the line; pos (1-based) and what name it in messages. */
static spx_status next_int(spx_ctx *ctx, const spx__input *in, int64_t line, const char **pp,
                           const char *le, int64_t pos, const char *what, int64_t *out)
{
    char t[48];
    const char *p = skip_sep(*pp, le), *q;
    int rc = spx__parse_i64(p, le, &q, out);
    const char *tok_end = p;
    while (tok_end < le && !is_sep(*tok_end))
        tok_end++;
    if (rc == SPX__NUM_SYNTAX || (q < le && !is_sep(*q)))
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: bad %s '%s' at position %lld",
                         in->name, LL(line), what, spx__token_text(p, tok_end, t, sizeof t), LL(pos));
    if (rc == SPX__NUM_RANGE || *out < 0)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: %s %s at position %lld is %s",
                         in->name, LL(line), what, spx__token_text(p, tok_end, t, sizeof t), LL(pos),
                         rc == SPX__NUM_RANGE ? "too large" : "negative");
    *pp = q;
    return SPX_OK;
}

static spx_status expect_count(spx_ctx *ctx, const spx__input *in, int64_t line, const char *ls,
                               const char *le, int64_t want, const char *what)
{
    int64_t n = count_numbers(ls, le);
    if (n != want)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: expected %lld %s, found %lld",
                         in->name, LL(line), LL(want), what, LL(n));
    return SPX_OK;
}

static int value_bits(spx_dtype t)
{
    switch (t) {
    case SPX_F64: case SPX_C128: return 53;
    case SPX_F16: return 11;
    case SPX_BF16: return 8;
    default: return 24; /* f32, c64 */
    }
}

static void fill_values(spx_matrix *A, uint64_t seed)
{
    if (A->dtype == SPX_PATTERN)
        return;
    int b = value_bits(A->dtype);
    for (int64_t k = 0; k < A->nnz; k++) {
        uint64_t st = spx__rand_stream(seed, (uint64_t)k);
        int64_t m = (int64_t)(spx__splitmix64(&st) >> (64 - b)) - ((int64_t)1 << (b - 1));
        spx__val_set(A->values, A->dtype, k, ldexp((double)m, 1 - b)); /* exact in the type */
    }
}

spx_status spx__smtx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                          spx_matrix **out)
{
    spx_dtype dtype = opts->dtype ? opts->dtype : SPX_F32;
    if (!spx__dtype_is_float(dtype) && !spx__dtype_is_complex(dtype) && dtype != SPX_PATTERN)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "%s: a .smtx file has no values and random values need a float type, not %s",
                         in->name, spx_dtype_name(dtype));
    cursor c = {in->data, in->data + in->size, 0};
    const char *ls = NULL, *le = NULL;
    int64_t dims[3];
    if (!get_line(&c, &ls, &le))
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: empty file (expected rows, columns, nonzeros)",
                         in->name);
    spx_status s = expect_count(ctx, in, 1, ls, le, 3, "numbers (rows, columns, nonzeros)");
    const char *p = ls;
    for (int i = 0; i < 3 && !s; i++)
        s = next_int(ctx, in, 1, &p, le, i + 1, i == 0 ? "row count" : i == 1 ? "column count" : "nonzero count",
                     &dims[i]);
    if (s)
        return s;
    int64_t rows = dims[0], cols = dims[1], nnz = dims[2];
    spx_index_type t = opts->index_type;
    if (t == SPX_INDEX_DEFAULT)
        t = spx__index_type_for(rows > cols ? (rows > nnz ? rows : nnz) : (cols > nnz ? cols : nnz));

    /* line 2: offsets; counted before anything is allocated */
    if (!get_line(&c, &ls, &le))
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 2: premature end of file: expected %lld row offsets",
                         in->name, LL(rows) + 1);
    if (rows == INT64_MAX)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: row count %lld is too large", in->name, LL(rows));
    if ((s = expect_count(ctx, in, 2, ls, le, rows + 1, "row offsets")))
        return s;
    const char *off_ls = ls, *off_le = le;
    bool have3 = get_line(&c, &ls, &le);
    if (!have3 && nnz > 0)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 3: premature end of file: expected %lld column indices",
                         in->name, LL(nnz));
    if (have3 && (s = expect_count(ctx, in, 3, ls, le, nnz, "column indices")))
        return s;
    const char *col_ls = ls, *col_le = le;
    while (get_line(&c, &ls, &le))
        if (skip_sep(ls, le) != le)
            return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: unexpected text after the column indices",
                             in->name, LL(c.line));

    spx_matrix *A = NULL;
    if ((s = spx__matrix_create(ctx, SPX_COO, rows, cols, nnz, t, dtype, &A)))
        return s;
    p = off_ls;
    int64_t prev = 0;
    for (int64_t r = 0; r <= rows && !s; r++) {
        int64_t v;
        if ((s = next_int(ctx, in, 2, &p, off_le, r + 1, "row offset", &v)))
            break;
        if ((r == 0 && v != 0) || v < prev || v > nnz || (r == rows && v != nnz))
            s = spx__fail(ctx, SPX_ERR_PARSE,
                          "%s: line 2: row offset %lld at position %lld %s", in->name, LL(v), LL(r + 1),
                          r == 0 && v != 0 ? "must be 0"
                          : v < prev       ? "is less than the one before it"
                          : v > nnz        ? "exceeds the nonzero count"
                                           : "must equal the nonzero count");
        for (int64_t k = prev; k < v && !s; k++) /* entries prev..v-1 are in row r-1 */
            spx__idx_set(A->row_indices, t, k, r - 1);
        prev = v;
    }
    p = col_ls;
    for (int64_t k = 0; k < nnz && !s; k++) {
        int64_t j;
        if ((s = next_int(ctx, in, 3, &p, col_le, k + 1, "column index", &j)))
            break;
        if (j >= cols)
            s = spx__fail(ctx, SPX_ERR_PARSE,
                          "%s: line 3: column index %lld at position %lld out of range [0, %lld)",
                          in->name, LL(j), LL(k + 1), LL(cols));
        else
            spx__idx_set(A->indices, t, k, j);
    }
    if (s) {
        spx_matrix_destroy(A);
        return s;
    }
    fill_values(A, opts->seed);
    return spx__io_finish_coo(ctx, A, opts->format, opts->dup, out);
}

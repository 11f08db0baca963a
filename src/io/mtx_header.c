/* Matrix Market header: the %%MatrixMarket banner, comment lines, an
 * optional %%GraphBLAS type line (LAGraph's convention) and the size line. */
#include "io/mtx.h"

#include <string.h>
#include <strings.h>

#define LL(x) ((long long)(x))
#define MAX_WORDS 8

typedef struct {
    const char *p[MAX_WORDS];
    size_t len[MAX_WORDS];
    int n;       /* words stored (at most MAX_WORDS) */
    int total;   /* words on the line */
} words;

static void split_words(const char *p, const char *end, words *w)
{
    w->n = w->total = 0;
    for (;;) {
        while (p < end && spx__is_space(*p))
            p++;
        if (p == end)
            return;
        const char *s = p;
        while (p < end && !spx__is_space(*p))
            p++;
        if (w->n < MAX_WORDS) {
            w->p[w->n] = s;
            w->len[w->n++] = (size_t)(p - s);
        }
        w->total++;
    }
}

static bool word_is(const words *w, int i, const char *s)
{
    return i < w->n && w->len[i] == strlen(s) && strncasecmp(w->p[i], s, w->len[i]) == 0;
}

/* The word as printable text for a message. */
static const char *word_text(const words *w, int i, char *buf, size_t n)
{
    return spx__token_text(w->p[i], w->p[i] + w->len[i], buf, n);
}

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

static spx_status parse_banner(spx_ctx *ctx, const char *name, const words *w, spx__mtx_header *h)
{
    char t[64];
    if (!word_is(w, 0, "%%MatrixMarket"))
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: missing %%%%MatrixMarket banner", name);
    if (w->total < 5)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: incomplete banner: %d words, expected 5 (%%%%MatrixMarket "
                         "matrix <coordinate|array> <field> <symmetry>)",
                         name, w->total);
    if (!word_is(w, 1, "matrix"))
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: unknown object '%s' (expected matrix)",
                         name, word_text(w, 1, t, sizeof t));
    if (word_is(w, 2, "coordinate") || word_is(w, 2, "array"))
        h->array = word_is(w, 2, "array");
    else
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: unknown format '%s' (expected coordinate or array)", name,
                         word_text(w, 2, t, sizeof t));
    if (word_is(w, 3, "real") || word_is(w, 3, "double"))
        h->field = SPX__MTX_REAL;
    else if (word_is(w, 3, "integer"))
        h->field = SPX__MTX_INTEGER;
    else if (word_is(w, 3, "complex"))
        h->field = SPX__MTX_COMPLEX;
    else if (word_is(w, 3, "pattern"))
        h->field = SPX__MTX_PATTERN;
    else
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: unknown field '%s' (expected real, integer, complex or pattern)",
                         name, word_text(w, 3, t, sizeof t));
    if (word_is(w, 4, "general"))
        h->symmetry = SPX__MTX_GENERAL;
    else if (word_is(w, 4, "symmetric"))
        h->symmetry = SPX__MTX_SYMMETRIC;
    else if (word_is(w, 4, "skew-symmetric"))
        h->symmetry = SPX__MTX_SKEW;
    else if (word_is(w, 4, "hermitian"))
        h->symmetry = SPX__MTX_HERMITIAN;
    else
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: unknown symmetry '%s' (expected general, symmetric, "
                         "skew-symmetric or hermitian)",
                         name, word_text(w, 4, t, sizeof t));
    if (w->total > 5)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: unexpected '%s' after the symmetry",
                         name, word_text(w, 5, t, sizeof t));
    if (h->field == SPX__MTX_PATTERN && h->array)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: a pattern matrix cannot be stored as an array", name);
    if (h->field == SPX__MTX_PATTERN && h->symmetry == SPX__MTX_HERMITIAN)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line 1: a pattern matrix cannot be hermitian",
                         name);
    if (h->field == SPX__MTX_PATTERN && h->symmetry == SPX__MTX_SKEW)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: a pattern matrix cannot be skew-symmetric", name);
    if (h->symmetry == SPX__MTX_HERMITIAN && h->field != SPX__MTX_COMPLEX)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line 1: hermitian needs the complex field, not '%s'", name,
                         word_text(w, 3, t, sizeof t));
    return SPX_OK;
}

/* LAGraph's type names and the value type each reads as by default. */
static const struct {
    const char *name;
    spx_dtype dtype;
} graphblas_types[] = {
    {"bool", SPX_BOOL},       {"int8_t", SPX_I32},   {"int16_t", SPX_I32},
    {"int32_t", SPX_I32},     {"uint8_t", SPX_I32},  {"uint16_t", SPX_I32},
    {"int64_t", SPX_I64},     {"uint32_t", SPX_I64}, {"uint64_t", SPX_I64},
    {"float", SPX_F32},       {"double", SPX_F64},   {"GxB_FC32_t", SPX_C64},
    {"GxB_FC64_t", SPX_C128},
};

static spx_status parse_graphblas(spx_ctx *ctx, const char *name, int64_t line, const words *w,
                                  spx__mtx_header *h)
{
    char t[64];
    if (!word_is(w, 1, "type"))
        return SPX_OK; /* other %%GraphBLAS lines are comments to us */
    if (w->total == 4 && (word_is(w, 2, "float") || word_is(w, 2, "double")) &&
        word_is(w, 3, "complex")) {
        h->graphblas_type = word_is(w, 2, "float") ? SPX_C64 : SPX_C128;
        return SPX_OK;
    }
    for (size_t i = 0; w->total == 3 && i < sizeof graphblas_types / sizeof graphblas_types[0]; i++)
        if (word_is(w, 2, graphblas_types[i].name)) {
            h->graphblas_type = graphblas_types[i].dtype;
            return SPX_OK;
        }
    if (w->total < 3)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: %%%%GraphBLAS type line names no type",
                         name, LL(line));
    return spx__fail(ctx, SPX_ERR_PARSE,
                     "%s: line %lld: unknown %%%%GraphBLAS type '%s' (expected bool, int8_t, "
                     "int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, "
                     "double, GxB_FC32_t or GxB_FC64_t)",
                     name, LL(line), word_text(w, 2, t, sizeof t));
}

static spx_status parse_size_line(spx_ctx *ctx, const char *name, int64_t line, const char *p,
                                  const char *end, spx__mtx_header *h)
{
    int want = h->array ? 2 : 3;
    const char *what = h->array ? "rows columns" : "rows columns entries";
    int64_t v[3] = {0, 0, 0};
    int n = 0;
    char t[64];
    for (;;) {
        while (p < end && spx__is_space(*p))
            p++;
        if (p == end)
            break;
        const char *q;
        int64_t x = 0;
        int rc = spx__parse_i64(p, end, &q, &x);
        if (rc == SPX__NUM_SYNTAX || (q < end && !spx__is_space(*q)))
            return spx__fail(ctx, SPX_ERR_PARSE,
                             "%s: line %lld: bad number '%s' in the size line (expected %s)", name,
                             LL(line), spx__token_text(p, end, t, sizeof t), what);
        if (rc == SPX__NUM_RANGE)
            return spx__fail(ctx, SPX_ERR_PARSE,
                             "%s: line %lld: size %s in the size line does not fit int64", name,
                             LL(line), spx__token_text(p, end, t, sizeof t));
        if (x < 0)
            return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: negative size %lld in the size line",
                             name, LL(line), LL(x));
        if (n < 3)
            v[n] = x;
        n++;
        p = q;
    }
    if (n != want)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line %lld: size line has %d number%s, expected %d (%s)", name,
                         LL(line), n, n == 1 ? "" : "s", want, what);
    h->rows = v[0];
    h->cols = v[1];
    if (h->symmetry != SPX__MTX_GENERAL && h->rows != h->cols)
        return spx__fail(ctx, SPX_ERR_PARSE,
                         "%s: line %lld: a %s matrix must be square, not %lld x %lld", name,
                         LL(line),
                         h->symmetry == SPX__MTX_SYMMETRIC ? "symmetric"
                         : h->symmetry == SPX__MTX_SKEW    ? "skew-symmetric"
                                                           : "hermitian",
                         LL(h->rows), LL(h->cols));
    if (!h->array) {
        h->entries = v[2];
        return SPX_OK;
    }
    /* array: every position, or one triangle (skew: without the diagonal) */
    int64_t n1 = h->rows, total;
    bool ovf;
    if (h->symmetry == SPX__MTX_GENERAL)
        ovf = spx__mul_overflows(h->rows, h->cols, &total);
    else if (h->symmetry == SPX__MTX_SKEW)
        ovf = spx__mul_overflows(n1, n1 > 0 ? n1 - 1 : 0, &total);
    else
        ovf = spx__mul_overflows(n1, n1 + 1, &total);
    if (ovf)
        return spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: array of %lld x %lld values overflows",
                         name, LL(line), LL(h->rows), LL(h->cols));
    h->entries = h->symmetry == SPX__MTX_GENERAL ? total : total / 2;
    return SPX_OK;
}

spx_status spx__mtx_header_parse(spx_ctx *ctx, const spx__input *in, spx__mtx_header *h)
{
    memset(h, 0, sizeof *h);
    const char *p = in->data, *end = in->data + in->size;
    const char *le = line_end(p, end);
    words w;
    split_words(p, le, &w);
    spx_status s = parse_banner(ctx, in->name, &w, h);
    if (s)
        return s;
    int64_t line = 1;
    while (le < end) {
        p = le + 1;
        le = line_end(p, end);
        line++;
        const char *q = p;
        while (q < le && spx__is_space(*q))
            q++;
        if (q == le)
            continue; /* blank line */
        if (*q == '%') {
            if (le - q >= 11 && strncasecmp(q, "%%GraphBLAS", 11) == 0) {
                split_words(q, le, &w);
                if (word_is(&w, 0, "%%GraphBLAS") &&
                    (s = parse_graphblas(ctx, in->name, line, &w, h)))
                    return s;
            }
            continue;
        }
        if ((s = parse_size_line(ctx, in->name, line, q, le, h)))
            return s;
        h->size_line = line;
        h->data_start = le < end ? (size_t)(le + 1 - in->data) : in->size;
        return SPX_OK;
    }
    return spx__fail(ctx, SPX_ERR_PARSE,
                     "%s: line %lld: premature end of file: no size line after the header",
                     in->name, LL(line));
}

spx_status spx__mtx_value_type(spx_ctx *ctx, const spx__input *in, const spx__mtx_header *h,
                               spx_dtype want, spx_dtype *out)
{
    spx_dtype t = want;
    if (t == SPX_DTYPE_DEFAULT)
        t = h->graphblas_type;
    if (t == SPX_DTYPE_DEFAULT) {
        static const spx_dtype by_field[] = {SPX_F64, SPX_I64, SPX_C128, SPX_PATTERN};
        t = by_field[h->field];
    }
    if (h->field == SPX__MTX_COMPLEX && !spx__dtype_is_complex(t) && t != SPX_PATTERN)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "%s: complex matrix cannot be read as %s%s",
                         in->name, spx_dtype_name(t),
                         want == SPX_DTYPE_DEFAULT ? " (its %%GraphBLAS type)" : "");
    *out = t;
    return SPX_OK;
}

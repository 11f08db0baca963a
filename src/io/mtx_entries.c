/* The Matrix Market data section, parsed in parallel. The section is cut
 * into chunks at line boundaries; pass 1 counts lines and entry lines per
 * chunk (so every entry knows its index and line number before parsing, and
 * nothing is allocated for entries the file does not hold); pass 2 parses
 * each chunk's entries straight into the COO arrays; pass 3 appends the
 * mirrored triangle of symmetric files. Errors are recorded per chunk and
 * the first one in file order is reported, so messages do not depend on the
 * thread count. */
#include "io/mtx.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#ifdef SPX_HAVE_OPENMP
#include <omp.h>
#endif

#define LL(x) ((long long)(x))
#define CHUNK_MIN ((size_t)256 << 10)
#define MAX_CHUNKS 4096
#define PROGRESS_MIN ((size_t)16 << 20)

typedef struct {
    const char *begin, *end; /* whole lines */
    int64_t first_line;      /* line number of begin */
    int64_t newlines;        /* pass 1 */
    int64_t entries;         /* pass 1: lines that are neither blank nor comments */
    int64_t entry0;          /* index of the chunk's first entry */
    int64_t offdiag;         /* pass 2: entries whose mirror image is added */
    int64_t mirror0;         /* where its mirrored entries start */
    int64_t err_line;        /* 0: no error in this chunk */
    spx_status err_status;
    char err[240];
} chunk;

typedef struct {
    const spx__mtx_header *h;
    spx_dtype dtype;
    spx_index_type itype;
    void *rows, *cols, *vals;
    int64_t limit;   /* entries to parse: min(declared, found) */
    bool single;     /* reals rounded to float precision */
    bool int_target; /* i32 / i64 values */
    bool negate;     /* skew-symmetric: the mirror negates values */
    int nvals;       /* value tokens per entry */
    const char *layout; /* the tokens expected on a line, for messages */
} job;

static bool chunk_fail(chunk *c, int64_t line, spx_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static bool chunk_fail(chunk *c, int64_t line, spx_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    c->err_line = line;
    c->err_status = st;
    return false;
}

static inline const char *skip_space(const char *p, const char *le)
{
    while (p < le && spx__is_space(*p))
        p++;
    return p;
}

static inline bool is_entry_line(const char *p, const char *le)
{
    p = skip_space(p, le);
    return p < le && *p != '%';
}

static inline const char *next_line(const char *p, const char *end, const char **le)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *le = nl ? nl : end;
    return nl ? nl + 1 : end;
}

static int count_tokens(const char *p, const char *le)
{
    int n = 0;
    for (;;) {
        p = skip_space(p, le);
        if (p == le)
            return n;
        n++;
        while (p < le && !spx__is_space(*p))
            p++;
    }
}

static bool wrong_count(const job *J, chunk *c, int64_t line, const char *ls, const char *le)
{
    int want = (J->h->array ? 0 : 2) + J->nvals;
    return chunk_fail(c, line, SPX_ERR_PARSE, "expected %d number%s (%s), found %d", want,
                      want == 1 ? "" : "s", J->layout, count_tokens(ls, le));
}

static inline bool token_ends(const char *q, const char *le) { return q == le || spx__is_space(*q); }

/* ---- storing one value into the target type ---- */

static bool store_int(const job *J, chunk *c, int64_t line, int64_t k, int64_t v, const char *tok,
                      const char *le)
{
    char t[48];
    switch (J->dtype) {
    case SPX_I32:
        if (v < INT32_MIN || v > INT32_MAX || (J->negate && v == INT32_MIN))
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s does not fit i32%s",
                              spx__token_text(tok, le, t, sizeof t),
                              J->negate ? " with its negation" : "");
        ((int32_t *)J->vals)[k] = (int32_t)v;
        break;
    case SPX_I64:
        if (J->negate && v == INT64_MIN)
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s cannot be negated in i64",
                              spx__token_text(tok, le, t, sizeof t));
        ((int64_t *)J->vals)[k] = v;
        break;
    case SPX_F32: ((float *)J->vals)[k] = (float)v; break;
    case SPX_F64: ((double *)J->vals)[k] = (double)v; break;
    case SPX_F16: {
        uint16_t hv = spx__float_to_half((float)v);
        if ((hv & 0x7fffu) == 0x7c00u)
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s overflows f16",
                              spx__token_text(tok, le, t, sizeof t));
        ((uint16_t *)J->vals)[k] = hv;
        break;
    }
    case SPX_BF16: ((uint16_t *)J->vals)[k] = spx__float_to_bf16((float)v); break;
    case SPX_BOOL: ((uint8_t *)J->vals)[k] = v != 0; break;
    case SPX_C64: ((float *)J->vals)[2 * k] = (float)v; ((float *)J->vals)[2 * k + 1] = 0; break;
    case SPX_C128: ((double *)J->vals)[2 * k] = (double)v; ((double *)J->vals)[2 * k + 1] = 0; break;
    default: break; /* pattern: values are dropped */
    }
    return true;
}

static bool store_real(const job *J, chunk *c, int64_t line, int64_t k, double re, double im,
                       const char *tok, const char *le)
{
    char t[48];
    switch (J->dtype) {
    case SPX_F32: ((float *)J->vals)[k] = (float)re; break;
    case SPX_F64: ((double *)J->vals)[k] = re; break;
    case SPX_F16:
    case SPX_BF16: {
        uint16_t hv = J->dtype == SPX_F16 ? spx__float_to_half((float)re) : spx__float_to_bf16((float)re);
        bool inf = J->dtype == SPX_F16 ? (hv & 0x7fffu) == 0x7c00u : (hv & 0x7fffu) == 0x7f80u;
        if (inf && !isinf(re))
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s overflows %s",
                              spx__token_text(tok, le, t, sizeof t), spx_dtype_name(J->dtype));
        ((uint16_t *)J->vals)[k] = hv;
        break;
    }
    case SPX_I32:
    case SPX_I64: {
        if (re != trunc(re))
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s is not an integer (reading as %s)",
                              spx__token_text(tok, le, t, sizeof t), spx_dtype_name(J->dtype));
        bool fits = J->dtype == SPX_I32 ? re >= (double)INT32_MIN && re <= (double)INT32_MAX
                                        : re >= -0x1p63 && re < 0x1p63;
        if (!fits)
            return chunk_fail(c, line, SPX_ERR_PARSE, "value %s does not fit %s",
                              spx__token_text(tok, le, t, sizeof t), spx_dtype_name(J->dtype));
        return store_int(J, c, line, k, (int64_t)re, tok, le);
    }
    case SPX_BOOL: ((uint8_t *)J->vals)[k] = re != 0 || im != 0; break;
    case SPX_C64: ((float *)J->vals)[2 * k] = (float)re; ((float *)J->vals)[2 * k + 1] = (float)im; break;
    case SPX_C128: ((double *)J->vals)[2 * k] = re; ((double *)J->vals)[2 * k + 1] = im; break;
    default: break;
    }
    return true;
}

/* One real token at *pp (advanced past it). */
static bool real_token(const job *J, chunk *c, int64_t line, const char **pp, const char *le,
                       double *out)
{
    char t[48];
    const char *p = *pp, *q;
    int rc = spx__parse_real(p, le, J->single, &q, out);
    if (rc == SPX__NUM_SYNTAX || !token_ends(q, le))
        return chunk_fail(c, line, SPX_ERR_PARSE, "bad value '%s'", spx__token_text(p, le, t, sizeof t));
    if (rc == SPX__NUM_RANGE)
        return chunk_fail(c, line, SPX_ERR_PARSE, "value %s is out of range for %s",
                          spx__token_text(p, le, t, sizeof t),
                          J->dtype == SPX_PATTERN || J->int_target ? "f64"
                          : J->dtype == SPX_C64                    ? "f32"
                          : J->dtype == SPX_C128                   ? "f64"
                                                                   : spx_dtype_name(J->dtype));
    if (rc == SPX__NUM_NOMEM)
        return chunk_fail(c, line, SPX_ERR_OUT_OF_MEMORY, "out of host memory parsing value '%s'",
                          spx__token_text(p, le, t, sizeof t));
    *pp = q;
    return true;
}

/* The value tokens of entry k at *pp. diag: the entry is on the diagonal. */
static bool parse_value(const job *J, chunk *c, int64_t line, const char *ls, const char **pp,
                        const char *le, int64_t k, bool diag)
{
    char t[48];
    const char *p = skip_space(*pp, le), *q;
    if (J->nvals > 0 && p == le)
        return wrong_count(J, c, line, ls, le);
    switch (J->h->field) {
    case SPX__MTX_PATTERN:
        if (J->dtype != SPX_PATTERN && !store_int(J, c, line, k, 1, p, le))
            return false;
        break;
    case SPX__MTX_INTEGER: {
        int64_t v = 0;
        int rc = spx__parse_i64(p, le, &q, &v);
        if (rc == SPX__NUM_SYNTAX || !token_ends(q, le))
            return chunk_fail(c, line, SPX_ERR_PARSE, "bad integer value '%s'",
                              spx__token_text(p, le, t, sizeof t));
        if (rc == SPX__NUM_RANGE)
            return chunk_fail(c, line, SPX_ERR_PARSE, "integer value %s does not fit int64",
                              spx__token_text(p, le, t, sizeof t));
        if (!store_int(J, c, line, k, v, p, le))
            return false;
        p = q;
        break;
    }
    case SPX__MTX_REAL: {
        if (J->int_target) { /* integer-looking tokens keep every digit */
            int64_t v = 0;
            int rc = spx__parse_i64(p, le, &q, &v);
            if (rc != SPX__NUM_SYNTAX && token_ends(q, le)) {
                if (rc == SPX__NUM_RANGE)
                    return chunk_fail(c, line, SPX_ERR_PARSE, "value %s does not fit %s",
                                      spx__token_text(p, le, t, sizeof t), spx_dtype_name(J->dtype));
                if (!store_int(J, c, line, k, v, p, le))
                    return false;
                p = q;
                break;
            }
        }
        const char *tok = p;
        double re;
        if (!real_token(J, c, line, &p, le, &re) || !store_real(J, c, line, k, re, 0, tok, le))
            return false;
        break;
    }
    case SPX__MTX_COMPLEX: {
        const char *tok = p;
        double re, im;
        if (!real_token(J, c, line, &p, le, &re))
            return false;
        p = skip_space(p, le);
        if (p == le)
            return wrong_count(J, c, line, ls, le);
        const char *imtok = p;
        if (!real_token(J, c, line, &p, le, &im))
            return false;
        if (diag && J->h->symmetry == SPX__MTX_HERMITIAN && im != 0)
            return chunk_fail(c, line, SPX_ERR_PARSE,
                              "diagonal entry of a hermitian matrix has nonzero imaginary part %s",
                              spx__token_text(imtok, le, t, sizeof t));
        if (!store_real(J, c, line, k, re, im, tok, le))
            return false;
        break;
    }
    }
    *pp = p;
    return true;
}

/* One 1-based index token; stores the 0-based value. */
static bool parse_index(const job *J, chunk *c, int64_t line, const char *ls, const char **pp,
                        const char *le, int64_t bound, const char *what, int64_t *out)
{
    char t[48];
    const char *p = skip_space(*pp, le), *q;
    if (p == le)
        return wrong_count(J, c, line, ls, le);
    int64_t v = 0;
    int rc = spx__parse_i64(p, le, &q, &v);
    if (rc == SPX__NUM_SYNTAX || !token_ends(q, le))
        return chunk_fail(c, line, SPX_ERR_PARSE, "bad %s index '%s'", what,
                          spx__token_text(p, le, t, sizeof t));
    if (rc == SPX__NUM_RANGE || v < 1 || v > bound)
        return chunk_fail(c, line, SPX_ERR_PARSE, "%s index %s out of range [1, %lld]", what,
                          spx__token_text(p, le, t, sizeof t), LL(bound));
    *out = v - 1;
    *pp = q;
    return true;
}

/* Position of stored value k of an array file: column-major, one triangle
 * (skew: below the diagonal) for symmetric kinds. */
static void array_position(const spx__mtx_header *h, int64_t k, int64_t *i, int64_t *j)
{
    if (h->symmetry == SPX__MTX_GENERAL) {
        *i = k % h->rows;
        *j = k / h->rows;
        return;
    }
    int64_t skip = h->symmetry == SPX__MTX_SKEW, col = 0;
    for (;; col++) { /* column col holds rows col+skip .. n-1 */
        int64_t len = h->rows - col - skip;
        if (k < len)
            break;
        k -= len;
    }
    *j = col;
    *i = col + skip + k;
}

static void array_advance(const spx__mtx_header *h, int64_t *i, int64_t *j)
{
    if (++*i < h->rows)
        return;
    ++*j;
    *i = h->symmetry == SPX__MTX_GENERAL ? 0 : *j + (h->symmetry == SPX__MTX_SKEW);
}

static void set_index(void *a, spx_index_type t, int64_t k, int64_t v)
{
    if (t == SPX_INDEX_I32)
        ((int32_t *)a)[k] = (int32_t)v;
    else
        ((int64_t *)a)[k] = v;
}

static void parse_chunk(const job *J, chunk *c)
{
    const spx__mtx_header *h = J->h;
    int64_t k = c->entry0, line = c->first_line, ai = 0, aj = 0;
    if (h->array && k < J->limit)
        array_position(h, k, &ai, &aj);
    const char *p = c->begin, *le;
    for (; p < c->end && k < J->limit; line++) {
        const char *ls = p;
        p = next_line(p, c->end, &le);
        if (!is_entry_line(ls, le))
            continue;
        const char *q = ls;
        int64_t i = ai, j = aj;
        if (!h->array && (!parse_index(J, c, line, ls, &q, le, h->rows, "row", &i) ||
                          !parse_index(J, c, line, ls, &q, le, h->cols, "column", &j)))
            return;
        if (i == j && h->symmetry == SPX__MTX_SKEW)
            return (void)chunk_fail(c, line, SPX_ERR_PARSE,
                                    "skew-symmetric matrix has a diagonal entry (%lld, %lld)",
                                    LL(i + 1), LL(j + 1));
        if (!parse_value(J, c, line, ls, &q, le, k, i == j))
            return;
        if (skip_space(q, le) != le)
            return (void)wrong_count(J, c, line, ls, le);
        set_index(J->rows, J->itype, k, i);
        set_index(J->cols, J->itype, k, j);
        c->offdiag += i != j;
        k++;
        if (h->array)
            array_advance(h, &ai, &aj);
    }
}

/* The line holding entry k (0-based) of the section. */
static int64_t line_of_entry(const chunk *cs, int64_t nchunks, int64_t k)
{
    int64_t ci = 0;
    while (ci + 1 < nchunks && cs[ci + 1].entry0 <= k)
        ci++;
    const chunk *c = &cs[ci];
    int64_t e = c->entry0, line = c->first_line;
    const char *p = c->begin, *le;
    for (; p < c->end; line++) {
        const char *ls = p;
        p = next_line(p, c->end, &le);
        if (is_entry_line(ls, le) && e++ == k)
            return line;
    }
    return line;
}

static void mirror_value(const job *J, int64_t from, int64_t to)
{
    size_t vsz = spx_dtype_size(J->dtype);
    if (!vsz)
        return;
    memcpy((char *)J->vals + to * (int64_t)vsz, (const char *)J->vals + from * (int64_t)vsz, vsz);
    spx__mtx_symmetry sym = J->h->symmetry;
    if (sym == SPX__MTX_SYMMETRIC)
        return;
    bool skew = sym == SPX__MTX_SKEW; /* else hermitian: conjugate */
    switch (J->dtype) {
    case SPX_F32: ((float *)J->vals)[to] = -((float *)J->vals)[to]; break;
    case SPX_F64: ((double *)J->vals)[to] = -((double *)J->vals)[to]; break;
    case SPX_F16:
    case SPX_BF16: ((uint16_t *)J->vals)[to] ^= 0x8000u; break;
    case SPX_I32: ((int32_t *)J->vals)[to] = -((int32_t *)J->vals)[to]; break; /* checked when parsed */
    case SPX_I64: ((int64_t *)J->vals)[to] = -((int64_t *)J->vals)[to]; break;
    case SPX_C64:
        if (skew)
            ((float *)J->vals)[2 * to] = -((float *)J->vals)[2 * to];
        ((float *)J->vals)[2 * to + 1] = -((float *)J->vals)[2 * to + 1];
        break;
    case SPX_C128:
        if (skew)
            ((double *)J->vals)[2 * to] = -((double *)J->vals)[2 * to];
        ((double *)J->vals)[2 * to + 1] = -((double *)J->vals)[2 * to + 1];
        break;
    default: break; /* bool: nonzero stays nonzero */
    }
}

static void mirror_chunk(const job *J, const chunk *c)
{
    int64_t e1 = c->entry0 + c->entries < J->limit ? c->entry0 + c->entries : J->limit;
    int64_t q = J->limit + c->mirror0;
    for (int64_t k = c->entry0; k < e1; k++) {
        int64_t i = spx__idx_get(J->rows, J->itype, k), j = spx__idx_get(J->cols, J->itype, k);
        if (i == j)
            continue;
        set_index(J->rows, J->itype, q, j);
        set_index(J->cols, J->itype, q, i);
        mirror_value(J, k, q);
        q++;
    }
}

static void count_chunk(chunk *c)
{
    const char *p = c->begin, *le;
    while (p < c->end) {
        const char *ls = p;
        p = next_line(p, c->end, &le);
        c->entries += is_entry_line(ls, le);
        c->newlines += le < c->end;
    }
}

static int io_threads(const spx_ctx *ctx)
{
#ifdef SPX_HAVE_OPENMP
    return ctx->num_threads > 0 ? ctx->num_threads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}

static spx_status grow(spx_ctx *ctx, void **p, int64_t n, size_t elem, const char *what)
{
    int64_t bytes;
    if (spx__mul_overflows(n, (int64_t)elem, &bytes))
        return spx__fail(ctx, SPX_ERR_OVERFLOW, "%s: %lld elements overflow", what, LL(n));
    void *q = spx__realloc(*p, (size_t)bytes);
    if (!q)
        return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory allocating %s (%lld bytes)",
                         what, LL(bytes));
    *p = q;
    return SPX_OK;
}

/* int32 index arrays -> int64, for more than INT32_MAX entries. */
static spx_status widen(spx_ctx *ctx, spx_matrix *A)
{
    int64_t *r = NULL, *c = NULL;
    spx_status s = spx__alloc(ctx, (void **)&r, A->nnz, 8, "row indices");
    if (!s)
        s = spx__alloc(ctx, (void **)&c, A->nnz, 8, "column indices");
    if (s) {
        spx__free(r);
        return s;
    }
    for (int64_t k = 0; k < A->nnz; k++) {
        r[k] = ((const int32_t *)A->row_indices)[k];
        c[k] = ((const int32_t *)A->indices)[k];
    }
    spx__free(A->row_indices);
    spx__free(A->indices);
    A->row_indices = r;
    A->indices = c;
    A->itype = SPX_INDEX_I64;
    return SPX_OK;
}

/* Cut [start, size) into chunks that begin at line starts. */
static spx_status make_chunks(spx_ctx *ctx, const spx__input *in, size_t start, chunk **out,
                              int64_t *n)
{
    size_t total = in->size - start;
    size_t bytes = total / MAX_CHUNKS + 1 > CHUNK_MIN ? total / MAX_CHUNKS + 1 : CHUNK_MIN;
    int64_t nc = (int64_t)(total / bytes) + 1;
    chunk *cs = NULL;
    spx_status s = spx__alloc_zero(ctx, (void **)&cs, nc, sizeof *cs, "parse chunks");
    if (s)
        return s;
    const char *end = in->data + in->size, *prev = in->data + start;
    for (int64_t k = 0; k < nc; k++) {
        cs[k].begin = prev;
        const char *b = end;
        if (k + 1 < nc) {
            size_t pos = start + (size_t)(k + 1) * bytes - 1;
            const char *nl = pos < in->size ? memchr(in->data + pos, '\n', in->size - pos) : NULL;
            b = nl ? nl + 1 : end;
            if (b < prev)
                b = prev;
        }
        cs[k].end = prev = b;
    }
    *out = cs;
    *n = nc;
    return SPX_OK;
}

spx_status spx__mtx_parse_entries(spx_ctx *ctx, const spx__input *in, const spx__mtx_header *h,
                                  spx_dtype dtype, spx_index_type itype, spx_matrix **coo)
{
    spx_index_type t = itype;
    if (t == SPX_INDEX_DEFAULT)
        t = h->rows <= INT32_MAX && h->cols <= INT32_MAX ? SPX_INDEX_I32 : SPX_INDEX_I64;
    if (t == SPX_INDEX_I32 && (h->rows > INT32_MAX || h->cols > INT32_MAX))
        return spx__fail(ctx, SPX_ERR_OVERFLOW,
                         "%s: a %lld x %lld matrix does not fit int32 indices; use SPX_INDEX_I64",
                         in->name, LL(h->rows), LL(h->cols));
    chunk *cs = NULL;
    int64_t nc = 0;
    spx_matrix *A = NULL;
    spx_status s = make_chunks(ctx, in, h->data_start, &cs, &nc);
    if (s)
        return s;
    int nt = io_threads(ctx);
    (void)nt;

#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t k = 0; k < nc; k++)
        count_chunk(&cs[k]);
    int64_t found = 0, line = h->size_line + 1;
    for (int64_t k = 0; k < nc; k++) {
        cs[k].entry0 = found;
        cs[k].first_line = line;
        found += cs[k].entries;
        line += cs[k].newlines;
    }

    static const char *const coord_layouts[] = {"row column value", "row column value",
                                                "row column real imaginary", "row column"};
    static const char *const array_layouts[] = {"value", "value", "real imaginary", ""};
    job J = {.h = h, .dtype = dtype, .itype = t};
    J.limit = found < h->entries ? found : h->entries;
    J.single = dtype == SPX_F32 || dtype == SPX_F16 || dtype == SPX_BF16 || dtype == SPX_C64;
    J.int_target = spx__dtype_is_int(dtype);
    J.negate = h->symmetry == SPX__MTX_SKEW;
    J.nvals = h->field == SPX__MTX_COMPLEX ? 2 : h->field == SPX__MTX_PATTERN ? 0 : 1;
    J.layout = (h->array ? array_layouts : coord_layouts)[h->field];

    if ((s = spx__matrix_new(ctx, SPX_COO, h->rows, h->cols, t, dtype, &A)) ||
        (s = spx__alloc(ctx, &A->row_indices, J.limit, spx__index_size(t), "row indices")) ||
        (s = spx__alloc(ctx, &A->indices, J.limit, spx__index_size(t), "column indices")) ||
        (spx_dtype_size(dtype) &&
         (s = spx__alloc(ctx, &A->values, J.limit, spx_dtype_size(dtype), "values"))))
        goto done;
    J.rows = A->row_indices;
    J.cols = A->indices;
    J.vals = A->values;

    char what[300];
    snprintf(what, sizeof what, "reading %s", in->name);
    size_t done_bytes = 0, total_bytes = in->size - h->data_start;
    bool report = total_bytes >= PROGRESS_MIN;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t k = 0; k < nc; k++) {
        parse_chunk(&J, &cs[k]);
        if (report) {
            size_t done_now;
#pragma omp atomic capture
            done_now = done_bytes += (size_t)(cs[k].end - cs[k].begin);
#ifdef SPX_HAVE_OPENMP
            if (omp_get_thread_num() == 0)
#endif
                spx__progress(ctx, what, (int64_t)done_now, (int64_t)total_bytes + 1);
        }
    }
    if (report)
        spx__progress(ctx, what, 1, 1);
    for (int64_t k = 0; k < nc; k++)
        if (cs[k].err_line) {
            s = spx__fail(ctx, cs[k].err_status, "%s: line %lld: %s", in->name, LL(cs[k].err_line),
                          cs[k].err);
            goto done;
        }
    if (found > h->entries) {
        s = spx__fail(ctx, SPX_ERR_PARSE, "%s: line %lld: more entries than the %lld declared on line %lld",
                      in->name, LL(line_of_entry(cs, nc, h->entries)), LL(h->entries),
                      LL(h->size_line));
        goto done;
    }
    if (found < h->entries) {
        /* the last line of the file */
        bool back = h->data_start == in->size || in->data[in->size - 1] == '\n';
        s = spx__fail(ctx, SPX_ERR_PARSE,
                      "%s: line %lld: premature end of file: %lld entries declared on line %lld, "
                      "%lld found",
                      in->name, LL(line - back), LL(h->entries), LL(h->size_line), LL(found));
        goto done;
    }

    /* the other triangle */
    int64_t mirrored = 0;
    for (int64_t k = 0; k < nc; k++) {
        cs[k].mirror0 = mirrored;
        mirrored += h->symmetry == SPX__MTX_GENERAL ? 0 : cs[k].offdiag;
    }
    A->nnz = J.limit + mirrored;
    if (mirrored) {
        if ((s = grow(ctx, &A->row_indices, A->nnz, spx__index_size(t), "row indices")) ||
            (s = grow(ctx, &A->indices, A->nnz, spx__index_size(t), "column indices")) ||
            (J.vals && (s = grow(ctx, &A->values, A->nnz, spx_dtype_size(dtype), "values"))))
            goto done;
        J.rows = A->row_indices;
        J.cols = A->indices;
        J.vals = A->values;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (int64_t k = 0; k < nc; k++)
            mirror_chunk(&J, &cs[k]);
    }
    if (t == SPX_INDEX_I32 && A->nnz > INT32_MAX) {
        if (itype == SPX_INDEX_I32)
            s = spx__fail(ctx, SPX_ERR_OVERFLOW,
                          "%s: %lld entries do not fit int32 indices; use SPX_INDEX_I64", in->name,
                          LL(A->nnz));
        else
            s = widen(ctx, A);
    }
done:
    spx__free(cs);
    if (s) {
        spx_matrix_destroy(A);
        return s;
    }
    *coo = A;
    return SPX_OK;
}

/* Matrix Market writer: coordinate general files from any format, values
 * printed so that they read back bit for bit (f64 %.17g, f32 and the
 * half types through float %.9g). */
#include "io/mtx.h"

#include <stdio.h>
#include <string.h>

#define LL(x) ((long long)(x))

size_t spx__format_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

static size_t format_i64(char *buf, int64_t v)
{
    if (v >= 0)
        return spx__format_u64(buf, (uint64_t)v);
    buf[0] = '-';
    return 1 + spx__format_u64(buf + 1, 0u - (uint64_t)v);
}

static size_t format_double(char *buf, double v, bool single)
{
    int n = snprintf(buf, 32, single ? "%.9g" : "%.17g", v);
    return n > 0 ? (size_t)n : 0;
}

size_t spx__mtx_format_value(char *buf, const void *vals, spx_dtype t, int64_t k)
{
    size_t n = 0;
    switch (t) {
    case SPX_PATTERN: return 0;
    case SPX_I32: buf[n++] = ' '; return n + format_i64(buf + n, ((const int32_t *)vals)[k]);
    case SPX_I64: buf[n++] = ' '; return n + format_i64(buf + n, ((const int64_t *)vals)[k]);
    case SPX_BOOL: buf[n++] = ' '; buf[n++] = ((const uint8_t *)vals)[k] ? '1' : '0'; return n;
    case SPX_C64:
    case SPX_C128: {
        bool single = t == SPX_C64;
        double re = single ? ((const float *)vals)[2 * k] : ((const double *)vals)[2 * k];
        double im = single ? ((const float *)vals)[2 * k + 1] : ((const double *)vals)[2 * k + 1];
        buf[n++] = ' ';
        n += format_double(buf + n, re, single);
        buf[n++] = ' ';
        return n + format_double(buf + n, im, single);
    }
    default:
        buf[n++] = ' ';
        return n + format_double(buf + n, spx__val_get(vals, t, k), t != SPX_F64);
    }
}

static const char *field_of(spx_dtype t)
{
    switch (t) {
    case SPX_I32: case SPX_I64: case SPX_BOOL: return "integer";
    case SPX_C64: case SPX_C128: return "complex";
    case SPX_PATTERN: return "pattern";
    default: return "real";
    }
}

/* LAGraph's name for t, so that the value type survives a round trip. */
static const char *graphblas_name(spx_dtype t)
{
    switch (t) {
    case SPX_F32: return "float";
    case SPX_F64: return "double";
    case SPX_I32: return "int32_t";
    case SPX_I64: return "int64_t";
    case SPX_BOOL: return "bool";
    case SPX_C64: return "GxB_FC32_t";
    case SPX_C128: return "GxB_FC64_t";
    default: return NULL; /* f16, bf16 (no GraphBLAS type) and pattern */
    }
}

spx_status spx__mtx_write_header(spx_ctx *ctx, spx__outfile *o, bool array, spx_dtype t)
{
    char buf[256];
    const char *gb = graphblas_name(t);
    int n = snprintf(buf, sizeof buf, "%%%%MatrixMarket matrix %s %s general\n%s%s%s"
                     "%% written by spx %d.%d.%d\n",
                     array ? "array" : "coordinate", field_of(t), gb ? "%%GraphBLAS type " : "",
                     gb ? gb : "", gb ? "\n" : "", SPX_VERSION_MAJOR, SPX_VERSION_MINOR,
                     SPX_VERSION_PATCH);
    return spx__out_write(ctx, o, buf, (size_t)n);
}

static spx_status write_entries(spx_ctx *ctx, spx__outfile *o, const spx_matrix *C)
{
    char head[80];
    int n = snprintf(head, sizeof head, "%lld %lld %lld\n", LL(C->rows), LL(C->cols), LL(C->nnz));
    spx_status s = spx__out_write(ctx, o, head, (size_t)n);
    for (int64_t k = 0; k < C->nnz && !s; k++) {
        char *b;
        if ((s = spx__out_reserve(ctx, o, 48 + SPX__MTX_VALUE_MAX, &b)))
            break;
        size_t len = spx__format_u64(b, (uint64_t)spx__idx_get(C->row_indices, C->itype, k) + 1);
        b[len++] = ' ';
        len += spx__format_u64(b + len, (uint64_t)spx__idx_get(C->indices, C->itype, k) + 1);
        len += spx__mtx_format_value(b + len, C->values, C->dtype, k);
        b[len++] = '\n';
        spx__out_advance(o, len);
    }
    return s;
}

spx_status spx__mtx_write(spx_ctx *ctx, const spx_matrix *A, const char *path)
{
    const spx_matrix *C = A;
    spx_matrix *sorted = NULL;
    spx_status s = SPX_OK;
    if (A->format != SPX_COO || !spx__coo_is_canonical(A)) {
        if ((s = spx_matrix_convert(ctx, A, SPX_COO, NULL, &sorted)))
            return s;
        C = sorted;
    }
    spx__outfile o;
    if (!(s = spx__out_open(ctx, path, &o))) {
        if (!(s = spx__mtx_write_header(ctx, &o, false, C->dtype)) &&
            !(s = write_entries(ctx, &o, C)))
            s = spx__out_commit(ctx, &o);
        else
            spx__out_abort(&o);
    }
    spx_matrix_destroy(sorted);
    return s;
}

/* spx_spgemm and spx_spgemm_workspace_size: argument checks, the value-type
 * rules, mask normalisation and operand preparation; the product itself is
 * the backend's (ctx->backend->spgemm, see core/backend.h).
 *
 * Operands reach the backend as CSR views. op(A) of a CSC matrix is read in
 * place (the CSC arrays of A are the CSR arrays of A^T); a CSR matrix with
 * op transpose, a CSC one without, COO, BSR and SELL are converted once.
 * Further copies: OR_AND reads values as bool (other types are converted),
 * and when A and B have different index widths the int32 one is widened
 * (host backends only). All of these copies count as working memory.
 *
 * Device operands (cuda backend): a device CSR read without transposition,
 * or a device CSC read with it, reaches the backend in place; any other
 * device operand, or one that needs converted values (OR_AND over non-bool
 * values), is brought to the host once and prepared there. A and B share a
 * memory, which is where the result goes. */
#include <string.h>

#include "core/semiring.h"
#include "format/convert.h"
#include "ops/spgemm_internal.h"

#define LL(x) ((long long)(x))

/* An operand as the backend reads it, with the copies made to get there. */
typedef struct {
    spx_matrix view; /* CSR over the arrays below or the caller's */
    spx_matrix *copy;
    void *offsets, *indices, *values; /* widened indices, bool values */
    int64_t bytes;                    /* held by copy and the buffers */
} operand;

static void operand_free(operand *o)
{
    spx_matrix_destroy(o->copy);
    spx__free(o->offsets);
    spx__free(o->indices);
    spx__free(o->values);
}

/* A non-owning header over X's arrays, valid (X was checked). */
static spx_matrix shallow(const spx_matrix *X)
{
    spx_matrix v;
    memset(&v, 0, sizeof v);
    v.format = X->format;
    v.itype = X->itype;
    v.dtype = X->dtype;
    v.memory = X->memory;
    v.rows = X->rows;
    v.cols = X->cols;
    v.nnz = X->nnz;
    v.offsets = X->offsets;
    v.indices = X->indices;
    v.row_indices = X->row_indices;
    v.values = X->values;
    v.version = v.checked_version = 1;
    return v;
}

static int64_t compressed_bytes(const spx_matrix *X)
{
    return (spx__matrix_offsets_len(X) + X->nnz) * (int64_t)spx__index_size(X->itype) +
           X->nnz * (int64_t)spx_dtype_size(X->dtype);
}

static spx_status operand_make(spx_ctx *ctx, const spx_matrix *X, spx_op op, int pattern,
                               const char *name, operand *o);

/* A device operand that cannot be read in place: prepare its host copy,
 * which the operand then owns unless preparing it made another copy. */
static spx_status operand_from_device(spx_ctx *ctx, const spx_matrix *X, spx_op op, int pattern,
                                      const char *name, operand *o)
{
    spx_matrix *h = NULL;
    spx_status s = spx_matrix_to_host(ctx, X, &h);
    if (s) {
        spx__error_prefix(ctx, "matrix %s", name);
        return s;
    }
    if ((s = operand_make(ctx, h, op, pattern, name, o))) {
        spx_matrix_destroy(h);
        return s;
    }
    if (o->copy) {
        spx_matrix_destroy(h);
    } else {
        o->copy = h;
        o->bytes = compressed_bytes(h);
    }
    return SPX_OK;
}

/* o->view = CSR of op(X); values dropped when `pattern`. COO duplicates are
 * an error unless only the pattern matters: no semiring combines them. */
static spx_status operand_make(spx_ctx *ctx, const spx_matrix *X, spx_op op, int pattern,
                               const char *name, operand *o)
{
    memset(o, 0, sizeof *o);
    int trans = op == SPX_OP_TRANSPOSE;
    if (X->memory == SPX_MEM_DEVICE &&
        !((X->format == SPX_CSR && !trans) || (X->format == SPX_CSC && trans)))
        return operand_from_device(ctx, X, op, pattern, name, o);
    spx_matrix base = shallow(X);
    if (pattern) {
        base.dtype = SPX_PATTERN;
        base.values = NULL;
    }
    spx_matrix *csr = NULL;
    spx_status s = SPX_OK;
    switch (X->format) {
    case SPX_CSR:
        if (trans)
            s = spx__compressed_flip(ctx, &base, &o->copy);
        break;
    case SPX_CSC:
        if (!trans)
            s = spx__compressed_flip(ctx, &base, &o->copy);
        break;
    case SPX_COO:
        s = spx__coo_compress(ctx, &base, trans ? SPX_CSC : SPX_CSR,
                              pattern ? SPX_DUP_LAST : SPX_DUP_ERROR, &o->copy);
        break;
    default: /* BSR, SELL: through CSR */
        s = spx__to_csr(ctx, X, &csr);
        if (!s && trans) {
            s = spx__compressed_flip(ctx, csr, &o->copy);
            spx_matrix_destroy(csr);
        } else if (!s) {
            o->copy = csr;
        }
    }
    if (s) {
        spx__error_prefix(ctx, "matrix %s", name);
        return s;
    }
    const spx_matrix *src = o->copy ? o->copy : &base;
    o->bytes = o->copy ? compressed_bytes(o->copy) : 0;
    o->view = shallow(src);
    if (src->format == SPX_CSC) { /* read the CSC arrays of X as the CSR arrays of X^T */
        o->view.format = SPX_CSR;
        o->view.rows = src->cols;
        o->view.cols = src->rows;
    }
    if (pattern) {
        o->view.dtype = SPX_PATTERN;
        o->view.values = NULL;
    }
    return SPX_OK;
}

/* A device view read in place, brought to the host (its values are needed
 * here). */
static spx_status operand_to_host(spx_ctx *ctx, operand *o, const char *name)
{
    spx_matrix *h = NULL;
    spx_status s = spx_matrix_to_host(ctx, &o->view, &h);
    if (s) {
        spx__error_prefix(ctx, "matrix %s", name);
        return s;
    }
    o->copy = h; /* a view read in place made no copy before */
    o->bytes = compressed_bytes(h);
    o->view = shallow(h);
    return SPX_OK;
}

/* OR_AND reads truth values: any nonzero (or NaN) is true. */
static spx_status operand_to_bool(spx_ctx *ctx, operand *o, const char *name)
{
    spx_matrix *v = &o->view;
    if (v->dtype == SPX_PATTERN || v->dtype == SPX_BOOL)
        return SPX_OK;
    spx_status s = v->memory == SPX_MEM_DEVICE ? operand_to_host(ctx, o, name) : SPX_OK;
    if (s || (s = spx__alloc(ctx, &o->values, v->nnz, 1, "bool operand values")))
        return s;
    if (s)
        return s;
    uint8_t *b = o->values;
    for (int64_t p = 0; p < v->nnz; p++)
        b[p] = spx__val_get(v->values, v->dtype, p) != 0.0;
    v->values = b;
    v->dtype = SPX_BOOL;
    o->bytes += v->nnz;
    return SPX_OK;
}

static spx_status operand_widen(spx_ctx *ctx, operand *o)
{
    spx_matrix *v = &o->view;
    spx_status s = spx__alloc(ctx, &o->offsets, v->rows + 1, sizeof(int64_t), "widened offsets");
    if (!s)
        s = spx__alloc(ctx, &o->indices, v->nnz, sizeof(int64_t), "widened indices");
    if (s)
        return s;
    for (int64_t i = 0; i <= v->rows; i++)
        ((int64_t *)o->offsets)[i] = ((const int32_t *)v->offsets)[i];
    for (int64_t p = 0; p < v->nnz; p++)
        ((int64_t *)o->indices)[p] = ((const int32_t *)v->indices)[p];
    v->offsets = o->offsets;
    v->indices = o->indices;
    v->itype = SPX_INDEX_I64;
    o->bytes += (v->rows + 1 + v->nnz) * (int64_t)sizeof(int64_t);
    return SPX_OK;
}

/* Avos values are >= -1; name the first that is not, as an entry of X
 * (v holds the CSR of op(X)). */
spx_status spx__spgemm_check_avos(spx_ctx *ctx, const spx_matrix *v, spx_op op, const char *name)
{
    if (!v->values)
        return SPX_OK;
    if (v->memory == SPX_MEM_DEVICE) { /* read a host copy */
        spx_matrix *h = NULL;
        spx_status s = spx_matrix_to_host(ctx, v, &h);
        if (!s)
            s = spx__spgemm_check_avos(ctx, h, op, name);
        spx_matrix_destroy(h);
        return s;
    }
    for (int64_t i = 0; i < v->rows; i++) {
        int64_t e = spx__idx_get(v->offsets, v->itype, i + 1);
        for (int64_t p = spx__idx_get(v->offsets, v->itype, i); p < e; p++) {
            int64_t x = v->dtype == SPX_I32 ? ((const int32_t *)v->values)[p]
                                            : ((const int64_t *)v->values)[p];
            if (x >= -1)
                continue;
            int64_t j = spx__idx_get(v->indices, v->itype, p);
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "matrix %s: entry (%lld, %lld) holds %lld, not an avos value "
                             "(avos values are >= -1)",
                             name, LL(op == SPX_OP_TRANSPOSE ? j : i),
                             LL(op == SPX_OP_TRANSPOSE ? i : j), LL(x));
        }
    }
    return SPX_OK;
}

static int unsupported_dtype(spx_dtype t)
{
    return t == SPX_F16 || t == SPX_BF16 || spx__dtype_is_complex(t);
}

/* The value type of the product and of C (rules in spx.h). */
static spx_status resolve_type(spx_ctx *ctx, const spx_semiring *sr, const spx_matrix *A,
                               const spx_matrix *B, spx_dtype *type)
{
    const spx_matrix *ops[2] = {A, B};
    const char *names[2] = {"A", "B"};
    if (sr->kind == SPX_SEMIRING_CUSTOM) {
        if (!sr->add || !sr->mul || !sr->add_identity)
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "custom semiring needs add, mul and add_identity (one is NULL)");
        if (!spx__dtype_valid(sr->dtype) || sr->dtype == SPX_PATTERN)
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "custom semiring has value type %d (%s); it needs one with values",
                             (int)sr->dtype, spx_dtype_name(sr->dtype));
        for (int x = 0; x < 2; x++)
            if (ops[x]->dtype != SPX_PATTERN && ops[x]->dtype != sr->dtype)
                return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                                 "the custom semiring is over %s but matrix %s holds %s values",
                                 spx_dtype_name(sr->dtype), names[x],
                                 spx_dtype_name(ops[x]->dtype));
        *type = sr->dtype;
        return SPX_OK;
    }
    const char *name = spx_semiring_name(sr->kind);
    for (int x = 0; x < 2; x++)
        if (unsupported_dtype(ops[x]->dtype))
            return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                             "SpGEMM does not support %s values (matrix %s); convert to f32 or "
                             "f64 first",
                             spx_dtype_name(ops[x]->dtype), names[x]);
    if (sr->kind == SPX_SEMIRING_OR_AND) {
        *type = SPX_BOOL;
        return SPX_OK;
    }
    spx_dtype ta = A->dtype, tb = B->dtype;
    if (sr->kind == SPX_SEMIRING_PLUS_PAIR) { /* counts: bool operands count like patterns */
        ta = ta == SPX_BOOL ? SPX_PATTERN : ta;
        tb = tb == SPX_BOOL ? SPX_PATTERN : tb;
    }
    if (ta != SPX_PATTERN && tb != SPX_PATTERN && ta != tb)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "%s: matrix A holds %s values and B holds %s; they must share a value "
                         "type (convert one)",
                         name, spx_dtype_name(ta), spx_dtype_name(tb));
    spx_dtype t = ta != SPX_PATTERN ? ta : tb != SPX_PATTERN ? tb : SPX_I64;
    if (!spx__semiring_supports(sr->kind, t))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "semiring %s is not defined over %s values; it takes %s", name,
                         spx_dtype_name(t),
                         sr->kind == SPX_SEMIRING_AVOS ? "i32 or i64" : "f32, f64, i32 or i64");
    *type = t;
    return SPX_OK;
}

spx_status spx__spgemm_check_input(spx_ctx *ctx, const spx_matrix *X, const char *name)
{
    spx_status s = spx__check_matrix_arg(ctx, X, name);
    if (s)
        return s;
    if (X->memory != SPX_MEM_DEVICE) {
        if ((s = spx__matrix_ensure_valid(ctx, X)))
            spx__error_prefix(ctx, "matrix %s", name);
        return s;
    }
    if (ctx->backend->kind != SPX_BACKEND_CUDA)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "matrix %s is in device memory; the %s backend needs host memory "
                         "(select the cuda backend)",
                         name, ctx->backend->name);
    if (ctx->validate && X->checked_version != X->version) { /* once per version, on a copy */
        spx_matrix *h = NULL;
        if (!(s = spx_matrix_to_host(ctx, X, &h)))
            s = spx_matrix_check(ctx, h);
        spx_matrix_destroy(h);
        if (s) {
            spx__error_prefix(ctx, "matrix %s", name);
            return s;
        }
        ((spx_matrix *)X)->checked_version = X->version;
    }
    return SPX_OK;
}

static spx_status check_options(spx_ctx *ctx, const spx_spgemm_options *o)
{
    if ((o->op_a != SPX_OP_NONE && o->op_a != SPX_OP_TRANSPOSE) ||
        (o->op_b != SPX_OP_NONE && o->op_b != SPX_OP_TRANSPOSE))
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "op_a = %d, op_b = %d: each must be SPX_OP_NONE or SPX_OP_TRANSPOSE",
                         (int)o->op_a, (int)o->op_b);
    if (o->mask.kind < SPX_MASK_NONE || o->mask.kind > SPX_MASK_STRICT_LOWER)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid mask kind %d", (int)o->mask.kind);
    if (o->mask.kind == SPX_MASK_MATRIX && !o->mask.M)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "mask kind SPX_MASK_MATRIX needs mask.M");
    if (o->mode < SPX_SPGEMM_AUTO || o->mode > SPX_SPGEMM_FAST)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "invalid SpGEMM mode %d", (int)o->mode);
    if (o->memory_budget < 0)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "negative memory_budget %lld",
                         LL(o->memory_budget));
    return SPX_OK;
}

/* The complement of a triangle is the opposite strict/non-strict triangle. */
static spx_mask_kind fold_complement(spx_mask_kind k)
{
    switch (k) {
    case SPX_MASK_UPPER: return SPX_MASK_STRICT_LOWER;
    case SPX_MASK_STRICT_UPPER: return SPX_MASK_LOWER;
    case SPX_MASK_LOWER: return SPX_MASK_STRICT_UPPER;
    case SPX_MASK_STRICT_LOWER: return SPX_MASK_UPPER;
    default: return k;
    }
}

/* The shared path of spx_spgemm (C set) and spx_spgemm_workspace_size
 * (workspace set). */
static spx_status spgemm(spx_ctx *ctx, const spx_semiring *sr, const spx_matrix *A,
                         const spx_matrix *B, const spx_spgemm_options *opts, spx_matrix **C,
                         int64_t *workspace)
{
    if (!ctx)
        return SPX_ERR_INVALID_ARGUMENT;
    if (!sr)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "semiring is NULL");
    if ((int)sr->kind < SPX_SEMIRING_PLUS_TIMES || sr->kind > SPX_SEMIRING_CUSTOM)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "unknown semiring kind %d", (int)sr->kind);
    spx_spgemm_options o = opts ? *opts : (spx_spgemm_options){0};
    spx_status s;
    if ((s = spx__spgemm_check_input(ctx, A, "A")) || (s = spx__spgemm_check_input(ctx, B, "B")) ||
        (s = check_options(ctx, &o)))
        return s;
    int ta = o.op_a == SPX_OP_TRANSPOSE, tb = o.op_b == SPX_OP_TRANSPOSE;
    int64_t m = ta ? A->cols : A->rows, k = ta ? A->rows : A->cols;
    int64_t kb = tb ? B->cols : B->rows, n = tb ? B->rows : B->cols;
    if (k != kb)
        return spx__fail(ctx, SPX_ERR_SHAPE,
                         "inner dimensions differ: op(A) is %lld x %lld but op(B) is %lld x %lld",
                         LL(m), LL(k), LL(kb), LL(n));
    if (A->memory != B->memory)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                         "matrix A is in %s memory and B in %s memory; they must share one",
                         A->memory == SPX_MEM_DEVICE ? "device" : "host",
                         B->memory == SPX_MEM_DEVICE ? "device" : "host");
    const spx_matrix *M = o.mask.kind == SPX_MASK_MATRIX ? o.mask.M : NULL;
    if (M && (s = spx__spgemm_check_input(ctx, M, "mask M")))
        return s;
    if (M && (M->rows != m || M->cols != n))
        return spx__fail(ctx, SPX_ERR_SHAPE, "mask M is %lld x %lld but C is %lld x %lld",
                         LL(M->rows), LL(M->cols), LL(m), LL(n));
    spx_dtype type = SPX_DTYPE_DEFAULT;
    if ((s = resolve_type(ctx, sr, A, B, &type)))
        return s;
    if (o.accum) {
        if ((s = spx__spgemm_check_input(ctx, o.accum, "accum")))
            return s;
        if (o.accum->rows != m || o.accum->cols != n)
            return spx__fail(ctx, SPX_ERR_SHAPE, "accum is %lld x %lld but C is %lld x %lld",
                             LL(o.accum->rows), LL(o.accum->cols), LL(m), LL(n));
        if (o.accum->dtype != type)
            return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT,
                             "accum holds %s values but %s gives %s; they must match",
                             spx_dtype_name(o.accum->dtype), spx_semiring_name(sr->kind),
                             spx_dtype_name(type));
    }
    const spx_backend_vtable *be = ctx->backend;
    if (!be->spgemm)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "the %s backend has no SpGEMM; select the cpu or ref backend", be->name);
    if (sr->kind == SPX_SEMIRING_CUSTOM && be->kind != SPX_BACKEND_CPU &&
        be->kind != SPX_BACKEND_REF)
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "custom semirings run on the cpu and ref backends only, not %s",
                         be->name);

    operand oa, ob, om, oc;
    memset(&om, 0, sizeof om);
    memset(&oc, 0, sizeof oc);
    int pattern = sr->kind == SPX_SEMIRING_PLUS_PAIR;
    int to_bool = sr->kind == SPX_SEMIRING_OR_AND;
    if ((s = operand_make(ctx, A, o.op_a, pattern, "A", &oa)))
        return s;
    if ((s = operand_make(ctx, B, o.op_b, pattern, "B", &ob)))
        goto free_a;
    if ((M && (s = operand_make(ctx, M, SPX_OP_NONE, 1, "mask M", &om))) ||
        (o.accum && (s = operand_make(ctx, o.accum, SPX_OP_NONE, 0, "accum", &oc))) ||
        (to_bool &&
         ((s = operand_to_bool(ctx, &oa, "A")) || (s = operand_to_bool(ctx, &ob, "B")))) ||
        (be->kind != SPX_BACKEND_CUDA && oa.view.itype != ob.view.itype &&
         (s = operand_widen(ctx, oa.view.itype == SPX_INDEX_I32 ? &oa : &ob))))
        goto free_all;
    if (sr->kind == SPX_SEMIRING_AVOS &&
        ((s = spx__spgemm_check_avos(ctx, &oa.view, o.op_a, "A")) ||
         (s = spx__spgemm_check_avos(ctx, &ob.view, o.op_b, "B"))))
        goto free_all;

    int64_t backend_bytes = 0;
    spx_spgemm_args args = {
        .kind = sr->kind,
        .type = type,
        .custom = sr->kind == SPX_SEMIRING_CUSTOM ? sr : NULL,
        .A = &oa.view,
        .B = &ob.view,
        .mask = o.mask.complement ? fold_complement(o.mask.kind) : o.mask.kind,
        .M = M ? &om.view : NULL,
        .complement = o.mask.complement && o.mask.kind <= SPX_MASK_MATRIX,
        .accum = o.accum ? &oc.view : NULL,
        .drop_identity = o.drop_identity != 0,
        .memory_budget = o.memory_budget,
        .operand_bytes = oa.bytes + ob.bytes + om.bytes + oc.bytes,
        .workspace = workspace ? &backend_bytes : NULL,
        .deterministic = o.mode == SPX_SPGEMM_DETERMINISTIC ||
                         (o.mode == SPX_SPGEMM_AUTO && ctx->deterministic),
        .out_memory = A->memory,
        .C = C,
    };
    s = be->spgemm(ctx, &args);
    if (!s && workspace)
        *workspace = args.operand_bytes + backend_bytes;
free_all:
    operand_free(&oc);
    operand_free(&om);
    operand_free(&ob);
free_a:
    operand_free(&oa);
    return s;
}

spx_status spx_spgemm(spx_ctx *ctx, const spx_semiring *sr, const spx_matrix *A,
                      const spx_matrix *B, const spx_spgemm_options *opts, spx_matrix **C)
{
    if (ctx && !C)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "output C is NULL");
    return spgemm(ctx, sr, A, B, opts, C, NULL);
}

spx_status spx_spgemm_workspace_size(spx_ctx *ctx, const spx_semiring *sr, const spx_matrix *A,
                                     const spx_matrix *B, const spx_spgemm_options *opts,
                                     int64_t *bytes)
{
    if (ctx && !bytes)
        return spx__fail(ctx, SPX_ERR_INVALID_ARGUMENT, "bytes is NULL");
    return spgemm(ctx, sr, A, B, opts, NULL, bytes);
}

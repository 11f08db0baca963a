/* spx spgemm / spx closure: products over semirings, and the avos transitive
 * closure, on file matrices. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int read_operand(spx_ctx *ctx, const char *path, spx_dtype dtype, spx_matrix **A)
{
    spx_read_options o = {.dtype = dtype};
    spx_status s = spx_matrix_read(ctx, path, &o, A);
    if (s) {
        fprintf(stderr, "spx %s: %s (%s)\n", cli_command, spx_last_error(ctx), spx_status_name(s));
        return CLI_FAILED;
    }
    return CLI_OK;
}

static int write_result(spx_ctx *ctx, const spx_matrix *C, const char *out)
{
    spx_status s;
    if (out && (s = spx_matrix_write(ctx, C, out))) {
        fprintf(stderr, "spx %s: %s (%s)\n", cli_command, spx_last_error(ctx), spx_status_name(s));
        return CLI_FAILED;
    }
    return CLI_OK;
}

/* Same pattern and values (floats within a relative 1e-6, others exactly)? */
static bool same_matrix(spx_ctx *ctx, const spx_matrix *X, const spx_matrix *R, char *why, size_t len)
{
    spx_matrix *hx = NULL, *hr = NULL, *dx = NULL, *dr = NULL;
    bool ok = false;
    spx_matrix_info ix, ir;
    if (spx_matrix_to_host(ctx, X, &hx) || spx_matrix_to_host(ctx, R, &hr) ||
        spx_matrix_astype(ctx, hx, SPX_F64, SPX_INDEX_I64, &dx) || spx_matrix_astype(ctx, hr, SPX_F64, SPX_INDEX_I64, &dr)) {
        snprintf(why, len, "%s", spx_last_error(ctx));
        goto done;
    }
    spx_matrix_info_get(dx, &ix);
    spx_matrix_info_get(dr, &ir);
    if (ix.nnz != ir.nnz) {
        snprintf(why, len, "%lld entries, reference %lld", (long long)ix.nnz, (long long)ir.nnz);
        goto done;
    }
    spx_matrix_arrays ax, ar;
    spx_matrix_arrays_get(dx, &ax);
    spx_matrix_arrays_get(dr, &ar);
    if (memcmp(ax.offsets, ar.offsets, (size_t)(ix.rows + 1) * 8) ||
        memcmp(ax.indices, ar.indices, (size_t)ix.nnz * 8)) {
        snprintf(why, len, "the patterns differ");
        goto done;
    }
    for (int64_t p = 0; p < ix.nnz; p++) {
        double a = ((double *)ax.values)[p], b = ((double *)ar.values)[p];
        if (!(a == b || fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b)))) {
            snprintf(why, len, "entry %lld is %.17g, reference %.17g", (long long)p, a, b);
            goto done;
        }
    }
    ok = true;
done:
    spx_matrix_destroy(hx);
    spx_matrix_destroy(hr);
    spx_matrix_destroy(dx);
    spx_matrix_destroy(dr);
    return ok;
}

int cmd_spgemm(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "check|complement-mask",
                        "semiring|mask|mode|backend|out|dtype|op-a|op-b|threads", 2,
                        "expected two matrix files A and B", &a);
    if (r)
        return r;
    spx_semiring_kind kind;
    const char *sname = cli_str(&a, "semiring", "plus_times"), *mname = cli_str(&a, "mask", NULL);
    const char *mode = cli_str(&a, "mode", NULL), *out = cli_str(&a, "out", NULL);
    const char *opa = cli_str(&a, "op-a", "n"), *opb = cli_str(&a, "op-b", "n");
    spx_dtype dtype;
    int64_t threads;
    if (spx_semiring_from_name(sname, &kind) != SPX_OK || kind == SPX_SEMIRING_CUSTOM) {
        cli_usage_error("unknown semiring '%s' (plus_times, min_plus, max_plus, max_times, min_times, "
                        "or_and, plus_pair, avos)", sname);
        return CLI_USAGE;
    }
    if (!cli_dtype(&a, "dtype", &dtype) || !cli_i64(&a, "threads", 0, &threads))
        return CLI_USAGE;
    spx_spgemm_options o = {0};
    if (mode && strcmp(mode, "deterministic") && strcmp(mode, "fast")) {
        cli_usage_error("--mode expects deterministic or fast, got '%s'", mode);
        return CLI_USAGE;
    }
    if (mode)
        o.mode = mode[0] == 'd' ? SPX_SPGEMM_DETERMINISTIC : SPX_SPGEMM_FAST;
    if ((strcmp(opa, "n") && strcmp(opa, "t")) || (strcmp(opb, "n") && strcmp(opb, "t"))) {
        cli_usage_error("--op-a and --op-b expect n or t");
        return CLI_USAGE;
    }
    o.op_a = opa[0] == 't' ? SPX_OP_TRANSPOSE : SPX_OP_NONE;
    o.op_b = opb[0] == 't' ? SPX_OP_TRANSPOSE : SPX_OP_NONE;
    o.mask.complement = cli_flag(&a, "complement-mask");
    static const struct {
        const char *name;
        spx_mask_kind kind;
    } masks[] = {{"upper", SPX_MASK_UPPER}, {"strict-upper", SPX_MASK_STRICT_UPPER}, {"lower", SPX_MASK_LOWER},
                 {"strict-lower", SPX_MASK_STRICT_LOWER}};
    for (size_t i = 0; mname && i < sizeof masks / sizeof masks[0]; i++)
        if (strcmp(mname, masks[i].name) == 0)
            o.mask.kind = masks[i].kind;
    if (o.mask.complement && !mname) {
        cli_usage_error("--complement-mask needs --mask");
        return CLI_USAGE;
    }

    spx_ctx *ctx = NULL, *ref = NULL;
    spx_matrix *A = NULL, *B = NULL, *M = NULL, *C = NULL, *R = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    spx_ctx_set_num_threads(ctx, (int)threads);
    if ((r = read_operand(ctx, a.pos[0], dtype, &A)) || (r = read_operand(ctx, a.pos[1], dtype, &B)))
        goto done;
    if (mname && o.mask.kind == SPX_MASK_NONE) { /* a mask file */
        if ((r = read_operand(ctx, mname, SPX_PATTERN, &M)))
            goto done;
        o.mask.kind = SPX_MASK_MATRIX;
        o.mask.M = M;
    }
    spx_semiring sr = spx_semiring_builtin(kind);
    double t0 = cli_now_ms();
    spx_status s = spx_spgemm(ctx, &sr, A, B, &o, &C);
    double ms = cli_now_ms() - t0;
    if (s) {
        r = cli_fail(ctx, s, "spgemm");
        goto done;
    }
    spx_matrix_info ia, ib, ic;
    spx_matrix_info_get(A, &ia);
    spx_matrix_info_get(B, &ib);
    spx_matrix_info_get(C, &ic);
    printf("spgemm: %s (%lld x %lld, nnz %lld) x %s (%lld x %lld, nnz %lld), semiring %s, mask %s%s, backend %s\n",
           a.pos[0], (long long)ia.rows, (long long)ia.cols, (long long)ia.nnz, a.pos[1], (long long)ib.rows,
           (long long)ib.cols, (long long)ib.nnz, spx_semiring_name(kind), mname ? mname : "none",
           o.mask.complement ? " (complemented)" : "", spx_backend_name(spx_ctx_backend(ctx)));
    printf("result: %lld x %lld, nnz %lld, %s values; %.3f ms (host clock, includes transfers)\n",
           (long long)ic.rows, (long long)ic.cols, (long long)ic.nnz, spx_dtype_name(ic.dtype), ms);
    if (cli_flag(&a, "check")) {
        char why[256];
        if (spx_ctx_create(&ref) != SPX_OK) {
            fprintf(stderr, "spx spgemm: cannot create the reference context\n");
            r = CLI_FAILED;
            goto done;
        }
        spx_ctx_set_backend(ref, SPX_BACKEND_REF);
        if ((s = spx_spgemm(ref, &sr, A, B, &o, &R))) {
            r = cli_fail(ref, s, "reference spgemm");
            goto done;
        }
        bool ok = same_matrix(ref, C, R, why, sizeof why);
        printf("check: %s the ref backend%s%s\n", ok ? "same as" : "DIFFERS from", ok ? "" : ": ", ok ? "" : why);
        if (!ok)
            r = CLI_FAILED;
    }
    if (!r)
        r = write_result(ctx, C, out);
done:
    spx_matrix_destroy(A);
    spx_matrix_destroy(B);
    spx_matrix_destroy(M);
    spx_matrix_destroy(C);
    spx_matrix_destroy(R);
    spx_ctx_destroy(ref);
    spx_ctx_destroy(ctx);
    return r;
}

int cmd_closure(int argc, char **argv)
{
    cli_args a;
    int r = cli_parse_n(argc, argv, "", "semiring|backend|out|dtype|threads", 1,
                        "expected one matrix file A", &a);
    if (r)
        return r;
    const char *sname = cli_str(&a, "semiring", "avos");
    if (strcmp(sname, "avos")) {
        cli_usage_error("closure is defined for the avos semiring only (got '%s')", sname);
        return CLI_USAGE;
    }
    spx_dtype dtype;
    int64_t threads;
    if (!cli_dtype(&a, "dtype", &dtype) || !cli_i64(&a, "threads", 0, &threads))
        return CLI_USAGE;
    spx_ctx *ctx = NULL;
    spx_matrix *A = NULL, *C = NULL;
    if ((r = cli_context(&a, &ctx)))
        return r;
    spx_ctx_set_num_threads(ctx, (int)threads);
    if ((r = read_operand(ctx, a.pos[0], dtype, &A)))
        goto done;
    int iterations = 0;
    double t0 = cli_now_ms();
    spx_status s = spx_avos_closure(ctx, A, &C, &iterations);
    double ms = cli_now_ms() - t0;
    if (s) {
        r = cli_fail(ctx, s, "closure");
        goto done;
    }
    spx_matrix_info ia, ic;
    spx_matrix_info_get(A, &ia);
    spx_matrix_info_get(C, &ic);
    printf("closure: %s (%lld x %lld, nnz %lld) -> nnz %lld after %d squarings, %.3f ms, backend %s\n", a.pos[0],
           (long long)ia.rows, (long long)ia.cols, (long long)ia.nnz, (long long)ic.nnz, iterations, ms,
           spx_backend_name(spx_ctx_backend(ctx)));
    r = write_result(ctx, C, cli_str(&a, "out", NULL));
done:
    spx_matrix_destroy(A);
    spx_matrix_destroy(C);
    spx_ctx_destroy(ctx);
    return r;
}

/* Argument parsing and shared helpers of the spx tool. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *cli_command = "";

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "spx %s: ", cli_command);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run 'spx help' for usage)\n");
}

int cli_fail(spx_ctx *ctx, spx_status s, const char *what)
{
    fprintf(stderr, "spx %s: %s: %s (%s)\n", cli_command, what, spx_last_error(ctx),
            spx_status_name(s));
    return CLI_FAILED;
}

static bool in_list(const char *name, size_t len, const char *list)
{
    while (list && *list) {
        const char *bar = strchr(list, '|');
        size_t n = bar ? (size_t)(bar - list) : strlen(list);
        if (n == len && strncmp(list, name, len) == 0)
            return true;
        list = bar ? bar + 1 : NULL;
    }
    return false;
}

int cli_parse(int argc, char **argv, const char *flags, const char *values, cli_args *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (s[0] != '-' || s[1] != '-' || s[2] == '\0') {
            if (out->npos == (int)(sizeof out->pos / sizeof out->pos[0])) {
                cli_usage_error("too many arguments ('%s')", s);
                return CLI_USAGE;
            }
            out->pos[out->npos++] = s;
            continue;
        }
        const char *name = s + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (out->nopt == CLI_MAX_OPTIONS) {
            cli_usage_error("too many options (at most %d)", CLI_MAX_OPTIONS);
            return CLI_USAGE;
        }
        const char *value = NULL;
        if (in_list(name, len, flags)) {
            if (eq) {
                cli_usage_error("option --%.*s takes no value", (int)len, name);
                return CLI_USAGE;
            }
        } else if (in_list(name, len, values)) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                cli_usage_error("option --%.*s needs a value", (int)len, name);
                return CLI_USAGE;
            }
        } else {
            cli_usage_error("unknown option --%.*s", (int)len, name);
            return CLI_USAGE;
        }
        if (len >= sizeof out->opt[0].name) {
            cli_usage_error("option --%.*s is too long", (int)len, name);
            return CLI_USAGE;
        }
        memcpy(out->opt[out->nopt].name, name, len);
        out->opt[out->nopt].name[len] = '\0';
        out->opt[out->nopt].value = value;
        out->nopt++;
    }
    return CLI_OK;
}

static int find(cli_args *a, const char *name)
{
    int found = -1;
    for (int i = 0; i < a->nopt; i++)
        if (strcmp(a->opt[i].name, name) == 0) {
            a->opt[i].used = true;
            found = i; /* the last occurrence wins */
        }
    return found;
}

int cli_parse_n(int argc, char **argv, const char *flags, const char *values, int npos,
                const char *expected, cli_args *out)
{
    int r = cli_parse(argc, argv, flags, values, out);
    if (r || out->npos == npos || (in_list("help", 4, flags) && cli_flag(out, "help")))
        return r;
    if (npos == 0)
        cli_usage_error("unexpected argument '%s'", out->pos[0]);
    else
        cli_usage_error("%s", expected);
    return CLI_USAGE;
}

bool cli_flag(cli_args *a, const char *name) { return find(a, name) >= 0; }

const char *cli_str(cli_args *a, const char *name, const char *def)
{
    int i = find(a, name);
    return i >= 0 ? a->opt[i].value : def;
}

bool cli_i64(cli_args *a, const char *name, int64_t def, int64_t *out)
{
    const char *s = cli_str(a, name, NULL);
    if (!s) {
        *out = def;
        return true;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) {
        cli_usage_error("--%s expects an integer, got '%s'", name, s);
        return false;
    }
    *out = v;
    return true;
}

bool cli_u64(cli_args *a, const char *name, uint64_t def, uint64_t *out)
{
    const char *s = cli_str(a, name, NULL);
    if (!s) {
        *out = def;
        return true;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') {
        cli_usage_error("--%s expects a non-negative integer, got '%s'", name, s);
        return false;
    }
    *out = v;
    return true;
}

bool cli_f64(cli_args *a, const char *name, double def, double *out)
{
    const char *s = cli_str(a, name, NULL);
    if (!s) {
        *out = def;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end) {
        cli_usage_error("--%s expects a number, got '%s'", name, s);
        return false;
    }
    *out = v;
    return true;
}

int cli_context(cli_args *a, spx_ctx **ctx)
{
    spx_backend b = SPX_BACKEND_AUTO;
    const char *name = cli_str(a, "backend", NULL);
    if (name && spx_backend_from_name(name, &b) != SPX_OK) {
        cli_usage_error("unknown backend '%s' (expected ref, cpu, cuda or auto)", name);
        return CLI_USAGE;
    }
    spx_status s = spx_ctx_create(ctx);
    if (s) {
        fprintf(stderr, "spx %s: cannot create a context (%s)\n", cli_command, spx_status_name(s));
        return CLI_FAILED;
    }
    if (name && (s = spx_ctx_set_backend(*ctx, b))) {
        int r = cli_fail(*ctx, s, "selecting the backend");
        spx_ctx_destroy(*ctx);
        *ctx = NULL;
        return r;
    }
    return CLI_OK;
}

bool cli_dtype(cli_args *a, const char *name, spx_dtype *out)
{
    const char *s = cli_str(a, name, NULL);
    *out = SPX_DTYPE_DEFAULT;
    if (s && spx_dtype_from_name(s, out) != SPX_OK) {
        cli_usage_error("unknown value type '%s' (f32, f64, f16, bf16, i32, i64, bool, c64, c128, pattern)", s);
        return false;
    }
    return true;
}

bool cli_index_type(cli_args *a, spx_index_type *out)
{
    const char *s = cli_str(a, "index", NULL);
    *out = SPX_INDEX_DEFAULT;
    if (!s)
        return true;
    if (strcmp(s, "i32") == 0 || strcmp(s, "int32") == 0)
        *out = SPX_INDEX_I32;
    else if (strcmp(s, "i64") == 0 || strcmp(s, "int64") == 0)
        *out = SPX_INDEX_I64;
    else {
        cli_usage_error("unknown index type '%s' (i32 or i64)", s);
        return false;
    }
    return true;
}

bool cli_format_params(cli_args *a, spx_format *fmt, spx_format_params *p)
{
    memset(p, 0, sizeof *p);
    *fmt = SPX_FORMAT_DEFAULT;
    const char *f = cli_str(a, "format", NULL);
    if (f && spx_format_from_name(f, fmt) != SPX_OK) {
        cli_usage_error("unknown format '%s' (coo, csr, csc, bsr, sell)", f);
        return false;
    }
    const char *blk = cli_str(a, "block", NULL);
    if (blk) {
        long long r, c;
        char x;
        if (sscanf(blk, "%lld%c%lld", &r, &x, &c) != 3 || (x != 'x' && x != 'X') || r < 1 || c < 1) {
            cli_usage_error("--block expects RxC with positive R and C, got '%s'", blk);
            return false;
        }
        p->block_rows = r;
        p->block_cols = c;
    }
    int64_t c = 0, sigma = 0;
    if (!cli_i64(a, "sell-c", 0, &c) || !cli_i64(a, "sigma", 0, &sigma))
        return false;
    if (c < 0 || sigma < 0) {
        cli_usage_error("--sell-c and --sigma must be positive");
        return false;
    }
    p->sell_c = c;
    p->sell_sigma = sigma;
    return true;
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int cli_cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

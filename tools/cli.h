/* Shared pieces of the spx command-line tool: argument parsing, messages,
 * timing. Exit status: 0 ok, 1 bad input or failed operation, 2 usage error. */
#ifndef SPX_CLI_H
#define SPX_CLI_H

#include "spx.h"

#include <stdbool.h>
#include <stdint.h>

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* The options one command takes (a benchmark names each matrix with one). */
#define CLI_MAX_OPTIONS 512

/* Parsed "--name value" / "--name=value" / "--flag" options plus positionals. */
typedef struct cli_args {
    int npos;
    const char *pos[8];
    int nopt;
    struct {
        char name[32];     /* without the leading dashes */
        const char *value; /* NULL for flags */
        bool used;
    } opt[CLI_MAX_OPTIONS];
} cli_args;

/* Split argv (after the command word). flags lists the options that take no
 * value, separated by '|' ("json|check"); values lists those that take one. An
 * option in neither list is a usage error. Returns CLI_OK or CLI_USAGE. */
int cli_parse(int argc, char **argv, const char *flags, const char *values, cli_args *out);
/* cli_parse, then exactly npos positionals, else a usage error: `expected`
 * ("expected one matrix file"), or with npos 0 the first unexpected
 * argument. A set --help flag skips the count (the command prints its help). */
int cli_parse_n(int argc, char **argv, const char *flags, const char *values, int npos,
                const char *expected, cli_args *out);
bool cli_flag(cli_args *a, const char *name);
const char *cli_str(cli_args *a, const char *name, const char *def);
/* Numeric options: on a malformed value print a usage error and return false. */
bool cli_i64(cli_args *a, const char *name, int64_t def, int64_t *out);
bool cli_f64(cli_args *a, const char *name, double def, double *out);
bool cli_u64(cli_args *a, const char *name, uint64_t def, uint64_t *out);

/* Messages on stderr, prefixed "spx <cmd>: ". */
void cli_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Report a failed library call: the context's message. Returns CLI_FAILED. */
int cli_fail(spx_ctx *ctx, spx_status s, const char *what);

/* Context with the backend named by --backend (or auto). */
int cli_context(cli_args *a, spx_ctx **ctx);
/* Common value/format option parsing. */
bool cli_dtype(cli_args *a, const char *name, spx_dtype *out);
bool cli_index_type(cli_args *a, spx_index_type *out);
bool cli_format_params(cli_args *a, spx_format *fmt, spx_format_params *params);

double cli_now_ms(void);
int cli_cmp_double(const void *x, const void *y);

/* The commands. */
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_spmm(int argc, char **argv);
int cmd_spgemm(int argc, char **argv);
int cmd_closure(int argc, char **argv);
/* spx bench spmm|spgemm (CUDA builds; otherwise it says so and fails). */
int cmd_bench(int argc, char **argv);
int cmd_bench_spgemm(int argc, char **argv);

extern const char *cli_command;

#endif

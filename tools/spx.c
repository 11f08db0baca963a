/* spx: command-line front end of the library. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: spx COMMAND [ARGS]\n"
            "\n"
            "  info FILE [--json] [--format F]          shape, format and statistics\n"
            "  convert IN OUT [--format F] [--block RxC] [--sell-c C] [--sigma S]\n"
            "                                           .mtx/.smtx/.spx in, .mtx/.spx out\n"
            "  spmm A (--n N [--seed S] | --b B.mtx) [--out C.mtx] [--backend ref|cpu|cuda]\n"
            "       [--check] [--op n|t] [--alpha X] [--beta Y] [--dtype T] [--format F]\n"
            "       [--repeat R] [--threads T] [--alg A] [--precision P] [--explain] [--deterministic]\n"
            "       [--panel W] [--k-slabs S]            C = alpha op(A) B + beta C\n"
            "  spgemm A B [--semiring plus_times|min_plus|max_plus|max_times|min_times|or_and|plus_pair|avos]\n"
            "       [--mask upper|strict-upper|lower|strict-lower|M.mtx] [--complement-mask]\n"
            "       [--mode deterministic|fast] [--op-a n|t] [--op-b n|t] [--backend B] [--out C.mtx] [--check]\n"
            "  closure A --semiring avos [--out C.mtx] [--backend B]   transitive closure of a pedigree DAG\n"
            "  gen FAMILY --out FILE [--seed S] [--dtype T] [--index i32|i64] ...\n"
            "       uniform --rows R --cols C --per-row K\n"
            "       rmat --scale S --edge-factor E [--a A --b B --c C]\n"
            "       laplacian --dims D --grid N\n"
            "       banded --rows R --cols C --lower L --upper U\n"
            "       block-sparse --rows R --cols C --block RxC --density P\n"
            "       pruned --rows R --cols C --sparsity S\n"
            "       nm --rows R --cols C --nm N:M\n"
            "  bench spmm [--suite quick|full] [--matrix F]... [--gen SPEC]... [--n LIST]\n"
            "       [--algs LIST] [--precision P] [--csv F] [--json F] [--data DIR] ...\n"
            "                                           spx vs cuSPARSE vs cuBLAS (CUDA builds;\n"
            "                                           'spx bench help' lists the options)\n"
            "  bench spgemm [--data DIR] [--matrix F]... [--csv F] ...\n"
            "                                           spx SpGEMM vs cusparseSpGEMM, avos closure\n"
            "                                           (CUDA builds; 'spx bench spgemm --help')\n"
            "  help                                     this text\n"
            "\n"
            "Common options: --dtype f32|f64|f16|bf16|i32|i64|bool|pattern, --index i32|i64,\n"
            "--seed S (values of .smtx files and random operands), --backend ref|cpu|cuda|auto.\n"
            "Exit status: 0 ok, 1 bad input or failed operation, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } cmds[] = {{"info", cmd_info}, {"convert", cmd_convert}, {"spmm", cmd_spmm}, {"gen", cmd_gen},
                {"spgemm", cmd_spgemm}, {"closure", cmd_closure}, {"bench", cmd_bench}};
    const char *c = argv[1];
    if (strcmp(c, "help") == 0 || strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(c, cmds[i].name) == 0) {
            cli_command = c;
            return cmds[i].run(argc - 2, argv + 2);
        }
    fprintf(stderr, "spx: unknown command '%s'\n", c);
    usage(stderr);
    return CLI_USAGE;
}

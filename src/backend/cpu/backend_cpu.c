/* The CPU backend: OpenMP kernels. */
#include "backend/cpu/cpu.h"

const spx_backend_vtable spx__backend_cpu = {
    .kind = SPX_BACKEND_CPU,
    .name = "cpu",
    .spmm = spx__cpu_spmm,
};

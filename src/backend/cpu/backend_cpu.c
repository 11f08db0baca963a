/* The CPU backend: OpenMP kernels. */
#include "backend/cpu/cpu.h"
#include "backend/spgemm_common.h"

const spx_backend_vtable spx__backend_cpu = {
    .kind = SPX_BACKEND_CPU,
    .name = "cpu",
    .spgemm = spx__cpu_spgemm,
    .spmm = spx__cpu_spmm,
};

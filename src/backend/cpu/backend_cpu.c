/* The CPU backend: OpenMP kernels. */
#include "core/core.h"

const spx_backend_vtable spx__backend_cpu = {
    .kind = SPX_BACKEND_CPU,
    .name = "cpu",
};

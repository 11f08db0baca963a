/* The reference backend: serial, float64 accumulation, obviously correct. */
#include "backend/ref/ref.h"

const spx_backend_vtable spx__backend_ref = {
    .kind = SPX_BACKEND_REF,
    .name = "ref",
    .spmm = spx__ref_spmm,
};

/* The reference backend: serial, float64 accumulation, obviously correct. */
#include "backend/ref/ref.h"
#include "backend/spgemm_common.h"

const spx_backend_vtable spx__backend_ref = {
    .kind = SPX_BACKEND_REF,
    .name = "ref",
    .spgemm = spx__ref_spgemm,
    .spmm = spx__ref_spmm,
};

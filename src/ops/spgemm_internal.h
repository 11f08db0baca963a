/* Pieces of ops/spgemm.c that the avos closure (ops/avos_closure.c) shares. */
#ifndef SPX_OPS_SPGEMM_INTERNAL_H
#define SPX_OPS_SPGEMM_INTERNAL_H

#include "format/matrix.h"

/* X is non-NULL and valid; a device matrix only on the cuda backend (checked
 * on a host copy once per version). name goes into messages. */
spx_status spx__spgemm_check_input(spx_ctx *ctx, const spx_matrix *X, const char *name);

/* Every value of v (the CSR of op(X), host or device) is an avos value
 * (>= -1); the message names the first that is not as an entry of X. */
spx_status spx__spgemm_check_avos(spx_ctx *ctx, const spx_matrix *v, spx_op op, const char *name);

#endif

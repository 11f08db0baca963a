/* Internal helpers for dense operands. */
#ifndef SPX_FORMAT_DENSE_H
#define SPX_FORMAT_DENSE_H

#include "core/core.h"

/* Validate a dense descriptor: non-NULL, non-negative shape, ld large enough,
 * data present when non-empty, known dtype/layout/memory. name is used in messages. */
spx_status spx__check_dense(spx_ctx *ctx, const spx_dense *D, const char *name);

/* Offset in elements of (i, j). */
static inline int64_t spx__dense_offset(const spx_dense *D, int64_t i, int64_t j)
{
    return D->layout == SPX_ROW_MAJOR ? i * D->ld + j : j * D->ld + i;
}

#endif

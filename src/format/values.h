/* Converting values between value types: the rules of spx_matrix_astype,
 * shared with spx_matrix_to_dense. */
#ifndef SPX_FORMAT_VALUES_H
#define SPX_FORMAT_VALUES_H

#include "core/core.h"

/* Whether the n values of src (type from) can all be stored as type to:
 * complex to a non-complex value type is SPX_ERR_UNSUPPORTED; an integer
 * target needs integral values (else SPX_ERR_INVALID_ARGUMENT; NaN included)
 * in its range (else SPX_ERR_OVERFLOW; infinities included). The message
 * names the first offending value and its position. Pattern: always fine. */
spx_status spx__values_check(spx_ctx *ctx, const void *src, spx_dtype from, spx_dtype to,
                             int64_t n);

/* Store value p of src (type from; pattern reads as 1) as value q of dst
 * (type to; nothing is written for pattern). Floating-point narrowing rounds
 * once to nearest even (to infinity past the range); real to complex gets a
 * zero imaginary part; bool is 0/1 and any nonzero (or NaN) becomes true.
 * The value must have passed spx__values_check. */
void spx__value_convert(const void *src, spx_dtype from, int64_t p, void *dst, spx_dtype to,
                        int64_t q);

#endif

/* Internal conversion entry points shared by format, io and backends. */
#ifndef SPX_FORMAT_CONVERT_H
#define SPX_FORMAT_CONVERT_H

#include "format/matrix.h"

/* COO (any order, duplicates allowed) -> CSR or CSC (sorted, duplicates
 * combined by dup). Indices are range-checked. */
spx_status spx__coo_compress(spx_ctx *ctx, const spx_matrix *A, spx_format to, spx_dup_policy dup,
                             spx_matrix **out);
/* CSR <-> CSC (the same entries, compressed the other way). */
spx_status spx__compressed_flip(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
/* CSR -> COO sorted by (row, column); CSC -> COO sorted by (column, row). */
spx_status spx__compressed_to_coo(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
/* BSR and SELL (convert_blocked.c); inputs must be valid.
 * CSR -> BSR: br x bc blocks (any shape >= 1), a block stored when any entry
 * falls in it, zeros elsewhere; SPX_ERR_OVERFLOW if the slots do not fit.
 * BSR -> CSR: every slot inside the matrix becomes an entry (explicit zeros
 * kept), padding dropped.
 * CSR -> SELL: rows longest first within each sigma window (ties in row
 * order), padding slots column -1 and value 0.
 * SELL -> CSR: rows in original order, sorted; a repeated column in a row is
 * SPX_ERR_INVALID_MATRIX. */
spx_status spx__csr_to_bsr(spx_ctx *ctx, const spx_matrix *A, int64_t br, int64_t bc,
                           spx_matrix **out);
spx_status spx__bsr_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
spx_status spx__csr_to_sell(spx_ctx *ctx, const spx_matrix *A, int64_t c, int64_t sigma,
                            spx_matrix **out);
spx_status spx__sell_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);
/* SPX_ERR_INVALID_ARGUMENT unless dup is one of the spx_dup_policy values. */
spx_status spx__check_dup_policy(spx_ctx *ctx, spx_dup_policy dup);
/* Any format -> CSR (a copy when A is already CSR). */
spx_status spx__to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out);

#endif

/* Conversions into and out of BSR and SELL-C-sigma. */
#include "format/convert.h"

spx_status spx__csr_to_bsr(spx_ctx *ctx, const spx_matrix *A, int64_t br, int64_t bc,
                           spx_matrix **out)
{
    (void)A; (void)br; (void)bc; (void)out;
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "CSR to BSR conversion is not implemented yet");
}

spx_status spx__bsr_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    (void)A; (void)out;
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "BSR to CSR conversion is not implemented yet");
}

spx_status spx__csr_to_sell(spx_ctx *ctx, const spx_matrix *A, int64_t c, int64_t sigma,
                            spx_matrix **out)
{
    (void)A; (void)c; (void)sigma; (void)out;
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "CSR to SELL conversion is not implemented yet");
}

spx_status spx__sell_to_csr(spx_ctx *ctx, const spx_matrix *A, spx_matrix **out)
{
    (void)A; (void)out;
    return spx__fail(ctx, SPX_ERR_UNSUPPORTED, "SELL to CSR conversion is not implemented yet");
}

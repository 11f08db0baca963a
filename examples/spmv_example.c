/* Build a small CSR matrix over our own arrays, multiply it by a vector and a
 * dense matrix, and print the results. Links an installed spx. */
#include <spx.h>
#include <stdio.h>

int main(void)
{
    /* 3 x 4:  [1 0 2 0; 0 0 3 0; 4 5 0 6] */
    int32_t row_offsets[] = {0, 2, 3, 6};
    int32_t col_indices[] = {0, 2, 2, 0, 1, 3};
    float values[] = {1, 2, 3, 4, 5, 6};
    float x[] = {1, 1, 1, 1}, y[3] = {0};

    spx_ctx *ctx;
    spx_matrix *A;
    if (spx_ctx_create(&ctx) != SPX_OK)
        return 1;
    spx_status s = spx_matrix_wrap_csr(ctx, 3, 4, 6, row_offsets, col_indices, values,
                                       SPX_INDEX_I32, SPX_F32, SPX_MEM_HOST, &A);
    if (s == SPX_OK) {
        spx_dense xv = spx_dense_vector(x, 4, SPX_F32, SPX_MEM_HOST);
        spx_dense yv = spx_dense_vector(y, 3, SPX_F32, SPX_MEM_HOST);
        s = spx_spmv(ctx, SPX_OP_NONE, 1.0, A, &xv, 0.0, &yv);
    }
    if (s != SPX_OK) {
        fprintf(stderr, "spx: %s (%s)\n", spx_last_error(ctx), spx_status_name(s));
        return 1;
    }
    printf("backend %s: y = [%g %g %g] (expected [3 3 15])\n",
           spx_backend_name(spx_ctx_backend(ctx)), y[0], y[1], y[2]);
    spx_matrix_destroy(A);
    spx_ctx_destroy(ctx);
    return !(y[0] == 3 && y[1] == 3 && y[2] == 15);
}

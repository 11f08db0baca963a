/* Feeds arbitrary bytes to spx_matrix_read_buffer as "mtx", "smtx" and
 * "spx" (and, for input that starts like a .spx file, again with its
 * checksum recomputed so that the header and structure checks behind the
 * checksum are reached). Whatever is accepted must pass spx_matrix_check;
 * nothing may leak; allocations over 32 MiB fail (and must fail cleanly). */
#include "core/core.h"
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

static spx_ctx *ctx;

/* Linked with --wrap: every malloc, calloc and realloc of the process comes
 * here; requests over 32 MiB fail, as they would on a small machine. */
#define ALLOC_CAP ((size_t)32 << 20)
void *__real_malloc(size_t n);
void *__real_calloc(size_t c, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t c, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { return n > ALLOC_CAP ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t c, size_t n)
{
    return n && c > ALLOC_CAP / n ? NULL : __real_calloc(c, n);
}
void *__wrap_realloc(void *p, size_t n) { return n > ALLOC_CAP ? NULL : __real_realloc(p, n); }

static void read_one(const void *data, size_t size, const char *kind, const spx_read_options *o)
{
    spx_matrix *A = NULL;
    if (spx_matrix_read_buffer(ctx, data, size, kind, "fuzz", o, &A) == SPX_OK) {
        if (spx_matrix_check(ctx, A) != SPX_OK)
            abort(); /* a reader returned an invalid matrix */
        spx_matrix_destroy(A);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx && spx_ctx_create(&ctx) != SPX_OK)
        abort();
    spx_ctx_set_progress(ctx, 0);
    long live = spx__debug_live_allocations();
    /* the last byte picks options for a second Matrix Market pass */
    spx_read_options o = {0};
    if (size) {
        o.dtype = (spx_dtype)(data[size - 1] % 11);
        o.format = (spx_format)(data[size - 1] / 11 % 4);
        o.index_type = (spx_index_type)(data[size - 1] / 44 % 3);
    }
    read_one(data, size, "mtx", NULL);
    read_one(data, size, "mtx", &o);
    read_one(data, size, "smtx", NULL);
    read_one(data, size, "spx", NULL);
    if (size >= 136 && memcmp(data, spx__spx_magic, 8) == 0) {
        unsigned char *copy = malloc(size);
        if (!copy)
            return 0;
        memcpy(copy, data, size);
        uint64_t h = spx__xxh64_once(copy, size - 8, 0);
        for (int i = 0; i < 8; i++)
            copy[size - 8 + i] = (unsigned char)(h >> (8 * i));
        read_one(copy, size, "spx", NULL);
        free(copy);
    }
    if (spx__debug_live_allocations() != live)
        abort(); /* leak */
    return 0;
}

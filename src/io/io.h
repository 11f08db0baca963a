/* Internal interface of the file readers and writers (src/io): number
 * parsing, whole-file input, atomic output files, the checksum, and the
 * per-format readers that spx_matrix_read dispatches to. */
#ifndef SPX_IO_IO_H
#define SPX_IO_IO_H

#include "format/matrix.h"

#include <stdbool.h>
#include <stdio.h>

/* An input held in memory (not NUL-terminated); name is used in messages. */
typedef struct spx__input {
    const char *data;
    size_t size;
    const char *name;
} spx__input;

/* ---- numbers (numparse.c) ---- */

enum { SPX__NUM_OK = 0, SPX__NUM_SYNTAX = 1, SPX__NUM_RANGE = 2, SPX__NUM_NOMEM = 3 };

static inline bool spx__is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
/* [+-]?digits at p, stopping at the first other character (*endp points
 * there). SPX__NUM_SYNTAX if there are no digits, SPX__NUM_RANGE if the value
 * does not fit int64. */
int spx__parse_i64(const char *p, const char *end, const char **endp, int64_t *out);
/* A decimal real ([+-], digits, optional fraction and exponent) or inf,
 * infinity, nan in any case, correctly rounded to double, or to float when
 * single is set (the result is then exactly a float). Stops like
 * spx__parse_i64. SPX__NUM_RANGE if the magnitude overflows the type;
 * SPX__NUM_NOMEM if a very long token could not be copied. */
int spx__parse_real(const char *p, const char *end, bool single, const char **endp, double *out);
/* Printable copy of the whitespace-delimited token at p, for messages. */
const char *spx__token_text(const char *p, const char *end, char *buf, size_t n);

/* ---- files (files.c) ---- */

/* Read a whole file into a new spx__alloc'd buffer. SPX_ERR_IO names the
 * path and the system's reason. */
spx_status spx__file_load(spx_ctx *ctx, const char *path, char **data, size_t *size);
/* Case-insensitive test of a path's extension (ext includes the dot). */
bool spx__has_extension(const char *path, const char *ext);

/* ---- checksum: XXH64 (checksum.c) ---- */

typedef struct spx__xxh64 {
    uint64_t v[4];
    uint64_t total;
    unsigned char buf[32];
    size_t buflen;
} spx__xxh64;
void spx__xxh64_init(spx__xxh64 *h, uint64_t seed);
void spx__xxh64_update(spx__xxh64 *h, const void *data, size_t n);
uint64_t spx__xxh64_digest(const spx__xxh64 *h);
uint64_t spx__xxh64_once(const void *data, size_t n, uint64_t seed);

/* ---- output files written atomically (outfile.c) ---- */

/* Written to a temporary file in the destination's folder, renamed over
 * path on commit; abort (or a failed commit) removes the temporary. If hash
 * is set, the bytes given to spx__out_write also feed it. */
typedef struct spx__outfile {
    const char *path;
    char *tmp_path;
    int fd;
    char *buf;
    size_t len, cap;
    spx__xxh64 *hash; /* optional */
} spx__outfile;

spx_status spx__out_open(spx_ctx *ctx, const char *path, spx__outfile *o);
spx_status spx__out_write(spx_ctx *ctx, spx__outfile *o, const void *p, size_t n);
/* Room for n bytes (n <= 4096) in the buffer; after filling, spx__out_advance. */
spx_status spx__out_reserve(spx_ctx *ctx, spx__outfile *o, size_t n, char **where);
static inline void spx__out_advance(spx__outfile *o, size_t used) { o->len += used; }
spx_status spx__out_commit(spx_ctx *ctx, spx__outfile *o);
void spx__out_abort(spx__outfile *o);

/* ---- readers and writers (one per format) ---- */

/* Resolve the options shared by every reader (NULL -> defaults) and validate them. */
spx_status spx__read_options(spx_ctx *ctx, const spx_read_options *opts, spx_read_options *out);

spx_status spx__mtx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                         spx_matrix **out);
spx_status spx__smtx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                          spx_matrix **out);
spx_status spx__spx_read(spx_ctx *ctx, const spx__input *in, const spx_read_options *opts,
                         spx_matrix **out);
spx_status spx__mtx_write(spx_ctx *ctx, const spx_matrix *A, const char *path);
spx_status spx__spx_write(spx_ctx *ctx, const spx_matrix *A, const char *path);

/* A finished COO: returned as is when the target is COO and it is already
 * sorted by (row, column) without duplicates, else converted (duplicates
 * combined by dup). Takes ownership of coo. */
spx_status spx__io_finish_coo(spx_ctx *ctx, spx_matrix *coo, spx_format format,
                              spx_dup_policy dup, spx_matrix **out);
/* True if a COO matrix is sorted by (row, column) and has no duplicates. */
bool spx__coo_is_canonical(const spx_matrix *A);

/* The binary container's magic (8 bytes). */
extern const char spx__spx_magic[8];

#endif

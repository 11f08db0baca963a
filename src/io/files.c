/* Whole-file input and extension tests. */
#include "io/io.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

bool spx__has_extension(const char *path, const char *ext)
{
    size_t n = strlen(path), m = strlen(ext);
    return n > m && strcasecmp(path + n - m, ext) == 0;
}

spx_status spx__file_load(spx_ctx *ctx, const char *path, char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return spx__fail(ctx, SPX_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return spx__fail(ctx, SPX_ERR_IO, "cannot read '%s': %s", path, strerror(EISDIR));
    }
    /* regular files are read in one piece; pipes and devices grow the buffer */
    size_t cap = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1u << 16;
    size_t n = 0;
    char *buf = NULL;
    spx_status s = spx__alloc(ctx, (void **)&buf, (int64_t)cap, 1, "file contents");
    while (!s) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f))
                s = spx__fail(ctx, SPX_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
        char *bigger = spx__realloc(buf, cap * 2);
        if (!bigger) {
            s = spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory reading '%s' (%zu bytes)",
                          path, cap * 2);
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (s) {
        spx__free(buf);
        return s;
    }
    *data = buf;
    *size = n;
    return SPX_OK;
}

/* A small test harness: checks that report file, line and the random seed,
 * data-folder lookup, and dense comparisons by relative norm error. */
#ifndef SPX_TESTUTIL_H
#define SPX_TESTUTIL_H

#include "spx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int test_failures;
static uint64_t test_seed;

/* Fresh seed each run unless SPX_TEST_SEED is set; printed on failure. */
static inline void test_init(void)
{
    const char *s = getenv("SPX_TEST_SEED");
    test_seed = s ? strtoull(s, NULL, 0)
                  : ((uint64_t)time(NULL) * 2654435761u) ^ ((uint64_t)getpid() << 17);
}

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            test_failures++;                                                                  \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                   \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fprintf(stderr, " (SPX_TEST_SEED=%llu)\n", (unsigned long long)test_seed);        \
        }                                                                                     \
    } while (0)

/* Require a call to succeed; on failure print the context's message. */
#define CHECK_OK(ctx, call)                                                                   \
    do {                                                                                      \
        spx_status st_ = (call);                                                              \
        if (st_ != SPX_OK) {                                                                  \
            test_failures++;                                                                  \
            fprintf(stderr, "FAIL %s:%d: %s -> %s: %s (SPX_TEST_SEED=%llu)\n", __FILE__,      \
                    __LINE__, #call, spx_status_name(st_), spx_last_error(ctx),               \
                    (unsigned long long)test_seed);                                           \
        }                                                                                     \
    } while (0)

/* Require a call to fail with a status and a message containing `needle`. */
#define CHECK_FAILS(ctx, call, status, needle)                                                \
    do {                                                                                      \
        spx_status st_ = (call);                                                              \
        if (st_ != (status) || !strstr(spx_last_error(ctx), (needle))) {                      \
            test_failures++;                                                                  \
            fprintf(stderr, "FAIL %s:%d: %s -> %s \"%s\", expected %s with \"%s\"\n",         \
                    __FILE__, __LINE__, #call, spx_status_name(st_), spx_last_error(ctx),     \
                    spx_status_name(status), (needle));                                       \
        }                                                                                     \
    } while (0)

static inline int test_finish(const char *name)
{
    if (test_failures) {
        fprintf(stderr, "%s: %d failure(s) (SPX_TEST_SEED=%llu)\n", name, test_failures,
                (unsigned long long)test_seed);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

static inline int test_is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The shared real-matrix folder: $SPX_DATA_DIR, else ../shared/data beside the
 * source tree, else NULL (tests that need it then say so and skip that part). */
static inline const char *test_shared_data_dir(void)
{
    static char buf[4096];
    const char *env = getenv("SPX_DATA_DIR");
    if (env && test_is_dir(env))
        return env;
    snprintf(buf, sizeof buf, "%s/../shared/data", SPX_SOURCE_DIR);
    if (test_is_dir(buf))
        return buf;
    snprintf(buf, sizeof buf, "%s/shared/data", SPX_SOURCE_DIR);
    if (test_is_dir(buf))
        return buf;
    return NULL;
}

/* Small matrices committed with the tests (always present). */
static inline const char *test_local_data_dir(void) { return SPX_SOURCE_DIR "/tests/data"; }

/* SPX_GPU_TEST_ONLY=key[,key...]: whether to run the section titled name,
 * i.e. its title up to the first ':' (or all of it) is one of the keys. */
static inline int test_section_selected(const char *name)
{
    const char *only = getenv("SPX_GPU_TEST_ONLY");
    if (!only || !*only)
        return 1;
    size_t klen = strcspn(name, ":");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", only);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (strlen(w) == klen && !strncmp(name, w, klen))
            return 1;
    return 0;
}

/* ||a - b|| / ||b|| over n doubles; NaN or Inf anywhere gives INFINITY. */
static inline double test_rel_err(const double *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return INFINITY;
        double d = a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    if (den == 0)
        return sqrt(num);
    return sqrt(num / den);
}

#endif

/* The dense GEMM through cuBLASLt, its algorithms cached per context
 * (dense_gemm.h says why). */
#include "backend/cuda/dense_gemm.h"

#include <cublasLt.h>
#include <stdint.h>
#include <string.h>

#define GEMM_SLOTS 16
#define GEMM_MAX_WORKSPACE ((size_t)32 << 20) /* what cuBLAS itself takes on sm_90 */

/* Everything the algorithm depends on, zero-filled so that memcmp compares. */
typedef struct gemm_key {
    int64_t m, n, k, lda, ldb, ldc;
    int32_t ab_type, c_type, tf32, align_a, align_b, align_c;
} gemm_key;

typedef struct gemm_slot {
    bool used;
    gemm_key key;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
} gemm_slot;

typedef struct gemm_cache {
    cublasLtHandle_t lt;
    gemm_slot slot[GEMM_SLOTS];
    int next; /* the slot a new shape takes (round robin) */
} gemm_cache;

static cudaDataType lt_type(spx_dtype t)
{
    return t == SPX_F64 ? CUDA_R_64F : t == SPX_F16 ? CUDA_R_16F : t == SPX_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* The largest power of two up to 256 that divides the address: cuBLASLt's
 * algorithms assume 256-byte operands unless told otherwise. */
static int32_t alignment(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    int32_t al = 256;
    while (al > 1 && a % (uintptr_t)al)
        al /= 2;
    return al;
}

static void clear_slot(gemm_slot *s)
{
    if (s->op)
        cublasLtMatmulDescDestroy(s->op);
    if (s->la)
        cublasLtMatrixLayoutDestroy(s->la);
    if (s->lb)
        cublasLtMatrixLayoutDestroy(s->lb);
    if (s->lc)
        cublasLtMatrixLayoutDestroy(s->lc);
    memset(s, 0, sizeof *s);
}

void spx__cuda_gemm_release(void *cache)
{
    gemm_cache *c = cache;
    if (!c)
        return;
    for (int i = 0; i < GEMM_SLOTS; i++)
        clear_slot(&c->slot[i]);
    cublasLtDestroy(c->lt);
    spx__free(c);
}

static spx_status lt_fail(spx_ctx *ctx, cublasStatus_t e, const char *what)
{
    return spx__fail(ctx, e == CUBLAS_STATUS_ALLOC_FAILED ? SPX_ERR_OUT_OF_MEMORY : SPX_ERR_BACKEND,
                     "dense GEMM: %s: %s", what, cublasLtGetStatusString(e));
}

static spx_status cache_of(spx_ctx *ctx, gemm_cache **out)
{
    spx_cuda_state *st = spx__cuda(ctx);
    if (!st->gemm) {
        gemm_cache *c = spx__calloc(1, sizeof *c);
        if (!c)
            return spx__fail(ctx, SPX_ERR_OUT_OF_MEMORY, "out of host memory (GEMM cache)");
        cublasStatus_t e = cublasLtCreate(&c->lt);
        if (e != CUBLAS_STATUS_SUCCESS) {
            spx__free(c);
            return lt_fail(ctx, e, "creating a cuBLASLt handle");
        }
        st->gemm = c;
    }
    *out = st->gemm;
    return SPX_OK;
}

spx_status spx__cuda_gemm_start(spx_ctx *ctx)
{
    gemm_cache *c = NULL;
    return cache_of(ctx, &c);
}

/* Descriptors, layouts and the heuristic's first algorithm for key k. */
static spx_status fill_slot(spx_ctx *ctx, gemm_cache *c, gemm_slot *s, const gemm_key *k)
{
    const bool f64 = k->ab_type == SPX_F64;
    const cublasComputeType_t comp = f64                        ? CUBLAS_COMPUTE_64F
                                     : k->ab_type != SPX_F32    ? CUBLAS_COMPUTE_32F
                                     : k->tf32                  ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                : CUBLAS_COMPUTE_32F_PEDANTIC; /* no tf32 */
    const cudaDataType ab = lt_type((spx_dtype)k->ab_type), cc = lt_type((spx_dtype)k->c_type);
    cublasLtMatmulPreference_t pref = NULL;
    cublasStatus_t e;
    memset(s, 0, sizeof *s);
    if ((e = cublasLtMatmulDescCreate(&s->op, comp, f64 ? CUDA_R_64F : CUDA_R_32F)) ||
        (e = cublasLtMatrixLayoutCreate(&s->la, ab, (uint64_t)k->m, (uint64_t)k->k, k->lda)) ||
        (e = cublasLtMatrixLayoutCreate(&s->lb, ab, (uint64_t)k->k, (uint64_t)k->n, k->ldb)) ||
        (e = cublasLtMatrixLayoutCreate(&s->lc, cc, (uint64_t)k->m, (uint64_t)k->n, k->ldc)) ||
        (e = cublasLtMatmulPreferenceCreate(&pref)))
        goto fail;
    const size_t ws = GEMM_MAX_WORKSPACE;
    const uint32_t al[3] = {(uint32_t)k->align_a, (uint32_t)k->align_b, (uint32_t)k->align_c};
    if ((e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws)) ||
        (e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al[0], 4)) ||
        (e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al[1], 4)) ||
        (e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al[2], 4)) ||
        (e = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al[2], 4)))
        goto fail;
    cublasLtMatmulHeuristicResult_t best;
    int found = 0;
    e = cublasLtMatmulAlgoGetHeuristic(c->lt, s->op, s->la, s->lb, s->lc, s->lc, pref, 1, &best, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    pref = NULL;
    if (e != CUBLAS_STATUS_SUCCESS || found < 1) {
        clear_slot(s);
        if (e != CUBLAS_STATUS_SUCCESS)
            return lt_fail(ctx, e, "choosing an algorithm");
        return spx__fail(ctx, SPX_ERR_UNSUPPORTED,
                         "dense GEMM: cuBLASLt has no algorithm for %lld x %lld x %lld with operands aligned to "
                         "%d, %d and %d bytes",
                         (long long)k->m, (long long)k->n, (long long)k->k, k->align_a, k->align_b, k->align_c);
    }
    s->algo = best.algo;
    s->workspace = best.workspaceSize;
    s->key = *k;
    s->used = true;
    return SPX_OK;
fail:
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    clear_slot(s);
    return lt_fail(ctx, e, "describing the GEMM");
}

spx_status spx__cuda_gemm(spx_ctx *ctx, const spx_cuda_gemm *g)
{
    gemm_cache *c = NULL;
    spx_status s = cache_of(ctx, &c);
    if (s)
        return s;
    gemm_key k;
    memset(&k, 0, sizeof k);
    k.m = g->m, k.n = g->n, k.k = g->k, k.lda = g->lda, k.ldb = g->ldb, k.ldc = g->ldc;
    k.ab_type = g->ab_type, k.c_type = g->c_type, k.tf32 = g->tf32;
    k.align_a = alignment(g->A), k.align_b = alignment(g->B), k.align_c = alignment(g->C);
    gemm_slot *slot = NULL;
    for (int i = 0; i < GEMM_SLOTS && !slot; i++)
        if (c->slot[i].used && !memcmp(&c->slot[i].key, &k, sizeof k))
            slot = &c->slot[i];
    if (!slot) { /* a new shape takes the next slot once its algorithm is found */
        gemm_slot fresh;
        if ((s = fill_slot(ctx, c, &fresh, &k)))
            return s;
        slot = &c->slot[c->next];
        c->next = (c->next + 1) % GEMM_SLOTS;
        clear_slot(slot);
        *slot = fresh;
    }
    void *ws = NULL;
    if (slot->workspace && (s = spx__cuda_alloc(ctx, &ws, slot->workspace, "GEMM workspace")))
        return s;
    const float af = (float)g->alpha, bf = (float)g->beta;
    const bool f64 = g->ab_type == SPX_F64;
    cublasStatus_t e = cublasLtMatmul(c->lt, slot->op, f64 ? (const void *)&g->alpha : (const void *)&af, g->A,
                                      slot->la, g->B, slot->lb, f64 ? (const void *)&g->beta : (const void *)&bf,
                                      g->C, slot->lc, g->C, slot->lc, &slot->algo, ws, slot->workspace,
                                      spx__cuda(ctx)->stream);
    spx__cuda_free(ctx, ws); /* stream-ordered reuse: the next user runs after this GEMM */
    return e == CUBLAS_STATUS_SUCCESS ? SPX_OK : lt_fail(ctx, e, "cublasLtMatmul");
}

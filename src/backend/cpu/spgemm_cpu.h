/* CPU SpGEMM internals shared by the driver (spgemm_cpu.c: plan, chunks,
 * threads, output) and the row kernels (spgemm_cpu_rows.c). */
#ifndef SPX_BACKEND_CPU_SPGEMM_CPU_H
#define SPX_BACKEND_CPU_SPGEMM_CPU_H

#include "backend/spgemm_common.h"

/* One thread's accumulator. A row uses either the dense one (a state byte
 * and a value slot per column of C) or a hash table of the row's size. */
typedef struct cpu_acc {
    uint8_t *dstate;      /* n column states, all 0 between rows (NULL: no dense rows) */
    unsigned char *dval;  /* n values */
    void *hkey;           /* hash keys (index type of A and B), -1 for empty */
    uint8_t *hstate;      /* hash slot states */
    unsigned char *hval;  /* hash slot values */
    void *touched;        /* columns occupied in the current row (index type) */
} cpu_acc;

/* What every row of one product shares. */
typedef struct cpu_shared {
    const spx_spgemm_args *a;
    int64_t n;                 /* columns of C */
    size_t vsz;                /* bytes per value of the semiring's type */
    spx__value_slot one;       /* what a pattern operand contributes */
    spx__value_slot identity;  /* the add identity (drop_identity) */
    spx_matrix *C;             /* numeric phase: the output being filled */
} cpu_shared;

/* How one row is computed. */
typedef struct cpu_row_info {
    int64_t lo, hi;  /* the column window the mask leaves open */
    int64_t pb, pe;  /* A(i,:) entries */
    int64_t mb, me;  /* M(i,:) entries (MATRIX masks) */
    int64_t flops;   /* products before masking: sum over k of nnz(B(k,:)) */
    int search;      /* test mask membership by binary search in M(i,:) */
    int64_t need;    /* accumulator slots the row can occupy */
    int64_t hsize;   /* hash table size (a power of two >= 2 need) */
    int dense;       /* use the dense accumulator */
} cpu_row_info;

/* A row kernel. Symbolic: returns the number of entries of row i of C
 * (drop_identity not applied). Numeric: writes row i of C starting at entry
 * pos, stores its end in C's offsets[i+1] and returns the count, or returns
 * -1 with the column in *bad_j when an operator overflows. */
typedef int64_t (*cpu_row_fn)(const cpu_shared *sh, cpu_acc *w, int64_t i, int64_t pos,
                              int64_t *bad_j);

/* Row setup (the plan sizes accumulators with the same function). */
void spx__cpu_row_info(const cpu_shared *sh, int64_t i, cpu_row_info *ri);
/* Products of row i before masking (the work that balances tasks). */
int64_t spx__cpu_row_flops(const cpu_shared *sh, int64_t i);
cpu_row_fn spx__cpu_symbolic_kernel(const spx_spgemm_args *a);
cpu_row_fn spx__cpu_numeric_kernel(const spx_spgemm_args *a);

#endif

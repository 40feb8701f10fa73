/*
 * elementwise.h — the elementwise family (NumPy's ufuncs on device
 * arrays): what api_elementwise.c hands to elementwise.c.  No Python.
 */
#ifndef GPURED_ELEMENTWISE_H
#define GPURED_ELEMENTWISE_H

#include "gpured.h"

/* How an operand is read (kernels/elementwise.cl's GR_EW_*). */
typedef enum {
    GR_EW_CONTIG = 0,  /* C-contiguous with the result's shape            */
    GR_EW_STRIDED = 1, /* element strides over the result's dimensions    */
    GR_EW_VALUE = 2,   /* a scalar passed by value                        */
    GR_EW_ONE = 3      /* one element broadcast to every position         */
} gr_ew_kind;

typedef struct {
    gr_ew_kind kind;
    gr_dtype s;                     /* storage type (of the array)        */
    gr_dtype t;                     /* loop type (NumPy's resolved loop)   */
    cl_mem mem;                     /* borrowed; NULL for a value          */
    size_t off;                     /* element offset in mem               */
    ptrdiff_t str[GR_MAXDIMS];      /* element strides, the result's dims  */
    unsigned char value[8];         /* a value's bytes in type t           */
} gr_ew_operand;

typedef struct {
    int op;                         /* a code of gr_ew_ops                 */
    int nin;
    gr_ew_operand in[3];
    gr_ew_operand out;              /* t: loop output type, s: storage     */
    int nd;
    size_t shape[GR_MAXDIMS];
} gr_ew_call;

/* The launch geometry of one call (plan_elementwise.c, the policy
 * layer): items result elements a work-item (a grid-stride loop in
 * kernels/elementwise.cl), wg work-items a group, groups groups. */
typedef struct {
    size_t wg, items, groups;
    const char *row;                /* the policy table's row              */
    char why[192];
} gr_ew_plan;

/* The plan for n result elements on d; wg / items (0: choose) are the
 * developer knobs.  0, or -1 with the reason in p->why. */
int gr_plan_elementwise(const gr_device *d, size_t n, size_t wg,
                        size_t items, gr_ew_plan *p);

/* The operator's code and input count by NumPy's ufunc name; *float_only
 * set for those with only float loops on the device (math functions).
 * -1 if unknown. */
int gr_ew_find(const char *name, int *nin, int *float_only);
/* elementwise.c: the kernel for c's operator, types and operand kinds
 * (gr_lock held, device open), and its launch under plan p. */
cl_kernel gr_ew_kernel(gr_device *d, const gr_ew_call *c, gr_status *st);
int gr_ew_launch(gr_device *d, cl_kernel kern, const gr_ew_call *c, size_t n,
                 const gr_ew_plan *p, gr_status *st);
/* dispatch_elementwise.c: enqueue c on device dev (takes gr_lock), with
 * the knobs wg / items (0: the plan's).  0, or -1 with st set. */
int gr_ew_run(int dev, gr_ew_call *c, size_t wg, size_t items,
              gr_status *st);

#endif

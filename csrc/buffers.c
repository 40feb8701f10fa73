/*
 * gpured — host <-> device transfer.
 *
 * CPU devices (PoCL) share the host's memory: the NumPy buffer is used in
 * place (CL_MEM_USE_HOST_PTR).  PoCL wants such pointers aligned to 128
 * bytes and has been reported to skip elements silently otherwise, while
 * NumPy's large arrays are typically only 16-byte aligned.  So the buffer
 * starts at the pointer rounded down to 128 bytes -- the bytes before the
 * array lie in the same page, hence are mapped -- and the kernels receive
 * the element offset of the array inside it.  Only an array whose address
 * is not a multiple of its item size is copied.
 *
 * GPUs get one copy of the input (a blocking clEnqueueWriteBuffer from the
 * pageable NumPy memory: on NVIDIA's driver several times faster than
 * CL_MEM_COPY_HOST_PTR); only the results are read back.
 */
#include "gpured.h"

#include <string.h>

#define ZC_ALIGN 128

int gr_input_from_host(gr_device *d, const void *ptr, size_t nbytes,
                       size_t itemsize, gr_input *inp, gr_status *st)
{
    cl_int err = CL_SUCCESS;
    memset(inp, 0, sizeof *inp);
    if (gr_device_open(d, st) != 0) {
        return -1;
    }
    if (nbytes == 0) {
        nbytes = itemsize; /* OpenCL has no empty buffers */
    }
    uintptr_t addr = (uintptr_t)ptr;
    size_t lead = addr % ZC_ALIGN;
    if (!d->is_gpu && lead % itemsize == 0) {
        inp->mem = clCreateBuffer(d->ctx,
                                  CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                                  nbytes + lead, (void *)(addr - lead), &err);
        if (err == CL_SUCCESS) {
            inp->base = lead / itemsize;
            inp->zero_copy = 1;
            return 0;
        }
    }
    inp->mem = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, nbytes, NULL, &err);
    GR_CL_CHECK_AS(st, "clCreateBuffer", err);
    GR_CL_CHECK(st, clEnqueueWriteBuffer(d->queue, inp->mem, CL_TRUE, 0,
                                         nbytes, ptr, 0, NULL, NULL));
    return 0;
fail:
    if (inp->mem != NULL) {
        clReleaseMemObject(inp->mem);
    }
    inp->mem = NULL;
    return -1;
}

void gr_input_release(gr_input *inp)
{
    if (inp->mem != NULL) {
        clReleaseMemObject(inp->mem);
        inp->mem = NULL;
    }
}

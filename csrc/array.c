/*
 * gpured — device arrays (work in progress).
 */
#include "gpured.h"

PyMethodDef gr_array_methods[] = {
    {NULL, NULL, 0, NULL},
};

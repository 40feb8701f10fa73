/*
 * gpured — reduce-by-key (work in progress).
 */
#include "gpured.h"

PyMethodDef gr_bykey_methods[] = {
    {NULL, NULL, 0, NULL},
};

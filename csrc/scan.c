/*
 * gpured — prefix scans (work in progress).
 */
#include "gpured.h"

PyMethodDef gr_scan_methods[] = {
    {NULL, NULL, 0, NULL},
};

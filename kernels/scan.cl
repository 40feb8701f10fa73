/* gpured — prefix scans kernels (work in progress). */

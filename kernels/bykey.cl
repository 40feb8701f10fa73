/* gpured — reduce-by-key kernels (work in progress). */

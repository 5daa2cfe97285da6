"""This host's shared facts: the GPU lock (``gpulock``), kernelgrade's cache folder and the trusted
kernels compiled into it (``cache_folder``, ``kernel_cache``), one BLAS thread for the grader's host
arithmetic (``blas``), and the packages a grading process imports (``environment``). Foundations."""

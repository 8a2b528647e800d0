#include "inject_kernels.cuh"

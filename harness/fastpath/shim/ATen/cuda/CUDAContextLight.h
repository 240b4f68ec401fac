// Shim of <ATen/cuda/CUDAContextLight.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"
#include "dbfp/torch_cublas.h"

// Shim of <ATen/cuda/CUDAUtils.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"
#include "dbfp/torch_cuda_exceptions.h"

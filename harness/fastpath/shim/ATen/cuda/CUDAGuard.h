// Shim of <ATen/cuda/CUDAGuard.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"

// Shim of <c10/cuda/CUDAGuard.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"

// Shim of <c10/cuda/CUDAFunctions.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"

// Shim of <c10/cuda/CUDAStream.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda.h"

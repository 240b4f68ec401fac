// Shim of <c10/cuda/CUDACachingAllocator.h> for the fast path.
#pragma once
#include "dbfp/torch_cuda_allocator.h"

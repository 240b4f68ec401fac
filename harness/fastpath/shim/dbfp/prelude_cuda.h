// First include of the glue made from load_inline's cuda_sources (precompiled once per
// toolchain): what torch.utils.cpp_extension prepends there (torch/types.h, cuda.h,
// cuda_runtime.h), with torch's nvcc defines and the fp16/bf16 types torch/types.h brings under
// nvcc, nvcc's host min/max, plus the launcher.
#pragma once

#ifndef __CUDA_NO_HALF_OPERATORS__
#define __CUDA_NO_HALF_OPERATORS__
#endif
#ifndef __CUDA_NO_HALF_CONVERSIONS__
#define __CUDA_NO_HALF_CONVERSIONS__
#endif
#ifndef __CUDA_NO_BFLOAT16_CONVERSIONS__
#define __CUDA_NO_BFLOAT16_CONVERSIONS__
#endif
#ifndef __CUDA_NO_HALF2_OPERATORS__
#define __CUDA_NO_HALF2_OPERATORS__
#endif

#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// What cuda_runtime.h declares for host code under nvcc only: unqualified min/max.
#include "dbfp/cuda_host_min_max.h"

// Kernel attributes host_defines.h leaves undefined for host compilers: kernels are declarations here.
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

#include "dbfp/torch_api.h"
#include "dbfp/launch.h"

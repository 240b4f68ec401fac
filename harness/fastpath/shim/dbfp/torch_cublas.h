// cuBLAS through torch (ATen/cuda/CUDAContext.h): torch's own handles (cuBLAS, cuBLASLt) for the
// current device, bound to the current stream, with torch's workspace.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include "dbfp/torch_cuda.h"

namespace at::cuda {
inline cublasHandle_t getCurrentCUDABlasHandle() {
  void* handle = nullptr;
  dbfp::check_status(dbfp::api().current_blas_handle(&handle));
  return static_cast<cublasHandle_t>(handle);
}
inline cublasLtHandle_t getCurrentCUDABlasLtHandle() {
  void* handle = nullptr;
  dbfp::check_status(dbfp::api().current_blaslt_handle(&handle));
  return static_cast<cublasLtHandle_t>(handle);
}
}  // namespace at::cuda

#define TORCH_CUDABLAS_CHECK(EXPR)                                                         \
  do {                                                                                     \
    cublasStatus_t dbfp_blas_status_ = (EXPR);                                             \
    if (dbfp_blas_status_ != CUBLAS_STATUS_SUCCESS)                                        \
      throw ::c10::Error(::c10::str("CUDA error: ", cublasGetStatusString(dbfp_blas_status_), \
                                    " when calling `" #EXPR "`"));                         \
  } while (false)

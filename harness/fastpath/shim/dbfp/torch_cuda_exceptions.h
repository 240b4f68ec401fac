// What ATen/cuda/Exceptions.h adds for the fast path's shim on top of dbfp/torch_cuda.h: the cuDNN
// error and its check, with torch's messages. Included by the shims of the headers that include
// Exceptions.h in torch (ATen/cuda/Exceptions.h, CUDAContext.h, CUDAUtils.h), and by no others.
#pragma once

#include "dbfp/torch_cuda.h"

namespace c10 {
class CuDNNError : public Error {
  using Error::Error;
};
}  // namespace c10

// The status variable is called `status`, as in torch's macro.
#define AT_CUDNN_CHECK(EXPR, ...)                                                                  \
  do {                                                                                             \
    cudnnStatus_t status = EXPR;                                                                   \
    if (status != CUDNN_STATUS_SUCCESS) {                                                          \
      if (status == CUDNN_STATUS_NOT_SUPPORTED) {                                                  \
        TORCH_CHECK_WITH(CuDNNError, false, "cuDNN error: ", cudnnGetErrorString(status),          \
                         ". This error may appear if you passed in a non-contiguous input.",       \
                         ##__VA_ARGS__);                                                           \
      } else {                                                                                     \
        TORCH_CHECK_WITH(CuDNNError, false, "cuDNN error: ", cudnnGetErrorString(status),          \
                         ##__VA_ARGS__);                                                           \
      }                                                                                            \
    }                                                                                              \
  } while (0)
#define AT_CUDNN_CHECK_WITH_SHAPES(EXPR, ...) AT_CUDNN_CHECK(EXPR, "\n", ##__VA_ARGS__)

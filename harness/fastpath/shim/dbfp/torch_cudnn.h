// cuDNN through torch for the fast path's shim (ATen/cudnn/Handle.h): the toolkit's cudnn.h and
// torch's own handle for the current device, set to the current stream (dbfp_api). The splitter
// links the glue with -lcudnn when it names cuDNN functions, which resolves to the libcudnn torch
// has already loaded.
#pragma once

#include <cudnn.h>

#include "dbfp/torch_api.h"

namespace at::native {
inline cudnnHandle_t getCudnnHandle() {
  void* handle = nullptr;
  dbfp::check_status(dbfp::api().current_cudnn_handle(&handle));
  return static_cast<cudnnHandle_t>(handle);
}
}  // namespace at::native

// Shim of <ATen/Tensor.h> for the fast path (harness/native/fastpath/README.md).
#pragma once
#include "dbfp/torch_api.h"

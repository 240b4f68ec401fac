// Shim of <ATen/cudnn/Handle.h> for the fast path.
#pragma once
#include "dbfp/torch_cudnn.h"

// Shim of <torch/types.h> for the fast path (harness/fastpath/README.md).
#pragma once
#include "dbfp/torch_api.h"

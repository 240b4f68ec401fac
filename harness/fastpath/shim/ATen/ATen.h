// Shim of <ATen/ATen.h> for the fast path (harness/fastpath/README.md).
#pragma once
#include "dbfp/torch_api.h"

// Shim of <c10/util/BFloat16.h> for the fast path.
#pragma once
#include "dbfp/torch_api.h"

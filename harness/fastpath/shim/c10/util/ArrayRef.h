// Shim of <c10/util/ArrayRef.h> for the fast path.
#pragma once
#include "dbfp/torch_api.h"

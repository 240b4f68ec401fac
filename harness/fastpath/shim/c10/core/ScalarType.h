// Shim of <c10/core/ScalarType.h> for the fast path.
#pragma once
#include "dbfp/torch_api.h"

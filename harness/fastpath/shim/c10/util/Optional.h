// Shim of <c10/util/Optional.h> for the fast path.
#pragma once
#include "dbfp/torch_api.h"

// Shim of <c10/util/Half.h> for the fast path.
#pragma once
#include "dbfp/torch_api.h"

// Stub of <math.h> for device code under NVRTC: the fast path's prelude holds what device code uses.
#pragma once
#include "dbfp_device_prelude.h"

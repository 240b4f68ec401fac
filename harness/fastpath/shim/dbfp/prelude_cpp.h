// First include of the glue made from load_inline's cpp_sources (precompiled once per toolchain):
// what torch/extension.h gives there, and the binding machinery.
#pragma once

#include "dbfp/torch_api.h"
#include "dbfp/bind.h"

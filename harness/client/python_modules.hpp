// Which Python modules the workers' interpreter lacks. A suite's candidates may need one (KernelBench's
// Triton backend needs triton); a missing one is one error line before a run starts, not a
// runtime_error for every candidate.
#pragma once

#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::harness {

// The interpreter the workers embed (its site-packages are theirs).
const char* worker_python();

// The modules of `modules` that worker_python() cannot import (importlib.util.find_spec), in order.
// Names must be dotted identifiers.
Result<std::vector<std::string>> missing_python_modules(const std::vector<std::string>& modules);

}  // namespace dicebench::harness

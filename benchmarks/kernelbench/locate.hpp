// Finds the folder that holds KernelBench's level1/ ... level4/ from what the user gave.
#pragma once

#include <filesystem>
#include <string>

#include "core/base/result.hpp"

namespace dicebench::kernelbench {

// How to get KernelBench, for error messages: the clone command and the three ways to name it.
extern const char* const kHowToGetKernelBench;

// `given` is a KernelBench repository root (holding KernelBench/level1 ...) or the folder that
// holds level1/ ... directly; a leading "~/" means $HOME. Returns the absolute folder holding the
// level folders. Errors say which paths were looked at and how to get KernelBench; an empty
// string says that no root was given and the ways to give one.
Result<std::filesystem::path> locate_levels_root(std::string given);

}  // namespace dicebench::kernelbench

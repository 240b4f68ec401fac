// Reading a whole file, the one way dicebench does it: the bytes as they are, or one error line
// "cannot read [WHAT ]PATH: why" (a folder, a missing or unreadable file, a read error).
#pragma once

#include "core/base/result.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace dicebench {

// `what` names the file's role in the error ("config", "problem"), or is empty.
Result<std::string> read_whole_file(const std::filesystem::path& path, std::string_view what = "");

}  // namespace dicebench

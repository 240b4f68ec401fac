// Whole-file reads with one-line errors naming the file, and Python's text-mode newline handling.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace dicebench::kernelbench {

// The file's bytes, unchanged. Errors: "cannot read FILE: <reason>".
Result<std::string> read_file_bytes(const std::filesystem::path& path);

// What Python's open(path, "r").read() returns for these bytes: "\r\n" and lone "\r" become "\n".
std::string universal_newlines(std::string_view bytes);

}  // namespace dicebench::kernelbench

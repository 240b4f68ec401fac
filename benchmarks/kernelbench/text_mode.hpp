// Python's text-mode newline handling, as KernelBench reads its problem and prompt files.
#pragma once

#include <string>
#include <string_view>

namespace dicebench::kernelbench {

// What Python's open(path, "r").read() returns for these bytes: "\r\n" and lone "\r" become "\n".
std::string universal_newlines(std::string_view bytes);

}  // namespace dicebench::kernelbench

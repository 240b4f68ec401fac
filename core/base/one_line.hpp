// Text from outside put into a one-line error message: a parser's description may quote the bytes
// it read, line breaks included, and an error is one line.
#pragma once

#include <string>
#include <string_view>

namespace dicebench {

// `text` with each control character written as an escape: "\n", "\r", "\t", or "\xNN".
std::string on_one_line(std::string_view text);

}  // namespace dicebench

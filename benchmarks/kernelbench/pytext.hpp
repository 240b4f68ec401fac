// Python string semantics that KernelBench's prompt construction relies on: str.strip() and
// str.format(**context) with keyword fields, reproduced byte for byte on UTF-8 text.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace dicebench::kernelbench {

using FormatContext = std::map<std::string, std::string, std::less<>>;

// str.strip() with no argument: removes leading and trailing characters for which str.isspace()
// is true (ASCII \t \n \v \f \r, \x1c-\x1f, space, and the Unicode spaces, read as UTF-8).
std::string_view python_strip(std::string_view text);

// str.format(**context): "{{" and "}}" are literal braces, "{name}" is replaced by context[name]
// (values are inserted as they are, never re-scanned). Errors, as one line without a file name:
// a single '}' or an unmatched '{' (with the byte offset), a name the context lacks (listing the
// names it has), and fields Python would treat differently from a plain keyword lookup
// (positional "{}" / "{0}", attributes, indexes, conversions, format specs), which KernelBench's
// templates never use.
Result<std::string> python_format(std::string_view format, const FormatContext& context);

// ASCII case helpers matching str.upper() and str.capitalize() on ASCII names.
std::string ascii_upper(std::string_view text);
std::string ascii_lower(std::string_view text);
std::string ascii_capitalize(std::string_view text);

}  // namespace dicebench::kernelbench

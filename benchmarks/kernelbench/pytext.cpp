// Python str.strip() and keyword-only str.format() on UTF-8 text.
#include "benchmarks/kernelbench/pytext.hpp"

#include <cstdint>

namespace dicebench::kernelbench {
namespace {

bool is_python_space(std::uint32_t cp) {
  if (cp >= 0x09 && cp <= 0x0d) return true;
  if (cp >= 0x1c && cp <= 0x20) return true;
  switch (cp) {
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

// Decodes the UTF-8 sequence starting at text[pos]; returns its length, or 0 when malformed.
std::size_t decode_at(std::string_view text, std::size_t pos, std::uint32_t* cp) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  std::size_t length = 0;
  if (lead < 0x80) {
    *cp = lead;
    return 1;
  }
  if ((lead & 0xe0) == 0xc0) {
    length = 2;
    *cp = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
    *cp = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
    *cp = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xc0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(pos + i) & 0x3f);
  }
  return length;
}

// Length of the whitespace character that ends at text[end-1], or 0 when there is none.
std::size_t space_ending_at(std::string_view text, std::size_t end) {
  for (std::size_t length = 1; length <= 4 && length <= end; ++length) {
    const std::size_t start = end - length;
    const auto lead = static_cast<unsigned char>(text[start]);
    if ((lead & 0xc0) == 0x80) continue;  // a continuation byte: the sequence starts earlier
    std::uint32_t cp = 0;
    if (decode_at(text, start, &cp) == length && is_python_space(cp)) return length;
    return 0;
  }
  return 0;
}

std::string join_names(const FormatContext& context) {
  std::string names;
  for (const auto& [name, value] : context) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

}  // namespace

std::string_view python_strip(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::uint32_t cp = 0;
    const std::size_t length = decode_at(text, begin, &cp);
    if (length == 0 || !is_python_space(cp)) break;
    begin += length;
  }
  std::size_t end = text.size();
  while (end > begin) {
    const std::size_t length = space_ending_at(text, end);
    if (length == 0) break;
    end -= length;
  }
  return text.substr(begin, end - begin);
}

Result<std::string> python_format(std::string_view format, const FormatContext& context) {
  std::string out;
  out.reserve(format.size());
  std::size_t pos = 0;
  while (pos < format.size()) {
    const char c = format[pos];
    if (c == '}') {
      if (pos + 1 < format.size() && format[pos + 1] == '}') {
        out.push_back('}');
        pos += 2;
        continue;
      }
      return make_error("single '}' at byte " + std::to_string(pos) + " (write '}}' for a literal brace)");
    }
    if (c != '{') {
      out.push_back(c);
      ++pos;
      continue;
    }
    if (pos + 1 < format.size() && format[pos + 1] == '{') {
      out.push_back('{');
      pos += 2;
      continue;
    }
    // A replacement field: runs to the matching '}' (Python counts nested braces).
    const std::size_t open = pos;
    int depth = 1;
    std::size_t close = pos + 1;
    for (; close < format.size(); ++close) {
      if (format[close] == '{') ++depth;
      if (format[close] == '}' && --depth == 0) break;
    }
    if (close >= format.size()) {
      return make_error("single '{' at byte " + std::to_string(open) + " (write '{{' for a literal brace)");
    }
    const std::string_view field = format.substr(open + 1, close - open - 1);
    const bool positional = field.empty() || field.find_first_not_of("0123456789") == std::string_view::npos;
    if (positional || field.find_first_of(".[!:{}") != std::string_view::npos) {
      return make_error("unsupported replacement field {" + std::string(field) + "} at byte " + std::to_string(open) +
                        ": only {name} fields are supported");
    }
    const auto found = context.find(field);
    if (found == context.end()) {
      return make_error("placeholder {" + std::string(field) + "} has no value (known: " + join_names(context) + ")");
    }
    out += found->second;
    pos = close + 1;
  }
  return out;
}

std::string ascii_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string ascii_capitalize(std::string_view text) {
  std::string out = ascii_lower(text);
  if (!out.empty()) out = ascii_upper(out.substr(0, 1)) + out.substr(1);
  return out;
}

}  // namespace dicebench::kernelbench

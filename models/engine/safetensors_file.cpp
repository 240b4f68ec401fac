// Parsing and validation of the safetensors format: an 8-byte little-endian header length, a JSON
// header mapping names to {dtype, shape, data_offsets}, then the data.
#include "models/engine/safetensors_file.hpp"

#include "core/base/one_line.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

namespace dicebench::engine {
namespace {

struct TypeInfo {
  const char* name;
  StoredType type;
  size_t size;
};
constexpr TypeInfo kTypes[] = {{"F64", StoredType::F64, 8},   {"F32", StoredType::F32, 4}, {"F16", StoredType::F16, 2},
                               {"BF16", StoredType::BF16, 2}, {"I64", StoredType::I64, 8}, {"I32", StoredType::I32, 4},
                               {"I16", StoredType::I16, 2},   {"I8", StoredType::I8, 1},   {"U8", StoredType::U8, 1},
                               {"BOOL", StoredType::BOOL, 1}};

std::optional<StoredType> parse_stored_type(const std::string& name) {
  for (const auto& info : kTypes)
    if (name == info.name) return info.type;
  return std::nullopt;
}

}  // namespace

const char* stored_type_name(StoredType type) {
  for (const auto& info : kTypes)
    if (info.type == type) return info.name;
  return "?";
}

size_t stored_type_size(StoredType type) {
  for (const auto& info : kTypes)
    if (info.type == type) return info.size;
  return 0;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  auto mapping = MappedFile::open(path);
  if (!mapping) return mapping.error();
  const auto bytes = (*mapping)->bytes();
  const auto fail = [&](const std::string& what) { return make_error(fmt::format("{}: {}", path.string(), what)); };
  if (bytes.size() < 8) return fail(fmt::format("truncated: {} bytes, too short for the header length", bytes.size()));
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i)
    header_length = (header_length << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
  if (header_length > bytes.size() - 8)
    return fail(fmt::format("header length {} runs past the end of the file ({} bytes)", header_length, bytes.size()));
  const auto header_text = std::string_view(reinterpret_cast<const char*>(bytes.data() + 8), header_length);
  const auto header = nlohmann::json::parse(header_text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return fail("the header is not a JSON object");
  const auto data = bytes.subspan(8 + header_length);

  SafetensorsFile file;
  file.mapping_ = std::move(*mapping);
  for (const auto& item : header.items()) {
    // Named references, not a structured binding: clang 14 cannot capture one in the lambda below.
    const std::string& name = item.key();
    const nlohmann::json& entry = item.value();
    if (name == "__metadata__") continue;
    const auto bad = [&](const std::string& what) {
      return fail(fmt::format("tensor '{}': {}", on_one_line(name), what));
    };
    if (!entry.is_object()) return bad("entry is not an object");
    const auto dtype = entry.find("dtype");
    const auto shape = entry.find("shape");
    const auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string()) return bad("no dtype");
    StoredTensor tensor;
    tensor.name = name;
    const auto type = parse_stored_type(dtype->get<std::string>());
    if (!type) return bad(fmt::format("unsupported dtype '{}'", on_one_line(dtype->get<std::string>())));
    tensor.type = *type;
    if (shape == entry.end() || !shape->is_array()) return bad("no shape");
    uint64_t elements = 1;
    for (const auto& dim : *shape) {
      if (!dim.is_number_unsigned()) return bad(fmt::format("bad shape {}", shape->dump()));
      const auto size = dim.get<uint64_t>();
      if (size != 0 && elements > std::numeric_limits<uint64_t>::max() / size / 8)
        return bad(fmt::format("shape {} too large", shape->dump()));
      elements *= size;
      tensor.shape.push_back(static_cast<int64_t>(size));
    }
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      return bad("data_offsets must be two non-negative integers");
    const auto begin = (*offsets)[0].get<uint64_t>();
    const auto end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data.size())
      return bad(
          fmt::format("data_offsets [{}, {}) out of range: the data section holds {} bytes", begin, end, data.size()));
    const uint64_t expected = elements * stored_type_size(tensor.type);
    if (end - begin != expected)
      return bad(fmt::format("data_offsets span {} bytes, but {} {} needs {}", end - begin,
                             stored_type_name(tensor.type), shape->dump(), expected));
    tensor.data = data.subspan(begin, end - begin);
    file.tensors_.emplace(name, std::move(tensor));
  }
  return file;
}

const StoredTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace dicebench::engine

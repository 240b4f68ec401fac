// Loading DICE's kernel-infilling items, refusing a malformed file with one line naming the item.
#include "benchmarks/dice_infill/infill_items.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"

namespace dicebench::dice_infill {
namespace {

constexpr const char* kTextFields[] = {"pytorch_code", "cuda_code", "prefix", "middle", "suffix"};

}  // namespace

Result<std::vector<InfillItem>> load_infill_items(const std::filesystem::path& path) {
  auto bytes = read_whole_file(path, "dice-infill data");
  if (!bytes) return bytes.error();
  const nlohmann::json parsed = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array())
    return make_error(
        fmt::format("dice-infill data {}: not a JSON array of items {{id, pytorch_code, cuda_code, prefix, "
                    "middle, suffix}}",
                    path.string()));
  if (parsed.empty()) return make_error(fmt::format("dice-infill data {}: no items", path.string()));
  std::vector<InfillItem> items;
  std::map<std::int64_t, std::size_t> positions;  // id -> position, for duplicates
  for (std::size_t position = 0; position < parsed.size(); ++position) {
    const nlohmann::json& entry = parsed[position];
    std::string where = fmt::format("dice-infill data {}: item {}", path.string(), position);
    if (!entry.is_object()) return make_error(where + " is not an object");
    const auto id = entry.find("id");
    if (id == entry.end() || !id->is_number_integer() || id->get<std::int64_t>() < 0)
      return make_error(where + " has no integer 'id' >= 0");
    InfillItem item;
    item.id = id->get<std::int64_t>();
    where += fmt::format(" (id {})", item.id);
    std::string* texts[] = {&item.pytorch_code, &item.cuda_code, &item.prefix, &item.middle, &item.suffix};
    for (std::size_t i = 0; i < std::size(kTextFields); ++i) {
      const auto field = entry.find(kTextFields[i]);
      if (field == entry.end() || !field->is_string())
        return make_error(fmt::format("{} has no string '{}'", where, kTextFields[i]));
      *texts[i] = field->get<std::string>();
    }
    if (item.prefix + item.middle + item.suffix != item.cuda_code)
      return make_error(where + ": prefix + middle + suffix is not cuda_code");
    if (const auto [it, inserted] = positions.emplace(item.id, position); !inserted)
      return make_error(fmt::format("{} has the id of item {}", where, it->second));
    item.content_hash = "sha256:" + sha256_hex(item.pytorch_code);
    items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(), [](const InfillItem& a, const InfillItem& b) { return a.id < b.id; });
  return items;
}

}  // namespace dicebench::dice_infill

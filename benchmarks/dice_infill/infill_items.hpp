// DICE's kernel-infilling evaluation format: a JSON array of items {id, pytorch_code, cuda_code,
// prefix, middle, suffix}, where pytorch_code is a KernelBench-style problem, cuda_code a correct
// ModelNew solution and prefix + middle + suffix == cuda_code. Loading and validating such a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::dice_infill {

struct InfillItem {
  std::int64_t id = 0;
  std::string pytorch_code;  // the reference program
  std::string cuda_code;     // a correct solution: prefix + middle + suffix
  std::string prefix, middle, suffix;
  std::string content_hash;  // "sha256:<hex>" of pytorch_code, as KernelBench problems are hashed
};

// The items sorted by id. Errors, one line naming the file and the item (its position, and its id
// where it has one): not a JSON array, an item that is not an object with an integer "id" >= 0 and
// string pytorch_code, cuda_code, prefix, middle and suffix, parts that do not reassemble cuda_code,
// two items with one id, no items at all.
Result<std::vector<InfillItem>> load_infill_items(const std::filesystem::path& path);

}  // namespace dicebench::dice_infill

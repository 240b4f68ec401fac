// The results row for one sample's evaluation: what the harness measured, in the store's columns
// (the details JSON holds the rest).
#pragma once

#include "harness/client/evaluator.hpp"
#include "results/store.hpp"

#include <cstdint>
#include <string>

namespace dicebench::run {

results::NewEvaluation evaluation_row(int64_t sample, const harness::Evaluation& evaluation, const std::string& device);

// The row of a sample whose completion held no candidate: extraction_failed, nothing evaluated.
results::NewEvaluation extraction_failed_row(int64_t sample, const std::string& device);

// JSON as stored: compact, invalid UTF-8 replaced.
std::string stored_json(const nlohmann::json& json);

}  // namespace dicebench::run

// One evaluation as JSON: what `dicebench eval --json` prints and the Python module returns, so
// both give the same fields from the same code.
#pragma once

#include "harness/client/evaluator.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace dicebench::harness {

// Its keys, units and meanings: results/evaluation_fields.hpp (the `json` of each field), which a
// test checks this against; objects absent from an evaluation are null.
nlohmann::json evaluation_json(const Evaluation& evaluation, const std::string& device);

// Its "timed_calls" object, which the results database stores in details as it is.
nlohmann::json timed_calls_json(const Evaluation& evaluation);

}  // namespace dicebench::harness

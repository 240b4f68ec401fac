// The judgements table (schema 9): what the reward service judged, one row per caller's id, with
// the whole record (core/spec's Judgement JSON) and the columns to query it by. The service answers
// a repeated id from here, so retries are safe across restarts.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"
#include "results/store/store.hpp"

#include <optional>
#include <string>

namespace dicebench::results {

// Stores `judgement` under its id (replacing what that id held: a retried harness failure),
// with `settings`, the fingerprint of the evaluation settings it was judged with.
Result<void> put_judgement(Store& store, const Judgement& judgement, const std::string& settings);

// The judgement stored under `id` with the same settings, if any.
Result<std::optional<Judgement>> find_judgement(Store& store, const std::string& id, const std::string& settings);

}  // namespace dicebench::results

// Reading a stored run back to continue it.
#include "core/run/resume.hpp"

#include "core/run/pending_samples.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dicebench::run {

Result<ResumedRun> resume_run(results::Store& store, int64_t run, bool generate_only) {
  auto stored = store.run(run);
  if (!stored) return stored.error();
  auto pending = unevaluated_samples(store, run);
  if (!pending) return pending.error();
  if (stored->status == RunStatus::finished && (generate_only || *pending == 0))
    return make_error(fmt::format("run {} is already finished; nothing to resume", run));
  auto config = host::config_from_run_json(stored->config_json);
  if (!config) return make_error(fmt::format("run {}: {}", run, config.error().message));
  auto done = store.done_samples(run);
  if (!done) return done.error();
  host::ResumeState state{run, std::move(*done), nlohmann::json::parse(stored->config_json).at("model").dump()};
  return ResumedRun{std::move(*config), std::move(state), stored->status, stored->config_json};
}

}  // namespace dicebench::run

// dicebench::Session (core/api/include/dicebench/evaluation.hpp): the evaluation session behind the
// public face.
#include "dicebench/evaluation.hpp"

#include "core/host/config.hpp"
#include "core/run/evaluation_session.hpp"

#include <fmt/format.h>

namespace dicebench {

Result<std::unique_ptr<Session>> Session::open(const Options& options) {
  if (options.spares < 0 || options.spares > 64)
    return make_error(fmt::format("spares must be from 0 to 64, not {}", options.spares));
  host::Config config;
  for (const auto& [key, value] : options.settings) config.set(key, value);
  std::optional<run::WorkerOverride> workers;
  if (!options.worker.empty()) workers = run::WorkerOverride{options.worker, options.spares};
  auto session = run::EvaluationSession::open_with_suite(config, workers);
  if (!session) return session.error();
  return std::unique_ptr<Session>(new Session(std::move(*session)));
}

Session::Session(std::unique_ptr<run::EvaluationSession> session) : session_(std::move(session)) {}
Session::~Session() = default;

void Session::prime_baselines(const std::vector<SharedBaseline>& baselines) { session_->prime_baselines(baselines); }
std::vector<SharedBaseline> Session::measured_baselines() { return session_->measured_baselines(); }
void Session::close() { session_->close(); }
const std::string& Session::device() const { return session_->settings().device; }
const std::string& Session::sandbox_json() const { return session_->sandbox_json(); }
const std::string& Session::suite() const { return session_->suite_name(); }
std::size_t Session::size() const { return session_->slots().size(); }
std::size_t Session::evaluators_started() const { return session_->evaluators_started(); }
std::string Session::ray_pool() const { return session_->ray_pool_description(); }

}  // namespace dicebench

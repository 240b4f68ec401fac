// `dicebench serve`: the reward service (core/serve/reward_service.hpp) on one host's evaluation
// session, every GPU of it, until SIGTERM or Ctrl-C, which drains: nothing accepted is lost. A
// summary line a minute goes to the log.
#include "core/base/number_text.hpp"
#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/host/log.hpp"
#include "core/serve/http_server.hpp"
#include "core/serve/reward_service.hpp"
#include "dicebench/evaluation.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <thread>

namespace dicebench::cli {
namespace {

std::atomic<int> g_stop_signal{0};

void on_stop_signal(int signal_number) { g_stop_signal = signal_number; }

bool loopback(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address == "localhost";
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
  struct Options {
    std::string host = "127.0.0.1", db = kDefaultDatabase, token_file, device, suite, reward, ray;
    int port = 8000, spares = 1;
    std::vector<std::string> sets, reward_params;
    double wait_s = 900, max_body_mb = 64;
    std::size_t max_pending = 4096, max_batch = 4096;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app =
      parent.add_subcommand("serve", "Serve rewards over HTTP: this host's evaluator (every GPU) for trainers");
  app->add_option("--host", o->host, "Address to listen on (anything but loopback needs a token)")
      ->capture_default_str();
  app->add_option("--port", o->port, "Port (0: any free one; the log says which)")
      ->check(whole_number(0, 65535))
      ->capture_default_str();
  app->add_option("--token-file", o->token_file,
                  "File holding the bearer token requests must carry (or $DICEBENCH_SERVE_TOKEN)");
  app->add_option("--db", o->db, "Results database: every judgement is stored there, and answers its id again")
      ->capture_default_str();
  app->add_option("--device", o->device, "cpu or cuda (default: cuda where a GPU is visible)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--ray", o->ray,
                  "Judge on a Ray cluster's evaluator pool (auto, HOST:PORT or ray://...) instead of this machine's "
                  "GPUs: the same API, one actor per GPU of the cluster");
  app->add_option("--suite", o->suite,
                  "The suite whose extraction and review apply (kernelbench, kernelbench-l2, ...)");
  app->add_option("--reward", o->reward, "The reward shape of requests that ask for none (correctness, speedup, ...)");
  app->add_option("--reward-param", o->reward_params, "A parameter of --reward as NAME=VALUE; give it again for more");
  app->add_option("--set", o->sets, "Any setting as KEY=VALUE, e.g. eval.trials=1 or kernelbench.backend=triton");
  app->add_option("--spares", o->spares, "Candidate workers each slot keeps started")
      ->check(whole_number(0, 64))
      ->capture_default_str();
  app->add_option("--wait", o->wait_s, "Seconds a request waits for its results before it gets a job id")
      ->check(real_number(0, 86400))
      ->capture_default_str();
  app->add_option("--max-pending", o->max_pending, "Items accepted and not yet judged; beyond, 429")
      ->check(whole_number(1, 1000000))
      ->capture_default_str();
  app->add_option("--max-batch", o->max_batch, "Items in one request")
      ->check(whole_number(1, 1000000))
      ->capture_default_str();
  app->add_option("--max-body-mb", o->max_body_mb, "Largest request body, MiB")
      ->check(real_number(0.001, 4096))
      ->capture_default_str();
  return {app, [o, app]() {
            std::string token;
            if (!o->token_file.empty()) {
              auto read = read_whole_file(o->token_file, "token");
              if (!read) return fail(read.error().message);
              token = *read;
              while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
                token.pop_back();
              if (token.empty()) return fail(fmt::format("{} holds no token", o->token_file));
            } else if (const char* env = std::getenv("DICEBENCH_SERVE_TOKEN"); env && *env) {
              token = env;
            }
            if (token.empty() && !loopback(o->host))
              return fail(
                  fmt::format("serving on {} needs a bearer token: --token-file FILE or $DICEBENCH_SERVE_TOKEN "
                              "(only a loopback address may go without)",
                              o->host));
            std::map<std::string, std::string> settings;
            if (!o->device.empty()) settings["eval.device"] = o->device;
            if (!o->suite.empty()) settings["suite"] = o->suite;
            if (!o->ray.empty())
              settings["eval.ray"] = o->ray;
            else if (app->count("--ray"))
              return fail("--ray needs a Ray cluster's address (auto, HOST:PORT or ray://...)");
            for (const auto& assignment : o->sets) {
              const auto eq = assignment.find('=');
              if (eq == std::string::npos || eq == 0) return fail(fmt::format("--set {} is not KEY=VALUE", assignment));
              settings[assignment.substr(0, eq)] = assignment.substr(eq + 1);
            }
            serve::ServiceSettings service;
            service.token = token;
            service.wait_s = o->wait_s;
            service.max_pending = o->max_pending;
            service.max_batch = o->max_batch;
            if (!o->reward.empty()) {
              Session::Reward reward{o->reward, {}};
              for (const auto& param : o->reward_params) {
                const auto eq = param.find('=');
                const auto value = eq == std::string::npos ? std::nullopt : parse_number<double>(param.substr(eq + 1));
                if (!value) return fail(fmt::format("--reward-param {} is not NAME=NUMBER", param));
                reward.params[param.substr(0, eq)] = *value;
              }
              service.reward = std::move(reward);
            } else if (!o->reward_params.empty()) {
              return fail("--reward-param without --reward");
            }
            service.fingerprint = "sha256:" + sha256_hex(nlohmann::json(settings).dump());
            auto session = Session::open({settings, "", o->spares});
            if (!session) return fail(session.error().message);
            if (service.reward)  // a shape or parameter that does not exist, or needs timing the session lacks
              if (auto checked = (*session)->judge({}, service.reward, [](std::size_t, Judgement) {}); !checked)
                return fail(checked.error().message);
            auto store = results::Store::open(o->db);  // only once the settings hold: bad input writes nothing
            if (!store) return fail(store.error().message);
            serve::RewardService rewards(**session, *store, std::move(service));
            serve::HttpSettings http{o->host, static_cast<std::uint16_t>(o->port),
                                     static_cast<std::size_t>(o->max_body_mb * 1024 * 1024), 256, 120};
            auto server =
                serve::HttpServer::listen(http, [&](const serve::HttpRequest& r) { return rewards.handle(r); });
            if (!server) return fail(server.error().message);
            std::signal(SIGTERM, &on_stop_signal);
            std::signal(SIGINT, &on_stop_signal);
            host::log_info("serve: listening on {}:{} ({} slot(s) on {}, suite {}, {}; results in {})", o->host,
                           (*server)->port(), (*session)->size(), (*session)->device(),
                           (*session)->suite().empty() ? "none" : (*session)->suite(),
                           token.empty() ? "no token (loopback)" : "bearer token required", o->db);
            auto next_summary = std::chrono::steady_clock::now() + std::chrono::minutes(1);
            (*server)->serve([&] {
              if (std::chrono::steady_clock::now() >= next_summary) {
                host::log_info("{}", rewards.interval_summary());
                next_summary += std::chrono::minutes(1);
              }
              return g_stop_signal != 0;
            });
            host::log_info("serve: stopping on signal {}: judging what was accepted", g_stop_signal.load());
            rewards.drain();
            host::log_info("{}", rewards.interval_summary());
            host::log_info("serve: drained; every accepted item is judged and stored in {}", o->db);
            (*session)->close();
            return 0;
          }};
}

}  // namespace dicebench::cli

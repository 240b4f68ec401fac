// Planning a run: every check that can fail happens here, before the run is stored.
#include "core/host/run_plan.hpp"
#include "core/base/number_text.hpp"

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "core/host/log.hpp"
#include "core/host/problem_selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <random>
#include <stdexcept>

namespace dicebench::host {
namespace {

Result<int64_t> integer_setting(const Config& config, const std::string& key, int64_t minimum, int64_t fallback) {
  const auto text = config.get(key);
  if (!text) return fallback;
  const auto value = parse_number<int64_t>(*text);
  if (!value) return make_error(fmt::format("setting '{}' must be a whole number, not '{}'", key, *text));
  if (*value < minimum)
    return make_error(fmt::format("setting '{}' must be at least {}, not {}", key, minimum, *value));
  return *value;
}

nlohmann::json parse_json_or_string(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception&) {
    return text;
  }
}

// Whether the model's settings now (its describe()) are those a resumed run stored. A key the
// stored settings have and the model no longer describes is left out: the plugin no longer counts
// it among what shapes completions (the openai model's base_url, which a resume may change).
bool same_model_settings(const std::string& stored_json, const std::string& now_text) {
  const nlohmann::json now = parse_json_or_string(now_text);
  if (stored_json == now.dump()) return true;
  nlohmann::json stored = parse_json_or_string(stored_json);
  if (!stored.is_object() || !now.is_object()) return false;
  for (auto it = stored.begin(); it != stored.end();) it = now.contains(it.key()) ? std::next(it) : stored.erase(it);
  return stored == now;
}

nlohmann::json plugin_json(const LoadedPlugin& plugin) {
  return {{"name", plugin.info.name},
          {"version", plugin.info.version},
          {"build_id", plugin.info.build_id},
          {"file", plugin.info.path}};
}

// Problems and samples per problem: chosen by the user, fixed by a resumed run, or offered by a
// model that serves stored completions.
Result<std::map<ProblemKey, int>> choose_samples(const Config& config, const SuiteSession& suite,
                                                 const ModelSession& model) {
  std::vector<ProblemKey> available;
  std::set<int> levels;
  for (const auto& p : suite.problems()) {
    available.push_back(p.key());
    levels.insert(p.level);
  }
  const std::set<ProblemKey> have(available.begin(), available.end());
  std::optional<std::set<ProblemKey>> selected;
  if (auto text = config.get("problems")) {
    auto parsed = parse_problem_selection(*text);
    if (!parsed) return parsed.error();
    auto resolved = resolve_selection(*parsed, available, suite.name());
    if (!resolved) return resolved.error();
    selected = std::move(*resolved);
  }
  auto samples = integer_setting(config, "samples", 1, 0);
  if (!samples) return samples.error();

  std::map<ProblemKey, int> chosen;
  if (model.serves_stored_samples() && (!selected || *samples == 0)) {
    std::map<ProblemKey, int> stored;
    for (const int level : levels) {
      auto counts = model.stored_samples(level);
      if (!counts) return counts.error();
      for (const auto& [id, count] : *counts) stored[{level, id}] = count;
    }
    for (const auto& [key, count] : stored) {
      if (!have.count(key)) {
        log_warn("the model holds samples for problem {}, which {} does not have; skipping them",
                 levels.size() > 1 ? problem_key_text(key) : std::to_string(key.problem_id), suite.name());
        continue;
      }
      if (!selected || selected->count(key)) chosen[key] = *samples ? static_cast<int>(*samples) : count;
    }
    if (selected)
      for (const ProblemKey& key : *selected)
        if (!chosen.count(key)) chosen[key] = *samples ? static_cast<int>(*samples) : 1;  // prepare() reports the gap
    if (chosen.empty())
      return make_error(fmt::format("the model holds no samples for any problem of {}", suite.name()));
    return chosen;
  }
  const int per_problem = *samples ? static_cast<int>(*samples) : 1;
  for (const ProblemKey& key : available)
    if (!selected || selected->count(key)) chosen[key] = per_problem;
  return chosen;
}

// Samples per problem as a resumed run stored them: {"<level>/<id>": n, ...}, or {"<id>": n, ...}
// from runs stored before a run could cover several levels.
Result<std::map<ProblemKey, int>> stored_samples_per_problem(const std::string& json_text, const SuiteSession& suite) {
  std::vector<ProblemKey> available;
  for (const auto& p : suite.problems()) available.push_back(p.key());
  std::map<ProblemKey, int> out;
  const auto json = nlohmann::json::parse(json_text);
  for (const auto& [key, value] : json.items()) {
    auto parsed = parse_problem_selection(key);
    if (!parsed) return parsed.error();
    auto resolved = resolve_selection(*parsed, available, suite.name());
    if (!resolved) return resolved.error();
    for (const ProblemKey& problem : *resolved) out[problem] = value.get<int>();
  }
  return out;
}

}  // namespace

uint64_t sample_seed(uint64_t run_seed, int64_t problem_id, int sample_index) {
  // splitmix64 over the run seed mixed with the sample's coordinates.
  uint64_t z = run_seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(problem_id) * 1000003ull +
                                                   static_cast<uint64_t>(sample_index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFFull;
}

const PlannedProblem* RunPlan::find_problem(const ProblemKey& key) const {
  for (const auto& p : problems)
    if (p.problem.key() == key) return &p;
  return nullptr;
}

std::string RunPlan::config_json() const {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [key, value] : config.values()) settings[key] = value;
  nlohmann::json samples = nlohmann::json::object();
  for (const auto& p : problems) samples[problem_key_text(p.problem.key())] = p.samples;
  return nlohmann::json{{"settings", settings},
                        {"samples", samples},
                        {"seed", seed},
                        {"batch_size", batch_size},
                        {"suite", parse_json_or_string(suite_settings_json)},
                        {"model", parse_json_or_string(model_settings_json)},
                        {"suite_plugin", plugin_json(suite_plugin)},
                        {"model_plugin", plugin_json(model_plugin)}}
      .dump();
}

Result<Config> config_from_run_json(const std::string& config_json) {
  try {
    const auto json = nlohmann::json::parse(config_json);
    Config config;
    for (const auto& [key, value] : json.at("settings").items()) config.set(key, value.get<std::string>());
    std::set<ProblemKey> keys;
    int samples = 0;
    bool uniform = true;
    for (const auto& [key, value] : json.at("samples").items()) {
      auto parsed = parse_problem_selection(key);
      if (!parsed || parsed->size() != 1) throw std::runtime_error("samples key '" + key + "' names no single problem");
      keys.insert(*parsed->begin());
      const int n = value.get<int>();
      if (samples && n != samples) uniform = false;
      samples = n;
    }
    config.set("problems", format_problem_selection(keys));
    config.set("seed", std::to_string(json.at("seed").get<uint64_t>()));
    if (uniform && samples)
      config.set("samples", std::to_string(samples));
    else
      config.set("samples_per_problem", json.at("samples").dump());
    return config;
  } catch (const std::exception& e) {
    return make_error(fmt::format("the run's stored configuration cannot be read ({})", e.what()));
  }
}

Result<std::unique_ptr<RunPlan>> plan_run(Config config, const PluginRegistry& registry, const ResumeState* resume) {
  auto plan = std::make_unique<RunPlan>();
  plan->config = std::move(config);
  const Config& cfg = plan->config;
  plan->services = std::make_unique<HostServices>(plan->config);

  plan->model_spec = cfg.get("model").value_or("");
  plan->suite_name = cfg.get("suite").value_or("");
  if (plan->model_spec.empty()) return make_error("no model given: pass --model NAME (see dicebench list models)");
  if (plan->suite_name.empty()) return make_error("no suite given: pass --suite NAME (see dicebench list suites)");

  // Both names first, so a typo in either is said before anything loads.
  if (auto suite_name = registry.resolve(DICEBENCH_KIND_SUITE, plan->suite_name); !suite_name)
    return suite_name.error();
  auto model_name = registry.resolve(DICEBENCH_KIND_MODEL, plan->model_spec);
  if (!model_name) return model_name.error();

  auto suite = SuiteSession::open_named(registry, plan->suite_name, *plan->services, plan->suite_plugin);
  if (!suite) return suite.error();
  plan->suite.emplace(std::move(*suite));
  auto suite_settings = plan->suite->describe();
  if (!suite_settings) return suite_settings.error();
  plan->suite_settings_json = *suite_settings;

  auto model_plugin = registry.load(*model_name->plugin);
  if (!model_plugin) return model_plugin.error();
  plan->model_plugin = *model_plugin;
  auto model = ModelSession::open(plan->model_plugin, model_name->name, model_name->argument, *plan->services);
  if (!model) return model.error();
  plan->model.emplace(std::move(*model));
  auto model_settings = plan->model->describe();
  if (!model_settings) return model_settings.error();
  plan->model_settings_json = *model_settings;
  if (resume && !same_model_settings(resume->model_settings_json, plan->model_settings_json))
    return make_error(
        fmt::format("the model's settings changed since run {} started (was {}, now {}); start a new run instead",
                    resume->run, resume->model_settings_json, plan->model_settings_json));

  std::map<ProblemKey, int> samples;
  if (auto per_problem = cfg.get("samples_per_problem")) {
    auto stored = stored_samples_per_problem(*per_problem, *plan->suite);
    if (!stored) return stored.error();
    samples = std::move(*stored);
  } else {
    auto chosen = choose_samples(cfg, *plan->suite, *plan->model);
    if (!chosen) return chosen.error();
    samples = std::move(*chosen);
  }

  auto seed = integer_setting(cfg, "seed", 0, -1);
  if (!seed) return seed.error();
  plan->seed = *seed >= 0 ? static_cast<uint64_t>(*seed) : (std::random_device{}() & 0x7FFFFFFFu);
  plan->config.set("seed", std::to_string(plan->seed));
  auto batch = integer_setting(cfg, "batch_size", 1, 0);
  if (!batch) return batch.error();
  plan->batch_size = *batch ? static_cast<size_t>(*batch) : plan->model->preferred_batch();

  // How the model sees each problem (setting `infill`): as the suite's prompt (chat), or as the
  // span to fill where the suite offers spans and the model fills them natively (native); auto, the
  // default, takes native where both can. The resolved mode is stored, so a resume keeps it.
  const std::string infill_mode = cfg.get("infill").value_or(std::string(kDefaultInfillMode));
  if (std::find(kInfillModes.begin(), kInfillModes.end(), infill_mode) == kInfillModes.end())
    return make_error(fmt::format("infill: '{}' is none of {}", infill_mode, fmt::join(kInfillModes, ", ")));
  if (infill_mode == "native" && !plan->suite->offers_infill())
    return make_error(
        fmt::format("infill=native: suite {} offers no spans to fill (its prompts are for chat)", plan->suite_name));
  const bool try_native = infill_mode != "chat" && plan->suite->offers_infill();
  const auto& all = plan->suite->problems();
  std::map<ProblemKey, Infill> spans;
  for (size_t i = 0; i < all.size(); ++i) {
    auto it = samples.find(all[i].key());
    if (it == samples.end()) continue;
    auto prompt = plan->suite->build_prompt(i);
    if (!prompt)
      return make_error(
          fmt::format("problem {} ({}): {}", problem_key_text(all[i].key()), all[i].name, prompt.error().message));
    if (try_native) {
      auto span = plan->suite->infill(i);
      if (!span)
        return make_error(
            fmt::format("problem {} ({}): {}", problem_key_text(all[i].key()), all[i].name, span.error().message));
      spans.emplace(all[i].key(), std::move(*span));
    }
    plan->problems.push_back({all[i], std::move(*prompt), "", it->second});
  }
  if (plan->problems.empty()) return make_error(fmt::format("no problems selected from {}", plan->suite_name));

  const auto requests_of = [&](bool native) {
    plan->requests.clear();
    for (auto& p : plan->problems) {
      if (native) p.prompt = infill_prompt_record(spans.at(p.problem.key()));
      p.prompt_hash = "sha256:" + sha256_hex(p.prompt);
      for (int s = 0; s < p.samples; ++s) {
        if (resume && resume->done.count({p.problem.key(), s})) continue;
        plan->requests.push_back({p.prompt, plan->suite_name, p.problem.level, p.problem.id, p.problem.name, s,
                                  sample_seed(plan->seed, p.problem.id, s),
                                  native ? std::optional<Infill>(spans.at(p.problem.key())) : std::nullopt});
      }
    }
  };
  bool native = false;
  if (try_native) {
    requests_of(true);
    auto filled = plan->model->prepare_infill(plan->requests);
    if (!filled) return filled.error();
    native = *filled;
    if (!native && infill_mode == "native")
      return make_error(
          fmt::format("infill=native: model {} does not fill spans natively; use infill=chat", plan->model_spec));
  }
  if (!native) {
    requests_of(false);
    if (!plan->requests.empty()) DICEBENCH_TRY(plan->model->prepare(plan->requests));
  }
  if (plan->suite->offers_infill()) plan->config.set("infill", native ? "native" : "chat");
  return plan;
}

}  // namespace dicebench::host

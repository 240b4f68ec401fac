// Reading KernelBench's published baseline files, re-deriving a run's speedups against one, and
// writing our cached baselines in the same format.
#include "results/report/published_baselines.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>

#include "core/base/whole_file.hpp"
#include "results/store/store.hpp"

namespace dicebench::results {
namespace {

// "level12" -> 12; none for anything else.
std::optional<int> parse_level_key(const std::string& key) {
  constexpr std::string_view prefix = "level";
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  int level = 0;
  const char* first = key.data() + prefix.size();
  const char* last = key.data() + key.size();
  const auto [end, error] = std::from_chars(first, last, level);
  if (error != std::errc() || end != last || level < 1) return std::nullopt;
  return level;
}

std::optional<double> number(const nlohmann::json& entry, const char* key) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const nlohmann::json& entry, const char* key) {
  const auto it = entry.find(key);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string problem_list(const std::vector<ProblemRow>& problems) {
  std::string out;
  for (const ProblemRow& p : problems)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", problem_key_text(p.key()), p.name);
  return out;
}

}  // namespace

Result<PublishedBaselines> read_published_baselines(const std::string& path) {
  auto bytes = read_whole_file(path, "baseline file");
  if (!bytes) return bytes.error();
  const nlohmann::json parsed = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object())
    return make_error(
        fmt::format("baseline file {}: not a JSON object of levels (KernelBench's baseline_time_*.json)", path));
  PublishedBaselines out;
  out.source = path;
  std::set<std::string> hardware;
  for (const auto& [level_key, problems] : parsed.items()) {
    const std::optional<int> level = parse_level_key(level_key);
    if (!level)
      return make_error(
          fmt::format("baseline file {}: key '{}' is not a level (level1, level2, ...)", path, level_key));
    if (!problems.is_object())
      return make_error(fmt::format("baseline file {}: {} is not an object of problem files", path, level_key));
    for (const auto& [file, entry] : problems.items()) {
      const std::optional<double> mean = entry.is_object() ? number(entry, "mean") : std::nullopt;
      if (!mean || !(*mean > 0) || !std::isfinite(*mean))
        return make_error(fmt::format("baseline file {}: {}/{} has no positive number 'mean'", path, level_key, file));
      PublishedTiming t;
      t.mean_ms = *mean;
      t.std_ms = number(entry, "std").value_or(0);
      t.min_ms = number(entry, "min").value_or(*mean);
      t.max_ms = number(entry, "max").value_or(*mean);
      t.trials = static_cast<std::int64_t>(number(entry, "num_trials").value_or(0));
      t.hardware = text(entry, "hardware");
      t.device = text(entry, "device");
      if (!t.hardware.empty()) hardware.insert(t.hardware);
      out.timings[*level][file] = std::move(t);
    }
  }
  for (const std::string& name : hardware) out.hardware += (out.hardware.empty() ? "" : ", ") + name;
  if (out.hardware.empty()) out.hardware = "unknown";
  return out;
}

std::string published_problem_file(const ProblemRow& problem) {
  return fmt::format("{}_{}.py", problem.problem_id, problem.name);
}

PublishedCoverage apply_published_baselines(RunResults& run, const PublishedBaselines& baselines) {
  PublishedCoverage coverage;
  coverage.source = baselines.source;
  coverage.hardware = baselines.hardware;
  coverage.problems = static_cast<std::int64_t>(run.problems.size());
  std::map<ProblemKey, std::optional<double>> means;  // none: missing from the file
  for (const ProblemRow& problem : run.problems) {
    std::optional<double> mean;
    if (const auto level = baselines.timings.find(problem.level); level != baselines.timings.end())
      if (const auto it = level->second.find(published_problem_file(problem)); it != level->second.end())
        mean = it->second.mean_ms;
    (mean ? coverage.covered : coverage.missing).push_back(problem);
    means[problem.key()] = mean;
  }
  for (SampleResult& sample : run.samples) {
    const auto it = means.find(sample.key());
    const std::optional<double> mean = it == means.end() ? std::nullopt : it->second;
    sample.baseline_ms = mean;
    sample.baseline_mean_ms = mean;
    sample.speedup.reset();
    const std::optional<double> candidate = sample.runtime_mean_ms ? sample.runtime_mean_ms : sample.runtime_ms;
    if (mean && sample.correct && candidate && *candidate > 0) sample.speedup = *mean / *candidate;
  }
  return coverage;
}

std::string format_coverage(const PublishedCoverage& coverage) {
  std::string out = fmt::format("published baselines {} ({}): {} of {} problems", coverage.source, coverage.hardware,
                                coverage.covered.size(), coverage.problems);
  if (!coverage.missing.empty()) out += "; not in the file (no speedup): " + problem_list(coverage.missing);
  return out + "\n";
}

nlohmann::json coverage_json(const PublishedCoverage& coverage) {
  const auto listed = [](const std::vector<ProblemRow>& problems) {
    nlohmann::json out = nlohmann::json::array();
    for (const ProblemRow& p : problems)
      out.push_back(
          {{"level", p.level}, {"problem_id", p.problem_id}, {"name", p.name}, {"file", published_problem_file(p)}});
    return out;
  };
  return {{"file", coverage.source},
          {"hardware", coverage.hardware},
          {"problems", coverage.problems},
          {"covered", coverage.covered.size()},
          {"covered_problems", listed(coverage.covered)},
          {"missing", listed(coverage.missing)}};
}

Result<nlohmann::json> export_published_baselines(Store& store, const std::string& device, const std::string& method) {
  constexpr std::string_view context = "cannot read baselines";
  // Newest first, so the first row of a problem file wins.
  auto stmt = store.database().prepare(
      "SELECT DISTINCT p.level, p.problem_id, p.name, b.device_name, b.mean_ms, b.std_ms, b.min_ms, b.max_ms, "
      "b.trials, "
      "b.created FROM baselines AS b JOIN problems AS p ON p.content_hash = b.problem_hash "
      "WHERE (b.method = ?1 OR b.method LIKE ?1 || '/%') AND CASE ?2 WHEN 'cuda' THEN b.device_name <> 'cpu' "
      "ELSE b.device_name = ?2 END ORDER BY b.created DESC, p.level, p.problem_id",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind_all(method, device);
  nlohmann::json out = nlohmann::json::object();
  std::set<std::string> devices;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    const std::string level = fmt::format("level{}", stmt->column_int64(0));
    const std::string file = fmt::format("{}_{}.py", stmt->column_int64(1), stmt->column_text(2));
    const std::string device_name = stmt->column_text(3);
    devices.insert(device_name);
    if (out.contains(level) && out[level].contains(file)) continue;
    out[level][file] = {{"mean", stmt->column_double(4)},
                        {"std", stmt->column_double(5)},
                        {"min", stmt->column_double(6)},
                        {"max", stmt->column_double(7)},
                        {"num_trials", stmt->column_int64(8)},
                        {"hardware", device_name},
                        {"device", device_name == "cpu" ? "cpu" : "cuda"}};
  }
  if (devices.empty())
    return make_error(fmt::format("{}: no {} baselines on device '{}' (a run with --device {} times them)",
                                  store.path(), method, device, device == "cpu" ? "cpu" : "cuda"));
  if (devices.size() > 1) {
    std::string names;
    for (const std::string& name : devices) names += (names.empty() ? "'" : ", '") + name + "'";
    return make_error(
        fmt::format("{}: baselines of several devices ({}); give one with --device NAME", store.path(), names));
  }
  return out;
}

}  // namespace dicebench::results

// Where a run's evaluation time went (time_breakdown.hpp), from its stored evaluations.
#include "results/report/time_breakdown.hpp"

#include "results/report/text_table.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::results {
namespace {

// The group a phase counts in (core/spec/vocabulary.toml's phase groups; "rejudged" for the phases
// of an evaluation judged again, by torch's toolchain or with the GPU alone), or "other".
std::string group_of(const std::string& phase) {
  if (phase.rfind(kPhaseRejudgedPrefix, 0) == 0 || phase.rfind(kPhaseSharedGpuPrefix, 0) == 0)
    return std::string(kRejudgedGroup);
  for (const auto& group : kPhaseGroups)
    for (const Phase member : group.members)
      if (phase == phase_name(member)) return std::string(group.name);
  return "other";
}

double number_at(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

struct Row {
  int level = 0;
  int64_t problem_id = 0;
  int sample_index = 0;
  std::string verdict, compile_path;
  nlohmann::json details;
};

// What a slow candidate's time went to, in a few words.
std::string reason_of(const Row& row) {
  std::vector<std::string> parts;
  const auto& d = row.details;
  if (const auto outcome = d.find("fastpath_outcome"); outcome != d.end() && outcome->is_object())
    parts.push_back(
        fmt::format("re-judged with torch's toolchain (the fast path said {})", outcome->value("verdict", "?")));
  if (const auto toolchain = d.find("toolchain"); toolchain != d.end() && toolchain->is_object()) {
    const double build = number_at(*toolchain, "build_seconds"), queued = number_at(*toolchain, "queued_seconds");
    if (build > 0 || queued > 0)
      parts.push_back(fmt::format("torch's toolchain: {:.0f} s building, {:.0f} s queued", build, queued));
    else if (number_at(*toolchain, "cache_hits") > 0)
      parts.push_back("torch's toolchain: cached");
  }
  if (row.verdict == verdict_name(Verdict::timeout)) parts.push_back("ran past its time limit");
  if (parts.empty()) {
    std::string phase = "nothing recorded";
    double most = 0;
    if (const auto phases = d.find("phases"); phases != d.end() && phases->is_object())
      for (const auto& [name, seconds] : phases->items())
        if (seconds.is_number() && seconds.get<double>() > most) {
          most = seconds.get<double>();
          phase = fmt::format("mostly {} ({:.1f} s)", name, most);
        }
    parts.push_back(phase);
  }
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

void add(LevelTime& level, const Row& row, std::vector<double>& latencies) {
  const auto& d = row.details;
  ++level.candidates;
  level.gpu_seconds += number_at(d, "seconds");
  const double latency = number_at(d, "latency_seconds");
  if (d.contains("latency_seconds")) latencies.push_back(latency);
  if (const auto phases = d.find("phases"); phases != d.end() && phases->is_object())
    for (const auto& [name, seconds] : phases->items()) {
      if (!seconds.is_number()) continue;
      const std::string group = group_of(name);
      level.groups[group] += seconds.get<double>();
      if (group == "load_wait")
        level.load_wait_by_path[row.compile_path.empty() ? "none" : row.compile_path] += seconds.get<double>();
    }
  if (d.contains("fastpath_outcome")) ++level.rejudged;
  if (const auto loop = d.find("timed_calls"); loop != d.end() && loop->is_object() && loop->contains("loop_s")) {
    level.timed_calls += static_cast<int64_t>(number_at(*loop, "calls"));
    level.timing_loop_seconds += number_at(*loop, "loop_s");
    level.timing_batches_seconds += number_at(*loop, "batches_s");
    level.timing_compares_seconds += number_at(*loop, "compares_s");
  }
  if (const auto toolchain = d.find("toolchain"); toolchain != d.end() && toolchain->is_object()) {
    level.builds += static_cast<int64_t>(number_at(*toolchain, "builds"));
    level.build_cache_hits += static_cast<int64_t>(number_at(*toolchain, "cache_hits"));
    level.build_failures += static_cast<int64_t>(number_at(*toolchain, "failures"));
    level.build_seconds += number_at(*toolchain, "build_seconds");
    level.build_queue_seconds += number_at(*toolchain, "queued_seconds");
  }
}

void finish(LevelTime& level, std::vector<double>& latencies) {
  if (latencies.empty()) return;
  std::sort(latencies.begin(), latencies.end());
  const size_t n = latencies.size();
  level.latency_median = n % 2 ? latencies[n / 2] : (latencies[n / 2 - 1] + latencies[n / 2]) / 2;
  double sum = 0;
  for (const double l : latencies) sum += l;
  level.latency_mean = sum / static_cast<double>(n);
  level.latency_max = latencies.back();
}

nlohmann::json level_json(const LevelTime& level) {
  nlohmann::json j = {
      {"candidates", level.candidates},
      {"gpu_seconds", level.gpu_seconds},
      {"groups", level.groups},
      {"load_wait_by_path", level.load_wait_by_path},
      {"latency_seconds", {{"median", level.latency_median}, {"mean", level.latency_mean}, {"max", level.latency_max}}},
      {"rejudged", level.rejudged},
      {"timing_loops",
       {{"calls", level.timed_calls},
        {"loop_seconds", level.timing_loop_seconds},
        {"batches_seconds", level.timing_batches_seconds},
        {"compares_seconds", level.timing_compares_seconds}}},
      {"toolchain",
       {{"builds", level.builds},
        {"cache_hits", level.build_cache_hits},
        {"failures", level.build_failures},
        {"build_seconds", level.build_seconds},
        {"queued_seconds", level.build_queue_seconds}}}};
  if (level.level) j["level"] = level.level;
  return j;
}

}  // namespace

std::vector<std::string_view> time_groups() {
  std::vector<std::string_view> names;
  for (const auto& group : kPhaseGroups) names.push_back(group.name);
  names.push_back(kRejudgedGroup);
  return names;
}

Result<TimeBreakdown> time_breakdown(Store& store, int64_t run, size_t slowest) {
  constexpr std::string_view context = "reading the run's evaluation times";
  auto stmt = store.database().prepare(
      "SELECT s.level, s.problem_id, s.sample_index, e.status, COALESCE(e.compile_path, ''), e.details "
      "FROM evaluations AS e JOIN samples AS s ON s.id = e.sample WHERE s.run = ? ORDER BY s.level, s.problem_id, "
      "s.sample_index",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  std::vector<Row> rows;
  for (;;) {
    auto more = stmt->step(context);
    if (!more.ok()) return more.error();
    if (!*more) break;
    Row row{static_cast<int>(stmt->column_int64(0)),
            stmt->column_int64(1),
            static_cast<int>(stmt->column_int64(2)),
            stmt->column_text(3),
            stmt->column_text(4),
            nlohmann::json::object()};
    try {
      row.details = nlohmann::json::parse(stmt->column_text(5));
    } catch (const nlohmann::json::exception&) {
      row.details = nlohmann::json::object();  // the column's CHECK makes this unreachable in our databases
    }
    if (!row.details.is_object()) row.details = nlohmann::json::object();
    rows.push_back(std::move(row));
  }
  TimeBreakdown breakdown;
  std::map<int, LevelTime> levels;
  std::map<int, std::vector<double>> latencies;
  std::vector<double> all_latencies;
  for (const Row& row : rows) {
    LevelTime& level = levels[row.level];
    level.level = row.level;
    add(level, row, latencies[row.level]);
    add(breakdown.total, row, all_latencies);
  }
  for (auto& [number, level] : levels) {
    finish(level, latencies[number]);
    breakdown.levels.push_back(level);
  }
  finish(breakdown.total, all_latencies);
  std::vector<const Row*> by_latency;
  for (const Row& row : rows) by_latency.push_back(&row);
  std::stable_sort(by_latency.begin(), by_latency.end(), [](const Row* a, const Row* b) {
    return number_at(a->details, "latency_seconds") > number_at(b->details, "latency_seconds");
  });
  for (size_t i = 0; i < std::min(slowest, by_latency.size()); ++i) {
    const Row& row = *by_latency[i];
    if (!row.details.contains("latency_seconds")) break;
    breakdown.slowest.push_back({row.level, row.problem_id, row.sample_index, row.verdict, row.compile_path,
                                 number_at(row.details, "latency_seconds"), number_at(row.details, "seconds"),
                                 reason_of(row)});
  }
  return breakdown;
}

std::string format_time_breakdown(const TimeBreakdown& breakdown) {
  if (breakdown.total.candidates == 0) return "";
  TextTable table;
  table.header = {"level", "candidates", "eval s"};
  for (const auto& group : kPhaseGroups) table.header.emplace_back(group.name);
  table.header.emplace_back(kRejudgedGroup);
  for (const std::string extra : {"other", "latency p50/mean/max s", "re-judged", "builds (cached)", "build s"})
    table.header.push_back(extra);
  table.right_aligned.assign(table.header.size(), true);
  const auto row_of = [](const LevelTime& level, const std::string& name) {
    std::vector<std::string> row = {name, std::to_string(level.candidates), fmt::format("{:.1f}", level.gpu_seconds)};
    for (const std::string_view group : time_groups()) {
      const auto it = level.groups.find(std::string(group));
      row.push_back(fmt::format("{:.1f}", it == level.groups.end() ? 0.0 : it->second));
    }
    const auto other = level.groups.find("other");
    row.push_back(fmt::format("{:.1f}", other == level.groups.end() ? 0.0 : other->second));
    row.push_back(fmt::format("{:.1f}/{:.1f}/{:.1f}", level.latency_median, level.latency_mean, level.latency_max));
    row.push_back(std::to_string(level.rejudged));
    row.push_back(fmt::format("{} ({})", level.builds, level.build_cache_hits));
    row.push_back(fmt::format("{:.0f}", level.build_seconds));
    return row;
  };
  for (const auto& level : breakdown.levels) table.rows.push_back(row_of(level, std::to_string(level.level)));
  if (breakdown.levels.size() > 1) table.rows.push_back(row_of(breakdown.total, "total"));
  std::string text =
      "where the evaluation time went (eval s: the evaluator's time on the candidates, the GPU's or a CPU "
      "worker's, then by phase group; builds: torch's toolchain, in its own pool):\n" +
      render_text_table(table);
  std::string waits;
  for (const auto& [path, seconds] : breakdown.total.load_wait_by_path)
    waits += fmt::format("{}{} {:.1f} s", waits.empty() ? "" : ", ", path, seconds);
  if (!waits.empty()) text += "  load wait by compile path: " + waits + "\n";
  if (const LevelTime& all = breakdown.total; all.timed_calls > 0) {
    const double calls = static_cast<double>(all.timed_calls);
    const double candidate = all.timing_loop_seconds - all.timing_batches_seconds - all.timing_compares_seconds;
    text += fmt::format(
        "  timing loops: {} calls, {:.2f} ms a call (the reference making inputs {:.2f}, comparing {:.2f}; the "
        "candidate's side, its calls included, {:.2f})\n",
        all.timed_calls, 1000 * all.timing_loop_seconds / calls, 1000 * all.timing_batches_seconds / calls,
        1000 * all.timing_compares_seconds / calls, 1000 * candidate / calls);
  }
  if (!breakdown.slowest.empty()) {
    text += "  slowest candidates (submission to verdict):\n";
    for (const auto& slow : breakdown.slowest)
      text += fmt::format("    level {} problem {} sample {}: {:.1f} s ({:.1f} s judged), {}; {}\n", slow.level,
                          slow.problem_id, slow.sample_index, slow.latency_seconds, slow.gpu_seconds, slow.verdict,
                          slow.reason);
  }
  return text;
}

nlohmann::json time_breakdown_json(const TimeBreakdown& breakdown) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : breakdown.levels) levels.push_back(level_json(level));
  nlohmann::json slowest = nlohmann::json::array();
  for (const auto& slow : breakdown.slowest)
    slowest.push_back({{"level", slow.level},
                       {"problem_id", slow.problem_id},
                       {"sample_index", slow.sample_index},
                       {"verdict", slow.verdict},
                       {"compile_path", slow.compile_path},
                       {"latency_seconds", slow.latency_seconds},
                       {"gpu_seconds", slow.gpu_seconds},
                       {"reason", slow.reason}});
  return {{"levels", levels}, {"total", level_json(breakdown.total)}, {"slowest", slowest}};
}

}  // namespace dicebench::results

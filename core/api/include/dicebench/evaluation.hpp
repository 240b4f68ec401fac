// dicebench's evaluation library, as its front ends see it: the one header the Python module (and
// every later front end: the reward service, the cluster pool) includes. It reads as the contract:
// open a session once, hand it batches of items (a problem, and the code or the raw completion a
// model wrote for it), get exactly one judgement per item; read results databases. Everything behind it (settings,
// plugins, the sandbox, workers, the store) is the library's own.
//
//   auto session = dicebench::Session::open({{"eval.device", "cpu"}, {"suite", "kernelbench-l1"}});
//   if (!session) return fail(session.error().message);
//   auto judged = (*session)->judge({{.problem = "kernelbench/level1/19", .candidate = completion,
//                                     .completion = true}}, dicebench::Session::Reward{"correctness"});
//   if (judged) for (const auto& j : *judged) print(nlohmann::json(j).dump());
//
// Errors are values (dicebench::Result); nothing here throws. The record, its JSON and its text are
// core/spec/evaluation.hpp's (generated from core/spec/evaluation.toml): Judgement and the
// Evaluation it holds.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dicebench {

namespace run {
class EvaluationSession;
}

// One evaluation session: settings, the sandbox check and (with a suite) the suite's review
// resolved once, and one warm evaluator per slot (a GPU, or a CPU worker) for the session's life.
// Thread-safe: calls from several threads share the slots.
class Session {
 public:
  struct Options {
    // Any setting as `dicebench --set` takes them: "eval.device", "eval.trials", "suite",
    // "kernelbench.backend", "db" (a results database whose stored baselines, traits and
    // bandwidths are read, never written).
    std::map<std::string, std::string> settings;
    // The dicebench-worker to run (its sandbox and compile helpers beside it); empty: the one
    // beside this executable. Plugins of its install are found too.
    std::string worker;
    int spares = 0;  // candidate workers each slot keeps started between calls (0 to 64)
  };
  // An error for settings nothing reads or that are out of range, a suite that cannot open, a
  // sandbox that eval.sandbox=require cannot have, or workers whose Python lacks what the suite's
  // candidates import.
  static Result<std::unique_ptr<Session>> open(const Options& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One item as a trainer has it: a problem and what the policy wrote for it.
  struct Item {
    std::string id;           // the caller's id, kept in its judgement ("" for none)
    std::string problem;      // a problem's source, or an id of the session's suite: "kernelbench/level2/40"
    std::string candidate;    // code defining ModelNew, or (completion) what the model wrote
    bool completion = false;  // `candidate` is raw model output: the suite's extraction finds the code
  };
  // The reward asked for: a shape of core/spec/vocabulary.toml's reward_shape and its parameters.
  struct Reward {
    std::string shape;
    std::map<std::string, double> params;
  };
  using OnJudgement = std::function<void(std::size_t index, Judgement judgement)>;
  // Judges every item: exactly one Judgement each, through on_judgement as it is final (in a
  // thread of the session's). A candidate's failure of any kind is a verdict (extraction_failed for
  // a completion without code); a problem that cannot be used is status problem_failed, dicebench's
  // own failure harness_failed, an item `stopping` ended cancelled. With a reward, each judged item
  // has its reward (before any group normalisation: see the form below). An error, before anything
  // is judged, only for the caller's mistakes: completions without a suite to extract them, an
  // unknown reward shape or parameter, a closed session. Items whose candidate (the code, after
  // extraction) and problem are the same are judged once, and each gets that evaluation.
  Result<void> judge(const std::vector<Item>& items, const std::optional<Reward>& reward,
                     const OnJudgement& on_judgement, const std::function<bool()>& stopping = {});
  // The judgements in input order; a shape that normalises within groups (correctness, zscore = 1)
  // does so over the items of each problem in this batch.
  Result<std::vector<Judgement>> judge(const std::vector<Item>& items, const std::optional<Reward>& reward = {});
  // Baselines other sessions timed (a Ray pool's actors of one GPU model give one another theirs):
  // each is used where its key (problem, GPU, torch, timing method) is the key of a problem this
  // session judges, as a baseline stored in `db` is. From the first call on, the baselines this
  // session times are kept for measured_baselines().
  void prime_baselines(const std::vector<SharedBaseline>& baselines);
  // The baselines this session timed since the last call, under their keys.
  std::vector<SharedBaseline> measured_baselines();
  // Waits for calls in progress, then ends every worker; later calls fail.
  void close();

  const std::string& device() const;        // cpu or cuda
  const std::string& sandbox_json() const;  // the protections candidates get: {"active": [...], "missing": [...]}
  const std::string& suite() const;         // "" without one
  std::size_t size() const;                 // slots
  std::size_t evaluators_started() const;   // one per slot for the session's life
  std::string ray_pool() const;  // the Ray pool it judges on (eval.ray), as it describes itself; "" when local

 private:
  explicit Session(std::unique_ptr<run::EvaluationSession> session);
  std::unique_ptr<run::EvaluationSession> session_;
};

// Gives each judged judgement its reward of `reward`'s shape, over the batch: a shape that
// normalises within groups (correctness, zscore = 1) does so over the judged items of each problem.
// An error for an unknown shape or parameter.
Result<void> apply_reward(std::vector<Judgement>& judgements, const Session::Reward& reward);

// Results databases, read only.
namespace database {

// The newest schema version this build writes and reads.
int schema_version();
// A file's schema version: an error for one that is missing, not dicebench's, or newer.
Result<int> check(const std::string& path);

// One read-only SQL statement's columns and rows; a cell is NULL, INTEGER, REAL, TEXT or BLOB.
using Blob = std::vector<std::uint8_t>;
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, Blob>;
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};
Result<Table> query(const std::string& path, const std::string& sql);
// The JSON `dicebench report RUN --json` prints.
Result<std::string> report_json(const std::string& path, std::int64_t run);

}  // namespace database

}  // namespace dicebench

// dicebench's evaluation library, as its front ends see it: the one header the Python module (and
// every later front end: the reward service, the cluster pool) includes. It reads as the contract:
// open a session once, hand it batches of (problem, candidate) pairs, get one evaluation record per
// pair; read results databases. Everything behind it (settings, plugins, the sandbox, workers, the
// store) is the library's own.
//
//   auto session = dicebench::Session::open({{"eval.device", "cpu"}, {"suite", "kernelbench-l1"}});
//   if (!session) return fail(session.error().message);
//   for (auto& result : (*session)->evaluate({{problem, candidate}}))
//     if (result) print(dicebench::evaluation_json(*result));
//
// Errors are values (dicebench::Result); nothing here throws. The record, its JSON and its text are
// core/spec/evaluation.hpp's (generated from core/spec/evaluation.toml).
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

  struct Pair {
    std::string problem_source, candidate_source;
  };
  // Called once per pair, in a thread of the session's, as its result is final: the pair's index
  // and its evaluation, or an error (the harness's own failure, a problem the suite lacks, the
  // batch stopping first). A candidate's failures are verdicts, never errors.
  using OnResult = std::function<void(std::size_t index, Result<Evaluation> result)>;
  // Returns once every pair has had its on_result; `stopping`, checked while it waits, ends the
  // pairs not yet judged as errors.
  void evaluate(const std::vector<Pair>& batch, const OnResult& on_result, const std::function<bool()>& stopping = {});
  // The results in input order.
  std::vector<Result<Evaluation>> evaluate(const std::vector<Pair>& batch);
  // Waits for calls in progress, then ends every worker; later calls fail.
  void close();

  const std::string& device() const;        // cpu or cuda
  const std::string& sandbox_json() const;  // the protections candidates get: {"active": [...], "missing": [...]}
  const std::string& suite() const;         // "" without one
  std::size_t size() const;                 // slots
  std::size_t evaluators_started() const;   // one per slot for the session's life

 private:
  explicit Session(std::unique_ptr<run::EvaluationSession> session);
  std::unique_ptr<run::EvaluationSession> session_;
};

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

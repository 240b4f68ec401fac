// _dicebench: the compiled half of the `dicebench` Python package (python/dicebench/ is the
// other half, with the public API, its docstrings and the pandas conversion). It reads results
// databases through the results library and evaluates candidates through a pool of the harness's
// evaluators. No torch here: the workers embed it; this module only speaks their protocol.
// Errors are values inside; each binding turns one into `_dicebench.Error` at this boundary.
#include "core/base/sha256.hpp"
#include "core/host/config.hpp"
#include "core/host/evaluation_settings.hpp"
#include "harness/client/evaluation_json.hpp"
#include "harness/client/evaluator.hpp"
#include "results/evaluation_fields.hpp"
#include "results/flags.hpp"
#include "results/query.hpp"
#include "results/report.hpp"
#include "results/report_format.hpp"
#include "results/run_results.hpp"
#include "results/schema.hpp"
#include "results/store.hpp"
#include "results/verdict.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace py = pybind11;

namespace dicebench::python {
namespace {

// Thrown only by the bindings below; pybind11 turns it into _dicebench.Error.
struct ModuleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T value_or_raise(Result<T> result) {
  if (!result) throw ModuleError(result.error().message);
  return std::move(result).value();
}

std::string dump(const nlohmann::json& json) { return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The database's schema version; an error for a file that is missing, not dicebench's, or newer.
Result<int> check_database(const std::string& path) {
  auto store = results::Store::open(path, results::OpenMode::ReadOnly);
  if (!store) return store.error();
  return store->schema_version();
}

// The report `dicebench report RUN --json` prints, from the same functions.
Result<std::string> report_json(const std::string& path, std::int64_t run) {
  auto store = results::Store::open(path, results::OpenMode::ReadOnly);
  if (!store) return store.error();
  auto loaded = results::load_run_results(*store, run);
  if (!loaded) return loaded.error();
  return dump(results::report_json(results::compute_report(*loaded)));
}

py::object cell_object(const results::Cell& cell) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return py::none();
        else if constexpr (std::is_same_v<T, results::Blob>)
          return py::bytes(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
        else return py::cast(v);
      },
      cell);
}

// A fixed set of evaluators (one per GPU, or `eval.cpu_workers` on the CPU), each used by one
// call at a time; calls from more threads wait for a free one. Each evaluator keeps its reference
// worker and `spares` started candidate workers alive between calls; every candidate still gets a
// fresh process of its own.
class EvaluatorPool {
 public:
  static Result<std::unique_ptr<EvaluatorPool>> create(const std::map<std::string, std::string>& settings,
                                                       const std::string& worker, int spares) {
    if (spares < 0) return make_error("spares must be 0 or more");
    host::Config config;
    for (const auto& [key, value] : settings) config.set(key, value);
    auto resolved = host::evaluation_settings(config);
    if (!resolved) return resolved.error();
    resolved->worker_executable = worker;
    resolved->sandbox.executable = host::beside_worker(worker, "dicebench-sandbox", "DICEBENCH_SANDBOX");
    resolved->compile_executable = host::beside_worker(worker, "dicebench-compile", "DICEBENCH_COMPILE");
    resolved->warm_spares = spares;
    auto slots = host::evaluation_slots(config, resolved->device);
    if (!slots) return slots.error();
    auto sandbox = harness::sandbox_status(resolved->sandbox);  // refused here under require
    if (!sandbox) return sandbox.error();
    auto pool = std::unique_ptr<EvaluatorPool>(new EvaluatorPool());
    pool->settings_ = *resolved;
    pool->sandbox_json_ = sandbox->json();
    for (const auto& gpu : *slots) pool->slots_.push_back({gpu, nullptr, false});
    return pool;
  }

  Result<std::string> evaluate(const std::string& problem, const std::string& candidate) {
    Slot* slot = acquire();
    if (!slot) return make_error("this evaluator is closed");
    struct Release {
      EvaluatorPool* pool;
      Slot* slot;
      ~Release() { pool->release(slot); }
    } release{this, slot};
    if (!slot->evaluator) {
      harness::EvaluationSettings settings = settings_;
      settings.visible_devices = slot->gpu;
      slot->evaluator = std::make_unique<harness::Evaluator>(settings);
    }
    auto e = slot->evaluator->evaluate(problem, "sha256:" + sha256_hex(problem), candidate);
    if (!e) return e.error();
    nlohmann::json out = harness::evaluation_json(*e, settings_.device);
    out["sandbox"] = nlohmann::json::parse(sandbox_json_);  // as `dicebench eval --json` has it
    return dump(out);
  }

  // Waits for running calls, then ends every worker; later calls fail.
  void close() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    freed_.wait(lock, [&] { return std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; }); });
    for (Slot& s : slots_) s.evaluator.reset();
    freed_.notify_all();
  }

  const std::string& device() const { return settings_.device; }
  const std::string& sandbox_json() const { return sandbox_json_; }
  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    std::optional<std::string> gpu;
    std::unique_ptr<harness::Evaluator> evaluator;
    bool busy = false;
  };

  Slot* acquire() {
    std::unique_lock lock(mutex_);
    Slot* free = nullptr;
    freed_.wait(lock, [&] {
      for (Slot& s : slots_)
        if (!s.busy) free = &s;
      return closed_ || free;
    });
    if (closed_) return nullptr;
    free->busy = true;
    return free;
  }

  void release(Slot* slot) {
    {
      const std::lock_guard lock(mutex_);
      slot->busy = false;
    }
    freed_.notify_all();
  }

  harness::EvaluationSettings settings_;
  std::string sandbox_json_;
  std::vector<Slot> slots_;
  bool closed_ = false;
  std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace
}  // namespace dicebench::python

PYBIND11_MODULE(_dicebench, m) {
  using namespace dicebench;
  using python::EvaluatorPool;
  using python::value_or_raise;
  m.doc() = "dicebench's compiled core; use the dicebench package instead";
  py::register_exception<python::ModuleError>(m, "Error");
  m.attr("SCHEMA_VERSION") = results::kSchemaVersion;
  // The vocabularies and the evaluation record's fields, from their one definition in C++.
  py::list verdicts, flags, fields;
  for (const auto verdict : results::kAllVerdicts) verdicts.append(std::string(results::verdict_name(verdict)));
  for (const auto flag : results::kAllEvaluationFlags) flags.append(std::string(results::flag_name(flag)));
  for (const auto& field : results::kEvaluationFields) {
    py::dict f;
    for (const auto& [key, value] : {std::pair{"json", field.json}, {"stored", field.stored}, {"python", field.python},
                                     {"worker", field.worker}, {"unit", field.unit}, {"meaning", field.meaning}})
      f[key] = std::string(value);
    fields.append(f);
  }
  m.attr("VERDICTS") = py::tuple(verdicts);
  m.attr("FLAGS") = py::tuple(flags);
  m.attr("EVALUATION_FIELDS") = py::tuple(fields);

  m.def("check_database", [](const std::string& path) { return value_or_raise(python::check_database(path)); },
        py::arg("path"), "The schema version of a dicebench database; Error for anything else.");
  m.def(
      "query",
      [](const std::string& path, const std::string& sql) {
        results::QueryResult result;
        {
          py::gil_scoped_release unlocked;
          result = value_or_raise(results::run_query(path, sql));
        }
        py::list rows;
        for (const auto& row : result.rows) {
          py::tuple cells(row.size());
          for (size_t i = 0; i < row.size(); ++i) cells[i] = python::cell_object(row[i]);
          rows.append(std::move(cells));
        }
        return py::make_tuple(py::cast(result.columns), rows);
      },
      py::arg("path"), py::arg("sql"), "(columns, rows) of one read-only SQL statement.");
  m.def(
      "report_json",
      [](const std::string& path, std::int64_t run) {
        py::gil_scoped_release unlocked;
        return value_or_raise(python::report_json(path, run));
      },
      py::arg("path"), py::arg("run"), "The JSON of `dicebench report RUN --json`.");

  py::class_<EvaluatorPool>(m, "EvaluatorPool")
      .def(py::init([](const std::map<std::string, std::string>& settings, const std::string& worker, int spares) {
             return value_or_raise(EvaluatorPool::create(settings, worker, spares));
           }),
           py::arg("settings"), py::arg("worker"), py::arg("spares"),
           "Evaluators for [eval] settings (keys such as 'eval.trials'), each with `spares` started candidate workers.")
      .def(
          "evaluate",
          [](EvaluatorPool& pool, const std::string& problem, const std::string& candidate) {
            py::gil_scoped_release unlocked;
            return value_or_raise(pool.evaluate(problem, candidate));
          },
          py::arg("problem"), py::arg("candidate"), "The evaluation as JSON (the fields of `dicebench eval --json`).")
      .def(
          "close",
          [](EvaluatorPool& pool) {
            py::gil_scoped_release unlocked;
            pool.close();
          },
          "Waits for running calls and ends the workers.")
      .def_property_readonly("device", &EvaluatorPool::device)
      .def_property_readonly("sandbox_json", &EvaluatorPool::sandbox_json)
      .def_property_readonly("size", &EvaluatorPool::size);
}

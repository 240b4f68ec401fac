// _dicebench: the compiled half of the `dicebench` Python package (python/dicebench/ is the
// other half, with the public API, its docstrings and the pandas conversion). It reads results
// databases through the results library and evaluates candidates through the evaluation session
// `dicebench run` and `dicebench eval` use. No torch here: the workers embed it; this module only speaks their
// protocol. Errors are values inside; each binding turns one into `_dicebench.Error` at this boundary.
#include "dicebench/evaluation.hpp"
#include "dicebench/openrlhf.hpp"

#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
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

std::string dump(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

py::object cell_object(const database::Cell& cell) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return py::none();
        else if constexpr (std::is_same_v<T, database::Blob>)
          return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
        else
          return py::cast(v);
      },
      cell);
}

}  // namespace
}  // namespace dicebench::python

PYBIND11_MODULE(_dicebench, m) {
  using namespace dicebench;
  using python::value_or_raise;
  m.doc() = "dicebench's compiled core; use the dicebench package instead";
  py::register_exception<python::ModuleError>(m, "Error");
  m.attr("SCHEMA_VERSION") = database::schema_version();

  m.def(
      "check_database", [](const std::string& path) { return value_or_raise(database::check(path)); }, py::arg("path"),
      "The schema version of a dicebench database; Error for anything else.");
  m.def(
      "query",
      [](const std::string& path, const std::string& sql) {
        database::Table result;
        {
          py::gil_scoped_release unlocked;
          result = value_or_raise(database::query(path, sql));
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
        return value_or_raise(database::report_json(path, run));
      },
      py::arg("path"), py::arg("run"), "The JSON of `dicebench report RUN --json`.");

  m.def(
      "openrlhf_response",
      [](const std::string& query, const std::string& prompt) {
        auto found = openrlhf_response(query, prompt);
        return py::make_tuple(std::move(found.text), found.prompt_found);
      },
      py::arg("query"), py::arg("prompt"),
      "(response, prompt found) of an OpenRLHF query: what follows its prompt, without the special tokens "
      "that end it (include/dicebench/openrlhf.hpp).");

  py::class_<Session>(m, "EvaluationSession")
      .def(py::init([](const std::map<std::string, std::string>& settings, const std::string& worker, int spares) {
             return value_or_raise(Session::open({settings, worker, spares}));
           }),
           py::arg("settings"), py::arg("worker"), py::arg("spares"),
           "The evaluation session of `dicebench run` for settings as `--set` takes them ('eval.trials', 'suite', "
           "'kernelbench.backend'), each slot's evaluator keeping `spares` started candidate workers.")
      .def(
          "judge",
          [](Session& session, const std::vector<std::tuple<std::string, std::string, std::string, bool>>& items,
             const std::optional<std::string>& shape, const std::map<std::string, double>& params) {
            std::vector<Session::Item> batch;
            batch.reserve(items.size());
            for (const auto& [id, problem, candidate, completion] : items)
              batch.push_back({id, problem, candidate, completion});
            std::optional<Session::Reward> reward;
            if (shape) reward = Session::Reward{*shape, params};
            std::vector<std::string> out;
            {
              py::gil_scoped_release unlocked;
              for (const auto& judgement : value_or_raise(session.judge(batch, reward)))
                out.push_back(python::dump(nlohmann::json(judgement)));
            }
            return out;
          },
          py::arg("items"), py::arg("reward_shape"), py::arg("reward_params"),
          "For each (id, problem, candidate, is_completion), in input order, its judgement's JSON; Error only for "
          "the caller's mistakes (completions without a suite, an unknown reward shape or parameter).")
      .def(
          "prime_baselines",
          [](Session& session, const std::vector<std::string>& records) {
            std::vector<SharedBaseline> baselines;
            baselines.reserve(records.size());
            try {
              for (const auto& record : records)
                baselines.push_back(nlohmann::json::parse(record).get<SharedBaseline>());
            } catch (const nlohmann::json::exception& error) {
              throw python::ModuleError(fmt::format("not a shared baseline: {}", error.what()));
            }
            session.prime_baselines(baselines);
          },
          py::arg("records"),
          "Baselines other sessions timed (the JSON records measured_baselines gives), used where their key is "
          "the key of a problem this session judges; from the first call on, this session keeps what it times.")
      .def(
          "measured_baselines",
          [](Session& session) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const auto& shared : session.measured_baselines())
              out.emplace_back(python::dump(nlohmann::json(shared.key)), python::dump(nlohmann::json(shared)));
            return out;
          },
          "(key, record) JSON of each baseline this session timed since the last call (none before "
          "prime_baselines): the key names the problem, GPU, torch and timing method it applies to.")
      .def(
          "close",
          [](Session& session) {
            py::gil_scoped_release unlocked;
            session.close();
          },
          "Waits for running calls and ends the workers.")
      .def_property_readonly("device", &Session::device)
      .def_property_readonly("sandbox_json", &Session::sandbox_json)
      .def_property_readonly("suite", &Session::suite)
      .def_property_readonly("size", &Session::size)
      .def_property_readonly(
          "evaluators_started", &Session::evaluators_started,
          "Evaluators (each with its reference worker) started so far: one per slot for the session's life.");
}

// Built against the record generated with tests/spec/extra_field.toml: sets the added field as the
// code that computes a field would, then prints (one JSON object) each output the field should
// reach: the record's JSON, the evaluations table's columns and the row read back from a fresh
// database, the flat export record of that row, and eval's text. test_extra_field.py checks them.
#include "core/spec/evaluation.hpp"
#include "core/spec/evaluation_store.hpp"
#include "results/store/schema.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

using namespace dicebench;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: extra_field_probe DATABASE\n");
    return 2;
  }
  Evaluation e;
  e.verdict = Verdict::correct;
  e.compiled = e.correct = true;
  e.device = "cpu";
  e.probe_ms = 1.25;  // the code that computes it
  nlohmann::ordered_json out;
  out["eval_json"] = evaluation_json(e);
  out["text"] = evaluation_text(e);
  out["schema_version"] = results::kSchemaVersion;

  std::filesystem::remove(argv[1]);
  auto store = results::Store::open(argv[1]);
  if (!store) return std::fprintf(stderr, "%s\n", store.error().message.c_str()), 1;
  results::NewRun record;
  record.model = "replay:probe";
  record.suite = "kernelbench-l1";
  record.host = "host";
  const auto run = store->create_run(record);
  if (!run) return std::fprintf(stderr, "%s\n", run.error().message.c_str()), 1;
  results::ProblemRow problem;
  problem.problem_id = 1;
  problem.level = 1;
  problem.name = "Probe";
  problem.path = "probe.py";
  problem.content_hash = "hash";
  problem.prompt_hash = "prompt";
  if (auto added = store->add_problems(*run, {problem}); !added) return 1;
  results::NewSample sample;
  sample.run = *run;
  sample.level = 1;
  sample.problem_id = 1;
  sample.prompt_hash = "prompt";
  sample.completion = "completion";
  sample.candidate = "class ModelNew: pass";
  const auto id = store->insert_sample(sample);
  if (!id) return std::fprintf(stderr, "%s\n", id.error().message.c_str()), 1;
  if (auto inserted = store->insert_evaluation(results::stored_evaluation(*id, e)); !inserted)
    return std::fprintf(stderr, "%s\n", inserted.error().message.c_str()), 1;
  const auto rows = store->evaluations(*run);
  if (!rows || rows->size() != 1) return 1;
  out["row_probe_ms"] = rows->front().probe_ms ? nlohmann::json(*rows->front().probe_ms) : nlohmann::json(nullptr);
  out["export_record"] = results::export_record(results::ExportSample{}, &rows->front());
  fmt::print("{}\n", out.dump());
  return 0;
}

// `dicebench baselines export --device cuda -o FILE`: our measured (cached) baseline timings in
// KernelBench's published format (results/report/published_baselines.hpp), so a user can publish theirs
// and others can report against them with --baseline-file.
#include "core/cli/commands.hpp"
#include "core/cli/run_reference.hpp"
#include "results/report/published_baselines.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>

#include <memory>

namespace dicebench::cli {

Command add_baselines_command(CLI::App& parent) {
  struct Options {
    std::string db = kDefaultDatabase, device = "cuda", method = "eager", output = "-";
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("baselines", "Our measured baselines in KernelBench's published format");
  app->require_subcommand(1);
  CLI::App* export_app = app->add_subcommand(
      "export",
      "Write the cached baselines as KernelBench's baseline_time_*.json ({level: {problem file: {mean, ...}}})");
  export_app->add_option("--db", o->db, "Results database")->capture_default_str();
  export_app->add_option("--device", o->device, "cuda (the GPU's baselines), cpu, or a device name (\"NVIDIA H200\")")
      ->capture_default_str();
  export_app->add_option("--method", o->method, "eager, or compile (the reference under torch.compile)")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  export_app->add_option("-o,--output", o->output, "File to write (- for standard output)")->capture_default_str();
  return {app, [o]() {
            auto store = results::Store::open(o->db, results::OpenMode::ReadOnly);
            if (!store) return fail(store.error().message);
            auto exported = results::export_published_baselines(*store, o->device, o->method);
            if (!exported) return fail(exported.error().message);
            auto written = write_output(o->output, exported->dump(2) + "\n");
            if (!written) return fail(written.error().message);
            return 0;
          }};
}

}  // namespace dicebench::cli

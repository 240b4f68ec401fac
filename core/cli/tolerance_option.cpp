// --tolerance: its help and its check, shared by `run` and `eval`.
#include "core/cli/tolerance_option.hpp"

#include "core/host/evaluation_settings.hpp"

#include <fmt/format.h>

namespace dicebench::cli {

CLI::Option* add_tolerance_option(CLI::App& app, std::string& mode) {
  const CLI::Validator known(
      [](std::string& value) {
        return host::tolerance_mode(value) ? std::string()
                                           : fmt::format("must be {}, not '{}'", host::tolerance_modes_text(), value);
      },
      "");
  return app
      .add_option("--tolerance", mode,
                  "per_dtype (fp32 and other floats 1e-4, fp16/bf16 1e-2; the default) or uniform (1e-2 for every "
                  "float dtype); kernelbench and compat are their old names")
      ->type_name("MODE")
      ->check(known);
}

}  // namespace dicebench::cli

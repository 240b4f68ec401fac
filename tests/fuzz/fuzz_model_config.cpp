// Fuzz target: a model folder's config.json and generation_config.json (one input: config.json,
// a NUL byte, then generation_config.json when there is one).
#include "models/engine/model_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::clear_scratch_folder();
  const auto [config, generation] = fuzz::split_at_nul(fuzz::as_text(data, size));
  fuzz::write_scratch_file("config.json", config);
  if (!generation.empty()) fuzz::write_scratch_file("generation_config.json", generation);
  if (auto model = engine::load_model_config(fuzz::scratch_folder()); !model) {
    fuzz::check_one_line(model.error().message);
  } else if (model->dtype) {
    fuzz::check(engine::parse_dtype(engine::dtype_name(*model->dtype)) == model->dtype,
                "a dtype name that does not read back");
  }
  if (auto settings = engine::load_generation_config(fuzz::scratch_folder()); !settings)
    fuzz::check_one_line(settings.error().message);
  return 0;
}

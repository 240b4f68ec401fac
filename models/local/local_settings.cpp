// Reading the `local.*` settings over the engine's presets.
#include "models/local/local_settings.hpp"
#include "core/base/number_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace dicebench::local {
namespace {

class Reader {
 public:
  explicit Reader(const SettingLookup& lookup) : lookup_(lookup) {}

  std::optional<std::string> text(std::string_view key) const { return lookup_(fmt::format("{}.{}", kSection, key)); }

  Result<std::optional<int64_t>> integer(std::string_view key, int64_t minimum) const {
    const auto value = text(key);
    if (!value) return std::optional<int64_t>();
    const auto number = parse_number<int64_t>(*value);
    if (!number) return bad(key, *value, "a whole number");
    if (*number < minimum) return bad(key, *value, fmt::format("at least {}", minimum));
    return std::optional<int64_t>(*number);
  }

  Result<std::optional<double>> real(std::string_view key) const {
    const auto value = text(key);
    if (!value) return std::optional<double>();
    const auto number = parse_number<double>(*value);
    if (!number) return bad(key, *value, "a number");
    return std::optional<double>(*number);
  }

  Result<std::optional<bool>> boolean(std::string_view key) const {
    const auto value = text(key);
    if (!value) return std::optional<bool>();
    if (*value == "true") return std::optional<bool>(true);
    if (*value == "false") return std::optional<bool>(false);
    return bad(key, *value, "true or false");
  }

  static Error bad(std::string_view key, std::string_view value, std::string_view expected) {
    return make_error(fmt::format("setting '{}.{}' must be {}, not '{}'", kSection, key, expected, value));
  }

 private:
  const SettingLookup& lookup_;
};

// Sets `target` from the setting when it is given.
#define DICEBENCH_READ(target, call)  \
  do {                                \
    auto read_ = (call);              \
    if (!read_) return read_.error(); \
    if (*read_) target = **read_;     \
  } while (0)

}  // namespace

Result<LocalSettings> read_settings(const SettingLookup& lookup, const SettingsContext& context) {
  const Reader reader(lookup);
  LocalSettings settings;
  settings.preset = reader.text("preset").value_or(std::string(context.default_preset));
  auto preset = engine::decode_preset(settings.preset, context.config, context.generation);
  if (!preset) return make_error(fmt::format("setting '{}.preset': {}", kSection, preset.error().message));
  auto& d = settings.decode = preset->settings;

  DICEBENCH_READ(d.max_new_tokens, reader.integer("max_new_tokens", 1));
  DICEBENCH_READ(d.sampling.temperature, reader.real("temperature"));
  DICEBENCH_READ(d.sampling.top_k, reader.integer("top_k", 0));
  DICEBENCH_READ(d.sampling.top_p, reader.real("top_p"));
  DICEBENCH_READ(d.block_length, reader.integer("block_length", 1));
  DICEBENCH_READ(d.denoising_steps, reader.integer("denoising_steps", 1));
  DICEBENCH_READ(d.confidence_threshold, reader.real("threshold"));
  DICEBENCH_READ(d.entropy_bound, reader.real("entropy_bound"));
  if (const auto name = reader.text("strategy")) {
    const auto strategy = engine::parse_remasking(*name);
    if (!strategy)
      return Reader::bad("strategy", *name,
                         "sequential, low_confidence_static, low_confidence_dynamic or entropy_bounded");
    d.remasking = *strategy;
  }
  if (const auto name = reader.text("confidence")) {
    const auto source = engine::parse_confidence_source(*name);
    if (!source) return Reader::bad("confidence", *name, "filtered or unfiltered");
    d.confidence = *source;
  }
  d.mask_token_id = context.config.mask_token_id ? context.config.mask_token_id : context.tokenizer_mask_token;
  std::optional<int64_t> seed;
  DICEBENCH_READ(seed, reader.integer("seed", 0));
  if (seed) settings.fixed_seed = static_cast<uint64_t>(*seed);
  DICEBENCH_READ(settings.thinking, reader.boolean("thinking"));
  std::optional<int64_t> batch;
  DICEBENCH_READ(batch, reader.integer("batch", 1));
  if (batch) settings.batch = static_cast<size_t>(*batch);
  DICEBENCH_READ(settings.infill_span_factor, reader.real("infill_span_factor"));
  if (settings.infill_span_factor <= 0)
    return Reader::bad("infill_span_factor", *reader.text("infill_span_factor"), "a number above 0");

  settings.device = reader.text("device").value_or(context.gpu_visible ? "cuda" : "cpu");
  if (settings.device != "cpu" && settings.device != "cuda" && settings.device.rfind("cuda:", 0) != 0)
    return Reader::bad("device", settings.device, "cpu, cuda or cuda:N");
  if (const auto name = reader.text("dtype")) {
    const auto dtype = engine::parse_dtype(*name);
    if (!dtype) return Reader::bad("dtype", *name, "float32, float16 or bfloat16");
    settings.dtype = *dtype;
  } else {
    // The CPU computes in float32; CUDA in the dtype the preset was published with.
    settings.dtype = settings.device == "cpu" ? engine::DType::float32 : preset->dtype;
  }
  if (auto valid = engine::validate_decode_settings(d, context.config); !valid)
    return make_error(fmt::format("{} settings: {}", kSection, valid.error().message));
  return settings;
}

nlohmann::ordered_json settings_json(const LocalSettings& s) {
  const auto& d = s.decode;
  const bool diffusion = d.mode == engine::DecodeMode::block_diffusion;
  nlohmann::ordered_json json = {
      {"preset", s.preset},
      {"mode", diffusion ? "block_diffusion" : "autoregressive"},
      {"max_new_tokens", d.max_new_tokens},
      {"temperature", d.sampling.temperature},
      {"top_k", d.sampling.top_k},
      {"top_p", d.sampling.top_p},
      {"seed",
       s.fixed_seed ? nlohmann::ordered_json(*s.fixed_seed) : nlohmann::ordered_json("per batch, from the run seed")},
      {"stop_tokens", d.stop_tokens},
  };
  if (diffusion) {
    json["block_length"] = d.block_length;
    json["denoising_steps"] = d.denoising_steps;
    json["strategy"] = engine::remasking_name(d.remasking);
    json["confidence"] = engine::confidence_source_name(d.confidence);
    json["threshold"] = d.confidence_threshold;
    json["entropy_bound"] = d.entropy_bound;
    json["mask_token_id"] =
        d.mask_token_id ? nlohmann::ordered_json(*d.mask_token_id) : nlohmann::ordered_json(nullptr);
    json["infill_span_factor"] = s.infill_span_factor;
  }
  json["thinking"] = s.thinking;
  json["device"] = s.device;
  json["dtype"] = engine::dtype_name(s.dtype);
  json["batch"] = s.batch;
  return json;
}

}  // namespace dicebench::local

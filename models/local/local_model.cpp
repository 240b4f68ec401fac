// Opening a local model (folder, tokenizer, settings, identity) and generating batches with the
// engine.
#include "models/local/local_model.hpp"

#include <fmt/format.h>
#include <dicebench/generation_stats.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "models/engine/checkpoint.hpp"
#include "models/local/folder_identity.hpp"
#include "models/local/hf_cache.hpp"

namespace dicebench::local {
namespace fs = std::filesystem;
namespace {

struct FoundFolder {
  fs::path path;
  std::optional<std::string> revision;  // the hub snapshot's, when found in the cache
};

Result<FoundFolder> find_folder(const CatalogEntry& entry, const SettingLookup& lookup) {
  if (const auto given = lookup(std::string(kModelPathKey))) {
    std::error_code ec;
    const fs::path path = fs::absolute(*given, ec).lexically_normal();
    if (!fs::is_directory(path, ec)) return make_error(fmt::format("--model-path {}: not a folder", *given));
    return FoundFolder{path, std::nullopt};
  }
  auto cached = find_cached_model(hub_cache_dir(), entry.hub_repo);
  if (!cached) return make_error(fmt::format("{}: {}", entry.name, cached.error().message));
  return FoundFolder{cached->folder, cached->revision};
}

}  // namespace

LocalModel::LocalModel(fs::path folder, models::Tokenizer tokenizer)
    : folder_(std::move(folder)), tokenizer_(std::move(tokenizer)) {}

Result<std::unique_ptr<LocalModel>> LocalModel::open(const CatalogEntry& entry, const SettingLookup& lookup,
                                                     bool gpu_visible) {
  auto found = find_folder(entry, lookup);
  if (!found) return found.error();
  auto config = engine::load_model_config(found->path);
  if (!config) return config.error();
  auto generation = engine::load_generation_config(found->path);
  if (!generation) return generation.error();
  auto tokenizer = models::Tokenizer::load(found->path.string());
  if (!tokenizer) return tokenizer.error();
  if (tokenizer->vocab_size() > config->vocab_size)
    return make_error(fmt::format("{}: the tokenizer's ids reach {}, past config.json's vocab_size of {}",
                                  found->path.string(), tokenizer->vocab_size() - 1, config->vocab_size));
  // The weights' headers are checked now, so that a broken folder fails before the run starts.
  if (auto checkpoint = engine::Checkpoint::open(found->path); !checkpoint) return checkpoint.error();
  auto identity = folder_identity(found->path);
  if (!identity) return identity.error();

  const auto mask = tokenizer->token_id("<|MASK|>");
  const SettingsContext context{entry.default_preset, *config, *generation,
                                mask ? std::optional<int64_t>(*mask) : std::nullopt, gpu_visible};
  auto settings = read_settings(lookup, context);
  if (!settings) return settings.error();

  std::unique_ptr<LocalModel> model(new LocalModel(found->path, std::move(*tokenizer)));
  model->config_ = std::move(*config);
  model->settings_ = std::move(*settings);
  // The answer ends at the first end-of-turn token: generation_config.json's eos_token_id and
  // the chat format's own.
  model->end_of_turn_ = generation->eos_token_ids;
  for (const char* token : {"<|im_end|>", "<|endoftext|>"})
    if (const auto id = model->tokenizer_.token_id(token)) model->end_of_turn_.push_back(*id);
  model->description_ = {
      {"model", entry.name},
      {"hub_repo", entry.hub_repo},
      {"folder", found->path.string()},
      {"revision", found->revision ? nlohmann::ordered_json(*found->revision) : nlohmann::ordered_json(nullptr)},
      {"folder_identity", *identity},
      {"architecture", model->config_.architecture},
      {"chat_template", model->settings_.thinking ? "qwen3, thinking" : "qwen3, no thinking"},
      {"generation", settings_json(model->settings_)},
  };
  return model;
}

Result<std::vector<int64_t>> LocalModel::prompt_tokens(std::string_view prompt) const {
  const auto ids = tokenizer_.encode(tokenizer_.chat_prompt(prompt, settings_.thinking));
  const auto& d = settings_.decode;
  const int64_t beyond =
      d.mode == engine::DecodeMode::block_diffusion ? d.max_new_tokens + d.block_length - 1 : d.max_new_tokens;
  const auto needed = static_cast<int64_t>(ids.size()) + beyond;
  if (needed > config_.max_position_embeddings)
    return make_error(
        fmt::format("the chat prompt has {} tokens; with {} new ones it exceeds the model's context of {} "
                    "(max_position_embeddings in {}); lower local.max_new_tokens",
                    ids.size(), beyond, config_.max_position_embeddings, (folder_ / "config.json").string()));
  return std::vector<int64_t>(ids.begin(), ids.end());
}

Result<void> LocalModel::load_engine() {
  if (engine_) return {};
  auto loaded = engine::Engine::load(folder_, {settings_.device, settings_.dtype});
  if (!loaded) return loaded.error();
  engine_ = std::move(*loaded);
  return {};
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A batch's counters, from the engine's statistics and when the engine call started.
GeneratedBatch batch_of(const engine::GenerationStatistics& statistics, std::chrono::steady_clock::time_point start) {
  GeneratedBatch batch;
  batch.forward_passes = statistics.forward_passes;
  batch.new_tokens = statistics.generated_tokens;
  batch.seconds = seconds_since(start);
  return batch;
}

// What every completion of a batch records of it.
void note_batch(nlohmann::ordered_json& stats, uint64_t seed, size_t size, const GeneratedBatch& batch) {
  stats["seed"] = seed;
  stats["batch_size"] = size;
  stats["batch_forward_passes"] = batch.forward_passes;
  stats["batch_seconds"] = batch.seconds;
}

}  // namespace

Result<GeneratedBatch> LocalModel::generate(std::span<const std::string> prompts, uint64_t seed) {
  DICEBENCH_TRY(load_engine());
  engine::TokenRows rows;
  for (const auto& prompt : prompts) {
    auto ids = prompt_tokens(prompt);
    if (!ids) return ids.error();
    rows.push_back(std::move(*ids));
  }
  const engine::DecodeSettings decode = batch_settings(seed);
  engine::GenerationStatistics statistics;
  const auto start = std::chrono::steady_clock::now();
  auto generated = engine_->generate(rows, decode, &statistics);
  if (!generated) return generated.error();

  GeneratedBatch batch = batch_of(statistics, start);
  for (size_t i = 0; i < generated->size(); ++i) {
    const auto& generation = (*generated)[i];
    Completion completion{answer_text(tokenizer_, generation.tokens, end_of_turn_), {}};
    completion.stats = {{"source", "local"},
                        {stats::kPromptTokens, rows[i].size()},
                        {stats::kCompletionTokens, generation.tokens.size()},
                        {"answer_tokens", completion.answer.answer_tokens},
                        {"stopped", generation.stopped},
                        {"ended_turn", completion.answer.ended_turn},
                        {"thinking_bytes", completion.answer.thinking_bytes}};
    note_batch(completion.stats, decode.seed, prompts.size(), batch);
    batch.completions.push_back(std::move(completion));
  }
  return batch;
}

engine::DecodeSettings LocalModel::batch_settings(uint64_t seed) const {
  engine::DecodeSettings decode = settings_.decode;
  decode.seed = settings_.fixed_seed.value_or(seed);
  return decode;
}

bool LocalModel::fills_spans() const { return settings_.decode.mode == engine::DecodeMode::block_diffusion; }

Result<engine::InfillRow> LocalModel::infill_row(const SpanToFill& span) const {
  engine::InfillRow row;
  for (const auto id : tokenizer_.encode(span.before)) row.before.push_back(id);
  for (const auto id : tokenizer_.encode(span.after)) row.after.push_back(id);
  // The span's tokens per byte are those of the item's own text around it (code: about 0.3).
  const auto context_bytes = static_cast<double>(span.before.size() + span.after.size());
  const auto context_tokens = static_cast<double>(row.before.size() + row.after.size());
  const double tokens_per_byte = context_bytes > 0 ? context_tokens / context_bytes : 0.3;
  const int64_t block = settings_.decode.block_length;
  // In whole blocks: the engine denoises whole blocks, and a budget cut inside the last would drop
  // what the model wrote there, next to the suffix.
  // Counted in double until it is known to fit, so that no budget overflows an integer.
  const double budget = std::ceil(std::max(1.0, static_cast<double>(span.reference_span_bytes) * tokens_per_byte *
                                                    settings_.infill_span_factor) /
                                  static_cast<double>(block)) *
                        static_cast<double>(block);
  // The positions the engine gives the row (Engine::infill checks the same): the context and the span.
  const auto context = static_cast<double>(row.before.size() + row.after.size());
  if (context + budget > static_cast<double>(config_.max_position_embeddings))
    return make_error(
        fmt::format("the span's context has {} tokens; with its budget of {:.0f} it exceeds the model's context of {} "
                    "(max_position_embeddings in {}); lower local.infill_span_factor",
                    row.before.size() + row.after.size(), budget, config_.max_position_embeddings,
                    (folder_ / "config.json").string()));
  row.span_tokens = static_cast<int64_t>(budget);
  return row;
}

Result<GeneratedBatch> LocalModel::fill_spans(std::span<const SpanToFill> spans, uint64_t seed) {
  if (!fills_spans()) return make_error("native infilling needs block diffusion; this model decodes autoregressively");
  DICEBENCH_TRY(load_engine());
  std::vector<engine::InfillRow> rows;
  for (const auto& span : spans) {
    auto row = infill_row(span);
    if (!row) return row.error();
    rows.push_back(std::move(*row));
  }
  engine::DecodeSettings decode = batch_settings(seed);
  // A span ends where the model ends it: at its first end-of-turn token, whatever the preset's stop tokens.
  decode.stop_tokens = end_of_turn_;
  engine::GenerationStatistics statistics;
  const auto start = std::chrono::steady_clock::now();
  auto filled = engine_->infill(rows, decode, &statistics);
  if (!filled) return filled.error();

  GeneratedBatch batch = batch_of(statistics, start);
  for (size_t i = 0; i < filled->size(); ++i) {
    const auto& generation = (*filled)[i];
    const std::vector<int32_t> ids(generation.tokens.begin(), generation.tokens.end());
    Completion completion;
    completion.answer.text = tokenizer_.decode(ids, /*skip_special_tokens=*/true);
    completion.answer.answer_tokens = ids.size();
    completion.answer.ended_turn = generation.stopped;
    completion.stats = {{"source", "local"},
                        {"infill", "native"},
                        {stats::kPromptTokens, rows[i].before.size() + rows[i].after.size()},
                        {"span_budget_tokens", rows[i].span_tokens},
                        {stats::kCompletionTokens, generation.tokens.size()},
                        {"stopped", generation.stopped}};
    note_batch(completion.stats, decode.seed, spans.size(), batch);
    batch.completions.push_back(std::move(completion));
  }
  return batch;
}

}  // namespace dicebench::local

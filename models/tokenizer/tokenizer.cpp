// The tokenizer's pipeline (see tokenizer.hpp): added tokens, normalizer, pre-tokenizer, BPE;
// decoding through the byte-level alphabet; the chat prompt.
#include "models/tokenizer/tokenizer.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/text.hpp"
#include "models/tokenizer/added_tokens.hpp"
#include "models/tokenizer/bpe_model.hpp"
#include "models/tokenizer/byte_level.hpp"
#include "models/tokenizer/split_regex.hpp"
#include "models/tokenizer/tokenizer_json.hpp"
#include "models/tokenizer/unicode_nfc.hpp"
#include "models/tokenizer/utf8.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

namespace dicebench::models {

struct Tokenizer::State {
  explicit State(BpeModel model) : bpe(std::move(model)) {}
  BpeModel bpe;
  std::vector<SplitRegex> splits;
  bool nfc = false;
  AddedTokenMatcher raw_added;         // tokens with normalized=false, found in the raw text
  AddedTokenMatcher normalized_added;  // tokens with normalized=true, found after the normalizer
  std::unordered_map<std::string, int32_t> added_ids;
  enum class Kind : uint8_t { none, plain, special };
  std::vector<Kind> kinds;            // by id
  std::vector<std::string> id_bytes;  // by id: what decode writes
  std::optional<int32_t> eos_id;

  void encode_plain(std::string_view text, std::vector<int32_t>& ids) const;
};

namespace {

// What the ByteLevel decoder writes for a token: the bytes its characters stand for, or, where a
// character lies outside the byte alphabet, the token's own text.
std::string decoded_bytes(const std::string& token_text) {
  return byte_level::to_bytes(token_text).value_or(token_text);
}

// The eos_token of tokenizer_config.json and a check of its chat template; none when the file
// is absent.
Result<std::optional<std::string>> read_tokenizer_config(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<std::string>();
  auto text = read_whole_file(path);
  if (!text) return text.error();
  const nlohmann::json config = nlohmann::json::parse(*text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return make_error(path + ": not a valid JSON object");
  const nlohmann::json chat_template = config.value("chat_template", nlohmann::json());
  if (chat_template.is_string() && chat_template.get<std::string>().find("<|im_start|>") == std::string::npos)
    return make_error(path +
                      ": chat_template is not Qwen's ChatML template (no <|im_start|>); only Qwen3's is supported");
  const nlohmann::json eos = config.value("eos_token", nlohmann::json());
  if (eos.is_string()) return std::optional<std::string>(eos.get<std::string>());
  if (eos.is_object() && eos.contains("content") && eos["content"].is_string())
    return std::optional<std::string>(eos["content"].get<std::string>());
  if (!eos.is_null()) return make_error(path + ": eos_token is neither a string nor {\"content\": ...}");
  return std::optional<std::string>();
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::load(const std::string& folder) {
  const std::string path = (std::filesystem::path(folder) / "tokenizer.json").string();
  Result<TokenizerJson> file = read_tokenizer_json(path);
  if (!file) return file.error();
  TokenizerJson& definition = file.value();

  int32_t max_id = -1;
  for (const auto& [text, id] : definition.bpe.vocab) max_id = std::max(max_id, id);
  for (const AddedToken& token : definition.added_tokens) max_id = std::max(max_id, token.id);
  std::vector<State::Kind> kinds(static_cast<size_t>(max_id) + 1, State::Kind::none);
  std::vector<std::string> id_bytes(kinds.size());
  for (const auto& [text, id] : definition.bpe.vocab) {
    kinds[id] = State::Kind::plain;
    id_bytes[id] = decoded_bytes(text);
  }

  Result<BpeModel> bpe = BpeModel::build(std::move(definition.bpe));
  if (!bpe) return make_error(path + ": " + bpe.error().message);
  auto state = std::make_unique<State>(std::move(bpe.value()));
  state->nfc = definition.nfc;
  for (const TokenizerJson::SplitPattern& split : definition.splits) {
    Result<SplitRegex> regex = SplitRegex::compile(split.pattern, split.literal);
    if (!regex) return make_error(path + ": " + regex.error().message);
    state->splits.push_back(std::move(regex.value()));
  }

  std::vector<AddedToken> raw, normalized;
  std::vector<std::string> raw_patterns, normalized_patterns;
  for (AddedToken& token : definition.added_tokens) {
    kinds[token.id] = token.special ? State::Kind::special : State::Kind::plain;
    id_bytes[token.id] = decoded_bytes(token.content);
    state->added_ids[token.content] = token.id;
    if (token.normalized) {
      normalized_patterns.push_back(state->nfc ? to_nfc(token.content) : token.content);
      normalized.push_back(std::move(token));
    } else {
      raw_patterns.push_back(token.content);
      raw.push_back(std::move(token));
    }
  }
  state->raw_added = AddedTokenMatcher(std::move(raw), std::move(raw_patterns));
  state->normalized_added = AddedTokenMatcher(std::move(normalized), std::move(normalized_patterns));
  state->kinds = std::move(kinds);
  state->id_bytes = std::move(id_bytes);

  const std::string config_path = (std::filesystem::path(folder) / "tokenizer_config.json").string();
  Result<std::optional<std::string>> eos = read_tokenizer_config(config_path);
  if (!eos) return eos.error();
  Tokenizer tokenizer(std::move(state));
  if (eos.value()) {
    tokenizer.state_->eos_id = tokenizer.token_id(*eos.value());
    if (!tokenizer.state_->eos_id)
      return make_error(config_path + ": eos_token '" + *eos.value() + "' is not a token of " + path);
  }
  return tokenizer;
}

// Text without tokens of the raw matcher: normalizer, normalized added tokens, pre-tokenizer, BPE.
void Tokenizer::State::encode_plain(std::string_view text, std::vector<int32_t>& ids) const {
  std::string normalized_storage;
  if (nfc) normalized_storage = to_nfc(text), text = normalized_storage;
  std::vector<AddedTokenMatcher::Piece> pieces;
  if (normalized_added.empty()) {
    pieces.push_back({text, -1});
  } else {
    normalized_added.split(text, pieces);
  }
  std::vector<std::string_view> words, next_words;
  for (const AddedTokenMatcher::Piece& piece : pieces) {
    if (piece.token_id >= 0) {
      ids.push_back(piece.token_id);
      continue;
    }
    words.assign(1, piece.text);
    for (const SplitRegex& regex : splits) {
      next_words.clear();
      for (std::string_view word : words) regex.split(word, next_words);
      words.swap(next_words);
    }
    for (std::string_view word : words) bpe.encode(word, ids);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::string valid_storage;
  if (!utf8::is_valid(text)) valid_storage = utf8::to_valid(text), text = valid_storage;
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  if (state_->raw_added.empty()) {
    state_->encode_plain(text, ids);
    return ids;
  }
  std::vector<AddedTokenMatcher::Piece> pieces;
  state_->raw_added.split(text, pieces);
  for (const AddedTokenMatcher::Piece& piece : pieces) {
    if (piece.token_id >= 0) {
      ids.push_back(piece.token_id);
    } else {
      state_->encode_plain(piece.text, ids);
    }
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= state_->kinds.size()) continue;
    const State::Kind kind = state_->kinds[id];
    if (kind == State::Kind::none || (skip_special_tokens && kind == State::Kind::special)) continue;
    bytes += state_->id_bytes[id];
  }
  return utf8::is_valid(bytes) ? bytes : utf8::to_valid(bytes);
}

std::optional<int32_t> Tokenizer::token_id(std::string_view token) const {
  if (const auto it = state_->added_ids.find(std::string(token)); it != state_->added_ids.end()) return it->second;
  return state_->bpe.token_id(token);
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(state_->kinds.size()); }

std::optional<int32_t> Tokenizer::eos_token_id() const { return state_->eos_id; }

std::string Tokenizer::chat_prompt(std::string_view user_message, bool thinking) const {
  std::string prompt = "<|im_start|>user\n";
  prompt += user_message;
  prompt += "<|im_end|>\n<|im_start|>assistant\n";
  if (!thinking) prompt += "<think>\n\n</think>\n\n";
  return prompt;
}

}  // namespace dicebench::models

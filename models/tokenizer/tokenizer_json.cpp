// Parsing and checking tokenizer.json (see tokenizer_json.hpp).
#include "models/tokenizer/tokenizer_json.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/text.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace dicebench::models {
namespace {

using nlohmann::json;

// What a pre-tokenizer ByteLevel step with use_regex splits on (GPT-2's pattern).
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Ids index tables of this size; Qwen's reach 151669.
constexpr int64_t kMaxId = (int64_t{1} << 24) - 1;

// Thrown inside this file only, caught in read_tokenizer_json.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int32_t read_id(const json& id, const std::string& what) {
  if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxId)
    throw Unsupported(what + " has id " + id.dump() + " (expected an integer from 0 to " + std::to_string(kMaxId) +
                      ")");
  return static_cast<int32_t>(id.get<int64_t>());
}

std::string type_of(const json& node, const std::string& field) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string())
    throw Unsupported(field + " has no \"type\"");
  return node["type"].get<std::string>();
}

void read_normalizer(const json& node, TokenizerJson& out) {
  if (node.is_null()) return;
  const std::string type = type_of(node, "normalizer");
  if (type == "NFC") {
    out.nfc = true;
  } else if (type == "Sequence") {
    for (const json& step : node.at("normalizers")) read_normalizer(step, out);
  } else {
    throw Unsupported("normalizer \"" + type + "\" is not supported (supported: NFC, a Sequence of NFC, none)");
  }
}

void read_pre_tokenizer(const json& node, TokenizerJson& out, bool& byte_level) {
  const std::string type = type_of(node, "pre_tokenizer");
  if (byte_level) throw Unsupported("pre_tokenizer: a \"" + type + "\" step after ByteLevel is not supported");
  if (type == "Sequence") {
    for (const json& step : node.at("pretokenizers")) read_pre_tokenizer(step, out, byte_level);
  } else if (type == "Split") {
    const std::string behavior = node.at("behavior").get<std::string>();
    if (behavior != "Isolated")
      throw Unsupported("pre_tokenizer Split behavior \"" + behavior + "\" is not supported (supported: Isolated)");
    if (node.value("invert", false)) throw Unsupported("pre_tokenizer Split with invert is not supported");
    const json& pattern = node.at("pattern");
    if (pattern.contains("Regex")) {
      out.splits.push_back({pattern["Regex"].get<std::string>(), false});
    } else if (pattern.contains("String")) {
      out.splits.push_back({pattern["String"].get<std::string>(), true});
    } else {
      throw Unsupported("pre_tokenizer Split pattern is neither {\"Regex\": ...} nor {\"String\": ...}");
    }
  } else if (type == "ByteLevel") {
    if (node.value("add_prefix_space", false))
      throw Unsupported("pre_tokenizer ByteLevel with add_prefix_space is not supported");
    if (node.value("use_regex", true)) out.splits.push_back({kGpt2Pattern, false});
    byte_level = true;
  } else {
    throw Unsupported("pre_tokenizer \"" + type + "\" is not supported (supported: Split, ByteLevel, Sequence)");
  }
}

void read_model(const json& model, TokenizerJson& out) {
  if (!model.is_object()) throw Unsupported("no \"model\" object");
  const std::string type = model.contains("type") ? type_of(model, "model") : "BPE";
  if (type != "BPE") throw Unsupported("model type \"" + type + "\" is not supported (supported: BPE)");
  if (!model.value("dropout", json()).is_null()) throw Unsupported("model.dropout is not supported");
  if (!model.value("unk_token", json()).is_null())
    throw Unsupported("model.unk_token is not supported (byte-level BPE has none)");
  if (model.value("byte_fallback", false)) throw Unsupported("model.byte_fallback is not supported");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json value = model.value(affix, json());
    if (!value.is_null() && !value.get<std::string>().empty())
      throw Unsupported(std::string("model.") + affix + " is not supported");
  }
  out.bpe.ignore_merges = model.value("ignore_merges", false);

  const json& vocab = model.at("vocab");
  if (!vocab.is_object() || vocab.empty()) throw Unsupported("model.vocab is empty or not an object");
  out.bpe.vocab.reserve(vocab.size());
  for (const auto& [text, id] : vocab.items())
    out.bpe.vocab.emplace_back(text, read_id(id, "model.vocab token '" + text + "'"));

  const json& merges = model.at("merges");
  if (!merges.is_array() || merges.empty())
    throw Unsupported("model.merges is empty (a BPE tokenizer needs its merges)");
  out.bpe.merges.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& merge = merges[rank];
    if (merge.is_string()) {  // "left right"
      const std::vector<std::string> parts = split(merge.get_ref<const std::string&>(), ' ');
      if (parts.size() != 2) throw Unsupported("model.merges[" + std::to_string(rank) + "] is not \"left right\"");
      out.bpe.merges.emplace_back(parts[0], parts[1]);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      out.bpe.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      throw Unsupported("model.merges[" + std::to_string(rank) +
                        "] is neither \"left right\" nor [\"left\", \"right\"]");
    }
  }
}

void read_added_tokens(const json& list, TokenizerJson& out) {
  if (list.is_null()) return;
  for (const json& entry : list) {
    AddedToken token;
    token.content = entry.at("content").get<std::string>();
    token.id = read_id(entry.at("id"), "added token '" + token.content + "'");
    token.special = entry.value("special", false);
    token.lstrip = entry.value("lstrip", false);
    token.rstrip = entry.value("rstrip", false);
    token.normalized = entry.value("normalized", !token.special);
    if (token.content.empty()) throw Unsupported("added_tokens: an entry has no content");
    if (entry.value("single_word", false))
      throw Unsupported("added token '" + token.content + "' has single_word, which is not supported");
    out.added_tokens.push_back(std::move(token));
  }
}

}  // namespace

Result<TokenizerJson> read_tokenizer_json(const std::string& path) {
  const auto text = read_whole_file(path);
  if (!text) return text.error();
  TokenizerJson out;
  try {
    const json root = json::parse(*text);
    if (!root.is_object()) throw Unsupported("not a JSON object");
    read_model(root.contains("model") ? root["model"] : json(), out);
    read_normalizer(root.value("normalizer", json()), out);
    bool byte_level = false;
    if (!root.value("pre_tokenizer", json()).is_null()) read_pre_tokenizer(root["pre_tokenizer"], out, byte_level);
    if (!byte_level) throw Unsupported("pre_tokenizer has no ByteLevel step (only byte-level BPE is supported)");
    const json decoder = root.value("decoder", json());
    if (decoder.is_null() || type_of(decoder, "decoder") != "ByteLevel")
      throw Unsupported("decoder is not ByteLevel (only byte-level BPE is supported)");
    read_added_tokens(root.value("added_tokens", json()), out);
  } catch (const json::parse_error& e) {
    return make_error(path + ": not valid JSON: " + e.what());
  } catch (const std::exception& e) {  // Unsupported, or a field of the wrong type (nlohmann)
    return make_error(path + ": " + e.what());
  }
  return out;
}

}  // namespace dicebench::models

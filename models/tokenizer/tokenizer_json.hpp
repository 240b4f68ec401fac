// Reading a Hugging Face tokenizer.json into what the tokenizer needs, checking that it describes
// a tokenizer this engine reproduces exactly: a byte-level BPE model, Split / ByteLevel
// pre-tokenizers, an NFC normalizer or none, a ByteLevel decoder. Anything else is an error
// naming the file and the field.
#pragma once

#include "core/base/result.hpp"
#include "models/tokenizer/added_tokens.hpp"
#include "models/tokenizer/bpe_model.hpp"

#include <string>
#include <vector>

namespace dicebench::models {

struct TokenizerJson {
  struct SplitPattern {
    std::string pattern;
    bool literal = false;  // {"String": ...} rather than {"Regex": ...}
  };
  BpeModel::Spec bpe;
  std::vector<AddedToken> added_tokens;
  bool nfc = false;                  // the normalizer is NFC
  std::vector<SplitPattern> splits;  // applied in order before the byte-level mapping
};

Result<TokenizerJson> read_tokenizer_json(const std::string& path);

}  // namespace dicebench::models

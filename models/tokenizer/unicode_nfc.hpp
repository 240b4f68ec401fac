// Unicode Normalization Form C, the normalizer of Qwen-family tokenizer.json files.
#pragma once

#include <string>
#include <string_view>

namespace dicebench::models {

// `text` (valid UTF-8) in NFC. Text that NFC leaves alone (all ASCII, most text) is returned
// after one quick scan.
std::string to_nfc(std::string_view text);

}  // namespace dicebench::models

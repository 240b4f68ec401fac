// Encode and decode throughput of the tokenizer on a body of text files (e.g. KernelBench's code),
// each file encoded as one prompt. Prints a table and writes JSON.
//   dicebench-tokenizer-bench TOKENIZER_DIR INPUT... [--repeat N] [--json FILE]
// INPUT: files, or folders read recursively. The first pass starts with an empty pre-token cache
// ("cold"); the best of the next N passes is "warm".
#include "models/tokenizer/tokenizer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using dicebench::models::Tokenizer;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> read_inputs(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const std::string& input : inputs) {
    if (fs::is_directory(input)) {
      for (const auto& entry : fs::recursive_directory_iterator(input))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(input);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> texts;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::ostringstream buffer;
    buffer << in.rdbuf();
    texts.push_back(buffer.str());
  }
  return texts;
}

int run(int argc, char** argv) {
  std::vector<std::string> positional;
  int repeat = 5;
  std::string json_path = "tokenizer_throughput.json";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::stoi(argv[++i]));
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() < 2) {
    fmt::print(stderr, "usage: dicebench-tokenizer-bench TOKENIZER_DIR INPUT... [--repeat N] [--json FILE]\n");
    return 2;
  }
  const std::vector<std::string> texts = read_inputs({positional.begin() + 1, positional.end()});
  size_t bytes = 0;
  for (const std::string& text : texts) bytes += text.size();
  const double megabytes = static_cast<double>(bytes) / 1e6;

  auto start = std::chrono::steady_clock::now();
  dicebench::Result<Tokenizer> loaded = Tokenizer::load(positional[0]);
  const double load_s = seconds_since(start);
  if (!loaded) {
    fmt::print(stderr, "dicebench-tokenizer-bench: {}\n", loaded.error().message);
    return 1;
  }
  const Tokenizer& tokenizer = loaded.value();

  std::vector<std::vector<int32_t>> encoded(texts.size());
  const auto encode_all = [&] {
    const auto pass_start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < texts.size(); ++i) encoded[i] = tokenizer.encode(texts[i]);
    return seconds_since(pass_start);
  };
  const double cold_s = encode_all();
  double warm_s = 1e30, decode_s = 1e30;
  for (int r = 0; r < repeat; ++r) warm_s = std::min(warm_s, encode_all());
  size_t tokens = 0;
  for (const auto& ids : encoded) tokens += ids.size();
  for (int r = 0; r < repeat; ++r) {
    const auto pass_start = std::chrono::steady_clock::now();
    size_t decoded_bytes = 0;
    for (const auto& ids : encoded) decoded_bytes += tokenizer.decode(ids).size();
    decode_s = std::min(decode_s, seconds_since(pass_start));
    if (decoded_bytes == 0) return 1;
  }

  fmt::print("tokenizer {} (vocabulary {}), {} files, {:.2f} MB, {} tokens ({:.2f} bytes/token), load {:.3f} s\n",
             positional[0], tokenizer.vocab_size(), texts.size(), megabytes, tokens,
             static_cast<double>(bytes) / std::max<size_t>(tokens, 1), load_s);
  fmt::print("| {:<22} | {:>10} | {:>12} |\n", "pass", "MB/s", "Mtokens/s");
  fmt::print("|{:-<24}|{:->12}|{:->14}|\n", "", "", "");
  const auto row = [&](const char* name, double s) {
    fmt::print("| {:<22} | {:>10.1f} | {:>12.2f} |\n", name, megabytes / s, static_cast<double>(tokens) / 1e6 / s);
  };
  row("encode, cold cache", cold_s);
  row("encode, warm cache", warm_s);
  row("decode", decode_s);

  const nlohmann::json report = {{"tokenizer", positional[0]},
                                 {"vocab_size", tokenizer.vocab_size()},
                                 {"files", texts.size()},
                                 {"bytes", bytes},
                                 {"tokens", tokens},
                                 {"load_s", load_s},
                                 {"encode_cold_mb_per_s", megabytes / cold_s},
                                 {"encode_warm_mb_per_s", megabytes / warm_s},
                                 {"decode_mb_per_s", megabytes / decode_s},
                                 {"repeat", repeat}};
  std::ofstream(json_path) << report.dump(2) << "\n";
  fmt::print("wrote {}\n", json_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "dicebench-tokenizer-bench: {}\n", e.what());
    return 1;
  }
}

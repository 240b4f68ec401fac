// Fuzz target: a safetensors file (its 8-byte header length, JSON header and data offsets). Every
// tensor the reader accepts must lie inside the mapping and hold exactly dtype size x shape bytes.
#include "models/engine/safetensors_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <numeric>

using namespace dicebench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_scratch_file("model.safetensors", fuzz::as_text(data, size));
  auto file = engine::SafetensorsFile::open(path);
  if (!file) {
    fuzz::check_one_line(file.error().message);
    return 0;
  }
  for (const auto& [name, tensor] : file->tensors()) {
    fuzz::check(file->find(name) == &tensor, "find() misses the tensor " + name);
    size_t elements = 1;
    for (int64_t extent : tensor.shape) {
      fuzz::check(extent >= 0, "a negative extent in " + name);
      elements *= static_cast<size_t>(extent);
    }
    fuzz::check(tensor.data.size() == elements * engine::stored_type_size(tensor.type),
                "the byte range of " + name + " does not match its dtype and shape");
    // Reading every byte lets the address sanitizer see a range outside the mapping.
    const unsigned sum = std::accumulate(tensor.data.begin(), tensor.data.end(), 0u,
                                         [](unsigned acc, std::byte b) { return acc + static_cast<unsigned>(b); });
    fuzz::check(sum <= tensor.data.size() * 255u, "impossible byte sum");
  }
  return 0;
}

// Reading a worker's frame into a message the host can take apart without exceptions.
#include "harness/client/worker_message.hpp"

#include <fmt/format.h>

namespace dicebench::harness {

Result<nlohmann::json> parse_worker_message(std::string_view payload) {
  nlohmann::json message;
  try {
    message = nlohmann::json::parse(payload);
  } catch (const nlohmann::json::parse_error& e) {
    // Not e.what(): it quotes the bytes it read, which may hold line breaks.
    return make_error(fmt::format("malformed reply from the worker (not JSON: error {} at byte {})", e.id, e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. out_of_range: a number beyond a double
    return make_error(fmt::format("malformed reply from the worker (not JSON: error {})", e.id));
  }
  if (!message.is_object()) return make_error("malformed reply from the worker (not a JSON object)");
  const auto has_type = [&](const char* key, auto is_type) {
    const auto it = message.find(key);
    return it == message.end() || (it.value().*is_type)();
  };
  if (!message.contains("type") || !message["type"].is_string())
    return make_error("malformed reply from the worker (no \"type\" string)");
  for (const char* key : {"stage", "message"})
    if (!has_type(key, &nlohmann::json::is_string))
      return make_error(fmt::format("malformed reply from the worker (\"{}\" is not a string)", key));
  if (!has_type("protocol", &nlohmann::json::is_number_integer))
    return make_error("malformed reply from the worker (\"protocol\" is not an integer)");
  return message;
}

}  // namespace dicebench::harness

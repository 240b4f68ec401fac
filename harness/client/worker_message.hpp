// A frame from a worker as the host reads it (PROTOCOL.md): a JSON object whose "type" is a
// string, with the fields the host reads before it knows the reply ("stage" of a progress message,
// "message" of an error or a hello, "protocol" of a hello) of their types. Anything else is a
// malformed reply: one error line, never an exception.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"

namespace dicebench::harness {

Result<nlohmann::json> parse_worker_message(std::string_view payload);

}  // namespace dicebench::harness

// Optional values in the JSON records the results module writes and reads back: null when absent.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace dicebench::results {

template <class T>
nlohmann::ordered_json or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// The field `key` of `object`, or nothing when it is missing or null.
template <class T>
std::optional<T> optional_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

}  // namespace dicebench::results

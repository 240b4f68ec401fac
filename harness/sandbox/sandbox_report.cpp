// Protection entries of one sandbox launch (sandbox_report.hpp).
#include "harness/sandbox/sandbox_report.hpp"

#include "harness/sandbox/protections.hpp"

#include <nlohmann/json.hpp>

namespace dicebench::sandbox {

void Report::set(std::string_view protection, bool active, std::string detail) {
  entries_[std::string(protection)] = {active, std::move(detail)};
}

std::string Report::line_for(std::string_view protection, bool active, std::string_view detail) {
  std::string line(protection);
  line += active ? " active " : " missing ";
  for (char c : detail) line += (c == '\n' ? ' ' : c);
  line += '\n';
  return line;
}

void Report::add_lines(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t first = line.find(' ');
    if (first == std::string_view::npos) continue;
    const size_t second = line.find(' ', first + 1);
    const std::string_view state =
        line.substr(first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1);
    if (state != "active" && state != "missing") continue;
    set(line.substr(0, first), state == "active",
        second == std::string_view::npos ? "" : std::string(line.substr(second + 1)));
  }
}

std::string Report::missing() const {
  std::string out;
  for (const auto name : kProtections) {
    const auto it = entries_.find(std::string(name));
    if (it != entries_.end() && it->second.active) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string Report::summary() const {
  std::string active, missing;
  for (const auto name : kProtections) {
    const auto it = entries_.find(std::string(name));
    const bool on = it != entries_.end() && it->second.active;
    std::string& list = on ? active : missing;
    if (!list.empty()) list += ", ";
    list += name;
    if (!on) list += " (" + (it == entries_.end() ? std::string("not attempted") : it->second.detail) + ")";
  }
  return "active: " + (active.empty() ? std::string("none") : active) +
         "; missing: " + (missing.empty() ? std::string("none") : missing);
}

std::string Report::json() const {
  nlohmann::json protections = nlohmann::json::object();
  for (const auto name : kProtections) {
    const auto it = entries_.find(std::string(name));
    protections[std::string(name)] = {{"active", it != entries_.end() && it->second.active},
                                      {"detail", it == entries_.end() ? "not attempted" : it->second.detail}};
  }
  return nlohmann::json{{"protections", protections}}.dump();
}

}  // namespace dicebench::sandbox

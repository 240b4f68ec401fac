"""core/spec/protocol.hpp/.cpp, and the protocol's fields as the Python emitter writes them: one
struct per request, reply type names."""

from __future__ import annotations

import re
from typing import Any

from .model import BANNER, Spec, fail, list_item
from .cpp import comment, cpp_enum_default, cpp_string


def protocol_fields(spec: Spec, message: dict[str, Any], where: str) -> list[dict[str, Any]]:
    groups = spec.protocol.get("group", {})
    fields: list[dict[str, Any]] = []
    for name in message.get("include", []):
        if name not in groups:
            fail(f"protocol.toml: {where} includes unknown group {name!r}")
        fields += groups[name]["fields"]
    fields += message.get("fields", [])
    names = [f["name"] for f in fields]
    if len(names) != len(set(names)):
        fail(f"protocol.toml: {where} has a field twice")
    for f in fields:
        if "enum" in f and f["enum"] not in spec.vocabularies:
            fail(f"protocol.toml: {where}.{f['name']}: unknown vocabulary {f['enum']!r}")
        if "type" not in f and "enum" not in f:
            fail(f"protocol.toml: {where}.{f['name']} has no type")
        if "nested" in f and f["nested"] not in spec.protocol.get("object", {}):
            fail(f"protocol.toml: {where}.{f['name']}: unknown object {f['nested']!r}")
    return fields


def record_struct_protocol(spec: Spec, struct_name: str) -> list[dict[str, Any]]:
    """A record struct's worker fields as protocol fields."""
    fields = []
    for f in spec.structs[struct_name].fields:
        if not f.worker:
            continue
        entry: dict[str, Any] = {"name": f.worker_name}
        if f.vocabulary:
            entry["enum"] = f.vocabulary
        elif f.type in ("real",):
            entry["type"] = "number"
        elif f.type in ("int", "int64"):
            entry["type"] = "int"
            entry["min"] = f.min if f.min is not None else 0
        elif f.type == "text":
            entry["type"] = "string"
        elif f.type == "bool":
            entry["type"] = "bool"
        elif f.type in ("json_array",) or list_item(f.type):
            entry["type"] = "list"
        else:
            entry["type"] = "object"
        fields.append(entry)
    return fields


def message_type_to_struct(kind: str) -> str:
    return "".join(p.capitalize() for p in re.split(r"[._]", kind))


def protocol_cpp_type(spec: Spec, f: dict[str, Any]) -> str:
    if "enum" in f and "type" not in f:
        return spec.vocabularies[f["enum"]].enum
    t = f["type"]
    return {"string": "std::string", "nonempty_string": "std::string", "bool": "bool", "int": "std::int64_t",
            "number": "double", "number?": "std::optional<double>", "object": "nlohmann::json",
            "object?": "nlohmann::json", "list": "nlohmann::json", "seed": "std::uint64_t",
            "seed?": "std::optional<std::uint64_t>", "transfer": "nlohmann::json", "transfer?": "nlohmann::json",
            "transfer_list": "nlohmann::json", "seed_list": "std::vector<std::uint64_t>",
            "trait_list": "std::vector<std::string>", "batch_calls": "nlohmann::json"}[t]


def protocol_cpp_default(spec: Spec, f: dict[str, Any]) -> str:
    if "enum" in f and "type" not in f:
        return f" = {cpp_enum_default(spec.vocabularies[f['enum']], None)}"
    d = f.get("default")
    t = f["type"]
    if d is None or d == "null":
        return {"bool": " = false", "int": " = 0", "number": " = 0", "seed": " = 0"}.get(t, "{}")
    if t == "bool":
        return f" = {'true' if d else 'false'}"
    if t in ("string", "nonempty_string"):
        return f" = {cpp_string(d)}"
    return f" = {d}"


def gen_protocol_hpp(spec: Spec) -> str:
    p = spec.protocol
    out = [f"// {BANNER.format(source='protocol.toml')}\n",
           "// The worker protocol (harness/PROTOCOL.md): its version and limits, and the requests the host sends,\n"
           "// one struct each, whose to_json() is the frame's object (\"type\" included).\n",
           "#pragma once\n\n#include \"core/spec/vocabulary.hpp\"\n\n#include <nlohmann/json.hpp>\n\n"
           "#include <cstdint>\n#include <optional>\n#include <string>\n#include <string_view>\n#include <vector>\n\n"
           "namespace dicebench::protocol {\n\n",
           f"inline constexpr int kVersion = {p['version']};\n",
           f"inline constexpr std::size_t kMaxFrameBytes = {p['max_frame_bytes']};\n",
           f"inline constexpr std::uint64_t kMaxSeed = {p['max_seed']}ULL;\n",
           f"inline constexpr int kMaxBatchCalls = {p['max_batch_calls']};\n\n"]
    for r in p["request"]:
        fields = protocol_fields(spec, r, r["type"])
        if r.get("doc"):
            out.append(comment(r["doc"]))
        out.append(f"struct {message_type_to_struct(r['type'])} {{\n"
                   f"  static constexpr const char* kType = {cpp_string(r['type'])};\n")
        for f in fields:
            if f.get("doc"):
                out.append(comment(f["doc"], "  "))
            out.append(f"  {protocol_cpp_type(spec, f)} {f['name']}{protocol_cpp_default(spec, f)};\n")
        out.append("  nlohmann::json to_json() const;\n};\n\n")
    out.append("// The type of every reply a worker sends.\nnamespace reply {\n")
    out.extend(f"inline constexpr std::string_view k{message_type_to_struct(r['type'])} = {cpp_string(r['type'])};\n"
               for r in p["reply"])
    asks = [f"k{message_type_to_struct(r['type'])}" for r in p["reply"] if r.get("asks_host")]
    out.append("}  // namespace reply\n\n"
               "// Requests a worker makes of the host while it works on one of the host's (PROTOCOL.md).\n"
               f"inline constexpr std::string_view kWorkerRequests[] = {{{', '.join('reply::' + a for a in asks)}}};\n\n")
    out.append("}  // namespace dicebench::protocol\n")
    return "".join(out)


def gen_protocol_cpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='protocol.toml')}\n", "#include \"core/spec/protocol.hpp\"\n\n",
           "namespace dicebench::protocol {\n\n"]
    for r in spec.protocol["request"]:
        fields = protocol_fields(spec, r, r["type"])
        out.append(f"nlohmann::json {message_type_to_struct(r['type'])}::to_json() const {{\n"
                   f"  nlohmann::json out = {{{{\"type\", kType}}}};\n")
        for f in fields:
            name = f["name"]
            t = protocol_cpp_type(spec, f)
            if "enum" in f and "type" not in f:
                out.append(f"  out[{cpp_string(name)}] = std::string(name_of({name}));\n")
            elif t.startswith("std::optional"):
                out.append(f"  out[{cpp_string(name)}] = {name} ? nlohmann::json(*{name}) : nlohmann::json(nullptr);\n")
            elif t == "nlohmann::json" and f.get("default") == "null":
                out.append(f"  out[{cpp_string(name)}] = {name};\n")
            else:
                out.append(f"  out[{cpp_string(name)}] = {name};\n")
        out.append("  return out;\n}\n\n")
    out.append("}  // namespace dicebench::protocol\n")
    return "".join(out)

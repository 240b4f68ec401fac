"""core/spec/evaluation.hpp/.cpp: the record's structs, their JSON both ways, worker replies read into
them, and `dicebench eval`'s text from the [[text]] lines."""

from __future__ import annotations

import re

from .model import BANNER, Field, Spec, fail, is_struct, list_item, resolve_loose
from .cpp import comment, cpp_default, cpp_string, cpp_type, struct_order


def gen_evaluation_hpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='evaluation.toml')}\n",
           "// The evaluation record (core/spec/evaluation.toml says what every field means), its JSON both\n"
           "// ways (the shape of `dicebench eval --json`), worker replies read into its parts, and the text\n"
           "// `dicebench eval` prints.\n",
           "#pragma once\n\n#include \"core/base/result.hpp\"\n#include \"core/spec/vocabulary.hpp\"\n\n",
           "#include <nlohmann/json.hpp>\n\n#include <cstdint>\n#include <map>\n#include <optional>\n"
           "#include <string>\n#include <utility>\n#include <vector>\n\nnamespace dicebench {\n\n"]
    for s in struct_order(spec):
        out.append(comment(s.doc))
        out.append(f"struct {s.name} {{\n")
        for f in s.fields:
            unit = f" [{f.unit}]" if f.unit else ""
            out.append(comment(f"{f.doc}{unit}", "  "))
            out.append(f"  {cpp_type(spec, f)} {f.name}{cpp_default(spec, f)};\n")
        out.append("};\n")
        out.append(f"void to_json(nlohmann::json& out, const {s.name}& value);\n")
        out.append(f"void from_json(const nlohmann::json& in, {s.name}& value);  // throws nlohmann::json::exception\n")
        if any(f.worker for f in s.fields):
            out.append(f"// Read from a worker's reply object (fields it lacks keep their defaults).\n"
                       f"{s.name} {snake(s.name)}_from_worker(const nlohmann::json& reply);\n")
        out.append("\n")
    for name, b in spec.bounds.items():
        camel = "".join(p.capitalize() for p in name.split("_"))
        out.append(comment(b["doc"]))
        out.append(f"inline constexpr double k{camel}Low = {float(b['low'])!r};\n"
                   f"inline constexpr double k{camel}High = {float(b['high'])!r};\n"
                   f"constexpr bool is_{name}(double value) {{ return value >= k{camel}Low && value <= k{camel}High; }}\n\n")
    out.append("// The record as `dicebench eval --json` prints it, and back (an error for JSON that is not one).\n"
               "nlohmann::json evaluation_json(const Evaluation& evaluation);\n"
               "Result<Evaluation> evaluation_from_json(const nlohmann::json& json);\n"
               "// The text `dicebench eval` prints for one evaluation, a line each.\n"
               "std::string evaluation_text(const Evaluation& evaluation);\n\n"
               "}  // namespace dicebench\n")
    return "".join(out)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def json_write_expr(spec: Spec, f: Field, expr: str) -> str:
    """C++ expression of the JSON value of field f held in expr (optionals handled by the caller)."""
    t = f.type
    if t in spec.enums:
        return f"std::string(name_of({expr}))"
    if t == "flags":
        return f"flags_json({expr})"
    return f"nlohmann::json({expr})"


def gen_evaluation_cpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='evaluation.toml')}\n",
           "#include \"core/spec/evaluation.hpp\"\n\n#include <fmt/format.h>\n\n#include <string>\n\n"
           "namespace dicebench {\nnamespace {\n\n",
           "// {\"name\": \"detail\", ...} in the order they were set.\n"
           "nlohmann::json flags_json(const std::vector<std::pair<EvaluationFlag, std::string>>& flags) {\n"
           "  nlohmann::json out = nlohmann::json::object();\n"
           "  for (const auto& [flag, detail] : flags) out[std::string(flag_name(flag))] = detail;\n"
           "  return out;\n}\n\n"
           "std::vector<std::pair<EvaluationFlag, std::string>> flags_from(const nlohmann::json& in) {\n"
           "  std::vector<std::pair<EvaluationFlag, std::string>> flags;\n"
           "  for (const auto& [name, detail] : in.items()) {\n"
           "    const auto flag = parse_flag(name);\n"
           "    if (!flag) throw nlohmann::json::other_error::create(501, \"unknown flag '\" + name + \"'\", &in);\n"
           "    flags.emplace_back(*flag, detail.get<std::string>());\n"
           "  }\n  return flags;\n}\n\n"
           "template <class E>\nE enum_from(const nlohmann::json& in) {\n"
           "  const auto value = parse_name<E>(in.get<std::string>());\n"
           "  if (!value) throw nlohmann::json::other_error::create(501, \"'\" + in.get<std::string>() + \"' is no \" +\n"
           "                                                      std::string(VocabularyOf<E>::noun), &in);\n"
           "  return *value;\n}\n\n"
           "// A number of a worker's reply, as the record's type.\n"
           "template <class T>\nT worker_value(const nlohmann::json& reply, const char* key, T fallback) {\n"
           "  const auto it = reply.find(key);\n"
           "  if (it == reply.end() || it->is_null()) return fallback;\n"
           "  return it->get<T>();\n}\n\n"
           "}  // namespace\n\n"]
    for s in struct_order(spec):
        # to_json
        out.append(f"void to_json(nlohmann::json& out, const {s.name}& v) {{\n  out = nlohmann::json::object();\n")
        for f in s.fields:
            if f.json is False:
                continue
            member = f"v.{f.name}"
            if isinstance(f.json, str):
                value_of = f"{member}->{f.json}" if f.optional else f"{member}.{f.json}"
                if f.optional:
                    out.append(f"  out[{cpp_string(f.name)}] = {member} ? nlohmann::json({value_of}) : nlohmann::json(nullptr);\n")
                else:
                    out.append(f"  out[{cpp_string(f.name)}] = {value_of};\n")
                continue
            if f.optional:
                out.append(f"  out[{cpp_string(f.name)}] = {member} ? {json_write_expr(spec, f, '*' + member)} : nlohmann::json(nullptr);\n")
            else:
                out.append(f"  out[{cpp_string(f.name)}] = {json_write_expr(spec, f, member)};\n")
        out.append("}\n\n")
        # from_json
        out.append(f"void from_json(const nlohmann::json& in, {s.name}& v) {{\n")
        for f in s.fields:
            if f.json is False:
                continue
            key = cpp_string(f.name)
            out.append(f"  if (const auto it = in.find({key}); it != in.end() && !it->is_null()) {{\n")
            if isinstance(f.json, str):
                target = f"v.{f.name}"
                inner = cpp_type(spec, f, with_optional=False)
                out.append(f"    {inner} part;\n    part.{f.json} = *it;\n    {target} = std::move(part);\n  }}\n")
                continue
            base = cpp_type(spec, f, with_optional=False)
            if f.type in spec.enums:
                value = f"enum_from<{f.type}>(*it)"
            elif f.type == "flags":
                value = "flags_from(*it)"
            else:
                value = f"it->get<{base}>()"
            out.append(f"    v.{f.name} = {value};\n  }}\n")
        out.append("}\n\n")
        # from_worker
        if any(f.worker for f in s.fields):
            out.append(f"{s.name} {snake(s.name)}_from_worker(const nlohmann::json& reply) {{\n  {s.name} v;\n")
            for f in s.fields:
                if not f.worker:
                    continue
                key = cpp_string(f.worker_name)
                if item := list_item(f.type):
                    out.append(f"  if (const auto it = reply.find({key}); it != reply.end() && it->is_array())\n"
                               f"    for (const auto& element : *it) v.{f.name}.push_back({snake(item)}_from_worker(element));\n")
                elif f.type in ("json", "json_object", "json_array"):
                    out.append(f"  if (const auto it = reply.find({key}); it != reply.end() && !it->is_null()) v.{f.name} = *it;\n")
                else:
                    base = cpp_type(spec, f, with_optional=False)
                    out.append(f"  v.{f.name} = worker_value<{base}>(reply, {key}, v.{f.name});\n")
            out.append("  return v;\n}\n\n")
    out.append("nlohmann::json evaluation_json(const Evaluation& evaluation) { return evaluation; }\n\n"
               "Result<Evaluation> evaluation_from_json(const nlohmann::json& json) {\n"
               "  if (!json.is_object()) return make_error(\"an evaluation must be a JSON object\");\n"
               "  try {\n    return json.get<Evaluation>();\n"
               "  } catch (const nlohmann::json::exception& error) {\n"
               "    return make_error(fmt::format(\"not an evaluation: {}\", error.what()));\n  }\n}\n\n")
    out.append(gen_text(spec))
    out.append("}  // namespace dicebench\n")
    return "".join(out)


# `dicebench eval`'s text


PLACEHOLDER = re.compile(r"\{([a-z_.]+)(?::(%?)([^}]*))?\}")


def text_access(spec: Spec, path: str, where: str, fmt_spec: str = "") -> tuple[str, list[str], str]:
    """(C++ value expression, presence conditions of its optional parents, its kind: text, number, json,
    enum, flags)."""
    steps, keys = resolve_loose(spec, path, where)
    expr, conditions = "e", []
    for i, step in enumerate(steps):
        expr = f"{expr}.{step.field.name}"
        last = i == len(steps) - 1
        if step.field.optional and (not last or keys or is_struct(spec, step.field.type)):
            conditions.append(expr)
            expr = f"({expr})" if False else expr
            if not last or keys:
                expr = f"(*{expr})"
    f = steps[-1].field
    if keys:
        json_expr = expr
        for key in keys[:-1]:
            json_expr = f"{json_expr}.value({cpp_string(key)}, nlohmann::json::object())"
        number_type = "double" if any(c in fmt_spec for c in "efg") else "std::int64_t"
        zero = "0.0" if number_type == "double" else "std::int64_t{0}"
        return f"{json_expr}.value({cpp_string(keys[-1])}, {zero})", conditions, "number"
    if f.optional and f.type in ("real", "int", "int64"):
        return f"{expr}.value_or(0)", conditions, "number"
    if f.type in spec.enums:
        return f"name_of({expr})", conditions, "enum"
    if f.type == "text":
        return expr, conditions, "text"
    if f.type in ("json", "json_object", "json_array"):
        return f"{expr}.dump()", conditions, "json"
    if f.type in ("real", "int", "int64", "bool"):
        return expr, conditions, "number"
    fail(f"{where}: {path} cannot be printed")
    raise AssertionError


def truthy(spec: Spec, path: str, where: str) -> tuple[str, list[str]]:
    """A C++ condition that `path` is set, and the presence conditions it needs first."""
    negate = None
    if path.startswith("!"):
        path, _, negate = path[1:].partition("=")
    steps, keys = resolve_loose(spec, path, where)
    f = steps[-1].field
    if not keys and is_struct(spec, f.type) and f.optional and negate is None:
        expr, conditions, _ = text_access(spec, path + "." + spec.structs[f.type].fields[0].name, where)
        return conditions[-1], conditions[:-1]
    expr, conditions, kind = text_access(spec, path, where, "g" if keys else "")
    if negate is not None:
        if kind not in ("text", "enum"):
            fail(f"{where}: !{path}= needs a text")
        return f"{expr} != {cpp_string(negate)}", conditions
    if f.optional and not keys and f.type in ("real", "int", "int64", "json"):
        base = expr.removesuffix(".value_or(0)")
        return f"{base}.has_value()", conditions
    if kind == "text":
        return f"!{expr}.empty()", conditions
    if kind == "json":
        return f"!{expr.removesuffix('.dump()')}.empty()", conditions
    return f"{expr} != 0", conditions


def render_line(spec: Spec, line: str, where: str) -> tuple[str, list[str], list[str]]:
    """(a C++ expression building the line's text, conditions for the whole line, the paths named
    outside [...] segments)."""
    parts: list[str] = []
    conditions: list[str] = []
    named: list[str] = []
    pos = 0
    for segment in re.finditer(r"\[([^\]]*)\]|([^\[]+)", line):
        optional_text, plain = segment.group(1), segment.group(2)
        body = optional_text if optional_text is not None else plain
        fmt_text, args, segment_conditions, paths = "", [], [], []
        last = 0
        for m in PLACEHOLDER.finditer(body):
            fmt_text += body[last:m.start()].replace("{", "{{").replace("}", "}}")
            last = m.end()
            path, percent, fmt_spec = m.group(1), m.group(2), m.group(3) or ""
            expr, needs, _kind = text_access(spec, path, where, fmt_spec)
            segment_conditions += needs
            paths.append(path)
            if percent:
                expr = f"100.0 * {expr}"
            fmt_text += "{" + (":" + fmt_spec if fmt_spec else "") + "}"
            args.append(expr)
        fmt_text += body[last:].replace("{", "{{").replace("}", "}}")
        call = f"fmt::format({cpp_string(fmt_text)}{''.join(', ' + a for a in args)})" if args else cpp_string(fmt_text)
        if optional_text is not None:
            tests = []
            for path in paths:
                test, needs = truthy(spec, path, where)
                tests += [*needs, test]
            parts.append(f"(({' && '.join(dict.fromkeys(tests))}) ? std::string({call}) : std::string())")
        else:
            conditions += segment_conditions
            named += paths
            parts.append(f"std::string({call})")
        pos = segment.end()
    del pos
    return " + ".join(parts), conditions, named


def gen_text(spec: Spec) -> str:
    out = ["std::string evaluation_text(const Evaluation& e) {\n  std::string text;\n"]
    for i, t in enumerate(spec.text):
        where = f"evaluation.toml: text line {i + 1}"
        if t.get("each") == "flags":
            fmt_text = t["line"].replace("{name}", "{0}").replace("{detail}", "{1}")
            out.append(f"  for (const auto& [flag, detail] : e.flags) text += fmt::format({cpp_string(fmt_text + chr(10))}, "
                       f"flag_name(flag), detail);\n")
            continue
        expr, conditions, _ = render_line(spec, t["line"], where)
        tests: list[str] = []
        for path in t.get("when", []):
            test, needs = truthy(spec, path, where)
            tests += [*needs, test]
        all_tests = list(dict.fromkeys(conditions + tests))
        ordered: list[str] = []
        # presence checks come before the tests that dereference what they guard
        for test in all_tests:
            if test.startswith("e.") and "(" not in test and "!" not in test and " " not in test:
                ordered.insert(0, test)
            else:
                ordered.append(test)
        statement = f"text += {expr} + \"\\n\";"
        if ordered:
            out.append(f"  if ({' && '.join(dict.fromkeys(ordered))}) {statement}\n")
        else:
            out.append(f"  {statement}\n")
    out.append("  return text;\n}\n\n")
    return "".join(out)

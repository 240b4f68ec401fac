"""core/spec/evaluation_store.hpp/.cpp: the database's shape of the record (StoredEvaluation), its DDL
per schema version, binding and reading, the details JSON and the flat export record."""

from __future__ import annotations

from typing import Any

from .model import BANNER, Spec, fail, leaf, list_item, resolve
from .cpp import comment, cpp_enum_default, cpp_string


def column_member_type(spec: Spec, c: dict[str, Any]) -> str:
    if c.get("type") == "int64":
        return "std::int64_t"
    if c.get("type") == "created":
        return "std::string"
    f = leaf(spec, c["from"], c["name"])
    not_null = "NOT NULL" in c["sql"]
    base = {"bool": "bool", "int": "std::int64_t", "int64": "std::int64_t", "real": "double", "text": "std::string"}.get(
        f.type, f.type if f.type in spec.enums else "")
    if not base:
        fail(f"evaluation.toml: column {c['name']} cannot hold {f.type}")
    return base if not_null else f"std::optional<{base}>"


def detail_member_type(spec: Spec, d: dict[str, Any]) -> str:
    if "values" in d:
        return "std::optional<std::string>"
    f = leaf(spec, d["from"], d["key"])
    base = {"real": "double", "int": "std::int64_t", "int64": "std::int64_t", "text": "std::string", "bool": "bool"}.get(
        f.type, "nlohmann::json")
    return f"std::optional<{base}>"


def record_access(spec: Spec, path: str, where: str) -> tuple[str, list[str]]:
    """The C++ expression of a record path in `e`, and the optionals that must be set first."""
    steps = resolve(spec, path, where)
    expr, conditions = "e", []
    for i, step in enumerate(steps):
        expr = f"{expr}.{step.field.name}"
        if step.field.optional and i < len(steps) - 1:
            conditions.append(f"{expr}.has_value()")
            expr = f"(*{expr})"
    return expr, conditions


def sql_of(spec: Spec, c: dict[str, Any]) -> str:
    """A column's definition as its schema version made it (a CHECK's list is spelled out there)."""
    del spec
    return str(c["sql"])


def gen_store_hpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='evaluation.toml')}\n",
           "// The evaluation record as the results database holds it: the evaluations row (columns and the\n"
           "// details JSON, each typed), its flags and per-kernel rows, the SQL that makes, writes and reads\n"
           "// them on every schema version, and the flat per-sample record of exports and run summaries.\n",
           "#pragma once\n\n#include \"core/base/result.hpp\"\n#include \"core/spec/evaluation.hpp\"\n\n"
           "#include <nlohmann/json.hpp>\n\n#include <cstdint>\n#include <optional>\n#include <string>\n"
           "#include <string_view>\n#include <vector>\n\nnamespace dicebench::results {\n\nclass Statement;\n\n"
           "// A flag as stored (evaluation_flags): its name (one this build may not know, from a newer one) and\n"
           "// what it saw.\nstruct StoredFlag {\n  std::string name, detail;\n  bool operator==(const StoredFlag&) const = default;\n};\n"
           "// Sorts flags into the vocabulary's order, names this build does not know last, by name.\n"
           "void sort_flags(std::vector<StoredFlag>& flags);\n\n"
           "// One evaluations row, with its details and the rows beside it.\nstruct StoredEvaluation {\n"]
    for c in spec.columns:
        if c.get("type") == "details":
            for d in spec.details:
                doc = d.get("doc") or leaf(spec, d["from"], d["key"]).doc
                out.append(comment(f"details.{d['key']}: {doc}", "  "))
                out.append(f"  {detail_member_type(spec, d)} {d['key']};\n")
            continue
        doc = c.get("doc") or leaf(spec, c["from"], c["name"]).doc
        out.append(comment(f"{c['name']}: {doc}", "  "))
        member_type = column_member_type(spec, c)
        default = ""
        if member_type in spec.enums:
            default = f" = {cpp_enum_default(spec.enums[member_type], None)}"
        elif member_type in ("bool",):
            default = " = false"
        elif member_type == "std::int64_t":
            default = " = 0"
        out.append(f"  {member_type} {c['name']}{default};\n")
    for t in spec.tables:
        f = leaf(spec, t["from"], t["name"])
        member = "flags" if f.type == "flags" else t["name"].removeprefix("evaluation_")
        item = "StoredFlag" if f.type == "flags" else list_item(f.type)
        out.append(f"  // {t['name']}: {f.doc}\n  std::vector<{item}> {member};\n")
    out.append("};\n\n")
    versions = sorted({c["since"] for c in spec.columns})
    out.append(
        "// The row of an evaluation of `sample` (what is not stored, such as the baseline's spread, is left out).\n"
        "StoredEvaluation stored_evaluation(std::int64_t sample, const Evaluation& evaluation);\n"
        "// The details JSON of a row, and a row's details read back from it (keys this build does not know\n"
        "// are left out; a key of the wrong type is an error).\n"
        "std::string details_json(const StoredEvaluation& row);\n"
        "Result<void> read_details_json(std::string_view text, StoredEvaluation& row);\n\n"
        f"// The schema versions that made evaluations columns ({', '.join(map(str, versions))}): the CREATE\n"
        "// TABLE evaluations of the first, ALTER TABLE statements of the others.\n"
        "std::string evaluation_columns_sql(int schema_version);\n"
        "// INSERT INTO evaluations, with `now` the SQL of the creation time; bind_evaluation binds a row to it.\n"
        "std::string insert_evaluation_sql(std::string_view now);\n"
        "void bind_evaluation(Statement& statement, const StoredEvaluation& row);\n"
        "// The columns to SELECT from evaluations aliased `alias` on a database of `schema_version` (NULL for\n"
        "// those it lacks), how many there are, and reading them from `first` on into a row.\n"
        "std::string evaluation_select_sql(int schema_version, std::string_view alias);\n"
        f"inline constexpr int kEvaluationSelectColumns = {sum(1 for _ in spec.columns)};\n"
        "// The newest schema version that added evaluations columns.\n"
        f"inline constexpr int kEvaluationColumnsVersion = {max(c['since'] for c in spec.columns)};\n"
        "Result<void> read_evaluation(const Statement& statement, int first, StoredEvaluation& row);\n"
        "// The per-kernel rows: INSERT INTO evaluation_kernels and its binding, the columns to SELECT and\n"
        "// reading them from `first` on.\n"
        "std::string insert_kernel_sql();\n"
        "void bind_kernel(Statement& statement, std::int64_t sample, const KernelTime& kernel);\n"
        "std::string kernel_select_sql();\n"
        "KernelTime read_kernel(const Statement& statement, int first);\n\n")
    sample_keys = [e["key"] for e in spec.exports if e.get("sample")]
    out.append("// The sample-level keys of the flat record, as JSON values (null where absent).\nstruct ExportSample {\n")
    out.append("".join(f"  nlohmann::ordered_json {k};\n" for k in sample_keys))
    out.append("};\n"
               "// The flat per-sample record (`export --format jsonl|csv`, run summaries), keys in their fixed order;\n"
               "// `row` null for a sample without an evaluation (its figures null).\n"
               "nlohmann::ordered_json export_record(const ExportSample& sample, const StoredEvaluation* row);\n"
               "// Its inverse: the sample keys as they are, the evaluation's keys into `row` (absent: not set). An\n"
               "// error names `where`.\n"
               "Result<ExportSample> read_export_record(const nlohmann::json& record, StoredEvaluation& row, const std::string& where);\n\n"
               "}  // namespace dicebench::results\n")
    return "".join(out)


def gen_store_cpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='evaluation.toml')}\n",
           "#include \"core/spec/evaluation_store.hpp\"\n\n#include \"results/store/sqlite_handle.hpp\"\n\n"
           "#include <fmt/format.h>\n\n#include <algorithm>\n\nnamespace dicebench::results {\nnamespace {\n\n"
           "std::string stored_text(const nlohmann::json& j) {\n"
           "  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);\n}\n\n"
           "template <class T>\nnlohmann::ordered_json or_null(const std::optional<T>& value) {\n"
           "  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);\n}\n\n"
           "nlohmann::json dropping(nlohmann::json array, std::initializer_list<const char*> keys) {\n"
           "  if (!array.is_array()) return array;\n"
           "  for (auto& element : array)\n    if (element.is_object())\n      for (const char* key : keys) element.erase(key);\n"
           "  return array;\n}\n\n"
           "bool nonzero(const nlohmann::json& j) {\n"
           "  if (j.is_number()) return j.get<double>() != 0;\n"
           "  if (j.is_object())\n    for (const auto& [key, value] : j.items())\n      if (nonzero(value)) return true;\n"
           "  return false;\n}\n\n"
           "}  // namespace\n\n"]
    # stored_evaluation
    out.append("StoredEvaluation stored_evaluation(std::int64_t sample, const Evaluation& e) {\n"
               "  StoredEvaluation row;\n  row.sample = sample;\n")
    for c in spec.columns:
        if "from" not in c:
            continue
        expr, conditions = record_access(spec, c["from"], c["name"])
        f = leaf(spec, c["from"], c["name"])
        value = expr
        if f.optional:
            value = expr  # optional to optional
        if "clamp" in c:
            low, high = c["clamp"]
            value = f"std::clamp({expr}, {float(low)!r}, {float(high)!r})"
        if "limit" in c:
            value = f"{expr}.substr(0, {c['limit']})"
        guard = list(conditions)
        if c.get("null_if_empty"):
            guard.append(f"!{expr}.empty()")
        statement = f"row.{c['name']} = {value};"
        out.append(f"  if ({' && '.join(guard)}) {statement}\n" if guard else f"  {statement}\n")
    for d in spec.details:
        expr, conditions = record_access(spec, d["from"], d["key"])
        f = leaf(spec, d["from"], d["key"])
        guard = list(conditions)
        if "given" in d:
            given_expr, given_conditions = record_access(spec, d["given"], d["key"])
            guard += [*given_conditions, f"{given_expr}.has_value()"]
        when = d.get("when", "present")
        value = expr
        if f.optional:
            guard.append(f"{expr}.has_value()")
            value = f"*{expr}"
        if when == "nonempty":
            guard.append(f"!{expr}.empty()")
        elif when == "nonzero":
            guard.append(f"nonzero(nlohmann::json({expr}))")
        elif when.startswith("nonzero:"):
            guard.append(f"nonzero(nlohmann::json({expr}).value({cpp_string(when[8:])}, nlohmann::json(0)))")
        elif when not in ("always", "present"):
            fail(f"evaluation.toml: detail {d['key']}: unknown when {when!r}")
        if "values" in d:
            yes, no = d["values"]
            value = f"std::string({value} ? {cpp_string(yes)} : {cpp_string(no)})"
        elif "drop" in d:
            value = f"dropping({value}, {{{', '.join(cpp_string(k) for k in d['drop'])}}})"
        elif detail_member_type(spec, d) == "std::optional<nlohmann::json>":
            value = f"nlohmann::json({value})"
        statement = f"row.{d['key']} = {value};"
        out.append(f"  if ({' && '.join(guard)}) {statement}\n" if guard else f"  {statement}\n")
    for t in spec.tables:
        expr, conditions = record_access(spec, t["from"], t["name"])
        f = leaf(spec, t["from"], t["name"])
        table_guard = f"if ({' && '.join(conditions)}) " if conditions else ""
        if f.type == "flags":
            out.append(f"  {table_guard}for (const auto& [flag, detail] : {expr}) row.flags.push_back({{std::string(flag_name(flag)), detail}});\n"
                 "  sort_flags(row.flags);  // the vocabulary's order, as the store reads them back\n")
        else:
            member = t["name"].removeprefix("evaluation_")
            out.append(f"  {table_guard}row.{member} = {expr};\n")
    out.append("  return row;\n}\n\n")
    # details JSON
    out.append("std::string details_json(const StoredEvaluation& row) {\n  nlohmann::json details = nlohmann::json::object();\n")
    out.extend(f"  if (row.{d['key']}) details[{cpp_string(d['key'])}] = *row.{d['key']};\n" for d in spec.details)
    out.append("  return stored_text(details);\n}\n\n")
    out.append("Result<void> read_details_json(std::string_view text, StoredEvaluation& row) {\n"
               "  const nlohmann::json details = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);\n"
               "  if (!details.is_object()) return make_error(\"the details are not a JSON object\");\n"
               "  try {\n")
    for d in spec.details:
        held = detail_member_type(spec, d).removeprefix("std::optional<").removesuffix(">")
        key = cpp_string(d["key"])
        if held == "nlohmann::json":
            out.append(f"    if (const auto it = details.find({key}); it != details.end()) row.{d['key']} = *it;\n")
        else:
            out.append(f"    if (const auto it = details.find({key}); it != details.end() && !it->is_null()) row.{d['key']} = it->get<{held}>();\n")
    out.append("  } catch (const nlohmann::json::exception& error) {\n"
               "    return make_error(fmt::format(\"the details hold {}\", error.what()));\n  }\n  return {};\n}\n\n")
    # DDL
    first = min(c["since"] for c in spec.columns)
    out.append("std::string evaluation_columns_sql(int schema_version) {\n  switch (schema_version) {\n")
    for version in sorted({c["since"] for c in spec.columns}):
        cols = [c for c in spec.columns if c["since"] == version]
        if version == first:
            body = ",\n".join(f"  {c['name']} {sql_of(spec, c)}" for c in cols)
            sql = f"CREATE TABLE evaluations (\n{body}\n) STRICT;\n"
        else:
            sql = "".join(f"ALTER TABLE evaluations ADD COLUMN {c['name']} {sql_of(spec, c)};\n" for c in cols)
        out.append(f"    case {version}:\n      return {cpp_string(sql)};\n")
    out.append("    default:\n      return \"\";\n  }\n}\n\n")
    stored_columns = [c for c in spec.columns]
    names = ", ".join(c["name"] for c in stored_columns)
    marks = ", ".join("{}" if c.get("type") == "created" else "?" for c in stored_columns)
    out.append(f"std::string insert_evaluation_sql(std::string_view now) {{\n"
               f"  return fmt::format({cpp_string(f'INSERT INTO evaluations ({names}) VALUES ({marks})')}, now);\n}}\n\n")
    out.append("void bind_evaluation(Statement& statement, const StoredEvaluation& row) {\n  int index = 0;\n")
    for c in stored_columns:
        kind = c.get("type")
        if kind == "created":
            continue
        if kind == "details":
            out.append("  statement.bind(++index, details_json(row));\n")
            continue
        member_type = column_member_type(spec, c)
        if member_type in spec.enums:
            out.append(f"  statement.bind(++index, name_of(row.{c['name']}));\n")
        elif member_type == "bool":
            out.append(f"  statement.bind(++index, row.{c['name']} ? 1 : 0);\n")
        else:
            out.append(f"  statement.bind(++index, row.{c['name']});\n")
    out.append("}\n\n")
    # SELECT
    out.append("std::string evaluation_select_sql(int schema_version, std::string_view alias) {\n  std::string sql;\n")
    for i, c in enumerate(spec.columns):
        sep = '", "' if i else '""'
        out.append(f"  sql += {sep};\n" if i else "")
        out.append(f"  sql += schema_version >= {c['since']} ? fmt::format(\"{{}}.{c['name']}\", alias) : std::string(\"NULL\");\n")
    out.append("  return sql;\n}\n\n")
    out.append("Result<void> read_evaluation(const Statement& s, int first, StoredEvaluation& row) {\n  int at = first;\n")
    for c in spec.columns:
        kind = c.get("type")
        if kind == "details":
            out.append("  if (auto read = read_details_json(s.is_null(at) ? std::string(\"{}\") : s.column_text(at), row); !read)\n"
                       "    return make_error(fmt::format(\"evaluation of sample {}: {}\", row.sample, read.error().message));\n  ++at;\n")
            continue
        member_type = column_member_type(spec, c) if kind != "created" else "std::string"
        target = f"row.{c['name']}"
        if member_type in spec.enums:
            v = spec.enums[member_type]
            out.append(f"  if (const auto value = parse_{v.stem}(s.column_text(at)))\n    {target} = *value;\n"
                       f"  else\n    return make_error(fmt::format(\"sample {{}} has {v.stem.replace('_', ' ')} '{{}}', which this build does not know\", "
                       f"row.sample, s.column_text(at)));\n  ++at;\n")
        elif member_type == "bool":
            out.append(f"  {target} = s.column_int64(at++) != 0;\n")
        elif member_type == "std::int64_t":
            out.append(f"  {target} = s.column_int64(at++);\n")
        elif member_type == "std::string":
            out.append(f"  {target} = s.is_null(at) ? std::string() : s.column_text(at);\n  ++at;\n")
        elif member_type == "std::optional<double>":
            out.append(f"  {target} = s.column_optional_double(at++);\n")
        elif member_type == "std::optional<std::string>":
            out.append(f"  {target} = s.column_optional_text(at++);\n")
        elif member_type == "std::optional<std::int64_t>":
            out.append(f"  {target} = s.column_optional_int64(at++);\n")
        else:
            fail(f"evaluation.toml: column {c['name']}: cannot read {member_type}")
    out.append("  return {};\n}\n\n")
    kernel = spec.structs["KernelTime"]
    kcols = ", ".join(["sample"] + [f.name for f in kernel.fields])
    kmarks = ", ".join("?" for _ in range(len(kernel.fields) + 1))
    out.append(f"std::string insert_kernel_sql() {{\n  return {cpp_string(f'INSERT INTO evaluation_kernels ({kcols}) VALUES ({kmarks})')};\n}}\n\n")
    out.append("void bind_kernel(Statement& statement, std::int64_t sample, const KernelTime& kernel) {\n"
               "  int index = 0;\n  statement.bind(++index, sample);\n")
    for f in kernel.fields:
        value = f"kernel.{f.name} ? 1 : 0" if f.type == "bool" else f"kernel.{f.name}"
        out.append(f"  statement.bind(++index, {value});\n")
    out.append("}\n\n")
    out.append(f"std::string kernel_select_sql() {{\n  return {cpp_string(', '.join(f.name for f in kernel.fields))};\n}}\n\n")
    out.append("KernelTime read_kernel(const Statement& s, int first) {\n  KernelTime kernel;\n  int at = first;\n")
    for f in kernel.fields:
        read = {"bool": "s.column_int64(at++) != 0", "real": "s.column_double(at++)", "text": "s.column_text(at++)",
                "int": "static_cast<int>(s.column_int64(at++))", "int64": "s.column_int64(at++)"}[f.type]
        out.append(f"  kernel.{f.name} = {read};\n")
    out.append("  return kernel;\n}\n\n")
    out.append("void sort_flags(std::vector<StoredFlag>& flags) {\n"
               "  const auto rank = [](const StoredFlag& f) {\n"
               "    const auto flag = parse_flag(f.name);\n"
               "    return flag ? static_cast<std::size_t>(*flag) : kAllEvaluationFlags.size();\n  };\n"
               "  std::stable_sort(flags.begin(), flags.end(), [&](const StoredFlag& a, const StoredFlag& b) {\n"
               "    const std::size_t ra = rank(a), rb = rank(b);\n"
               "    return ra != rb ? ra < rb : a.name < b.name;\n  });\n}\n\n")
    # export record
    column_names = {c["name"]: c for c in spec.columns}
    detail_names = {d["key"]: d for d in spec.details}
    out.append("nlohmann::ordered_json export_record(const ExportSample& sample, const StoredEvaluation* row) {\n"
               "  nlohmann::ordered_json r;\n")
    for e in spec.exports:
        key = e["key"]
        k = cpp_string(key)
        if e.get("sample"):
            out.append(f"  r[{k}] = sample.{key};\n")
        elif key == "flags":
            out.append(f"  r[{k}] = nlohmann::ordered_json::array();\n"
                       f"  if (row)\n    for (const StoredFlag& flag : row->flags) r[{k}].push_back(flag.name);\n")
        elif key == "flag_details":
            out.append(f"  r[{k}] = nlohmann::ordered_json::object();\n"
                       f"  if (row)\n    for (const StoredFlag& flag : row->flags) r[{k}][flag.name] = flag.detail;\n")
        elif key in detail_names:
            out.append(f"  r[{k}] = row ? or_null(row->{key}) : nullptr;\n")
        else:
            member_type = column_member_type(spec, column_names[key])
            if member_type.startswith("std::optional"):
                out.append(f"  r[{k}] = row ? or_null(row->{key}) : nullptr;\n")
            elif member_type in spec.enums:
                out.append(f"  r[{k}] = row ? nlohmann::ordered_json(std::string(name_of(row->{key}))) : nullptr;\n")
            elif member_type == "std::string":  # empty: a sample without an evaluation
                out.append(f"  r[{k}] = row && !row->{key}.empty() ? nlohmann::ordered_json(row->{key}) : nullptr;\n")
            else:
                out.append(f"  r[{k}] = row ? nlohmann::ordered_json(row->{key}) : nlohmann::ordered_json({'false' if member_type == 'bool' else '0'});\n")
    out.append("  return r;\n}\n\n")
    out.append("Result<ExportSample> read_export_record(const nlohmann::json& r, StoredEvaluation& row, const std::string& where) {\n"
               "  if (!r.is_object()) return make_error(fmt::format(\"{}: a record must be a JSON object\", where));\n"
               "  ExportSample sample;\n  try {\n")
    for e in spec.exports:
        key = e["key"]
        k = cpp_string(key)
        if e.get("sample"):
            out.append(f"    if (const auto it = r.find({k}); it != r.end()) sample.{key} = *it;\n")
        elif key == "flags":
            out.append(f"    if (const auto it = r.find({k}); it != r.end() && it->is_array()) {{\n"
                       f"      const auto details = r.find(\"flag_details\");\n"
                       f"      for (const auto& name : *it) {{\n"
                       f"        const std::string flag = name.get<std::string>();\n"
                       f"        std::string detail;\n"
                       f"        if (details != r.end() && details->is_object() && details->contains(flag)) detail = details->at(flag).get<std::string>();\n"
                       f"        row.flags.push_back({{flag, detail}});\n      }}\n    }}\n")
        elif key == "flag_details":
            continue
        else:
            member_type = (detail_member_type(spec, detail_names[key]) if key in detail_names
                           else column_member_type(spec, column_names[key]))
            inner = member_type.removeprefix("std::optional<").removesuffix(">")
            if member_type in spec.enums:
                v = spec.enums[member_type]
                out.append(f"    if (const auto it = r.find({k}); it != r.end() && !it->is_null()) {{\n"
                           f"      const auto value = parse_{v.stem}(it->get<std::string>());\n"
                           f"      if (!value) return make_error(fmt::format(\"{{}}: unknown {v.stem.replace('_', ' ')} '{{}}'\", where, it->get<std::string>()));\n"
                           f"      row.{key} = *value;\n    }}\n")
            elif member_type == "bool":  # a NOT NULL column: every record has it
                out.append(f"    row.{key} = r.at({k}).get<bool>();\n")
            else:
                out.append(f"    if (const auto it = r.find({k}); it != r.end() && !it->is_null()) row.{key} = it->get<{inner}>();\n")
    out.append("  } catch (const nlohmann::json::exception& error) {\n"
               "    return make_error(fmt::format(\"{}: malformed sample record ({})\", where, error.what()));\n  }\n"
               "  return sample;\n}\n\n}  // namespace dicebench::results\n")
    return "".join(out)

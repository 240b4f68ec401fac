"""core/spec/vocabulary.hpp: an enum class per vocabulary, its names, parsing, descriptions and groups."""

from __future__ import annotations

from .model import BANNER, Spec, Vocabulary
from .cpp import comment, cpp_string


def gen_vocabulary_hpp(spec: Spec) -> str:
    out = [f"// {BANNER.format(source='vocabulary.toml')}\n",
           "// The fixed vocabularies: an enum class each, with its names (the exact spelling in SQL, JSON and the\n"
           "// worker protocol), parsing, descriptions and named groups; name_of() and parse_name<E>() for all.\n",
           "#pragma once\n\n#include <array>\n#include <cstddef>\n#include <optional>\n#include <span>\n#include <string_view>\n\n",
           "namespace dicebench {\n\n",
           "template <class E>\nstruct VocabularyOf;  // specialised below for every vocabulary\n\n",
           "// A named group of a vocabulary's values, with what it means.\n"
           "template <class E>\nstruct NamedGroup {\n  std::string_view name, doc;\n  std::span<const E> members;\n};\n\n",
           "// A number a vocabulary's value takes as a parameter (a reward shape's), with its default.\n"
           "struct ValueParam {\n  std::string_view name;\n  double default_value;\n  std::string_view doc;\n};\n\n"]
    for v in spec.vocabularies.values():
        n = len(v.values)
        out.append(comment(v.doc))
        out.append(f"enum class {v.enum} {{\n")
        out.extend(f"  {value['name']},  // {value['doc']}\n" for value in v.values)
        out.append("};\n")
        out.append(f"inline constexpr std::array<{v.enum}, {n}> {v.all} = {{\n")
        out.append("".join(f"    {v.enum}::{x['name']},\n" for x in v.values))
        out.append("};\n")
        names = ", ".join(cpp_string(x) for x in v.names())
        docs = ",\n    ".join(cpp_string(x["doc"]) for x in v.values)
        out.append(f"template <>\nstruct VocabularyOf<{v.enum}> {{\n"
                   f"  static constexpr std::array<std::string_view, {n}> names = {{{names}}};\n"
                   f"  static constexpr std::array<std::string_view, {n}> descriptions = {{\n    {docs}}};\n"
                   f"  static constexpr std::string_view noun = {cpp_string(v.stem.replace('_', ' '))};\n}};\n")
        out.append(f"constexpr std::string_view {v.stem}_name({v.enum} value) {{\n"
                   f"  return VocabularyOf<{v.enum}>::names[static_cast<std::size_t>(value)];\n}}\n")
        out.append(f"constexpr std::string_view {v.stem}_description({v.enum} value) {{\n"
                   f"  return VocabularyOf<{v.enum}>::descriptions[static_cast<std::size_t>(value)];\n}}\n")
        out.append(f"constexpr std::optional<{v.enum}> parse_{v.stem}(std::string_view name) {{\n"
                   f"  for (std::size_t i = 0; i < {n}; ++i)\n"
                   f"    if (VocabularyOf<{v.enum}>::names[i] == name) return static_cast<{v.enum}>(i);\n"
                   f"  return std::nullopt;\n}}\n")
        out.append(f"constexpr std::string_view name_of({v.enum} value) {{ return {v.stem}_name(value); }}\n")
        for gname, g in v.groups.items():
            members = v.group(gname)
            out.append(comment(g.get("doc", gname)))
            out.append(f"inline constexpr std::array<{v.enum}, {len(members)}> {g['cpp']} = {{"
                       + ", ".join(f"{v.enum}::{m}" for m in members) + "};\n")
        if v.groups_table:
            rows = ", ".join(f"{{{cpp_string(n)}, {cpp_string(g.get('doc', n))}, {g['cpp']}}}" for n, g in v.groups.items())
            out.append(f"// Every group of {v.stem.replace('_', ' ')}s, in order.\n"
                       f"inline constexpr std::array<NamedGroup<{v.enum}>, {len(v.groups)}> {v.groups_table} = {{{{{rows}}}}};\n")
        if any("params" in x or "source" in x for x in v.values):
            out.append(value_params(v))
        for cname, cvalue in v.constants.items():
            out.append(f"inline constexpr std::string_view k{camel(v.stem + '_' + cname)} = {cpp_string(cvalue)};\n")
        out.append("\n")
    out.append("// The value of E spelled `name`, if any.\n"
               "template <class E>\nconstexpr std::optional<E> parse_name(std::string_view name) {\n"
               "  const auto& names = VocabularyOf<E>::names;\n"
               "  for (std::size_t i = 0; i < names.size(); ++i)\n"
               "    if (names[i] == name) return static_cast<E>(i);\n"
               "  return std::nullopt;\n}\n\n")
    out.append("// Whether `value` is one of `group`.\n"
               "template <class E, std::size_t N>\nconstexpr bool in_group(E value, const std::array<E, N>& group) {\n"
               "  for (E member : group)\n    if (member == value) return true;\n  return false;\n}\n\n")
    out.append("}  // namespace dicebench\n")
    return "".join(out)


def value_params(v: Vocabulary) -> str:
    """STEM_params(value): the numbers each value takes, with defaults; STEM_source(value): where it comes from."""
    out = []
    for x in v.values:
        params = x.get("params", [])
        rows = "".join(f"    {{{cpp_string(p['name'])}, {float(p['default'])!r}, {cpp_string(p['doc'])}}},\n" for p in params)
        out.append(f"inline constexpr std::array<ValueParam, {len(params)}> k{camel(v.stem)}Params_{x['name']} = {{{{\n{rows}}}}};\n")
    out.append(f"constexpr std::span<const ValueParam> {v.stem}_params({v.enum} value) {{\n  switch (value) {{\n")
    out.extend(f"    case {v.enum}::{x['name']}:\n      return k{camel(v.stem)}Params_{x['name']};\n" for x in v.values)
    out.append("  }\n  return {};\n}\n")
    out.append(f"constexpr std::string_view {v.stem}_source({v.enum} value) {{\n  switch (value) {{\n")
    out.extend(f"    case {v.enum}::{x['name']}:\n      return {cpp_string(x.get('source', ''))};\n" for x in v.values)
    out.append("  }\n  return {};\n}\n")
    return "".join(out)


def camel(stem: str) -> str:
    return "".join(p.capitalize() for p in stem.split("_"))

"""What the C++ emitters share: types, defaults, string literals, comments, struct order."""

from __future__ import annotations

import json

from .model import Field, Spec, Struct, Vocabulary, list_item


def cpp_enum_default(vocab: Vocabulary, value: str | None) -> str:
    return f"{vocab.enum}::{value or vocab.names()[0]}"


def cpp_type(spec: Spec, f: Field, *, with_optional: bool = True) -> str:
    t = f.type
    if item := list_item(t):
        base = f"std::vector<{item}>"
    elif t in spec.structs:
        base = t
    elif t in spec.enums:
        base = t
    else:
        base = {"bool": "bool", "int": "int", "int64": "std::int64_t", "real": "double", "text": "std::string",
                "json": "nlohmann::json", "json_object": "nlohmann::json", "json_array": "nlohmann::json",
                "map_real": "std::map<std::string, double>",
                "flags": "std::vector<std::pair<EvaluationFlag, std::string>>"}[t]
    return f"std::optional<{base}>" if f.optional and with_optional else base


def cpp_default(spec: Spec, f: Field) -> str:
    # Every member is initialised, so that designated initialisers may leave any of them out.
    if f.optional:
        return "{}"
    t = f.type
    if t in spec.enums:
        return f" = {cpp_enum_default(spec.enums[t], f.default)}"
    if t == "bool":
        return f" = {'true' if f.default else 'false'}"
    if t in ("int", "int64", "real"):
        return f" = {f.default if f.default is not None else 0}"
    if t == "text":
        return f" = {cpp_string(f.default)}" if f.default else "{}"
    if t == "json_object":
        return " = nlohmann::json::object()"
    if t == "json_array":
        return " = nlohmann::json::array()"
    return "{}"


def cpp_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def comment(text: str, indent: str = "", width: int = 110) -> str:
    """`text` as // lines of at most `width` characters."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(indent) + 3 + len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "".join(f"{indent}// {x}\n" for x in lines)


def struct_order(spec: Spec) -> list[Struct]:
    """Structs in an order where each comes after those it holds."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        for f in spec.structs[name].fields:
            inner = list_item(f.type) or f.type
            if inner in spec.structs:
                visit(inner)
        done.append(name)

    for name in spec.structs:
        visit(name)
    return [spec.structs[n] for n in done]

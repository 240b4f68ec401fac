"""The Python modules: dicebench_spec (vocabularies, messages, the record's field table) and the
package's Evaluation and Timing (_record.py)."""

from __future__ import annotations

from typing import Any

from .model import BANNER, Spec, Struct, is_struct, leaf, list_item, resolve
from .cpp_protocol import protocol_fields, record_struct_protocol


def python_value(value: Any) -> str:
    """A Python literal (json's true/false/null spelled as Python's)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(python_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(python_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_value(k)}: {python_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def evaluation_fields(spec: Spec) -> list[dict[str, str]]:
    """The record's leaves with where each shape holds them (dicebench.EVALUATION_FIELDS)."""
    columns = {c["from"]: f"evaluations.{c['name']}" for c in spec.columns if "from" in c}
    details = {d["from"]: f"evaluations.details.{d['key']}" for d in spec.details}
    tables = {t["from"]: t["name"] for t in spec.tables}
    python = {p["from"]: p["name"] for p in spec.python if "from" in p}
    rows: list[dict[str, str]] = []

    def walk(struct: Struct, prefix: str, worker_prefix: str) -> None:
        for f in struct.fields:
            path = prefix + f.name
            if f.json is False:
                continue
            worker = f"{worker_prefix}{f.worker_name}" if f.worker and worker_prefix else ""
            if is_struct(spec, f.type) and not isinstance(f.json, str) and path not in details:
                walk(spec.structs[f.type], path + ".", worker_prefix_of(f.type))
                if path in python:
                    rows.append({"json": "", "stored": "", "python": python[path], "worker": "",
                                 "type": "object", "unit": "", "meaning": f.doc})
                continue
            stored = columns.get(path) or details.get(path) or tables.get(path) or ""
            kind = ("verdict" if f.type == "Verdict" else "boolean" if f.type == "bool" else
                    "integer" if f.type in ("int", "int64") else "real" if f.type == "real" else
                    "text" if f.type == "text" else "array" if f.type in ("json_array",) or list_item(f.type) else
                    "object")
            rows.append({"json": path, "stored": stored, "python": python.get(path, ""), "worker": worker,
                         "type": kind, "unit": f.unit, "meaning": f.doc})

    def worker_prefix_of(struct_name: str) -> str:
        for name, o in spec.protocol.get("object", {}).items():
            if o.get("record") == struct_name:
                return name + "."
        return ""

    walk(spec.structs["Evaluation"], "", "")
    # A detail of a host-internal field (not in the JSON): stored only.
    rows.extend({"json": "", "stored": f"evaluations.details.{d['key']}", "python": "", "worker": "", "type": "text",
                 "unit": "", "meaning": d.get("doc", "")}
                for d in spec.details if leaf(spec, d["from"], d["key"]).json is False)
    rows.append({"json": "", "stored": "evaluations.details", "python": "details", "worker": "", "type": "object",
                 "unit": "", "meaning": "the record's other fields (database: JSON; Python: all of eval --json)"})
    return rows


def gen_python_spec(spec: Spec) -> str:
    p = spec.protocol
    out = [f'"""{BANNER.format(source="*.toml")}\n\n'
           "dicebench's one spec as Python data: the vocabularies, the worker protocol's messages (checked by\n"
           "dicebench_harness.protocol) and the evaluation record's fields (dicebench.EVALUATION_FIELDS).\"\"\"\n\n"
           "from typing import Any\n\n",
           f"PROTOCOL_VERSION = {p['version']}\nMAX_FRAME_BYTES = {p['max_frame_bytes']}\n"
           f"MAX_SEED = {p['max_seed']}\nMAX_BATCH_CALLS = {p['max_batch_calls']}\n\n"]
    for v in spec.vocabularies.values():
        out.append(f"# {v.doc}\n{v.python} = {python_value(tuple(v.names()))}\n")
        out.extend(f"{g['python']} = {python_value(tuple(v.group(name)))}\n" for name, g in v.groups.items())
        out.append(f"{v.python}_DESCRIPTIONS = {python_value({x['name']: x['doc'] for x in v.values})}\n")
        out.extend(f"{(v.stem + '_' + cname).upper()} = {cvalue!r}\n" for cname, cvalue in v.constants.items())
        if any("params" in x or "source" in x for x in v.values):
            params = {x["name"]: {p["name"]: {"default": float(p["default"]), "doc": p["doc"]} for p in x.get("params", [])}
                      for x in v.values}
            out.append(f"{v.python}_PARAMS: dict[str, dict[str, dict[str, Any]]] = {python_value(params)}\n")
            out.append(f"{v.python}_SOURCES = {python_value({x['name']: x.get('source', '') for x in v.values})}\n")
        out.append("\n")
    out.append("VOCABULARIES: dict[str, tuple[str, ...]] = {" + ", ".join(f"{python_value(k)}: {v.python}" for k, v in spec.vocabularies.items())
               + "}\n")
    out.append("VOCABULARY_GROUPS: dict[tuple[str, str], tuple[str, ...]] = {" + ", ".join(
        f"{python_value((k, g))}: {v.groups[g]['python']}" for k, v in spec.vocabularies.items() for g in v.groups) + "}\n\n")
    objects = {}
    for name, o in p.get("object", {}).items():
        fields = (record_struct_protocol(spec, o["record"]) if "record" in o else []) + o.get("fields", [])
        objects[name] = fields
    out.append("# Nested objects of messages, field by field.\nOBJECTS: dict[str, list[dict[str, Any]]] = {\n")
    for name, fields in objects.items():
        out.append(f"    {name!r}: {python_value(fields)},\n")
    out.append("}\n\n# Requests (the host to a worker) and replies, by type: their role, doc and fields.\n")
    for kind in ("request", "reply"):
        out.append(f"{ {'request': 'REQUESTS', 'reply': 'REPLIES'}[kind] }: dict[str, dict[str, Any]] = {{\n")
        for m in p[kind]:
            fields = protocol_fields(spec, m, m["type"])
            out.append(f"    {m['type']!r}: {{'role': {python_value(m.get('role'))}, 'fields': {python_value(fields)}}},\n")
        out.append("}\n")
    for name, b in spec.bounds.items():
        out.append(f"\n# {b['doc']}\n{name.upper()} = ({float(b['low'])!r}, {float(b['high'])!r})\n")
    out.append("\n# Every datum of the evaluation record and where each shape holds it.\nEVALUATION_FIELDS: tuple[dict[str, str], ...] = (\n")
    out.extend(f"    {python_value(row)},\n" for row in evaluation_fields(spec))
    out.append(")\n")
    return "".join(out)


PYTHON_TYPES = {"bool": "bool", "int": "int", "int64": "int", "real": "float", "text": "str", "Verdict": "str",
                "ItemStatus": "str", "flags": "dict[str, str]"}


def gen_record_python(spec: Spec) -> str:
    timing = spec.structs["Timing"]
    out = [f'"""{BANNER.format(source="evaluation.toml")}\n\n'
           "The dicebench package's Evaluation and Timing (python/dicebench/_evaluate.py documents their use).\"\"\"\n\n"
           "from __future__ import annotations\n\nimport dataclasses\nfrom typing import Any\n\n\n"
           "@dataclasses.dataclass(frozen=True)\nclass Timing:\n"
           f'    """{timing.doc}"""\n\n']
    for f in timing.fields:
        default = {"text": ' = ""', "int": " = 0"}.get(f.type, "") if f.name in ("stop_reason", "warm_calls") else ""
        out.append(f"    {f.name}: {PYTHON_TYPES[f.type]}{default}  # {f.doc}\n")
    out.append("\n\n@dataclasses.dataclass(frozen=True)\nclass Evaluation:\n"
               '    """One candidate\'s verdict, with the fields of `dicebench eval --json`.\n\n'
               "    verdict is one of dicebench.VERDICTS. runtime and baseline are set when correct. flags qualify\n"
               "    the verdict ({name: detail}, names from dicebench.FLAGS). details holds all of eval --json\n"
               "    (compile log and records, device profile, phases, timed calls and how many were checked).\n"
               '    dicebench.EVALUATION_FIELDS says, for every field, its attribute here ("python") or key in\n'
               '    details ("json", "a.b" for details["a"]["b"]), its unit and what it means. cached is True when\n'
               '    the result came from the Evaluator\'s memory instead of the workers."""\n\n')
    defaults = False
    for attr in spec.python:
        if "from" not in attr:
            out.append(f"    {attr['name']}: bool = False  # {attr.get('doc', '')}\n")
            defaults = True
            continue
        steps = resolve(spec, attr["from"], f"python {attr['name']}")
        f = steps[-1].field
        nullable = any(s.field.optional for s in steps) or attr["from"] == "compile.path"
        if f.type == "Timing":
            annotation = "Timing | None"
        else:
            annotation = PYTHON_TYPES.get(f.type, "Any") + (" | None" if nullable else "")
        if f.type == "flags":
            out.append(f"    {attr['name']}: {annotation} = dataclasses.field(default_factory=dict, compare=False)\n")
        elif defaults:
            out.append(f"    {attr['name']}: {annotation} = None\n")
        else:
            out.append(f"    {attr['name']}: {annotation}\n")
    out.append("    details: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)\n\n")
    out.append("    @classmethod\n    def from_json(cls, data: dict[str, Any], cached: bool = False) -> Evaluation:\n"
               '        """The Evaluation of `dicebench eval --json`\'s object."""\n\n'
               "        def timing(t: dict[str, Any] | None) -> Timing | None:\n"
               "            return Timing(**{k: t[k] for k in TIMING_FIELDS if k in t}) if t else None\n\n"
               "        def at(*path: str) -> Any:\n            value: Any = data\n            for key in path:\n"
               "                if not isinstance(value, dict):\n                    return None\n"
               "                value = value.get(key)\n            return value\n\n"
               "        return cls(\n")
    for attr in spec.python:
        if "from" not in attr:
            continue
        steps = resolve(spec, attr["from"], attr["name"])
        f = steps[-1].field
        keys = ", ".join(repr(s.field.name) for s in steps)
        if f.type == "Timing":
            value = f"timing(at({keys}))"
        elif f.type == "flags":
            value = f"dict(at({keys}) or {{}})"
        elif f.type == "text" and not any(s.field.optional for s in steps) and attr["from"] != "compile.path":
            value = f"at({keys}) or \"\""
        elif f.type == "real" and not f.optional:
            value = f"at({keys}) or 0.0"
        else:
            value = f"at({keys})"
        out.append(f"            {attr['name']}={value},\n")
    out.append("            cached=cached,\n            details=data,\n        )\n\n"
               "    def to_dict(self) -> dict[str, Any]:\n"
               '        """The evaluation as plain data (the JSON of `dicebench eval --json`, plus "cached")."""\n'
               '        return {**self.details, "cached": self.cached}\n\n\n'
               f"TIMING_FIELDS = {python_value(tuple(f.name for f in timing.fields))}\n")
    out.append(gen_judgement_python(spec))
    return "".join(out)


def gen_judgement_python(spec: Spec) -> str:
    """dicebench.Judgement: every field of the spec's Judgement, its evaluation an Evaluation."""
    struct = spec.structs["Judgement"]
    out = ["\n\n@dataclasses.dataclass(frozen=True)\nclass Judgement:\n", f'    """{struct.doc}"""\n\n']
    for f in struct.fields:
        annotation = ("Evaluation" if f.type == "Evaluation" else "dict[str, Any]" if f.type == "json_object"
                      else PYTHON_TYPES.get(f.type, "str"))
        if f.optional:
            annotation += " | None"
        out.append(f"    {f.name}: {annotation}  # {f.doc}\n")
    out.append("\n    @classmethod\n    def from_json(cls, data: dict[str, Any]) -> Judgement:\n"
               '        """The Judgement of its JSON (the reward service\'s answer)."""\n        return cls(\n')
    for f in struct.fields:
        if f.type == "Evaluation":
            value = f"Evaluation.from_json(data[{f.name!r}]) if data.get({f.name!r}) is not None else None"
        elif f.optional:
            value = f"data.get({f.name!r})"
        elif f.type == "json_object":
            value = f"dict(data.get({f.name!r}) or {{}})"
        else:
            value = f"data.get({f.name!r}, {python_value(0.0 if f.type == 'real' else '')})"
        out.append(f"            {f.name}={value},\n")
    out.append("        )\n\n    def to_dict(self) -> dict[str, Any]:\n"
               '        """The judgement as plain data (its JSON), the evaluation as Evaluation.to_dict() gives it."""\n'
               "        out = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}\n"
               "        if self.evaluation is not None:\n            out[\"evaluation\"] = self.evaluation.to_dict()\n"
               "        return out\n")
    return "".join(out)

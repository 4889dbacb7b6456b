"""A small JSON Schema checker for the subset that docs/schemas/output-v1.schema.json uses
(type, const, enum, properties, required, additionalProperties, items, minimum, oneOf, local $ref).
Unknown keywords fail loudly, so the schema cannot quietly use something this checker ignores."""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "docs" / "schemas" / "output-v1.schema.json"
_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _is_type(value: object, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def errors(value: object, schema: dict, root: dict | None = None, where: str = "$") -> list[str]:
    """Every violation of ``schema`` by ``value``, as 'path: problem' strings (empty when valid)."""
    root = root if root is not None else schema
    found: list[str] = []
    for key in schema:
        if key not in _ANNOTATIONS and key not in _CHECKS:
            raise ValueError(f"schema keyword {key!r} at {where} is not supported by this checker")
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        found += errors(value, target, root, where)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            return [*found, f"{where}: {value!r} is not of type {schema['type']}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, int | float) and value < schema["minimum"]:
        found.append(f"{where}: {value!r} is below {schema['minimum']}")
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not errors(value, s, root, where)]
        if len(matching) != 1:
            found.append(f"{where}: matches {len(matching)} of the oneOf schemas, not exactly one")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"{where}: missing {name!r}")
        for name, item in value.items():
            if name in props:
                found += errors(item, props[name], root, f"{where}.{name}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{where}: unexpected {name!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += errors(item, schema["items"], root, f"{where}[{i}]")
    return found


_CHECKS = {
    "$ref",
    "type",
    "const",
    "enum",
    "minimum",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
}


def check_document(document: object) -> None:
    """Raise AssertionError unless the document is valid against the schema of its kind and the whole schema."""
    schema = load_schema()
    assert isinstance(document, dict) and document.get("version") == 1, document
    kind_schema = schema["$defs"].get(f"kind-{document.get('kind')}")
    assert kind_schema is not None, f"no schema for kind {document.get('kind')!r}"
    problems = errors(document, kind_schema, schema) or errors(document, schema)
    assert not problems, "\n".join(problems)

"""Python values to YAML text and back, for ``Config``: the C API reads and writes a
configuration's values as YAML text (``tft_config_set_value``, ``tft_config_get_value``).

Writing covers what a configuration holds (None, bools, numbers, strings, paths, lists,
mappings); strings are always double-quoted, so "64" stays a string and the library's type
check speaks. Reading covers what the library writes: flow-style YAML (``[a, b]``,
``{kind: none, factor: 0.5}``), plain or double-quoted scalars, resolved by YAML 1.2's core
schema (``null``, ``true``, ``12``, ``1e-06``, ``.nan``; anything else is a string).
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, List, Mapping, Tuple

_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_SPECIAL = {
    ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan,
    ".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf,
    "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
}


def to_flow(value: Any) -> str:
    """``value`` as one line of flow-style YAML."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, (str, os.PathLike)):
        # JSON's string escapes are a subset of YAML's double-quoted ones.
        return json.dumps(os.fspath(value), ensure_ascii=False)
    if isinstance(value, Mapping):
        items = (f"{to_flow(str(k))}: {to_flow(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_flow(v) for v in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} as a configuration value: {value!r}")


def to_block(mapping: Mapping[str, Any], indent: int = 0) -> str:
    """A nested mapping as block-style YAML, one key per line (so the library's messages name
    useful line numbers)."""
    lines = []
    for key, value in mapping.items():
        head = " " * indent + to_flow(str(key)) + ":"
        if isinstance(value, Mapping) and value:
            lines.append(head + "\n" + to_block(value, indent + 2))
        else:
            lines.append(f"{head} {to_flow(value)}\n")
    return "".join(lines)


def parse_flow(text: str) -> Any:
    """The value of one flow-style YAML node, as the library writes it."""
    value, end = _node(text, _skip(text, 0))
    end = _skip(text, end)
    if end != len(text):
        raise ValueError(f"unexpected text after a YAML value at {end}: {text!r}")
    return value


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _node(text: str, i: int) -> Tuple[Any, int]:
    if i >= len(text):
        return None, i
    if text[i] == "[":
        return _sequence(text, i + 1)
    if text[i] == "{":
        return _mapping(text, i + 1)
    if text[i] == '"':
        return _quoted(text, i)
    if text[i] == "'":
        end = i + 1
        while True:
            end = text.index("'", end)
            if text.startswith("''", end):
                end += 2
                continue
            return text[i + 1 : end].replace("''", "'"), end + 1
    return _plain(text, i)


def _sequence(text: str, i: int) -> Tuple[List[Any], int]:
    items: List[Any] = []
    i = _skip(text, i)
    while text[i] != "]":
        item, i = _node(text, i)
        items.append(item)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return items, i + 1


def _mapping(text: str, i: int) -> Tuple[dict, int]:
    result: dict = {}
    i = _skip(text, i)
    while text[i] != "}":
        key, i = _node(text, i)
        i = _skip(text, i)
        if text[i] != ":":
            raise ValueError(f"expected ':' at {i}: {text!r}")
        value, i = _node(text, _skip(text, i + 1))
        result[key] = value
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return result, i + 1


def _quoted(text: str, i: int) -> Tuple[str, int]:
    end = i + 1
    while text[end] != '"':
        end += 2 if text[end] == "\\" else 1
    # YAML's double-quoted escapes that JSON lacks (\0, \e, \x..., \N, ...) are not written by
    # the library for configuration text; JSON reads the rest.
    return json.loads(text[i : end + 1]), end + 1


def _plain(text: str, i: int) -> Tuple[Any, int]:
    end = i
    while end < len(text) and text[end] not in ",]}" and not text.startswith(": ", end):
        end += 1
    return _resolve(text[i:end].strip()), end


def _resolve(scalar: str) -> Any:
    """A plain scalar by YAML 1.2's core schema."""
    if scalar in ("", "~", "null", "Null", "NULL"):
        return None
    if scalar in ("true", "True", "TRUE"):
        return True
    if scalar in ("false", "False", "FALSE"):
        return False
    if _INT.match(scalar):
        return int(scalar)
    if _FLOAT.match(scalar):
        return float(scalar)
    if scalar in _SPECIAL:
        return _SPECIAL[scalar]
    return scalar

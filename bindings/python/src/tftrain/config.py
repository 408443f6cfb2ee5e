"""``Config``: a training configuration (one YAML document, every key in docs/config.md) over
the C API's ``tft_config``."""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Union

from ._capi import check, create, lib, read_text
from ._native import NativeObject
from ._yaml_text import parse_flow, to_block, to_flow
from .checkpoint import CheckpointConfig

ConfigSource = Union[str, "os.PathLike[str]", Mapping[str, Any], "Config"]


def _nest(mapping: Mapping[str, Any]) -> Dict[str, Any]:
    """Dotted keys ({"training.epochs": 3}) as nested mappings, merged with nested ones."""
    nested: Dict[str, Any] = {}
    for key, value in mapping.items():
        *sections, leaf = str(key).split(".")
        target = nested
        for section in sections:
            target = target.setdefault(section, {})
            if not isinstance(target, dict):
                raise TypeError(f"configuration key {key!r}: {section!r} is not a section")
        if isinstance(value, Mapping) and not isinstance(value, CheckpointConfig):
            value = _nest(value)
            if isinstance(target.get(leaf), dict):
                target[leaf].update(value)
                continue
        target[leaf] = value
    return nested


class Config(NativeObject):
    """A training configuration, checked completely when loaded.

    ``Config(path)`` reads a YAML file (relative paths in it resolve against its folder);
    ``Config(mapping)`` or ``Config.from_dict`` takes nested or dotted keys;
    ``Config.from_yaml(text)`` reads YAML text (relative paths against the working directory).
    Values are read and set by dotted key, as Python values::

        cfg = Config("examples/configs/tiny.yaml")
        cfg["training.epochs"] = 3
        cfg["checkpoint"] = {"strategy": "uniform", "interval": 2}  # or a CheckpointConfig
        cfg["data.known_reals"]  # ['price', 'relative_time_idx']

    A change of ``checkpoint.strategy`` needs the new strategy's keys, so set the whole
    ``checkpoint`` section (the C API's rule). Setters check types only; ``validate()`` checks
    every rule, as the trainer does.
    """

    def __init__(self, source: ConfigSource) -> None:
        if isinstance(source, Config):
            handle = create(lib.tft_config_clone, source._live)
        elif isinstance(source, Mapping):
            handle = create(lib.tft_config_create_from_yaml, _yaml_of(source))
        elif isinstance(source, (str, os.PathLike)):
            handle = create(lib.tft_config_create_from_file, os.fsencode(source))
        else:
            raise TypeError(
                f"Config: expected a YAML file's path, a mapping or a Config, got "
                f"{type(source).__name__} (YAML text: Config.from_yaml)"
            )
        super().__init__(handle, lib.tft_config_free)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Config":
        """Reads and validates a YAML file. ``FileError`` when it cannot be read,
        ``ConfigError`` naming file, line and key when a value is wrong."""
        return cls(os.fspath(path))

    @classmethod
    def from_yaml(cls, text: str) -> "Config":
        """Reads and validates YAML text."""
        config = cls.__new__(cls)
        handle = create(lib.tft_config_create_from_yaml, text.encode("utf-8"))
        NativeObject.__init__(config, handle, lib.tft_config_free)
        return config

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> "Config":
        """Reads and validates a mapping of sections ({"data": {...}, "training": {...}}),
        dotted keys allowed ({"training.epochs": 3})."""
        return cls(mapping)

    def __getitem__(self, key: str) -> Any:
        """The value at a dotted key ("training.epochs", "training.lr_schedule", "checkpoint")
        as a Python value: numbers, strings, None, lists, dicts. ``ConfigError`` for an
        unknown key."""
        return parse_flow(self.get_yaml(key))

    def __setitem__(self, key: str, value: Any) -> None:
        """Sets the value at a dotted key from a Python value (a ``CheckpointConfig`` for
        "checkpoint" too); the config is unchanged on error. Strings stay strings: "64" for
        an integer key is a ``ConfigError``."""
        if isinstance(value, CheckpointConfig):
            if key != "checkpoint":
                raise TypeError(f"{key}: a CheckpointConfig sets the key 'checkpoint' only")
            self.checkpoint = value
            return
        self.set_yaml(key, to_flow(value))

    def get_yaml(self, key: str) -> str:
        """The value at a dotted key as the library's YAML text ("[price, promo]")."""
        return read_text(lib.tft_config_get_value, self._live, key.encode("utf-8"))

    def set_yaml(self, key: str, text: str) -> None:
        """Sets the value at a dotted key from YAML text ("64", "[0.1, 0.5, 0.9]", "null"),
        as ``KEY=VALUE`` on a runner's command line does."""
        check(lib.tft_config_set_value(self._live, key.encode("utf-8"), text.encode("utf-8")))

    def update(self, values: Mapping[str, Any]) -> None:
        """Sets several dotted keys, in order."""
        for key, value in values.items():
            self[key] = value

    @property
    def checkpoint(self) -> CheckpointConfig:
        """A copy of the checkpoint section; assigning stores a copy of the one given."""
        return CheckpointConfig(create(lib.tft_config_get_checkpoint, self._live))

    @checkpoint.setter
    def checkpoint(self, checkpoint: CheckpointConfig) -> None:
        check(lib.tft_config_set_checkpoint(self._live, checkpoint._live))

    def validate(self) -> None:
        """Raises ``ConfigError`` with the first broken rule and its dotted key, if any."""
        check(lib.tft_config_validate(self._live))

    def to_yaml(self) -> str:
        """Every key as YAML (paths as resolved); ``Config.from_yaml`` reads it back equal."""
        return read_text(lib.tft_config_to_yaml, self._live)

    def copy(self) -> "Config":
        """An independent copy."""
        return Config(self)

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> "Config":
        return self.copy()

    def __repr__(self) -> str:
        if self.closed:
            return "Config(<closed>)"
        return f"Config(output.directory={self['output.directory']!r})"


def _yaml_of(mapping: Mapping[str, Any]) -> bytes:
    nested = _nest(mapping)
    checkpoint = nested.get("checkpoint")
    if isinstance(checkpoint, CheckpointConfig):
        # Its JSON (the YAML section's schema) is flow-style YAML too.
        nested["checkpoint"] = parse_flow(checkpoint.to_json())
    return to_block(nested).encode("utf-8")


def as_config(source: ConfigSource) -> Config:
    """``source`` itself when it is a ``Config``, else a ``Config`` made from it."""
    return source if isinstance(source, Config) else Config(source)

"""``CheckpointConfig``: which units of the model recompute their activations in backward,
the seed's API over the C API's ``tft_checkpoint_config``."""

from __future__ import annotations

import ctypes
import enum
import operator
from typing import Any, Callable, Iterable

from ._capi import check, create, lib, read_text
from ._native import NativeObject
from .errors import InvalidArgumentError


class Strategy(enum.IntEnum):
    """``tft_checkpoint_strategy``."""

    NONE = 0
    UNIFORM = 1
    SELECTIVE = 2
    DYNAMIC = 3


def _count(value: Any, name: str) -> int:
    """A non-negative integer for a ``size_t`` argument (ctypes would wrap -1 silently)."""
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {value!r}") from None
    if number < 0:
        raise InvalidArgumentError(f"{name}: expected a non-negative integer, got {number}")
    return number


class CheckpointConfig(NativeObject):
    """Gradient checkpointing configuration: a strategy (none, uniform, selective, dynamic),
    whether attention and feed-forward sub-layers recompute, and a minimum interval.

    Unit indices follow the model's forward order: static_encoder, historical_encoder,
    future_encoder, lstm_encoder, lstm_decoder, attention_0, ...

    >>> CheckpointConfig.uniform(2).memory_savings(6)
    0.5
    >>> CheckpointConfig.uniform(2).summary()
    'Uniform checkpointing every 2 layers'
    """

    def __init__(self, _handle: int = 0) -> None:
        """``CheckpointConfig()`` is ``none()``, the default."""
        if not _handle:
            _handle = create(lib.tft_checkpoint_config_create_none)
        super().__init__(_handle, lib.tft_checkpoint_config_free)

    # --- the seed's constructors -----------------------------------------------------------

    @classmethod
    def uniform(cls, interval: int) -> "CheckpointConfig":
        """Checkpoint every ``interval``-th unit (2: units 0, 2, 4, ...); both sub-layer flags
        on. ``uniform(0)`` is accepted and checkpoints nothing, but fails ``validate()``."""
        count = _count(interval, "interval")
        return cls(create(lib.tft_checkpoint_config_create_uniform, count))

    @classmethod
    def selective(cls, layers: Iterable[int]) -> "CheckpointConfig":
        """Checkpoint exactly the units ``layers``; both sub-layer flags on."""
        indices = [_count(layer, "layers") for layer in layers]
        array = (ctypes.c_size_t * len(indices))(*indices)
        return cls(create(lib.tft_checkpoint_config_create_selective, array, len(indices)))

    @classmethod
    def dynamic(cls, num_layers: int, memory_fraction: float) -> "CheckpointConfig":
        """Keep about ``memory_fraction`` (in [0, 1]) of the activation memory of a model of
        ``num_layers`` units. ``ConfigError`` for 0 units or a fraction outside [0, 1] or NaN."""
        count = _count(num_layers, "num_layers")
        return cls(
            create(lib.tft_checkpoint_config_create_dynamic, count, float(memory_fraction))
        )

    @classmethod
    def none(cls) -> "CheckpointConfig":
        """No checkpointing: both sub-layer flags off, minimum interval 1."""
        return cls()

    @classmethod
    def from_yaml(cls, text: str) -> "CheckpointConfig":
        """Parses the ``checkpoint`` section's YAML (docs/config.md); errors name key and line."""
        return cls(create(lib.tft_checkpoint_config_create_from_yaml, text.encode("utf-8")))

    @classmethod
    def from_json(cls, text: str) -> "CheckpointConfig":
        """Parses the same schema as JSON."""
        return cls(create(lib.tft_checkpoint_config_create_from_json, text.encode("utf-8")))

    # --- the seed's builders: each returns a changed copy ------------------------------------

    def with_checkpoint_attention(self, enabled: bool) -> "CheckpointConfig":
        """A copy whose attention sub-layers recompute (or not)."""
        copy = self.copy()
        copy.checkpoint_attention = enabled
        return copy

    def with_checkpoint_ffn(self, enabled: bool) -> "CheckpointConfig":
        """A copy whose position-wise feed-forward sub-layers recompute (or not)."""
        copy = self.copy()
        copy.checkpoint_ffn = enabled
        return copy

    def with_min_interval(self, interval: int) -> "CheckpointConfig":
        """A copy with this minimum number of units between checkpoints (0 fails validate)."""
        copy = self.copy()
        copy.min_checkpoint_interval = interval
        return copy

    # --- fields ------------------------------------------------------------------------------

    def _query(self, getter: Callable[..., int], value_type: Any, *args: Any) -> Any:
        """Calls ``tft_checkpoint_config_get_<field>(config, args..., out)``."""
        out = value_type()
        check(getter(self._live, *args, ctypes.byref(out)))
        return out.value

    @property
    def strategy(self) -> Strategy:
        """The strategy; change it by making a new configuration."""
        return Strategy(self._query(lib.tft_checkpoint_config_get_strategy, ctypes.c_int))

    @property
    def checkpoint_attention(self) -> bool:
        """Whether attention sub-layers recompute."""
        return bool(self._query(lib.tft_checkpoint_config_get_checkpoint_attention, ctypes.c_int))

    @checkpoint_attention.setter
    def checkpoint_attention(self, enabled: bool) -> None:
        check(lib.tft_checkpoint_config_set_checkpoint_attention(self._live, int(bool(enabled))))

    @property
    def checkpoint_ffn(self) -> bool:
        """Whether feed-forward sub-layers recompute."""
        return bool(self._query(lib.tft_checkpoint_config_get_checkpoint_ffn, ctypes.c_int))

    @checkpoint_ffn.setter
    def checkpoint_ffn(self, enabled: bool) -> None:
        check(lib.tft_checkpoint_config_set_checkpoint_ffn(self._live, int(bool(enabled))))

    @property
    def min_checkpoint_interval(self) -> int:
        """Minimum units between checkpoints."""
        return self._query(lib.tft_checkpoint_config_get_min_interval, ctypes.c_size_t)

    @min_checkpoint_interval.setter
    def min_checkpoint_interval(self, interval: int) -> None:
        count = _count(interval, "min_checkpoint_interval")
        check(lib.tft_checkpoint_config_set_min_interval(self._live, count))

    # --- the seed's queries -------------------------------------------------------------------

    def should_checkpoint(self, layer: int) -> bool:
        """Whether unit ``layer`` recomputes its activations."""
        getter = lib.tft_checkpoint_config_get_should_checkpoint
        return bool(self._query(getter, ctypes.c_int, _count(layer, "layer")))

    def memory_savings(self, num_layers: int) -> float:
        """Estimated fraction of activation memory saved in a model of ``num_layers`` units."""
        count = _count(num_layers, "num_layers")
        return self._query(lib.tft_checkpoint_config_get_memory_savings, ctypes.c_double, count)

    def compute_overhead(self, num_layers: int) -> float:
        """Estimated training time relative to no checkpointing (>= 1)."""
        count = _count(num_layers, "num_layers")
        return self._query(lib.tft_checkpoint_config_get_compute_overhead, ctypes.c_double, count)

    def validate(self) -> None:
        """Raises ``ConfigError`` naming the broken rule, if any."""
        check(lib.tft_checkpoint_config_validate(self._live))

    def summary(self) -> str:
        """``"Uniform checkpointing every 2 layers"`` and the like."""
        return read_text(lib.tft_checkpoint_config_get_summary, self._live)

    def to_yaml(self) -> str:
        """The ``checkpoint`` section as YAML."""
        return read_text(lib.tft_checkpoint_config_to_yaml, self._live)

    def to_json(self) -> str:
        """The same as JSON."""
        return read_text(lib.tft_checkpoint_config_to_json, self._live)

    def copy(self) -> "CheckpointConfig":
        """An independent copy."""
        return CheckpointConfig(create(lib.tft_checkpoint_config_clone, self._live))

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> "CheckpointConfig":
        return self.copy()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckpointConfig):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        if self.closed:
            return "CheckpointConfig(<closed>)"
        return f"CheckpointConfig({self.summary()!r})"

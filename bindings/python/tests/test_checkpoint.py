"""CheckpointConfig against the seed's formulas (shared/seeds/README.md), its builders,
validation, text forms, and its place in a Config."""

from __future__ import annotations

import math

import pytest

from tftrain import CheckpointConfig, Config, ConfigError, InvalidArgumentError, Strategy

from conftest import TINY_CONFIG

UNITS = range(1, 13)


def uniform_savings(k: int, n: int) -> float:
    return 0.0 if k == 0 or k >= n else 1 - math.ceil(n / k) / n


def uniform_overhead(k: int, n: int) -> float:
    return 1.0 if k == 0 or k >= n else 1 + (k // 2) / n


@pytest.mark.parametrize("k", range(0, 8))
def test_uniform_follows_the_seed(k: int) -> None:
    config = CheckpointConfig.uniform(k)
    assert config.strategy == Strategy.UNIFORM
    assert config.checkpoint_attention and config.checkpoint_ffn
    assert config.min_checkpoint_interval == 1
    for i in range(12):
        assert config.should_checkpoint(i) == (k > 0 and i % k == 0)
    for n in UNITS:
        assert config.memory_savings(n) == pytest.approx(uniform_savings(k, n), abs=1e-15)
        assert config.compute_overhead(n) == pytest.approx(uniform_overhead(k, n), abs=1e-15)
    assert config.summary() == f"Uniform checkpointing every {k} layers"


@pytest.mark.parametrize("layers", [[], [0], [1, 3], [0, 2, 4, 5], [5, 0, 3]])
def test_selective_follows_the_seed(layers: list) -> None:
    config = CheckpointConfig.selective(layers)
    assert config.strategy == Strategy.SELECTIVE
    for i in range(12):
        assert config.should_checkpoint(i) == (i in layers)
    for n in range(max(layers, default=0) + 1, 13):
        savings = 1 - len(layers) / n if layers else 0.0
        overhead = 1 + (n // len(layers) // 2) / n if layers else 1.0
        assert config.memory_savings(n) == pytest.approx(savings, abs=1e-15)
        assert config.compute_overhead(n) == pytest.approx(overhead, abs=1e-15)
    assert config.summary() == f"Selective checkpointing at {len(layers)} layers"
    config.validate()


@pytest.mark.parametrize("n, f", [(6, 0.0), (6, 0.34), (6, 0.5), (8, 0.75), (3, 1.0)])
@pytest.mark.parametrize("min_interval", [1, 2, 4])
def test_dynamic_follows_the_seed(n: int, f: float, min_interval: int) -> None:
    config = CheckpointConfig.dynamic(n, f).with_min_interval(min_interval)
    interval = max(max(1, int(f * n)), min_interval)
    for i in range(12):
        assert config.should_checkpoint(i) == (i % interval == 0)
    assert config.memory_savings(n) == pytest.approx(1 - f, abs=1e-15)
    assert config.compute_overhead(n) == pytest.approx(1 + (1 - f) * 0.3, abs=1e-15)
    assert config.summary() == f"Dynamic checkpointing ({n} layers, {f * 100:.1f}% memory target)"


@pytest.mark.parametrize("n, f", [(0, 0.5), (6, -0.1), (6, 1.5), (6, math.nan), (6, math.inf)])
def test_dynamic_rejects_what_the_seed_rejects(n: int, f: float) -> None:
    with pytest.raises(ConfigError) as error:
        CheckpointConfig.dynamic(n, f)
    assert error.value.message


def test_none_is_the_default() -> None:
    for config in (CheckpointConfig(), CheckpointConfig.none()):
        assert config.strategy == Strategy.NONE
        assert not config.checkpoint_attention and not config.checkpoint_ffn
        assert config.min_checkpoint_interval == 1
        assert not any(config.should_checkpoint(i) for i in range(12))
        assert config.memory_savings(6) == 0.0 and config.compute_overhead(6) == 1.0
        assert config.summary() == "No checkpointing"
        config.validate()


def test_validate_names_the_broken_rule() -> None:
    with pytest.raises(ConfigError, match="interval"):
        CheckpointConfig.uniform(0).validate()
    with pytest.raises(ConfigError, match="duplicate|twice"):
        CheckpointConfig.selective([1, 1]).validate()
    with pytest.raises(ConfigError, match="interval"):
        CheckpointConfig.uniform(2).with_min_interval(0).validate()


def test_builders_return_changed_copies() -> None:
    base = CheckpointConfig.uniform(2)
    changed = base.with_checkpoint_attention(False).with_checkpoint_ffn(False).with_min_interval(3)
    assert (changed.checkpoint_attention, changed.checkpoint_ffn) == (False, False)
    assert changed.min_checkpoint_interval == 3
    assert (base.checkpoint_attention, base.checkpoint_ffn, base.min_checkpoint_interval) == (
        True,
        True,
        1,
    )
    assert base != changed and base == base.copy()


def test_negative_and_non_integer_arguments_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="interval: expected a non-negative integer, got -1"):
        CheckpointConfig.uniform(-1)
    with pytest.raises(InvalidArgumentError, match="layers"):
        CheckpointConfig.selective([0, -2])
    with pytest.raises(TypeError, match="interval"):
        CheckpointConfig.uniform(1.5)  # type: ignore[arg-type]


def test_yaml_and_json_round_trip() -> None:
    config = CheckpointConfig.selective([0, 3]).with_checkpoint_ffn(False)
    assert CheckpointConfig.from_yaml(config.to_yaml()) == config
    assert CheckpointConfig.from_json(config.to_json()) == config
    with pytest.raises(ConfigError, match="intervall"):
        CheckpointConfig.from_yaml("strategy: uniform\nintervall: 2\n")


def test_a_config_stores_a_copy() -> None:
    config = Config(TINY_CONFIG)
    checkpoint = CheckpointConfig.selective([0, 4])
    config.checkpoint = checkpoint
    checkpoint.checkpoint_ffn = False  # the config's copy is not touched
    assert config.checkpoint == CheckpointConfig.selective([0, 4])
    config["checkpoint"] = CheckpointConfig.dynamic(6, 0.5)
    assert config["checkpoint.strategy"] == "dynamic"
    assert config["checkpoint"]["memory_fraction"] == 0.5


def test_closed_objects_say_so() -> None:
    config = CheckpointConfig.uniform(2)
    config.close()
    config.close()
    with pytest.raises(InvalidArgumentError, match="CheckpointConfig is closed"):
        config.summary()

"""Config: loading from a file, YAML text and dicts; values read and set as Python values;
errors that name the file, line, key and value."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import TINY_CONFIG
from tftrain import CheckpointConfig, Config, ConfigError, FileError, InvalidArgumentError


def test_values_come_back_as_python_values() -> None:
    config = Config(TINY_CONFIG)
    assert config["training.epochs"] == 2
    assert config["model.dropout"] == 0.1
    assert config["data.known_reals"] == ["price", "relative_time_idx"]
    assert config["training.lr_schedule"]["kind"] == "none"
    assert config["split.validation_fraction"] is None
    assert config["data.na_values"] == [""]
    assert Path(config["data.path"]).is_absolute()  # resolved against the YAML file's folder


def test_values_are_set_as_python_values(tmp_path: Path) -> None:
    config = Config(TINY_CONFIG)
    config["training.epochs"] = 5
    config["model.quantiles"] = [0.05, 0.5, 0.95]
    config["output.directory"] = tmp_path / "a folder with spaces"
    config["training.lr_schedule"] = {"kind": "reduce_on_plateau", "patience": 4}
    config["checkpoint"] = {"strategy": "selective", "layers": [0, "lstm_encoder"]}
    config["model.dropout"] = math.nan  # a type check passes; validate() applies the rule
    assert config["training.epochs"] == 5
    assert config["model.quantiles"] == [0.05, 0.5, 0.95]
    assert config["output.directory"] == str(tmp_path / "a folder with spaces")
    assert config["training.lr_schedule"]["patience"] == 4
    assert config.checkpoint == CheckpointConfig.selective([0, 3])
    with pytest.raises(ConfigError, match=r"model\.dropout: must be in \[0, 1\) \(got nan\)"):
        config.validate()


def test_a_string_stays_a_string() -> None:
    config = Config(TINY_CONFIG)
    with pytest.raises(ConfigError, match='training.epochs: expected a positive integer, got "3"'):
        config["training.epochs"] = "3"
    config.set_yaml("training.epochs", "3")  # YAML text, as KEY=VALUE on a command line
    assert config["training.epochs"] == 3
    assert config.get_yaml("data.known_reals") == "[price, relative_time_idx]"


def test_a_failed_set_changes_nothing() -> None:
    config = Config(TINY_CONFIG)
    before = config.to_yaml()
    with pytest.raises(ConfigError, match="training.epochs"):
        config["training.epochs"] = -1
    with pytest.raises(ConfigError, match="no_such_key"):
        config["training.no_such_key"] = 1
    assert config.to_yaml() == before


def test_a_strategy_change_needs_its_keys() -> None:
    config = Config(TINY_CONFIG)
    config["checkpoint.strategy"] = "none"
    with pytest.raises(ConfigError, match="strategy 'uniform' requires key 'interval'"):
        config["checkpoint.strategy"] = "uniform"
    config["checkpoint"] = {"strategy": "uniform", "interval": 2}
    assert config.checkpoint == CheckpointConfig.uniform(2)


def test_from_a_dict_and_yaml_text_equal_the_file() -> None:
    from_file = Config(TINY_CONFIG)
    text = from_file.to_yaml()  # paths resolved: absolute
    assert Config.from_yaml(text).to_yaml() == text
    nested = {
        "data": {
            "path": from_file["data.path"],
            "time_column": "date",
            "group_columns": ["store"],
            "target": "sales",
            "static_categoricals": ["store"],
            "known_reals": ["price", "relative_time_idx"],
            "known_categoricals": ["promo", "day_of_week"],
            "unknown_reals": ["footfall"],
            "target_normalizer": {"center": "seasonal"},
        },
        "windows": {"encoder_length": 14, "prediction_length": 7, "stride": 14},
        "split.validation_steps": 56,  # dotted keys mix with sections
        "model": {"hidden_size": 8, "attention_heads": 2, "dropout": 0.1},
        "model.quantiles": [0.1, 0.5, 0.9],
        "training": {"epochs": 2, "batch_size": 64, "learning_rate": 0.005},
        "training.lr_schedule": {"kind": "none"},
        "training.early_stopping_patience": 0,
        "training.seed": 11,
        "training.threads": 1,
        "checkpoint": CheckpointConfig.uniform(1),
        "output.directory": from_file["output.directory"],
    }
    assert Config(nested).to_yaml() == text
    assert Config.from_dict(nested).to_yaml() == text


def test_errors_name_file_line_key_and_value(tmp_path: Path) -> None:
    lines = Path(TINY_CONFIG).read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.strip().startswith("epochs:")) + 1
    lines[number - 1] = "  epochs: ten"
    broken = tmp_path / "broken.yaml"
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as error:
        Config(broken)
    assert f"broken.yaml:{number}: training.epochs" in error.value.message
    assert '"ten"' in error.value.message
    # Text has no file name: the line of the block YAML written for the dict.
    with pytest.raises(ConfigError, match=r"^line 4: data\.target: expected a string"):
        Config.from_dict({"data": {"path": "x.csv", "time_column": "t", "target": [1]}})
    with pytest.raises(FileError, match="missing.yaml") as missing:
        Config(tmp_path / "missing.yaml")
    assert isinstance(missing.value, OSError)
    with pytest.raises(TypeError, match="Config.from_yaml"):
        Config(42)  # type: ignore[arg-type]


def test_copies_are_independent() -> None:
    config = Config(TINY_CONFIG)
    copy = config.copy()
    copy["training.epochs"] = 9
    assert config["training.epochs"] == 2
    config.close()
    with pytest.raises(InvalidArgumentError, match="Config is closed"):
        config["training.epochs"]
    assert copy["training.epochs"] == 9

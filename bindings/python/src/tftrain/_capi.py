"""The C API as ctypes sees it: the structs of ``tftrain.h``, every function's prototype, and
the two call conventions (status codes, caller buffers with a size query)."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_size_t, c_void_p
from typing import Any, Callable

from ._library import load_library
from .errors import error_for

#: Handles are opaque pointers: ``c_void_p`` values owned by the classes that made them.
Handle = c_void_p


class TrainSummary(ctypes.Structure):
    """``tft_train_summary`` (grows: struct_size first)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("epochs_run", c_int64),
        ("best_epoch", c_int64),
        ("resumed_from_epoch", c_int64),
        ("early_stopped", c_int),
        ("initial_validation_loss", c_double),
        ("best_validation_loss", c_double),
        ("final_validation_loss", c_double),
        ("final_train_loss", c_double),
        ("train_seconds", c_double),
        ("samples_per_second", c_double),
        ("peak_activation_bytes", c_int64),
    ]


class Metrics(ctypes.Structure):
    """``tft_metrics``."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("loss", c_double),
        ("q_risk_p50", c_double),
        ("q_risk_p90", c_double),
        ("mae_p50", c_double),
        ("windows", c_int64),
    ]


class MemoryReport(ctypes.Structure):
    """``tft_memory_report``."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("checkpointed_peak_bytes", c_int64),
        ("unchecked_peak_bytes", c_int64),
        ("measured_savings", c_double),
        ("predicted_savings", c_double),
        ("predicted_compute_overhead", c_double),
        ("num_units", c_size_t),
    ]


class Progress(ctypes.Structure):
    """``tft_progress``: filled by the library, valid during the callback only."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("kind", c_int),
        ("epoch", c_int64),
        ("epochs", c_int64),
        ("step", c_int64),
        ("steps_per_epoch", c_int64),
        ("train_loss", c_double),
        ("validation_loss", c_double),
        ("samples_per_second", c_double),
        ("peak_activation_bytes", c_int64),
        ("learning_rate", c_double),
        ("fold", c_int64),
        ("folds", c_int64),
    ]


class BacktestSummary(ctypes.Structure):
    """``tft_backtest_summary``."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("folds", c_int64),
        ("finished_folds", c_int64),
        ("folds_beating_naive", c_int64),
        ("interval_coverage", c_double),
        ("seconds", c_double),
    ]


class ArrowArrayStream(ctypes.Structure):
    """``struct ArrowArrayStream`` of the Arrow C stream interface; only ``release`` is read
    here (to release a stream nobody took)."""


ArrowArrayStream._fields_ = [
    ("get_schema", c_void_p),
    ("get_next", c_void_p),
    ("get_last_error", c_void_p),
    ("release", ctypes.CFUNCTYPE(None, POINTER(ArrowArrayStream))),
    ("private_data", c_void_p),
]

#: ``tft_progress_fn``: a non-zero return cancels training.
ProgressFunction = ctypes.CFUNCTYPE(c_int, POINTER(Progress), c_void_p)

_out = POINTER(Handle)
_buffer = [ctypes.c_char_p, c_size_t, POINTER(c_size_t)]

# name: (restype, argtypes); tft_status is an int.
_PROTOTYPES: dict = {
    "tft_version_string": (c_char_p, []),
    "tft_last_error": (c_char_p, []),
    "tft_status_name": (c_char_p, [c_int]),
    "tft_checkpoint_config_create_uniform": (c_int, [c_size_t, _out]),
    "tft_checkpoint_config_create_selective": (c_int, [POINTER(c_size_t), c_size_t, _out]),
    "tft_checkpoint_config_create_dynamic": (c_int, [c_size_t, c_double, _out]),
    "tft_checkpoint_config_create_none": (c_int, [_out]),
    "tft_checkpoint_config_create_from_yaml": (c_int, [c_char_p, _out]),
    "tft_checkpoint_config_create_from_json": (c_int, [c_char_p, _out]),
    "tft_checkpoint_config_clone": (c_int, [Handle, _out]),
    "tft_checkpoint_config_free": (None, [Handle]),
    "tft_checkpoint_config_set_checkpoint_attention": (c_int, [Handle, c_int]),
    "tft_checkpoint_config_set_checkpoint_ffn": (c_int, [Handle, c_int]),
    "tft_checkpoint_config_set_min_interval": (c_int, [Handle, c_size_t]),
    "tft_checkpoint_config_get_strategy": (c_int, [Handle, POINTER(c_int)]),
    "tft_checkpoint_config_get_checkpoint_attention": (c_int, [Handle, POINTER(c_int)]),
    "tft_checkpoint_config_get_checkpoint_ffn": (c_int, [Handle, POINTER(c_int)]),
    "tft_checkpoint_config_get_min_interval": (c_int, [Handle, POINTER(c_size_t)]),
    "tft_checkpoint_config_get_should_checkpoint": (c_int, [Handle, c_size_t, POINTER(c_int)]),
    "tft_checkpoint_config_get_memory_savings": (c_int, [Handle, c_size_t, POINTER(c_double)]),
    "tft_checkpoint_config_get_compute_overhead": (c_int, [Handle, c_size_t, POINTER(c_double)]),
    "tft_checkpoint_config_validate": (c_int, [Handle]),
    "tft_checkpoint_config_get_summary": (c_int, [Handle, *_buffer]),
    "tft_checkpoint_config_to_yaml": (c_int, [Handle, *_buffer]),
    "tft_checkpoint_config_to_json": (c_int, [Handle, *_buffer]),
    "tft_config_create_from_file": (c_int, [c_char_p, _out]),
    "tft_config_create_from_yaml": (c_int, [c_char_p, _out]),
    "tft_config_clone": (c_int, [Handle, _out]),
    "tft_config_free": (None, [Handle]),
    "tft_config_get_value": (c_int, [Handle, c_char_p, *_buffer]),
    "tft_config_set_value": (c_int, [Handle, c_char_p, c_char_p]),
    "tft_config_set_checkpoint": (c_int, [Handle, Handle]),
    "tft_config_get_checkpoint": (c_int, [Handle, _out]),
    "tft_config_validate": (c_int, [Handle]),
    "tft_config_to_yaml": (c_int, [Handle, *_buffer]),
    "tft_data_create_from_arrow_stream": (c_int, [c_void_p, _out]),
    "tft_data_free": (None, [Handle]),
    "tft_data_get_num_rows": (c_int, [Handle, POINTER(c_int64)]),
    "tft_predictions_free": (None, [Handle]),
    "tft_predictions_to_arrow_stream": (c_int, [Handle, POINTER(ArrowArrayStream)]),
    "tft_train_report_free": (None, [Handle]),
    "tft_train_report_get_summary": (c_int, [Handle, POINTER(TrainSummary)]),
    "tft_train_report_get_validation": (c_int, [Handle, POINTER(Metrics)]),
    "tft_train_report_get_memory": (c_int, [Handle, POINTER(MemoryReport)]),
    "tft_trainer_create": (c_int, [Handle, _out]),
    "tft_trainer_create_from_data": (c_int, [Handle, Handle, _out]),
    "tft_trainer_free": (None, [Handle]),
    "tft_trainer_set_progress_callback": (c_int, [Handle, ProgressFunction, c_void_p]),
    "tft_trainer_train": (c_int, [Handle, _out]),
    "tft_trainer_resume": (c_int, [Handle, _out]),
    "tft_trainer_cancel": (c_int, [Handle]),
    "tft_trainer_evaluate": (c_int, [Handle, POINTER(Metrics)]),
    "tft_trainer_predict": (c_int, [Handle, _out]),
    "tft_trainer_predict_data": (c_int, [Handle, Handle, _out]),
    "tft_trainer_save": (c_int, [Handle, c_char_p]),
    "tft_trainer_measure_memory": (c_int, [Handle, POINTER(MemoryReport)]),
    "tft_backtest_run": (c_int, [Handle, ProgressFunction, c_void_p, _out]),
    "tft_backtest_report_free": (None, [Handle]),
    "tft_backtest_report_get_summary": (c_int, [Handle, POINTER(BacktestSummary)]),
    "tft_backtest_report_get_metrics": (c_int, [Handle, c_int64, c_int, POINTER(Metrics)]),
    "tft_model_create_from_directory": (c_int, [c_char_p, _out]),
    "tft_model_free": (None, [Handle]),
    "tft_model_predict": (c_int, [Handle, c_char_p, _out]),
    "tft_model_predict_data": (c_int, [Handle, Handle, _out]),
}


def _declare(library: ctypes.CDLL) -> ctypes.CDLL:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes
    return library


#: libtftrain, loaded once at import.
lib = _declare(load_library())


def last_error() -> str:
    """``tft_last_error()``: this thread's message of its last failed call."""
    return (lib.tft_last_error() or b"").decode("utf-8", "replace")


def check(status: int) -> None:
    """Raises the status's exception, with this thread's message, unless it is ``TFT_OK``.
    Call it right after the failing call, on the same thread (the message is thread-local)."""
    if status != 0:
        raise error_for(status, last_error())


def create(constructor: Callable[..., int], *args: Any) -> int:
    """Calls ``tft_T_create*(..., T** out)`` and returns the new handle (an address)."""
    out = Handle()
    check(constructor(*args, ctypes.byref(out)))
    return out.value or 0


def read_text(getter: Callable[..., int], *args: Any) -> str:
    """Calls a ``(buf, len, needed)`` getter twice: the size, then the text (UTF-8)."""
    needed = c_size_t(0)
    check(getter(*args, None, 0, ctypes.byref(needed)))
    buffer = ctypes.create_string_buffer(needed.value)
    check(getter(*args, buffer, needed.value, None))
    return buffer.value.decode("utf-8")


def read_struct(getter: Callable[..., int], handle: int, struct_type: type) -> Any:
    """Calls a getter that fills a growing struct, with its struct_size set."""
    value = struct_type()
    value.struct_size = ctypes.sizeof(struct_type)
    check(getter(handle, ctypes.byref(value)))
    return value

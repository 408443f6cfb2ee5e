#!/usr/bin/env python3
"""peer_bench: step time and activation memory of the peer library, pytorch-forecasting's own
TemporalFusionTransformer, on the shapes of a tft-bench YAML, so that tft-bench (C++) and the
peer can be compared on the same torch version.

    peer_bench.py --config bench/configs/reference.yaml --strategies none,naive \\
                  --steps 5 --warmup 1 --threads 2 --device cpu --precision bf16-mixed \\
                  --count-flops --json out.json

Run it with the venv's python (bench/peer/setup.sh prints its path). Strategies:
  none   the peer's forward as shipped, no checkpointing (the baseline; must come first)
  naive  the same model with the six units of tft-bench wrapped in
         torch.utils.checkpoint.checkpoint(use_reentrant=False, preserve_rng_state=True):
         static encoder, encoder and decoder variable selection, LSTM encoder, LSTM decoder,
         attention block (see checkpointed_forward() for exactly what each wraps)

Like tft-bench, every strategy gets its own copy of the same initial weights and its own Adam;
steps are interleaved (one step of each strategy per round, the order rotating every round),
each step draws its dropout masks from the same seed in every strategy, and the first step's
loss and gradients are compared with `none` (they must be equal).

--precision does what Lightning's Trainer(precision=...) does around a step: 32 nothing;
bf16-mixed runs the forward and the loss under torch.autocast(device, torch.bfloat16,
cache_enabled=False), backward and the Adam step outside, parameters and Adam state float32;
16-mixed (CUDA only) the same with float16 and a torch.amp.GradScaler. --count-flops counts the
FLOPs of one extra, untimed step per strategy (see count_flops()).

Exit status: 0, 1 on an error at run time, 2 on bad input, 3 when gradients differ from `none`.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import logging
import math
import os
import statistics
import sys
import tempfile
import time
import types
import warnings

STRATEGIES = ("none", "naive")
PRECISIONS = ("32", "bf16-mixed", "16-mixed")


class InputError(Exception):
    """Bad command line or configuration: exit status 2."""


# --------------------------------------------------------------------------------------------
# Configuration: the keys and rules of bench/tft-bench/bench_config.cpp and ModelConfig::validate().


def _positive_int(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{key}: expected a positive integer, got {value!r}")
    return value


def _non_negative_int(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{key}: expected a non-negative integer, got {value!r}")
    return value


def _number(value, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{key}: expected a number, got {value!r}")
    return float(value)


def _mapping(value, key: str) -> dict:
    if value is None:
        raise InputError(f"{key}: missing")
    if not isinstance(value, dict):
        raise InputError(f"{key}: expected a mapping, got {value!r}")
    return value


def _reject_unknown(mapping: dict, section: str, allowed: tuple[str, ...]) -> None:
    for key in mapping:
        if key not in allowed:
            name = f"{section}.{key}" if section else str(key)
            raise InputError(f"{name}: unknown key (known: {', '.join(allowed)})")


def _cardinalities(value, key: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{key}: expected a list of cardinalities, got {value!r}")
    return [_positive_int(v, f"{key}[{i}]") for i, v in enumerate(value)]


def load_config(path: str) -> dict:
    import yaml

    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot open the bench configuration ({e.strerror})") from e
    except yaml.YAMLError as e:
        raise InputError(f"{path}: {e}") from e
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping at the top")
    try:
        _reject_unknown(doc, "", ("model", "inputs", "batch_size"))
        model = _mapping(doc.get("model"), "model")
        _reject_unknown(model, "model", ("hidden_size", "attention_heads", "dropout", "lstm_layers",
                                         "decoder_layers", "encoder_length", "prediction_length",
                                         "quantiles", "unit_chunks"))
        inputs = _mapping(doc.get("inputs"), "inputs")
        _reject_unknown(inputs, "inputs", ("static_categoricals", "static_reals", "known_reals",
                                           "known_categoricals", "unknown_reals",
                                           "unknown_categoricals"))
        # Defaults as in ModelConfig / BenchConfig.
        c = {
            "hidden_size": _positive_int(model.get("hidden_size", 64), "model.hidden_size"),
            "attention_heads": _positive_int(model.get("attention_heads", 4), "model.attention_heads"),
            "dropout": _number(model.get("dropout", 0.1), "model.dropout"),
            "lstm_layers": _positive_int(model.get("lstm_layers", 1), "model.lstm_layers"),
            "decoder_layers": _positive_int(model.get("decoder_layers", 1), "model.decoder_layers"),
            "encoder_length": _positive_int(model.get("encoder_length", 0), "model.encoder_length"),
            "prediction_length": _positive_int(model.get("prediction_length", 0),
                                               "model.prediction_length"),
            "static_categoricals": _cardinalities(inputs.get("static_categoricals"),
                                                  "inputs.static_categoricals"),
            "static_reals": _non_negative_int(inputs.get("static_reals", 0), "inputs.static_reals"),
            "known_reals": _non_negative_int(inputs.get("known_reals", 0), "inputs.known_reals"),
            "known_categoricals": _cardinalities(inputs.get("known_categoricals"),
                                                 "inputs.known_categoricals"),
            "unknown_reals": _non_negative_int(inputs.get("unknown_reals", 0), "inputs.unknown_reals"),
            "unknown_categoricals": _cardinalities(inputs.get("unknown_categoricals"),
                                                   "inputs.unknown_categoricals"),
            "batch_size": _positive_int(doc.get("batch_size", 64), "batch_size"),
        }
        quantiles = model.get("quantiles", [0.1, 0.5, 0.9])
        if not isinstance(quantiles, list):
            raise InputError(f"model.quantiles: expected a sequence of numbers, got {quantiles!r}")
        c["quantiles"] = [_number(q, f"model.quantiles[{i}]") for i, q in enumerate(quantiles)]
        chunks = model.get("unit_chunks")
        if chunks is not None:
            for unit, count in _mapping(chunks, "model.unit_chunks").items():
                _positive_int(count, f"model.unit_chunks.{unit}")
            print("peer_bench: model.unit_chunks ignored: the peer's units are checkpointed whole",
                  file=sys.stderr)
    except InputError as e:
        raise InputError(f"{path}: {e}") from e
    validate(c, path)
    return c


def validate(c: dict, path: str) -> None:
    def fail(message: str):
        raise InputError(f"{path}: {message}")

    if c["hidden_size"] % c["attention_heads"]:
        fail(f"model.hidden_size: {c['hidden_size']} is not divisible by model.attention_heads "
             f"{c['attention_heads']}")
    if not 0.0 <= c["dropout"] < 1.0:
        fail(f"model.dropout: must be in [0, 1) (got {c['dropout']:g})")
    if c["decoder_layers"] != 1:
        fail(f"model.decoder_layers: pytorch-forecasting's TemporalFusionTransformer has exactly "
             f"one attention block; the peer cannot run {c['decoder_layers']}")
    q = c["quantiles"]
    if not q:
        fail("model.quantiles: must list at least one quantile")
    for i, v in enumerate(q):
        if not 0.0 < v < 1.0:
            fail(f"model.quantiles[{i}]: must be in (0, 1) (got {v:g})")
        if i and not v > q[i - 1]:
            fail(f"model.quantiles[{i}]: must be strictly increasing ({v:g} follows {q[i - 1]:g})")


def embedding_dim(cardinality: int, hidden: int) -> int:
    # Our rule (embedding_dim_for in src/model/model_config.cpp): min(hidden, round(1.6 *
    # cardinality^0.56)), at least 1, rounding halves away from zero like std::lround.
    return max(1, min(hidden, int(math.floor(1.6 * cardinality ** 0.56 + 0.5))))


class Schema:
    """Variable names by role, as bench_config.cpp names them, in tft-bench's batch order."""

    def __init__(self, c: dict):
        self.static_cats = [(f"s_cat{i}", n) for i, n in enumerate(c["static_categoricals"])]
        self.static_reals = [f"s_real{i}" for i in range(c["static_reals"])]
        self.known_reals = [f"known{i}" for i in range(c["known_reals"])]
        self.known_cats = [(f"k_cat{i}", n) for i, n in enumerate(c["known_categoricals"])]
        self.unknown_reals = [f"unknown{i}" for i in range(c["unknown_reals"])]
        self.unknown_cats = [(f"u_cat{i}", n) for i, n in enumerate(c["unknown_categoricals"])]
        self.target = "target"
        # historical = unknown then known, the target last among the reals (as InputSchema).
        self.encoder_reals = self.unknown_reals + self.known_reals + [self.target]
        self.encoder_cats = self.unknown_cats + self.known_cats
        self.x_categoricals = self.static_cats + self.unknown_cats + self.known_cats
        self.x_reals = self.static_reals + self.encoder_reals


# --------------------------------------------------------------------------------------------
# torch and the peer (imported only after the arguments are checked).


def preload_cuda_stubs() -> bool:
    """Loads the CUDA stand-ins that setup.sh builds when the venv has no real CUDA libraries
    (see scripts/make_cuda_stubs.py); must run before `import torch`. True when it loaded any."""
    stubs = os.path.join(sys.prefix, "cuda-stubs")
    manifest = os.path.join(stubs, "MANIFEST")
    if not os.path.isfile(manifest):
        return False
    names = open(manifest).read().split()
    for name in names:
        ctypes.CDLL(os.path.join(stubs, name), mode=ctypes.RTLD_GLOBAL)
    return bool(names)


def import_peer():
    stubbed = preload_cuda_stubs()
    # Lightning imports torch.utils.flop_counter, which logs a warning when triton (a GPU
    # compiler the venv leaves out) is missing.
    logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=r".*is an instance of `nn.Module` and is already saved")
    import torch  # noqa: F401
    import pytorch_forecasting  # noqa: F401
    return stubbed


def build_model(c: dict, s: Schema):
    from pytorch_forecasting import TemporalFusionTransformer
    from pytorch_forecasting.data.encoders import TorchNormalizer
    from pytorch_forecasting.metrics import QuantileLoss

    hidden = c["hidden_size"]
    cats = s.x_categoricals
    model = TemporalFusionTransformer(
        hidden_size=hidden,
        hidden_continuous_size=hidden,  # every real gets a hidden-wide embedding, as in ours
        attention_head_size=c["attention_heads"],
        dropout=c["dropout"],
        lstm_layers=c["lstm_layers"],
        output_size=len(c["quantiles"]),
        loss=QuantileLoss(quantiles=list(c["quantiles"])),
        max_encoder_length=c["encoder_length"],
        static_categoricals=[n for n, _ in s.static_cats],
        static_reals=list(s.static_reals),
        time_varying_categoricals_encoder=[n for n, _ in s.encoder_cats],
        time_varying_categoricals_decoder=[n for n, _ in s.known_cats],
        time_varying_reals_encoder=list(s.encoder_reals),
        time_varying_reals_decoder=list(s.known_reals),
        x_reals=list(s.x_reals),
        x_categoricals=[n for n, _ in cats],
        embedding_sizes={n: (card, embedding_dim(card, hidden)) for n, card in cats},
        # What a TimeSeriesDataSet hands the model as its target normalizer; with target_scale
        # (0, 1) the de-normalization of the output is the identity, but it runs.
        output_transformer=TorchNormalizer(),
    )
    model.train()
    return model


def synthetic_batch(c: dict, s: Schema, device):
    """The x dict that the peer's forward reads, full-length sequences, random data."""
    import torch

    b, enc, dec = c["batch_size"], c["encoder_length"], c["prediction_length"]

    def cat_columns(steps: int):
        columns = []
        for name, card in s.x_categoricals:
            if any(name == n for n, _ in s.static_cats):  # a static code is constant over time
                columns.append(torch.randint(card, (b, 1, 1)).expand(b, steps, 1))
            else:
                columns.append(torch.randint(card, (b, steps, 1)))
        return torch.cat(columns, -1) if columns else torch.zeros(b, steps, 0, dtype=torch.long)

    static_reals = torch.randn(b, 1, len(s.static_reals))
    enc_cont = torch.cat([static_reals.expand(b, enc, -1),
                          torch.randn(b, enc, len(s.encoder_reals))], -1)
    dec_cont = torch.cat([static_reals.expand(b, dec, -1),
                          torch.randn(b, dec, len(s.encoder_reals))], -1)
    target_scale = torch.stack([torch.zeros(b), torch.ones(b)], -1)  # (center, scale)
    x = {
        "encoder_cat": cat_columns(enc),
        "decoder_cat": cat_columns(dec),
        "encoder_cont": enc_cont.contiguous(),
        "decoder_cont": dec_cont.contiguous(),
        "encoder_lengths": torch.full((b,), enc, dtype=torch.long),
        "decoder_lengths": torch.full((b,), dec, dtype=torch.long),
        "target_scale": target_scale,
    }
    target = torch.randn(b, dec)
    return {k: v.to(device) for k, v in x.items()}, target.to(device)


# --------------------------------------------------------------------------------------------
# Strategy `naive`: the peer's forward with its units checkpointed.


def checkpointed_forward(self, x):
    """pytorch-forecasting 1.8.0's TemporalFusionTransformer.forward, statement for statement,
    with the six units of tft-bench each run under torch.utils.checkpoint.checkpoint.

    Every checkpointed function takes its tensors positionally: non-reentrant checkpointing
    picks the devices whose RNG state it stashes from the positional arguments only, and the
    dropout masks must come out the same when a unit is recomputed.

    The peer's forward order is kept exactly, because that order is the order in which dropout
    draws its masks, and `naive` must draw the same masks as `none` (gradients equal bit for bit).
    That order splits two of tft-bench's units:
      static_encoder   the static variable selection and the four static-context GRNs, in three
                       checkpointed segments at the places where the peer runs them: (selection
                       + selection-context GRN), (LSTM hidden- + cell-state GRNs), (enrichment GRN)
      historical_encoder / future_encoder   the encoder / decoder variable selection networks
                       (the real-valued prescalers run inside them; categorical embeddings are
                       looked up once, for all variables, before any unit, as the peer does)
      lstm_encoder     the encoder LSTM
      lstm_decoder     the decoder LSTM and then the post-LSTM gate + add&norm of the encoder
                       and of the decoder output: the peer applies that (shared) gate only after
                       both LSTMs, so the encoder's gate goes with this segment (tft-bench keeps
                       each gate with its LSTM)
      attention_0      static enrichment GRN, interpretable multi-head attention (with its mask),
                       post-attention gate/add/norm, position-wise feed-forward GRN, pre-output
                       gate/add/norm
    The output layer and the output de-normalization stay outside, as tft-bench's quantile
    head does.
    """
    import torch
    from torch.utils.checkpoint import checkpoint

    def ck(function, *tensors):
        return checkpoint(function, *tensors, use_reentrant=False, preserve_rng_state=True)

    hp = self.hparams
    encoder_lengths = x["encoder_lengths"]
    decoder_lengths = x["decoder_lengths"]
    x_cat = torch.cat([x["encoder_cat"], x["decoder_cat"]], dim=1)
    x_cont = torch.cat([x["encoder_cont"], x["decoder_cont"]], dim=1)
    timesteps = x_cont.size(1)
    max_encoder_length = int(encoder_lengths.max())
    input_vectors = self.input_embeddings(x_cat)
    input_vectors.update({name: x_cont[..., idx].unsqueeze(-1)
                          for idx, name in enumerate(hp.x_reals) if name in self.reals})

    # static_encoder, segment 1: static variable selection + the selection-context GRN.
    static_names = list(self.static_variables)
    if static_names:
        def static_selection(*tensors):
            embedding, weights = self.static_variable_selection(dict(zip(static_names, tensors)))
            return embedding, weights, self.static_context_variable_selection(embedding)

        static_embedding, static_variable_selection, selection_context = ck(
            static_selection, *[input_vectors[name][:, 0] for name in static_names])
    else:
        static_embedding = torch.zeros((x_cont.size(0), hp.hidden_size), dtype=self.dtype,
                                       device=self.device)
        static_variable_selection = torch.zeros((x_cont.size(0), 0), dtype=self.dtype,
                                                device=self.device)
        selection_context = ck(self.static_context_variable_selection, static_embedding)
    static_context_variable_selection = self.expand_static_context(selection_context, timesteps)

    # historical_encoder: encoder variable selection.
    encoder_names = list(self.encoder_variables)

    def encoder_selection(context, *tensors):
        return self.encoder_variable_selection(dict(zip(encoder_names, tensors)), context)

    embeddings_varying_encoder, encoder_sparse_weights = ck(
        encoder_selection, static_context_variable_selection[:, :max_encoder_length],
        *[input_vectors[name][:, :max_encoder_length] for name in encoder_names])

    # future_encoder: decoder variable selection.
    decoder_names = list(self.decoder_variables)

    def decoder_selection(context, *tensors):
        return self.decoder_variable_selection(dict(zip(decoder_names, tensors)), context)

    embeddings_varying_decoder, decoder_sparse_weights = ck(
        decoder_selection, static_context_variable_selection[:, max_encoder_length:],
        *[input_vectors[name][:, max_encoder_length:] for name in decoder_names])

    # static_encoder, segment 2: the LSTM's initial hidden and cell states.
    def initial_states(embedding):
        return (self.static_context_initial_hidden_lstm(embedding),
                self.static_context_initial_cell_lstm(embedding))

    state_h, state_c = ck(initial_states, static_embedding)
    input_hidden = state_h.expand(hp.lstm_layers, -1, -1)
    input_cell = state_c.expand(hp.lstm_layers, -1, -1)

    # lstm_encoder.
    def run_encoder(inputs, hidden, cell, lengths):
        output, (hidden, cell) = self.lstm_encoder(inputs, (hidden, cell), lengths=lengths,
                                                   enforce_sorted=False)
        return output, hidden, cell

    encoder_output, hidden, cell = ck(run_encoder, embeddings_varying_encoder, input_hidden,
                                      input_cell, encoder_lengths)

    # lstm_decoder, then the post-LSTM gate + add&norm of both (in the peer's order).
    def run_decoder(inputs, hidden, cell, lengths, encoder_output, encoder_inputs):
        decoder_output, _ = self.lstm_decoder(inputs, (hidden, cell), lengths=lengths,
                                              enforce_sorted=False)
        lstm_output_encoder = self.post_lstm_gate_encoder(encoder_output)
        lstm_output_encoder = self.post_lstm_add_norm_encoder(lstm_output_encoder, encoder_inputs)
        lstm_output_decoder = self.post_lstm_gate_decoder(decoder_output)
        lstm_output_decoder = self.post_lstm_add_norm_decoder(lstm_output_decoder, inputs)
        return torch.cat([lstm_output_encoder, lstm_output_decoder], dim=1)

    lstm_output = ck(run_decoder, embeddings_varying_decoder, hidden, cell, decoder_lengths,
                     encoder_output, embeddings_varying_encoder)

    # static_encoder, segment 3: the enrichment-context GRN.
    static_context_enrichment = ck(self.static_context_enrichment, static_embedding)

    # attention_0.
    def attention_block(lstm_output, static_context_enrichment, encoder_lengths, decoder_lengths):
        attn_input = self.static_enrichment(
            lstm_output, self.expand_static_context(static_context_enrichment, timesteps))
        attn_output, attn_output_weights = self.multihead_attn(
            q=attn_input[:, max_encoder_length:], k=attn_input, v=attn_input,
            mask=self.get_attention_mask(encoder_lengths=encoder_lengths,
                                         decoder_lengths=decoder_lengths))
        attn_output = self.post_attn_gate_norm(attn_output, attn_input[:, max_encoder_length:])
        output = self.pos_wise_ff(attn_output)
        output = self.pre_output_gate_norm(output, lstm_output[:, max_encoder_length:])
        return output, attn_output_weights

    output, attn_output_weights = ck(attention_block, lstm_output, static_context_enrichment,
                                     encoder_lengths, decoder_lengths)

    if self.n_targets > 1:
        output = [output_layer(output) for output_layer in self.output_layer]
    else:
        output = self.output_layer(output)
    return self.to_network_output(
        prediction=self.transform_output(output, target_scale=x["target_scale"]),
        encoder_attention=attn_output_weights[..., :max_encoder_length],
        decoder_attention=attn_output_weights[..., max_encoder_length:],
        static_variables=static_variable_selection,
        encoder_variables=encoder_sparse_weights,
        decoder_variables=decoder_sparse_weights,
        decoder_lengths=decoder_lengths,
        encoder_lengths=encoder_lengths,
    )


# --------------------------------------------------------------------------------------------
# Measuring.


class Precision:
    """What Lightning 2.6's Trainer(precision=...) does around a training step, without the
    Trainer (lightning/pytorch/plugins/precision/amp.py, MixedPrecision):
      32          nothing: float32 throughout.
      bf16-mixed  the forward and the loss (Lightning's training_step) under
                  torch.autocast(device_type, dtype=torch.bfloat16, cache_enabled=False);
                  backward and optimizer step outside it, no scaler. Parameters, gradients and
                  the Adam state stay float32; autocast runs matmuls (and, on CPU, the oneDNN
                  LSTM) in bfloat16. On CPU, layer norms and softmaxes whose input is bfloat16
                  stay bfloat16 (CPU autocast does not cast them up); QuantileLoss comes out
                  float32 (a bfloat16 prediction against a float32 target).
      16-mixed    the same with torch.float16 and a torch.amp.GradScaler: the loss is scaled
                  before backward, the gradients unscaled before the step, scaler.step() skips a
                  step with non-finite gradients and scaler.update() adapts the scale. CUDA only.
    One per strategy: each has its own Adam and so its own scaler."""

    def __init__(self, name: str, device):
        import torch

        self.name = name
        self.device_type = device.type
        self.dtype = {"32": None, "bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}[name]
        self.scaler = torch.amp.GradScaler(device=device.type) if name == "16-mixed" else None

    def autocast(self):
        import torch

        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=self.dtype, cache_enabled=False)

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def step(self, optimizer):
        if self.scaler is None:
            optimizer.step()
        else:
            self.scaler.unscale_(optimizer)
            self.scaler.step(optimizer)
            self.scaler.update()


class Runner:
    def __init__(self, strategy: str, model, device, precision: str):
        import torch

        self.strategy = strategy
        self.precision = Precision(precision, device)
        self.model = model.to(device)
        if strategy == "naive":
            self.model.forward = types.MethodType(checkpointed_forward, self.model)
        self.parameters = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.parameters, lr=1e-3)
        self.step_seconds: list[float] = []
        self.forward_seconds: list[float] = []
        self.first_loss = None
        self.first_grads = None
        self.peak = None
        self.flops = None
        self.ops = None

    def forward_loss(self, x, target):
        """The forward and the loss, under autocast where the precision asks for it."""
        with self.precision.autocast():
            output = self.model(x)
            return output, self.model.loss(output["prediction"], target)

    def zero_grad(self):
        # In place, as tft-bench does: the gradient buffers stay allocated between steps, so
        # they count among the bytes held before a step, not as activations.
        for p in self.parameters:
            if p.grad is not None:
                p.grad.zero_()


def sync(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_step(r: Runner, x, target, seed: int, device):
    """One training step; returns (step seconds, forward seconds, loss)."""
    import torch

    r.zero_grad()
    torch.manual_seed(seed)
    sync(device)
    start = time.perf_counter()
    with r.precision.autocast():
        output = r.model(x)
        sync(device)
        forward_s = time.perf_counter() - start
        loss = r.model.loss(output["prediction"], target)
    r.precision.backward(loss)
    r.precision.step(r.optimizer)
    sync(device)
    step_s = time.perf_counter() - start
    return step_s, forward_s, loss.detach()


# What the profiler's native code prints on every run, and what it means here: its start/stop
# trace lines, its probe for a GPU (none under the CUDA stand-ins), and the blind spot that
# activation_peak() documents.
PROFILER_NOISE = ("SyncActivityProfilerHandler.cpp", "Completed Stage:", "gpuGetDeviceCount failed",
                  "Memory block of unknown size was allocated before the profiling started")


@contextlib.contextmanager
def native_stderr_filtered(noise: tuple[str, ...]):
    """Sends file descriptor 2 (where C++ code writes) to a temporary file for the duration,
    then passes on every line that contains none of `noise`."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            for line in captured.read().decode(errors="replace").splitlines():
                if line.strip() and not any(n in line for n in noise):
                    print(line, file=sys.stderr)


def activation_peak(r: Runner, x, target, seed: int, device) -> int:
    """Peak bytes held by tensors during forward + backward, minus those held before.

    CUDA: the caching allocator's statistics, max_memory_allocated() after reset_peak_memory_stats()
    minus memory_allocated() before the step.

    CPU: torch has no peak statistic for its CPU allocator, so this runs the step under
    torch.profiler.profile(activities=[CPU], profile_memory=True). With profile_memory, c10's CPU
    allocator reports every allocation (+bytes) and free (-bytes) it serves while the profiler
    runs, as "[memory]" events with a nanosecond timestamp. Summing them in time order gives the
    live bytes relative to the start of the step; its maximum is the activation peak. This
    counts exactly what tft-bench's tracking allocator counts (c10 CPU allocations), not memory
    that oneDNN or BLAS take from malloc themselves. One blind spot: the profiler cannot size a
    block allocated before it started, so freeing one is not reported (torch warns "Memory block
    of unknown size ..."). The step frees no such block: the previous step's tensors are gone,
    gradients are zeroed and accumulated in place, and the optimizer does not run inside. As a
    check, the sum over the whole step, after dropping its outputs, must come back to ~0; a
    larger residual is reported on stderr.

    A separate step from the timed ones, since profiling slows every op down.
    """
    import torch

    r.zero_grad()
    torch.manual_seed(seed)
    if device.type == "cuda":
        sync(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        output, loss = r.forward_loss(x, target)
        r.precision.backward(loss)
        sync(device)
        peak = torch.cuda.max_memory_allocated(device) - before
        del output, loss
        return int(peak)

    from torch.profiler import ProfilerActivity, profile

    with native_stderr_filtered(PROFILER_NOISE):
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            output, loss = r.forward_loss(x, target)
            r.precision.backward(loss)
            del output, loss
    from torch._C._autograd import DeviceType

    events = [e for e in prof.profiler.kineto_results.events()
              if e.name() == "[memory]" and e.device_type() == DeviceType.CPU]
    events.sort(key=lambda e: e.start_ns())  # stable: ties keep the recorded order
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    if abs(live) > (1 << 20):
        print(f"peer_bench: {r.strategy}: {live} bytes not returned after the memory step; the "
              "peak may be off by as much", file=sys.stderr)
    return peak


def lstm_forward_flops(module, args, kwargs) -> int:
    """FLOPs of one forward call of an nn.LSTM: per layer and direction, per time step of each
    sample, the four gates' matrix products, 4*H*(I + H) multiply-adds, 2 FLOPs each (plus the
    projection's H*P when proj_size > 0). I is the input size (layer 0) or the layers' output
    width; biases and the elementwise gate arithmetic are not counted, as for a Linear.

    The time steps of each sample: a PackedSequence's batch_sizes summed; the peer's LSTM
    (pytorch_forecasting.models.nn.rnn.LSTM) is called with `lengths` and packs them itself,
    zero lengths as one step (no LSTM at all when every length is 0); a padded tensor all of
    its steps."""
    import torch
    from torch.nn.utils.rnn import PackedSequence

    x = args[0]
    if isinstance(x, PackedSequence):
        sample_steps = int(x.batch_sizes.sum())
    else:
        lengths = kwargs.get("lengths", args[2] if len(args) > 2 else None)
        if lengths is not None:
            lengths = torch.as_tensor(lengths)
            sample_steps = 0 if int(lengths.max()) == 0 else int(lengths.clamp(min=1).sum())
        else:
            sample_steps = x.shape[:-1].numel()  # (B, T), (T, B) or unbatched (T)
    directions = 2 if module.bidirectional else 1
    hidden, proj = module.hidden_size, module.proj_size
    recurrent = proj or hidden
    per_step = 0
    for layer in range(module.num_layers):
        width = module.input_size if layer == 0 else recurrent * directions
        per_step += directions * 2 * (4 * hidden * (width + recurrent) + hidden * proj)
    return per_step * sample_steps


def count_flops(r: Runner, x, target, seed: int) -> dict:
    """FLOPs of one training step (forward + loss + backward; Adam's elementwise update is not
    counted), from one extra step after the timed ones, at the run's precision.

    gemm_flops_per_step: what torch.utils.flop_counter.FlopCounterMode counts, which is the
    matrix products (mm, addmm, bmm, baddbmm, convolutions, attention kernels) that reach the
    dispatcher, forward and backward (its formulas: 2 FLOPs per multiply-add, a backward matmul
    twice the forward one). It counts by shape, so autocast does not change it.
    lstm_flops_per_step: FlopCounterMode has no formula for the fused LSTM kernels (CPU oneDNN
    aten.mkldnn_rnn_layer, cuDNN aten._cudnn_rnn, ...), so an nn.LSTM it counts as 0; each
    nn.LSTM call is counted here instead by lstm_forward_flops(), times 3 for a call in the
    forward (its backward taken as twice its forward, the usual rule and FlopCounterMode's for
    matmuls), times 1 for a call during backward (checkpointing's recomputation, whose backward
    is already the one counted). Should an LSTM run as plain matmuls that the counter does see
    (a non-fused fallback), the counter's total moves inside its forward; then its FLOPs are in
    gemm_flops_per_step already and lstm_flops_per_step is 0 (reported on stderr).
    flops_per_step = gemm_flops_per_step + lstm_flops_per_step.

    For `none` this is the model's FLOPs per step; for a checkpointing strategy it includes the
    recomputed forwards.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    state = {"backward": False, "lstm": 0, "seen_by_counter": False, "before": 0}

    def pre_hook(module, args, kwargs):
        state["before"] = counter.get_total_flops()

    def post_hook(module, args, kwargs, output):
        if counter.get_total_flops() != state["before"]:
            state["seen_by_counter"] = True
        factor = 1 if state["backward"] else 3  # a recomputation, or a forward + its backward
        state["lstm"] += lstm_forward_flops(module, args, kwargs) * factor

    handles = []
    for module in r.model.modules():
        if isinstance(module, torch.nn.LSTM):
            handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
            handles.append(module.register_forward_hook(post_hook, with_kwargs=True))
    try:
        r.zero_grad()
        torch.manual_seed(seed)
        with counter:
            output, loss = r.forward_loss(x, target)
            state["backward"] = True
            r.precision.backward(loss)
            del output, loss
    finally:
        for h in handles:
            h.remove()
    gemm = int(counter.get_total_flops())
    lstm = int(state["lstm"])
    if state["seen_by_counter"]:
        print(f"peer_bench: {r.strategy}: the LSTM ran as matmuls that FlopCounterMode counts; "
              "lstm_flops_per_step = 0, its FLOPs are in gemm_flops_per_step", file=sys.stderr)
        lstm = 0
    return {"flops_per_step": gemm + lstm, "gemm_flops_per_step": gemm,
            "lstm_flops_per_step": lstm}


OP_PHASES = ("forward", "loss", "backward", "optimizer")


def count_ops(r: Runner, x, target, seed: int) -> dict:
    """ATen operator calls and host value reads of one training step (forward, loss, backward,
    Adam), from one extra, untimed step, counted the way tft-bench counts its own
    (src/common/operator_counter.h): every "aten::" operator event the profiler records, nested
    ones included, by phase; and the reads of one value (aten::_local_scalar_dense) that the
    host asked for, that is not inside another operator but aten::item. On a GPU each such read
    of a device tensor waits for the device. torch.optim.Adam's single-tensor path reads each
    parameter's step count this way; those counters stay on the CPU even for CUDA parameters,
    so there they do not wait (the CPU count includes them, and says so in the table).

    On a CUDA device, also the kernels, memory copies and memory sets the step ran, from the
    profiler's device activities, by the rule tft-bench counts its own with
    (src/common/device_kernel_counter.h).
    """
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    on_cuda = r.precision.device_type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_cuda else [])
    r.zero_grad()
    torch.manual_seed(seed)
    if on_cuda:
        torch.cuda.synchronize()  # the zeroing's kernels are not the step's
    with native_stderr_filtered(PROFILER_NOISE), profile(activities=activities) as prof:
        with record_function("tft_phase::forward"), r.precision.autocast():
            output = r.model(x)
        with record_function("tft_phase::loss"), r.precision.autocast():
            loss = r.model.loss(output["prediction"], target)
        with record_function("tft_phase::backward"):
            r.precision.backward(loss)
        with record_function("tft_phase::optimizer"):
            r.precision.step(r.optimizer)
        del output, loss
        if on_cuda:
            torch.cuda.synchronize()  # the profiler records a kernel once it has run
    events = prof.events()
    phases = [(e.time_range.start, e.time_range.end, e.name.split("::", 1)[1])
              for e in events if e.name.startswith("tft_phase::")]
    calls = {phase: 0 for phase in OP_PHASES}
    reads = 0
    for e in events:
        if not e.name.startswith("aten::"):
            continue
        # The phase whose range holds the event's start: backward may run on another thread.
        for start, end, phase in phases:
            if start <= e.time_range.start <= end:
                calls[phase] += 1
                break
        if e.name == "aten::_local_scalar_dense":
            parent = e.cpu_parent
            while parent is not None and parent.name == "aten::item":
                parent = parent.cpu_parent
            if parent is None or not parent.name.startswith("aten::"):
                reads += 1
    counts = {"op_calls": sum(calls.values()),
              "op_calls_by_phase": calls,
              "host_syncs": reads}
    kernels = device_kernels(prof) if on_cuda else None
    if kernels is not None:
        counts["device_kernels"] = kernels
    elif on_cuda:
        print(f"peer_bench: {r.strategy}: kernels not counted: the profiler recorded no device "
              "activity (is CUPTI available?)", file=sys.stderr)
    return counts


def device_kernels(prof) -> dict | None:
    """Kernels, copies and sets on a CUDA device among a profile's events, classified by their
    Kineto activity type as tft-bench classifies its own; None when there were none at all (the
    profiler saw nothing: a zero would read as a count)."""
    from torch._C._autograd import DeviceType

    kinds = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}
    counts = {name: 0 for name in kinds.values()}
    for e in prof.profiler.kineto_results.events():
        kind = kinds.get(e.activity_type()) if e.device_type() == DeviceType.CUDA else None
        if kind is not None:
            counts[kind] += 1
    return counts if any(counts.values()) else None


def median(values: list[float]) -> float:
    return statistics.median(values)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="peer_bench.py",
        description="Step time and activation memory of pytorch-forecasting's "
                    "TemporalFusionTransformer on a tft-bench configuration.")
    p.add_argument("--config", default="bench/configs/reference.yaml",
                   help="bench YAML, the one tft-bench reads (default: %(default)s)")
    p.add_argument("--strategies", default="none,naive",
                   help="comma-separated, 'none' first; from: none, naive (default: %(default)s)")
    p.add_argument("--steps", type=int, default=5, help="measured steps per strategy (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured steps first (default 1)")
    p.add_argument("--threads", type=int, default=2, help="intra-op threads (default 2)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    p.add_argument("--precision", default="32",
                   help="32, bf16-mixed or 16-mixed (CUDA only), as Lightning's "
                        "Trainer(precision=...): forward and loss under torch.autocast "
                        "(default: %(default)s)")
    p.add_argument("--count-flops", action="store_true",
                   help="count the FLOPs of one extra, untimed step per strategy "
                        "(FlopCounterMode's matmuls + the LSTMs by formula)")
    p.add_argument("--count-ops", action="store_true",
                   help="count one more step's ATen operator calls by phase and its host value "
                        "reads (see count_ops()), as tft-bench does")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--check-import", action="store_true",
                   help="import torch and the peer, print their versions and exit")
    a = p.parse_args(argv)
    if a.check_import:
        return a
    if a.steps < 1:
        raise InputError(f"--steps: must be at least 1 (got {a.steps})")
    if a.warmup < 0:
        raise InputError(f"--warmup: must be 0 or more (got {a.warmup})")
    if a.threads < 1:
        raise InputError(f"--threads: must be at least 1 (got {a.threads})")
    if not (a.device == "cpu" or a.device == "cuda" or
            (a.device.startswith("cuda:") and a.device[5:].isdigit())):
        raise InputError(f"--device: expected cpu or cuda[:N], got '{a.device}'")
    if a.precision not in PRECISIONS:
        raise InputError(f"--precision: expected one of {', '.join(PRECISIONS)}, got "
                         f"'{a.precision}'")
    if a.precision == "16-mixed" and not a.device.startswith("cuda"):
        raise InputError("--precision 16-mixed: CUDA only (a GradScaler for float16); on the "
                         "CPU use bf16-mixed")
    names = [s.strip() for s in a.strategies.split(",")]
    for name in names:
        if name not in STRATEGIES:
            raise InputError(f"--strategies: unknown strategy '{name}' (known: {', '.join(STRATEGIES)})")
    if len(set(names)) != len(names):
        raise InputError(f"--strategies: a strategy is listed twice in '{a.strategies}'")
    if names[0] != "none":
        raise InputError("--strategies: the first strategy must be 'none' (the baseline)")
    a.strategy_list = names
    if a.json:
        folder = os.path.dirname(os.path.abspath(a.json))
        if not os.path.isdir(folder):
            raise InputError(f"--json: folder '{folder}' does not exist")
    return a


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
        config = None if args.check_import else load_config(args.config)
    except InputError as e:
        print(f"peer_bench: {e}", file=sys.stderr)
        return 2

    stubbed = import_peer()
    import pytorch_forecasting
    import torch

    if args.check_import:
        from pytorch_forecasting import TemporalFusionTransformer  # noqa: F401

        print(f"torch {torch.__version__}, pytorch-forecasting {pytorch_forecasting.__version__}"
              f"{', CUDA stubs loaded' if stubbed else ''}")
        return 0

    device = torch.device(args.device)
    if device.type == "cuda":
        if stubbed:
            print("peer_bench: --device cuda: this venv has stand-ins, not CUDA libraries; run "
                  "bench/peer/setup.sh --cuda", file=sys.stderr)
            return 2
        if not torch.cuda.is_available():
            print("peer_bench: --device cuda: torch sees no CUDA device", file=sys.stderr)
            return 2
        if (device.index or 0) >= torch.cuda.device_count():
            print(f"peer_bench: --device {args.device}: only {torch.cuda.device_count()} CUDA "
                  "devices", file=sys.stderr)
            return 2

    try:
        torch.set_num_threads(args.threads)
        schema = Schema(config)
        torch.manual_seed(1)
        x, target = synthetic_batch(config, schema, device)
        runners = []
        for strategy in args.strategy_list:
            torch.manual_seed(0)  # the same initial weights for every strategy
            runners.append(Runner(strategy, build_model(config, schema), device,
                                  args.precision))

        rounds = args.warmup + args.steps
        print(f"peer_bench: pytorch-forecasting {pytorch_forecasting.__version__}, torch "
              f"{torch.__version__}, {args.config}, batch {config['batch_size']}, {device}, "
              f"{args.threads} threads, precision {args.precision}, {args.warmup} warm-up + "
              f"{args.steps} steps each")
        for step in range(rounds):
            # Rotate who goes first, so that no strategy always runs in the same position.
            order = runners[step % len(runners):] + runners[:step % len(runners)]
            for r in order:
                step_s, forward_s, loss = timed_step(r, x, target, 1000 + step, device)
                if step == 0:
                    r.first_loss = float(loss)
                    r.first_grads = [p.grad.detach().clone() for p in r.parameters]
                if step >= args.warmup:
                    r.step_seconds.append(step_s)
                    r.forward_seconds.append(forward_s)
            print(f"\r  round {step + 1}/{rounds}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        for r in runners:
            r.peak = activation_peak(r, x, target, 999, device)
            if args.count_flops:
                r.flops = count_flops(r, x, target, 998)
            if args.count_ops:
                r.ops = count_ops(r, x, target, 997)

        base = runners[0]
        results = []
        for r in runners:
            diff = abs(r.first_loss - base.first_loss)
            for g, g0 in zip(r.first_grads, base.first_grads):
                diff = max(diff, float((g - g0).abs().max()))
            result = {
                "strategy": r.strategy,
                "precision": args.precision,
                "step_seconds_median": median(r.step_seconds),
                "forward_seconds_median": median(r.forward_seconds),
                "peak_activation_bytes": int(r.peak),
                "memory_savings_measured": 1.0 - r.peak / base.peak if base.peak else 0.0,
                "grad_max_abs_diff": diff,
                "loss": r.first_loss,
            }
            if r.flops is not None:
                result.update(r.flops)
            if r.ops is not None:
                result.update(r.ops)
            results.append(result)
    except Exception as e:  # noqa: BLE001 - one line, not a traceback, for a failed run
        print(f"peer_bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1

    base_step = results[0]["step_seconds_median"]
    print()
    flops = args.count_flops
    print("| strategy | precision | step ms | overhead | forward ms | peak activations MiB | "
          "memory saved | max abs grad diff | loss |" +
          (" GFLOP/step | GFLOP/s |" if flops else ""))
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if flops else ""))
    for res in results:
        rate = ""
        if flops:
            rate = (f" {res['flops_per_step'] / 1e9:.3f} | "
                    f"{res['flops_per_step'] / res['step_seconds_median'] / 1e9:.2f} |")
        print(f"| {res['strategy']} | {res['precision']} | "
              f"{res['step_seconds_median'] * 1e3:.1f} | "
              f"{(res['step_seconds_median'] / base_step - 1) * 100:+.1f}% | "
              f"{res['forward_seconds_median'] * 1e3:.1f} | "
              f"{res['peak_activation_bytes'] / 1048576:.1f} | "
              f"{res['memory_savings_measured'] * 100:.1f}% | {res['grad_max_abs_diff']:.3g} | "
              f"{res['loss']:.6f} |" + rate)
    if args.count_ops:
        print("\n| strategy | operator calls | forward | loss | backward | optimizer | host value "
              "reads |\n|---|---:|---:|---:|---:|---:|---:|")
        for res in results:
            by = res["op_calls_by_phase"]
            print(f"| {res['strategy']} | {res['op_calls']} | {by['forward']} | {by['loss']} | "
                  f"{by['backward']} | {by['optimizer']} | {res['host_syncs']} |")
        if all("device_kernels" in res for res in results):
            print("\n| strategy | kernels | memory copies | memory sets |\n|---|---:|---:|---:|")
            for res in results:
                k = res["device_kernels"]
                print(f"| {res['strategy']} | {k['kernels']} | {k['memcpys']} | {k['memsets']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({
                "peer": "pytorch-forecasting",
                "peer_version": pytorch_forecasting.__version__,
                "torch_version": torch.__version__,
                "device": str(device),
                "threads": args.threads,
                "config": args.config,
                "batch_size": config["batch_size"],
                "precision": args.precision,
                # The model's FLOPs per step: strategy `none`'s (no recomputation).
                **({key: results[0][key] for key in ("flops_per_step", "gemm_flops_per_step",
                                                     "lstm_flops_per_step")} if flops else {}),
                "results": results,
            }, f, indent=2)
            f.write("\n")
    if any(res["grad_max_abs_diff"] != 0.0 for res in results):
        print("peer_bench: gradients differ from 'none' (see the grad diff column)", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())

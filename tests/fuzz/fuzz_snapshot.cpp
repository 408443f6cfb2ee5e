// Fuzz target: the snapshot loader (load_snapshot) past the seal, and what a resume does with
// what it loaded (the weights into the model, the random generator's state restored).
//
// A snapshot is a sealed archive (sealed_archive.h): a SHA-256 over the payload is checked
// before the payload is parsed, so random bytes would only ever meet the checksum. Here the
// harness seals what the input gives, with a correct digest, as a file written by
// save_snapshot would be. The first input byte picks what the rest is:
//   0  the whole payload (a LibTorch archive: "state", "model", "best_model", "optimizer",
//      "rng_cpu"), seeded with a real snapshot's
//   1  the "state" JSON text alone, with a real snapshot's tensors and optimizer state
//      around it (most mutations of a zip archive never reach the JSON)
//
// Contract checked, besides the sanitizers: the snapshot loads and resumes, or loading fails
// with its documented errors, tft::IoError or tft::ConfigError (snapshot.h).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "checkpoint/rng_state.h"
#include "common/error.h"
#include "common/sha256.h"
#include "fuzz_support.h"
#include "fuzz_tiny_model.h"
#include "optim/fused_adam.h"
#include "store/module_state.h"
#include "store/sealed_archive.h"
#include "store/snapshot.h"

namespace {

namespace fs = std::filesystem;

// snapshot.h: "format tftrain-snapshot, version 2".
constexpr const char* kFormat = "tftrain-snapshot";
constexpr std::int64_t kVersion = 2;
const c10::Device kCpu(c10::DeviceType::CPU);

struct Fixture {
  tft::fuzz::TinyModel tiny;
  tft::ModuleState weights;                   // the tiny model's, as its snapshot holds them
  std::unique_ptr<tft::FusedAdam> optimizer;  // after one step: it has moments to save
  at::Tensor rng_cpu;
  fs::path file;  // where each input's snapshot is written
};

std::unique_ptr<tft::FusedAdam> adam_for(const tft::TFTModel& model) {
  return std::make_unique<tft::FusedAdam>(model->parameters(), torch::optim::AdamOptions(1e-3));
}

// The payload's bytes of a snapshot file (the sealed archive's "payload" tensor).
std::string payload_of(const fs::path& snapshot) {
  torch::serialize::InputArchive sealed;
  tft::load_archive_from_bytes(sealed, tft::fuzz::read_bytes(snapshot), snapshot.string());
  at::Tensor payload;
  sealed.read("payload", payload);
  return std::string(reinterpret_cast<const char*>(payload.data_ptr<std::uint8_t>()),
                     static_cast<std::size_t>(payload.numel()));
}

// Not const: a resume loads weights into the model.
Fixture& fixture() {
  static Fixture fixture = [] {
    Fixture f;
    f.tiny = tft::fuzz::make_tiny_model();
    f.weights = tft::copy_module_state(*f.tiny.model);
    f.optimizer = adam_for(f.tiny.model);
    for (at::Tensor& p : f.tiny.model->parameters()) p.mutable_grad() = at::ones_like(p);
    f.optimizer->step();
    f.rng_cpu = tft::RngState::capture(kCpu).cpu;
    const fs::path scratch = tft::fuzz::scratch_folder("fuzz_snapshot");
    f.file = scratch / "snapshot.pt";

    // Seeds: a snapshot taken inside an epoch, so every part of the state is present.
    tft::SnapshotState state;
    state.epochs_completed = 1;
    state.initial_validation_loss = 2.5;
    state.history.resize(1);
    state.in_progress = tft::EpochInProgress{2, 0.75, 8, 4096, 0.5, 0.0};
    const fs::path real = scratch / "real.pt";
    tft::save_snapshot(real, state, f.tiny.model, f.weights, *f.optimizer,
                       tft::RngState{f.rng_cpu, {}, -1});
    const std::string payload = payload_of(real);
    torch::serialize::InputArchive inner;
    tft::load_archive_from_bytes(inner, payload, real.string());
    c10::IValue state_text;
    inner.read("state", state_text);
    tft::fuzz::offer_seed("0-payload", std::string(1, '\0') + payload);
    tft::fuzz::offer_seed("1-state", std::string(1, '\1') + state_text.toStringRef());
    return f;
  }();
  return fixture;
}

// A payload with `state_text` as its "state" and the fixture's tensors, as save_snapshot
// lays it out.
std::string payload_with_state(const Fixture& f, const std::string& state_text) {
  torch::serialize::OutputArchive payload, model, best, adam;
  payload.write("state", c10::IValue(state_text));
  tft::write_module_state(model, f.weights);
  tft::write_module_state(best, f.weights);
  f.optimizer->save(adam);
  payload.write("model", model);
  payload.write("best_model", best);
  payload.write("optimizer", adam);
  payload.write("rng_cpu", f.rng_cpu);
  return tft::archive_to_bytes(payload, "the payload");
}

// `payload` sealed as save_sealed_archive seals it: format, version, its SHA-256, the bytes.
std::string sealed(std::string payload) {
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(std::string(kFormat)));
  archive.write("version", c10::IValue(kVersion));
  archive.write("sha256", c10::IValue(tft::sha256_hex(payload)));
  archive.write("payload",
                at::from_blob(payload.data(), {static_cast<std::int64_t>(payload.size())},
                              at::TensorOptions(at::kByte)));
  return tft::archive_to_bytes(archive, "the sealed snapshot");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Fixture& f = fixture();
  const std::string rest = tft::fuzz::as_text(data + 1, size - 1);
  tft::fuzz::write_bytes(f.file, sealed(data[0] % 2 == 0 ? rest : payload_with_state(f, rest)));

  // As Trainer::train resumes: load, put the weights in, restore the generator.
  const tft::RngStateGuard keep_generator(kCpu);
  const std::unique_ptr<tft::FusedAdam> optimizer = adam_for(f.tiny.model);
  try {
    tft::Snapshot snapshot = tft::load_snapshot(f.file, f.tiny.model, *optimizer);
    tft::load_module_state(*f.tiny.model, snapshot.model, "snapshot (model)");
    tft::load_module_state(*f.tiny.model, snapshot.best_model, "snapshot (best_model)");
    snapshot.rng.cuda_index = kCpu.index();
    snapshot.rng.restore();
  } catch (const tft::IoError&) {
  } catch (const tft::ConfigError&) {
    // Both are the loader's documented rejections (snapshot.h).
  }
  return 0;
}

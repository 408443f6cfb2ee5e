// Devices by name ("cpu", "cuda", "cuda:N") for the trainer and the tools, and the one
// synchronisation point that timing CUDA work needs.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace tft {

// The device `text` names, checked against this build and machine: ConfigError naming
// `field` when it is not a device name, UnsupportedError when it is one this build or machine
// cannot run on (CUDA without -DTFT_WITH_CUDA=ON, no GPU, an index past the last GPU).
c10::Device resolve_device(const std::string& text, const std::string& field);

// How many CUDA devices this process can use: 0 in a build without CUDA or without a GPU.
int cuda_device_count();

// Returns once every kernel queued on `device` has finished; nothing to wait for on the CPU.
// CUDA runs asynchronously: a wall-clock timer around GPU work must end here.
void synchronize(const c10::Device& device);

}  // namespace tft

// The LibTorch headers that the project's C++ code includes, precompiled once per build
// (cmake/TftPrecompiledHeaders.cmake) and shared by every target that compiles against
// LibTorch. Parsing them is most of a translation unit's compile time (25-60 s each on a
// 2-core machine with LibTorch 2.x), so each file's own includes stay narrow for readers and
// for builds without a precompiled header, and this list is what makes the build fast.
// Nothing here is CUDA-specific: those headers stay in the files that need them.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/util/irange.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/nn/init.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/types.h>
#include <torch/utils.h>

// tft-train --nproc N: N local ranks of a data-parallel job, started the way torchrun starts
// them (the same command in N processes, each with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR
// 127.0.0.1 and a free MASTER_PORT in its environment), so both paths run the same code.
#pragma once

#include <string>
#include <vector>

namespace tft_train {

// Runs `argv` (this program's path and its arguments, without --nproc) as `nproc` ranks and
// waits for them. When one fails, the others are stopped (SIGTERM). Returns 0 when every rank
// succeeded, else the first failing rank's exit status (128 + signal for a killed one).
int run_local_ranks(int nproc, const std::vector<std::string>& argv);

}  // namespace tft_train

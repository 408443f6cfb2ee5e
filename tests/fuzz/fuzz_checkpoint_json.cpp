// Fuzz target: CheckpointConfig's JSON reader (checkpoint_config_from_json_string); the checks
// are in fuzz_checkpoint_reader.h.
#include <cstddef>
#include <cstdint>

#include "checkpoint/checkpoint_config_io.h"
#include "fuzz_checkpoint_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tft::fuzz::fuzz_checkpoint_reader(tft::fuzz::as_text(data, size),
                                    &tft::checkpoint_config_from_json_string);
  return 0;
}

#include "memory/device_memory.h"

#include "common/error.h"

#ifdef TFT_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include "common/torch_compat.h"
#endif

#include <string>

namespace tft::memory {

DeviceMemory cuda_device_memory(const c10::Device& device) {
#ifdef TFT_WITH_CUDA
  if (device.is_cuda()) {
    const c10::DeviceIndex index =
        device.has_index() ? device.index() : c10::cuda::current_device();
    const c10::cuda::CUDAGuard on_device(index);
    std::size_t free = 0, total = 0;
    const cudaError_t status = cudaMemGetInfo(&free, &total);
    if (status != cudaSuccess) {
      throw Error("device memory: cudaMemGetInfo on cuda:" + std::to_string(index) +
                  " failed: " + cudaGetErrorString(status));
    }
    const compat::CudaAllocatedBytes allocator = compat::cuda_allocated_bytes(index);
    DeviceMemory memory;
    memory.total_bytes = static_cast<std::int64_t>(total);
    memory.driver_free_bytes = static_cast<std::int64_t>(free);
    memory.allocated_bytes = allocator.current;
    memory.allocator_unused_bytes = allocator.reserved - allocator.current;
    return memory;
  }
#endif
  throw UnsupportedError("device memory: '" + device.str() +
                         "' is not a CUDA device of this build (free memory is read on CUDA only" +
#ifdef TFT_WITH_CUDA
                         std::string(")")
#else
                         std::string("; rebuild with -DTFT_WITH_CUDA=ON)")
#endif
  );
}

}  // namespace tft::memory

// SHA-256 digests (OpenSSL's libcrypto), to detect files damaged after they were written:
// LibTorch's archives check no CRC when read, so a flipped bit in a tensor loads silently.
// Integrity, not security: nothing here is secret or signed.
#pragma once

#include <string>
#include <string_view>

namespace tft {

// The digest of `bytes` as 64 lowercase hex digits (the form `sha256sum` prints).
std::string sha256_hex(std::string_view bytes);

}  // namespace tft

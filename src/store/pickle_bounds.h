// The pickles of a LibTorch archive, checked before LibTorch's unpickler reads them.
//
// LibTorch's unpickler trusts two numbers a pickle states:
//   - a string's length (BINUNICODE: 4 bytes, BINUNICODE8: 8): it reserves that many bytes
//     before reading them (Unpickler::readBytes);
//   - a memo index (BINPUT: 1 byte, LONG_BINPUT: 4): it grows the memo table to that index and
//     fills it, 16 bytes an entry (Unpickler::setInput).
// So a 300 kB file can make it allocate, and for the memo write, tens of gigabytes (fuzz_snapshot
// found both). Without a sanitizer that is a std::bad_alloc where the allocation fails, but where
// the kernel overcommits it succeeds, and a host process that loads the file is killed by the
// out-of-memory killer instead of getting an error. A SHA-256 seal does not help: it tells a
// damaged file from the one written, not a crafted file from an honest one.
//
// Here every pickle in the archive (data.pkl, constants.pkl, the code's .debug_pkl) is walked
// opcode by opcode, with no allocation beyond a copy of the record, and refused when an argument
// runs past the pickle's end or a memo index is beyond what a pickle of its size can hold (a
// pickler numbers its memo 0, 1, 2, ... and each entry costs at least 2 bytes, so no honest
// index reaches the pickle's length). That caps the memo table at 16 bytes per pickle byte and
// a string at the pickle's own size.
#pragma once

#include <string>
#include <string_view>

namespace tft {

// Throws IoError naming `where`, the opcode and its byte offset when `pickle` has an argument
// that runs past its end, a memo index at or beyond its length, a byte that is no pickle
// opcode, or no STOP.
void check_pickle_bounds(std::string_view pickle, const std::string& where);

// Checks every record of the LibTorch archive `archive` whose name ends in "pkl"
// (check_pickle_bounds, with the record's name in the message). LibTorch's c10::Error when the
// bytes are no LibTorch archive (load_archive_from_bytes turns both into one IoError).
void check_archive_pickles(std::string_view archive, const std::string& where);

}  // namespace tft

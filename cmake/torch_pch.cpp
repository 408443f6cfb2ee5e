// The translation unit that builds tft_torch_pch's precompiled header (see
// TftPrecompiledHeaders.cmake); it has no code of its own.

#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "protocol/frame.h"

namespace spinrpc::bench {

/// The exit status of a run that saw a wrong reply. scripts/bench.sh and
/// the CI smoke run (scripts/test.sh) fail on it; timings never fail them.
inline constexpr int kIntegrityExitStatus = 3;

/// Ends the process at once with kIntegrityExitStatus after one stderr line
/// "spinrpc-bench: INTEGRITY FAILURE: <message>", so that no time is
/// reported for the broken benchmark (docs/BENCHMARKING.md#integrity). Flushes stdout
/// first; runs no destructors and no atexit handlers (spawned servers see
/// EOF on their stdin and exit by themselves). Safe in a forked child.
[[noreturn]] void integrity_failure(const std::string& message);

/// Compares the reply `got` with `expected` byte for byte (one memcmp) and
/// calls integrity_failure, naming `benchmark`, the `request` index and the
/// first differing offset, if they differ.
void check_reply(ByteView expected, ByteView got, std::string_view benchmark, std::size_t request);

}  // namespace spinrpc::bench

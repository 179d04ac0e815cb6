#pragma once

#include <cstdint>  // std::int64_t, std::uint32_t, ...

namespace spinrpc::trace {

/// What a Record is. The writer (trace_writer.h) turns each into one or
/// more trace events; docs/TRACE.md#events lists their names and fields.
enum class Kind : std::uint8_t {
  wait,     ///< SpinReader::read_some: detail = WaitEnd, a = ns spun, b = tries
  send,     ///< one frame written: detail = frame type, a = bytes
  read,     ///< one frame read (its waits inside): detail = frame type, a = bytes
  request,  ///< a Request to its Response or Error: detail = reply type, a = bytes out, b = bytes in, name
  handler,  ///< a handler: the server's for a request (detail 0), a client's callback (kCallbackDetail); name
  call,     ///< a Call to its CallResponse or CallError: detail = reply type, name = callback
  instant,  ///< a decision of the wait policy or the transport: name = what, a = a number it names
};

/// Kind::handler's detail for a client's callback answering a Call.
inline constexpr std::uint8_t kCallbackDetail = 1;

/// How a wait ended (Kind::wait's detail).
enum class WaitEnd : std::uint8_t {
  spin,          ///< bytes arrived while spinning
  budget_spent,  ///< spun the whole budget, then blocked
  contended,     ///< a late yield ended the spin; then blocked
  no_budget,     ///< budget 0: blocked at once
  suspended,     ///< the adaptive rule suspended spinning: blocked at once
  placed,        ///< placement asked for one blocking read: blocked at once
};

/// One span or instant: 40 bytes, written in place in the ring, never
/// allocated. Times are CLOCK_MONOTONIC (std::chrono::steady_clock) in ns,
/// so the files of a client and of the server it spawns line up.
struct Record {
  std::int64_t start_ns;
  std::int64_t dur_ns;  ///< 0 for an instant
  std::uint64_t a;      ///< by kind (Kind)
  std::uint32_t b;      ///< by kind (Kind)
  std::uint32_t seq;    ///< the request it belongs to (Ring::begin_request)
  std::uint32_t name;   ///< NameTable id; 0: none
  std::int16_t cpu;     ///< the CPU at the span's end (sched_getcpu); -1 unknown
  Kind kind;
  std::uint8_t detail;  ///< by kind (Kind)
};
static_assert(sizeof(Record) == 40);

}  // namespace spinrpc::trace

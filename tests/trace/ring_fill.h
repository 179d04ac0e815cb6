#pragma once
// Records put in a Ring by hand, for the tests of the writer and the
// registry on their own: time points chosen by the test, no channel.

#include <chrono>       // std::chrono_literals
#include <cstdint>      // std::uint8_t
#include <string_view>  // std::string_view

#include "protocol/message_type.h"
#include "trace/trace_ring.h"

namespace spinrpc::test {

inline std::uint8_t type(MessageType t) { return static_cast<std::uint8_t>(t); }

/// One client-like request at `at` with 4 records: send Request, a wait,
/// read Response, the request span; `method` its name.
inline void client_request(trace::Ring& ring, trace::Ring::Clock::time_point at, std::string_view method = "echo") {
  using namespace std::chrono_literals;
  ring.begin_request();
  ring.span(trace::Kind::send, type(MessageType::Request), at, at + 100ns, 7);
  ring.span(trace::Kind::wait, static_cast<std::uint8_t>(trace::WaitEnd::spin), at + 150ns, at + 250ns, 100, 3);
  ring.span(trace::Kind::read, type(MessageType::Response), at + 100ns, at + 300ns, 7);
  ring.span(trace::Kind::request, type(MessageType::Response), at, at + 300ns, 7, 7, ring.intern(method));
}

}  // namespace spinrpc::test

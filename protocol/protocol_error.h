#pragma once

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc {

/// Malformed bytes on the wire. what() is one line that names the offending
/// byte in tsgo's words, without tsgo's "api: invalid request: " prefix
/// (e.g. "expected fixed 3-element array (0x93), received: 0x92"), so the
/// server can add the prefix and the client shim can add its own context.
class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace spinrpc

#pragma once

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc {

/// The peer answered with a failure frame: Error to a Request (seen by the
/// client), or CallError to a Call (seen by a server handler). what() is the
/// peer's message, unchanged.
class RemoteError : public std::runtime_error {
 public:
  explicit RemoteError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace spinrpc

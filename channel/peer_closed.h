#pragma once

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc {

/// The peer went away: EOF in the middle of a frame, or EPIPE/ECONNRESET on
/// a write. A clean EOF between frames is not an error (try_read_frame
/// returns std::nullopt). what() is one line.
class PeerClosed : public std::runtime_error {
 public:
  PeerClosed(const std::string& message, bool inside_field)
      : std::runtime_error(message), inside_field_(inside_field) {}

  /// True when the input ended inside a multi-byte field of a frame (a
  /// bin16/bin32 length, or a name or payload that had begun). tsgo reports
  /// only that case as "unexpected EOF" and ends cleanly on an EOF at a field
  /// boundary; spinrpc-server copies the distinction (docs/PROTOCOL.md#end-of-input).
  bool inside_field() const noexcept { return inside_field_; }

 private:
  bool inside_field_;  // see inside_field()
};

}  // namespace spinrpc

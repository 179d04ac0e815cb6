#pragma once

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

namespace spinrpc {

/// The peer went away: EOF in the middle of a frame or while a Request
/// waits for its answer, EPIPE/ECONNRESET on a write, ECONNRESET on a read. A clean EOF between
/// frames is not an error (try_read_frame returns std::nullopt). what() is
/// one line.
class PeerClosed : public std::runtime_error {
 public:
  /// Where in the conversation the peer left.
  enum class Where {
    between_frames,  ///< no frame begun (read_frame, which needed one)
    field_boundary,  ///< inside a frame, after a whole field (e.g. after `93 01 c4`)
    inside_field,    ///< inside a multi-byte field: a bin16/bin32 length, a name or payload begun
    during_call,     ///< a Request is open and its handler waits for a CallResponse
    writing,        ///< our write found the reader gone (EPIPE/ECONNRESET), or a read
                    ///< found a socket peer gone with what we sent it unread (ECONNRESET)
  };

  PeerClosed(const std::string& message, Where where) : std::runtime_error(message), where_(where) {}

  Where where() const noexcept { return where_; }

  /// True when the input ended inside a multi-byte field of a frame. tsgo
  /// reports only that case as "unexpected EOF"; spinrpc-server also reports
  /// the other ways a message or a request is cut short
  /// (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
  bool inside_field() const noexcept { return where_ == Where::inside_field; }

 private:
  Where where_;  // see where()
};

}  // namespace spinrpc

#pragma once

#include <cstddef>      // std::size_t
#include <exception>    // std::exception_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "channel/channel_stats.h"
#include "protocol/frame.h"

namespace spinrpc {

class FdChannel;
namespace detail {
struct AsyncSession;
}

/// What a handler sees of one Request, and how it answers. A handler runs on
/// the server's only thread, between reading the Request and writing its
/// Response; everything here is valid until the handler returns.
class RequestContext {
 public:
  /// The Request's method name.
  std::string_view method() const noexcept { return method_; }
  /// The Request's payload (usually UTF-8 JSON), in the channel's buffer:
  /// no copy, valid until the handler returns, even across call().
  ByteView payload() const noexcept { return payload_; }
  std::string_view payload_text() const noexcept { return as_text(payload_); }

  /// Calls back into the client: sends Call(callback, arguments) and blocks
  /// until the client answers. Returns the CallResponse payload, valid until
  /// the next call() or until the handler returns.
  /// Throws RemoteError (the client's CallError message); std::runtime_error
  /// if the client sends anything other than a CallResponse or CallError
  /// named `callback` (tsgo: `api: unexpected message while waiting for
  /// "NAME" response`; the Request then fails and the server serves on);
  /// PeerClosed and ProtocolError as FdChannel does (the server then ends).
  /// In async mode (Server::serve_async) `arguments` and the result are JSON
  /// text; the call is a JSON-RPC request with id "apiN", an error response
  /// is RemoteError "api: remote error [CODE]: MESSAGE", and requests that
  /// arrive meanwhile are answered after this one.
  ByteView call(std::string_view callback, ByteView arguments);
  std::string_view call(std::string_view callback, std::string_view arguments);

  /// The channel's spin counters so far (SPIN.md, "What the channel reports").
  const ChannelStats& channel_stats() const noexcept;

  /// Whether the client announced callback `name` with --callbacks=.
  bool client_has_callback(std::string_view name) const noexcept;

  /// The Response payload to send: a buffer that is empty when the handler
  /// starts and keeps its capacity across requests (no allocation per small
  /// reply in steady state). Ignored once reply_view() is called.
  std::string& reply() noexcept { return reply_; }
  /// Sends `bytes` as the Response payload without copying them; they must
  /// stay valid until the handler returns (e.g. a view of payload()).
  void reply_view(ByteView bytes) noexcept {
    reply_view_ = bytes;
    has_reply_view_ = true;
  }

 private:
  friend class Server;
  // Room for the built-in replies from the start (getChannelStats' JSON is
  // ~250 bytes and grows as its counters gain digits), so no reply
  // reallocates at a capacity boundary mid-session.
  static constexpr std::size_t kReservedReplyBytes = 1024;
  RequestContext() { reply_.reserve(kReservedReplyBytes); }
  ByteView response_payload() const noexcept { return has_reply_view_ ? reply_view_ : as_bytes(reply_); }

  FdChannel* channel_ = nullptr;               // borrowed for one request (sync mode)
  detail::AsyncSession* async_ = nullptr;      // borrowed for one request (async mode)
  const std::string* callbacks_ = nullptr;     // comma-separated --callbacks list, owned by Server
  std::string_view method_;                    // view into the held Request frame
  ByteView payload_;                           // view into the held Request frame
  std::string reply_;                          // reused across requests
  ByteView reply_view_;                        // set by reply_view()
  bool has_reply_view_ = false;
  std::exception_ptr fatal_;                   // a channel failure inside call(): ends the session
};

}  // namespace spinrpc

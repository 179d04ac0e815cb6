#pragma once

#include <exception>    // std::exception_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "wait/channel_stats.h"
#include "protocol/frame.h"
#include "trace/trace_ring.h"

namespace spinrpc {

namespace detail {
class Session;
}

/// What a handler sees of one Request, and how it answers. A handler runs on
/// the server's only thread, between reading the Request and writing its
/// Response; everything here is valid until the handler returns.
class RequestContext {
 public:
  /// One request of `session` (the server makes these): `method` and
  /// `payload` are views the server holds for the whole request; in async
  /// mode the payload is the params as JSON text in tsgo's output form.
  /// `reply` is the buffer reply() hands out; it is cleared here and keeps
  /// its capacity, so a caller that reuses it allocates nothing per small
  /// reply.
  RequestContext(detail::Session& session, std::string_view method, ByteView payload, std::string& reply) noexcept
      : session_(&session), method_(method), payload_(payload), reply_(&reply) {
    reply_->clear();
  }
  RequestContext(const RequestContext&) = delete;
  RequestContext& operator=(const RequestContext&) = delete;

  /// The Request's method name.
  std::string_view method() const noexcept { return method_; }

  /// The channel's trace ring when the server traces (docs/TRACE.md), else
  /// null: a handler may add spans of its own there (trace::Ring::span).
  /// Always null in async mode.
  trace::Ring* trace() const noexcept;
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
  /// PeerClosed and ProtocolError as FrameChannel does (the server then ends).
  /// In async mode (Server::serve_async) `arguments` and the result are JSON
  /// text; the call is a JSON-RPC request with id "apiN", an error response
  /// is RemoteError "api: remote error [CODE]: MESSAGE", and requests that
  /// arrive meanwhile are answered after this one.
  ByteView call(std::string_view callback, ByteView arguments);
  std::string_view call(std::string_view callback, std::string_view arguments);

  /// The channel's spin counters so far (docs/SPIN.md#counters).
  const ChannelStats& channel_stats() const noexcept;

  /// The Response payload to send: a buffer that is empty when the handler
  /// starts and keeps its capacity across requests (no allocation per small
  /// reply in steady state). Ignored once reply_view() is called.
  std::string& reply() noexcept { return *reply_; }
  /// Sends `bytes` as the Response payload without copying them; they must
  /// stay valid until the handler returns (e.g. a view of payload()). Serve
  /// on a channel that copies its writes, or lends copies of them
  /// (BufferOptions::LargeWrites::copy or lend_copies, as spinrpc-server
  /// does), never one that lends the caller's memory: a client may
  /// pipeline (docs/NODE.md, "Large payloads").
  void reply_view(ByteView bytes) noexcept {
    reply_view_ = bytes;
    has_reply_view_ = true;
  }

  /// reply_view() for a payload that is bytes, not JSON text (echo's): tsgo
  /// sends such a result base64-encoded inside a 7.1 batch
  /// (docs/PROTOCOL.md, "batchRequests"); alone, it goes as it is.
  void reply_binary_view(ByteView bytes) noexcept {
    reply_view(bytes);
    reply_is_binary_ = true;
  }
  /// Whether the Response payload is bytes (reply_binary_view), not JSON text.
  bool reply_is_binary() const noexcept { return reply_is_binary_; }
  /// For the server, once the handler returned: the Response payload.
  ByteView response_payload() const noexcept {
    return has_reply_view_ ? reply_view_ : as_bytes(*reply_);
  }
  /// For the server: the channel failure a call() met (the stream is gone or
  /// out of step, so the session ends whatever the handler did), or null.
  const std::exception_ptr& channel_failure() const noexcept { return channel_failure_; }

 private:
  detail::Session* session_;                // the request's connection, sync or async
  std::string_view method_;                 // view into the held Request frame
  ByteView payload_;                        // view into the held Request frame
  std::string* reply_;                      // the caller's reused buffer
  ByteView reply_view_;                     // set by reply_view()
  bool has_reply_view_ = false;
  bool reply_is_binary_ = false;
  std::exception_ptr channel_failure_;      // a channel failure inside call()
};

}  // namespace spinrpc

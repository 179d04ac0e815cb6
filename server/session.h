#pragma once

#include <exception>    // std::exception_ptr
#include <string_view>  // std::string_view

#include "protocol/frame.h"
#include "trace/trace_ring.h"
#include "wait/channel_stats.h"

namespace spinrpc::detail {

/// One connection's protocol as the server's one dispatch sees it
/// (Server::dispatch): how a Response, an Error and a Call go out, and the
/// trace and counters of the channel underneath. Sync mode's MessagePack
/// frames (FrameSession, server/frame_session.h) and tsgo's JSON-RPC under
/// --async (AsyncSession, server/async_session.h) are the two; everything
/// else about a request (the timing methods, batchRequests, an unknown
/// method, a handler's failure) is decided once, above them.
class Session {
 public:
  virtual ~Session() = default;

  /// Whether a Response carries any bytes as they are (sync mode's binary
  /// payloads). Where it does not, a result is JSON text that json_result
  /// puts in the protocol's output form.
  virtual bool carries_bytes() const noexcept = 0;
  /// The params a batch item without any is handed: "" in sync mode (tsgo
  /// hands echo an empty payload), "null" in async mode.
  virtual std::string_view absent_item_params() const noexcept = 0;
  /// A handler's JSON result in the protocol's output form: sync mode
  /// checks it and keeps it, async mode re-encodes it as tsgo encodes
  /// results (valid until the next call). Throws ProtocolError when it is
  /// not one JSON value; what() says where, or is empty.
  virtual std::string_view json_result(std::string_view result) = 0;

  /// Sends the Response `result`, or the Error `text`, to the request being
  /// answered (named `method`).
  virtual void reply(std::string_view method, ByteView result) = 0;
  virtual void reply_error(std::string_view method, std::string_view text) = 0;

  /// RequestContext::call's body: sends the Call and returns the client's
  /// answer (valid until the next call). Throws as RequestContext::call
  /// says; a failure of the connection itself (the stream gone or out of
  /// step, after which no reply may follow) is also stored in `failure`.
  virtual ByteView call(std::string_view callback, ByteView arguments, std::exception_ptr& failure) = 0;

  /// The channel's trace ring when the server traces (docs/TRACE.md), else null.
  virtual trace::Ring* trace() const noexcept = 0;
  /// The channel's spin counters so far (docs/SPIN.md#counters).
  virtual const ChannelStats& stats() const noexcept = 0;

 protected:
  Session() = default;
  Session(const Session&) = default;
  Session& operator=(const Session&) = default;
};

}  // namespace spinrpc::detail

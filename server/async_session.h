#pragma once

#include <cstdint>      // std::uint64_t
#include <deque>        // std::deque
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "channel/json_rpc_channel.h"
#include "protocol/json_rpc.h"
#include "server/session.h"

namespace spinrpc::detail {

/// --async's Session (Server::serve_async, docs/ASYNC.md): tsgo's JSON-RPC
/// with Content-Length framing. Results are JSON text re-encoded as tsgo
/// encodes them; a Call is a JSON-RPC request with the id "api1", "api2",
/// …; requests that arrive while a call is pending are queued and answered
/// after the current one.
class AsyncSession final : public Session {
 public:
  explicit AsyncSession(JsonRpcChannel& channel) : channel_(channel) {
    params_.reserve(64);  // never inline: JsonRpcDecoder::take_output
  }

  /// Decodes `body` (a whole message); true when it is a Request, which
  /// then becomes the one being answered: method(), params(), has_params().
  /// Responses to no pending call, notifications, null and {} are false.
  bool take_request(ByteView body);
  std::string_view method() const noexcept { return method_; }
  std::string_view params() const noexcept { return params_view_; }
  bool has_params() const noexcept { return has_params_; }
  /// A request queued by a call, moved out as the current body (its params
  /// may point into it); std::nullopt when none waits.
  bool next_queued();
  /// The current queued body (valid until the next next_queued()).
  ByteView current() const noexcept { return as_bytes(current_); }

  bool carries_bytes() const noexcept override { return false; }
  std::string_view absent_item_params() const noexcept override { return "null"; }
  std::string_view json_result(std::string_view result) override;
  void reply(std::string_view method, ByteView result) override;
  void reply_error(std::string_view method, std::string_view text) override;
  ByteView call(std::string_view callback, ByteView arguments, std::exception_ptr& failure) override;
  trace::Ring* trace() const noexcept override { return nullptr; }
  const ChannelStats& stats() const noexcept override { return channel_.stats(); }

 private:
  // Writes `head`, then `body`, then `tail` as one gathered write.
  void write(std::string_view head, std::string_view body = {}, std::string_view tail = {});
  std::string_view call_client(std::string_view callback, std::string_view arguments);

  JsonRpcChannel& channel_;
  JsonRpcDecoder decoder_;
  std::deque<std::string> queued_;  // requests that arrived during a call, whole bodies
  std::string current_;             // the queued one being answered
  // The request being answered: what the handler needs must outlive the
  // decodes its calls make.
  JsonRpcId id_;
  std::string id_text_;
  std::string method_;
  std::string params_;  // params when they are not a view of the body (JsonRpcDecoder::take_output)
  std::string_view params_view_;
  bool has_params_ = false;
  std::uint64_t next_call_ = 1;  // "api1", "api2", … (one counter per session)
  std::string out_;              // reused for small messages
};

}  // namespace spinrpc::detail

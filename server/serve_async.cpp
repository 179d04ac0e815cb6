// Server::serve_async: the async protocol over the same handlers as sync
// mode (docs/ASYNC.md).
#include <sys/uio.h>  // iovec

#include <stdexcept>  // std::invalid_argument

#include "channel/json_rpc_channel.h"
#include "stream/peer_closed.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "server/async_session.h"
#include "server/server.h"

namespace spinrpc {
namespace detail {

void AsyncSession::write(std::string_view head, std::string_view body, std::string_view tail) {
  iovec parts[3] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()},
                    {const_cast<char*>(tail.data()), tail.size()}};
  channel.write(parts);
}

std::string_view call_client(AsyncSession& session, std::string_view callback, std::string_view arguments) {
  const std::string call_id = "api" + std::to_string(session.next_call++);
  std::string request;
  std::string_view canonical;
  try {
    canonical = session.decoder.canonicalize(arguments);
  } catch (const ProtocolError& e) {
    throw std::invalid_argument("api: the arguments of call " + std::string(callback) + " are not JSON: " + e.what());
  }
  append_json_rpc_request(request, call_id, callback, canonical);
  session.write(request);
  for (;;) {
    const auto body = session.channel.try_read_body();
    if (!body) throw PeerClosed("the client closed the connection during a call", PeerClosed::Where::DuringCall);
    const JsonRpcMessage& m = session.decoder.decode(*body);
    if (m.kind == JsonRpcMessage::Kind::Request) {
      // Answered once this request is done (a deliberate difference: tsgo
      // serves it at once; docs/ASYNC.md).
      session.queued.emplace_back(as_text(*body));
      continue;
    }
    if (m.kind != JsonRpcMessage::Kind::Response || m.id.type != JsonRpcId::Type::String ||
        m.id.text != call_id) {
      continue;  // notifications and unknown responses are dropped, as tsgo does
    }
    if (m.has_error) {
      throw RemoteError("api: remote error [" + std::to_string(m.error_code) + "]: " +
                        std::string(m.error_message));
    }
    return m.result;
  }
}

}  // namespace detail

void Server::serve_async(JsonRpcChannel& channel) {
  detail::AsyncSession session(channel);
  for (;;) {
    if (!session.queued.empty()) {
      session.current = std::move(session.queued.front());
      session.queued.pop_front();
      const JsonRpcMessage& m = session.decoder.decode(as_bytes(session.current));
      if (m.kind == JsonRpcMessage::Kind::Request) {
        answering_.set(true);
        dispatch_async(session);
        answering_.set(false);
      }
      continue;
    }
    const auto body = channel.try_read_body();
    if (!body) return;
    const JsonRpcMessage& m = session.decoder.decode(*body);
    // Responses to no pending call, notifications, null and {} are dropped.
    if (m.kind != JsonRpcMessage::Kind::Request) continue;
    const ByteStream::Hold hold = channel.hold_body();
    answering_.set(true);
    dispatch_async(session);
    answering_.set(false);
  }
}

void Server::dispatch_async(detail::AsyncSession& session) {
  // What the handler needs must outlive the decodes its calls make.
  const JsonRpcMessage& m = session.decoder.decode_result();
  session.method.assign(m.method);
  session.id = m.id;
  if (m.id.type == JsonRpcId::Type::String) {
    session.id_text.assign(m.id.text);
    session.id.text = session.id_text;
  }
  std::string_view params = m.params;
  const bool has_params = m.has_params;
  session.decoder.take_output(session.params);

  std::string& out = out_;
  out.clear();
  const std::string_view method = session.method;
  // Answered before dispatch and never recorded, as tsgo does.
  if (method == "getServerTiming" || method == "resetServerTiming") {
    if (method == "resetServerTiming") timing_.reset();
    append_json_rpc_result(out, session.id, method == "getServerTiming" ? timing_.snapshot_json() : "null");
    session.write(out);
    return;
  }
  if (dialect_->batch_requests && method == "batchRequests") {
    std::string reply;
    // No params member is no params at all, as tsgo's decoder sees it.
    const bool ok = answer_batch(has_params ? params : std::string_view(), [&](const detail::BatchParams::Item& request, std::string& entry) {
      const std::string_view item_params = request.params ? std::string_view(*request.params) : "null";
      RequestContext item(session, request.method, as_bytes(item_params), item_reply_);
      bool item_ok = run_untimed(item);
      std::string_view result = as_text(item.response_payload());
      // As for a whole request: echo's result is its params, already in
      // output form; anything else is re-encoded as tsgo encodes results.
      if (item_ok && (result.data() != item_params.data() || result.size() != item_params.size())) {
        try {
          result = session.decoder.canonicalize(result);
        } catch (const ProtocolError& e) {
          item_ok = false;
          error_text_ = "api: the result of " + request.method + " is not JSON: " + e.what();
        }
      }
      append_item_entry(item, item_ok, result, /*sync=*/false, entry);
    }, reply);
    if (ok) {
      append_json_rpc_result_head(out, session.id, reply.size());
      session.write(out, reply, kJsonRpcResultTail);
    } else {
      append_json_rpc_error(out, session.id, error_text_);
      session.write(out);
    }
    return;
  }
  RequestContext ctx(session, method, as_bytes(params), reply_);
  if (run(ctx)) {
    const std::string_view reply = as_text(ctx.response_payload());
    // echo's reply is its params, already in output form; anything else is
    // re-encoded as tsgo encodes results.
    std::string_view result = reply;
    if (reply.data() != params.data() || reply.size() != params.size()) {
      try {
        result = session.decoder.canonicalize(reply);
      } catch (const ProtocolError& e) {
        error_text_ = "api: the result of " + session.method + " is not JSON: " + e.what();
        append_json_rpc_error(out, session.id, error_text_);
        session.write(out);
        return;
      }
    }
    append_json_rpc_result_head(out, session.id, result.size());
    session.write(out, result, kJsonRpcResultTail);
  } else {
    append_json_rpc_error(out, session.id, error_text_);
    session.write(out);
  }
}

}  // namespace spinrpc

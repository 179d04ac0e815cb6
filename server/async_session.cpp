#include "server/async_session.h"

#include <sys/uio.h>  // iovec

#include <stdexcept>  // std::invalid_argument

#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "stream/peer_closed.h"

namespace spinrpc::detail {

bool AsyncSession::take_request(ByteView body) {
  const JsonRpcMessage& m = decoder_.decode(body);
  if (m.kind != JsonRpcMessage::Kind::Request) return false;
  method_.assign(m.method);
  id_ = m.id;
  if (m.id.type == JsonRpcId::Type::String) {
    id_text_.assign(m.id.text);
    id_.text = id_text_;
  }
  params_view_ = m.params;
  has_params_ = m.has_params;
  decoder_.take_output(params_);  // params_view_ now points into params_ or the body
  return true;
}

bool AsyncSession::next_queued() {
  if (queued_.empty()) return false;
  current_ = std::move(queued_.front());
  queued_.pop_front();
  return true;
}

std::string_view AsyncSession::json_result(std::string_view result) { return decoder_.canonicalize(result); }

void AsyncSession::reply(std::string_view /*method*/, ByteView result) {
  out_.clear();
  append_json_rpc_result_head(out_, id_, result.size());
  write(out_, as_text(result), kJsonRpcResultTail);
}

void AsyncSession::reply_error(std::string_view /*method*/, std::string_view text) {
  out_.clear();
  append_json_rpc_error(out_, id_, text);
  write(out_);
}

ByteView AsyncSession::call(std::string_view callback, ByteView arguments, std::exception_ptr& failure) {
  try {
    return as_bytes(call_client(callback, as_text(arguments)));
  } catch (const RemoteError&) {
    throw;  // the client's error response: this request fails
  } catch (const std::invalid_argument&) {
    throw;  // arguments that are not JSON: nothing was sent
  } catch (...) {
    failure = std::current_exception();
    throw;
  }
}

void AsyncSession::write(std::string_view head, std::string_view body, std::string_view tail) {
  iovec parts[3] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()},
                    {const_cast<char*>(tail.data()), tail.size()}};
  channel_.write(parts);
}

std::string_view AsyncSession::call_client(std::string_view callback, std::string_view arguments) {
  const std::string call_id = "api" + std::to_string(next_call_++);
  std::string_view canonical;
  try {
    canonical = decoder_.canonicalize(arguments);
  } catch (const ProtocolError& e) {
    throw std::invalid_argument("api: the arguments of call " + std::string(callback) + " are not JSON: " + e.what());
  }
  std::string request;
  append_json_rpc_request(request, call_id, callback, canonical);
  write(request);
  for (;;) {
    const auto body = channel_.try_read_body();
    if (!body) throw PeerClosed("the client closed the connection during a call", PeerClosed::Where::during_call);
    const JsonRpcMessage& m = decoder_.decode(*body);
    if (m.kind == JsonRpcMessage::Kind::Request) {
      // Answered once this request is done (a deliberate difference: tsgo
      // serves it at once; docs/ASYNC.md).
      queued_.emplace_back(as_text(*body));
      continue;
    }
    if (m.kind != JsonRpcMessage::Kind::Response || m.id.type != JsonRpcId::Type::String || m.id.text != call_id) {
      continue;  // notifications and unknown responses are dropped, as tsgo does
    }
    if (m.has_error) {
      throw RemoteError("api: remote error [" + std::to_string(m.error_code) + "]: " + std::string(m.error_message));
    }
    return m.result;
  }
}

}  // namespace spinrpc::detail

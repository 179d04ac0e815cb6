#include "server/frame_session.h"

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string, std::to_string

#include "channel/frame_channel.h"
#include "protocol/go_format.h"
#include "protocol/protocol_error.h"
#include "protocol/remote_error.h"
#include "server/batch_requests.h"
#include "server/client_frames.h"
#include "stream/peer_closed.h"

namespace spinrpc::detail {

std::string_view FrameSession::json_result(std::string_view result) {
  if (!is_json(result)) throw ProtocolError("");
  return result;
}

void FrameSession::reply(std::string_view method, ByteView result) {
  channel_.write_frame(MessageType::Response, as_bytes(method), result);
}

void FrameSession::reply_error(std::string_view method, std::string_view text) {
  channel_.write_frame(MessageType::Error, as_bytes(method), as_bytes(text));
}

ByteView FrameSession::call(std::string_view callback, ByteView arguments, std::exception_ptr& failure) {
  FrameView reply;
  trace::Ring* const ring = channel_.trace();
  // The Call's span: its send, the wait, the answer's read (docs/TRACE.md#events).
  const auto start = ring ? ring->now() : trace::Ring::Clock::time_point{};
  try {
    channel_.write_frame(MessageType::Call, as_bytes(callback), arguments);
    const auto frame = read_client_frame(channel_);
    if (!frame) throw PeerClosed("the client closed the connection during a Call", PeerClosed::Where::during_call);
    reply = *frame;
    if (ring) {
      ring->span(trace::Kind::call, static_cast<std::uint8_t>(reply.type), start, ring->last(), 0, 0,
                 ring->intern(callback));
    }
  } catch (...) {
    // The stream itself failed: no Error reply can follow.
    failure = std::current_exception();
    throw;
  }
  const bool answers_call = reply.type == MessageType::CallResponse || reply.type == MessageType::CallError;
  if (answers_call && reply.name_text() == callback) {
    if (reply.type == MessageType::CallError) throw RemoteError(std::string(reply.payload_text()));
    return reply.payload;
  }
  // tsgo drops the stray frame, fails this Request and serves on.
  if (reply.type == MessageType::Response || reply.type == MessageType::Error || reply.type == MessageType::Call) {
    throw std::runtime_error("unexpected message type: " + std::to_string(static_cast<unsigned>(reply.type)));
  }
  std::string message = "api: unexpected message while waiting for ";
  append_go_quoted(message, callback);
  message += " response";
  throw std::runtime_error(message);
}

trace::Ring* FrameSession::trace() const noexcept { return channel_.trace(); }

const ChannelStats& FrameSession::stats() const noexcept { return channel_.stats(); }

}  // namespace spinrpc::detail

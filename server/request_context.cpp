#include "server/request_context.h"

#include <stdexcept>  // std::runtime_error
#include <string>     // std::string

#include "channel/frame_channel.h"
#include "stream/peer_closed.h"
#include "protocol/go_format.h"
#include "protocol/remote_error.h"
#include "server/async_session.h"
#include "server/client_frames.h"

namespace spinrpc {

ByteView RequestContext::call(std::string_view callback, ByteView arguments) {
  if (async_ != nullptr) {
    try {
      return as_bytes(async_->call(callback, as_text(arguments)));
    } catch (const RemoteError&) {
      throw;  // the client's error response: this request fails
    } catch (const std::invalid_argument&) {
      throw;  // arguments that are not JSON: nothing was sent
    } catch (...) {
      channel_failure_ = std::current_exception();
      throw;
    }
  }
  FrameView reply;
  trace::Ring* const ring = channel_->trace();
  // The Call's span: its send, the wait, the answer's read (docs/TRACE.md#events).
  const auto start = ring ? ring->now() : trace::Ring::Clock::time_point{};
  try {
    channel_->write_frame(MessageType::Call, as_bytes(callback), arguments);
    const auto frame = detail::read_client_frame(*channel_);
    if (!frame) throw PeerClosed("the client closed the connection during a Call",
                                      PeerClosed::Where::DuringCall);
    reply = *frame;
    if (ring) {
      ring->span(trace::Kind::call, static_cast<std::uint8_t>(reply.type), start, ring->last(), 0, 0,
                 ring->intern(callback));
    }
  } catch (...) {
    // The stream itself failed: no Error reply can follow; Server::dispatch
    // rethrows this however the handler reacts.
    channel_failure_ = std::current_exception();
    throw;
  }
  const bool answers_call =
      reply.type == MessageType::CallResponse || reply.type == MessageType::CallError;
  if (answers_call && reply.name_text() == callback) {
    if (reply.type == MessageType::CallError) throw RemoteError(std::string(reply.payload_text()));
    return reply.payload;
  }
  // tsgo drops the stray frame, fails this Request and serves on.
  if (reply.type == MessageType::Response || reply.type == MessageType::Error ||
      reply.type == MessageType::Call) {
    throw std::runtime_error("unexpected message type: " +
                             std::to_string(static_cast<unsigned>(reply.type)));
  }
  std::string message = "api: unexpected message while waiting for ";
  append_go_quoted(message, callback);
  message += " response";
  throw std::runtime_error(message);
}

std::string_view RequestContext::call(std::string_view callback, std::string_view arguments) {
  return as_text(call(callback, as_bytes(arguments)));
}

trace::Ring* RequestContext::trace() const noexcept { return channel_ != nullptr ? channel_->trace() : nullptr; }

const ChannelStats& RequestContext::channel_stats() const noexcept {
  return async_ != nullptr ? async_->channel.stats() : channel_->stats();
}

}  // namespace spinrpc

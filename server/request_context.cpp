#include "server/request_context.h"

#include "server/session.h"

namespace spinrpc {

ByteView RequestContext::call(std::string_view callback, ByteView arguments) {
  return session_->call(callback, arguments, channel_failure_);
}

std::string_view RequestContext::call(std::string_view callback, std::string_view arguments) {
  return as_text(call(callback, as_bytes(arguments)));
}

trace::Ring* RequestContext::trace() const noexcept { return session_->trace(); }

const ChannelStats& RequestContext::channel_stats() const noexcept { return session_->stats(); }

}  // namespace spinrpc

// Server::serve_async: the async protocol's read loop (docs/ASYNC.md); its
// requests go through the same dispatch as sync mode's (server.cpp).
#include "channel/json_rpc_channel.h"
#include "server/async_session.h"
#include "server/server.h"

namespace spinrpc {

void Server::serve_async(JsonRpcChannel& channel) {
  detail::AsyncSession session(channel);
  const auto answer = [&] {
    answering_.set(true);
    dispatch(session, session.method(), as_bytes(session.params()), session.has_params());
    answering_.set(false);
  };
  for (;;) {
    if (session.next_queued()) {
      if (session.take_request(session.current())) answer();
      continue;
    }
    const auto body = channel.try_read_body();
    if (!body) return;
    if (!session.take_request(*body)) continue;
    const ByteStream::Hold hold = channel.hold_body();
    answer();
  }
}

}  // namespace spinrpc

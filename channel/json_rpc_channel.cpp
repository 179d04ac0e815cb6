#include "channel/json_rpc_channel.h"

#include <string>  // std::string

#include "protocol/protocol_error.h"

namespace spinrpc {

std::optional<ByteView> JsonRpcChannel::try_read_body() {
  stream_.consume(message_size_);
  message_size_ = 0;
  for (;;) {
    const ByteView buffered = stream_.buffered();
    const ContentLengthResult result = decoder_.decode(buffered);
    if (result.status == ContentLengthResult::Status::message) {
      message_size_ = result.size_bytes;
      mid_frame_.set(false);
      return result.body;
    }
    mid_frame_.set(!buffered.empty());
    if (stream_.fill(result.size_bytes) == 0) {
      mid_frame_.set(false);
      // EOF between messages is the client's normal end; inside one it is
      // reported (tsgo ends quietly there, losing the message: docs/ASYNC.md).
      if (result.eof_error.empty()) return std::nullopt;
      throw ProtocolError(std::string(result.eof_error));
    }
  }
}

}  // namespace spinrpc

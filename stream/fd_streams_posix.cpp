#include "stream/fd_streams_posix.h"

#include <utility>  // std::move

#include "stream/fd_input_stream_posix.h"
#include "stream/fd_output_stream_posix.h"

namespace spinrpc {

Streams fd_streams(UniqueFd in, UniqueFd out, const BufferOptions& options, bool spinning) {
  auto input = std::make_unique<FdInputStream>(std::move(in), spinning, options.grow_read_pipe);
  // The input the output reads ahead from while a write waits: borrowed,
  // and both live in the one Streams.
  const int read_ahead_fd = options.read_while_writing ? input->fd() : -1;
  Streams streams;
  streams.out = std::make_unique<FdOutputStream>(std::move(out), options, read_ahead_fd);
  streams.in = std::move(input);
  return streams;
}

}  // namespace spinrpc

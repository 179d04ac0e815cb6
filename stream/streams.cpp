#include "stream/streams.h"

#include <utility>  // std::move

#include "stream/fd_input_stream.h"
#include "stream/fd_output_stream.h"

namespace spinrpc {

Streams fd_streams(UniqueFd in, UniqueFd out, const BufferOptions& options, bool spinning) {
  Streams streams;
  streams.in = std::make_unique<FdInputStream>(std::move(in), spinning, options.grow_read_pipe);
  streams.out = std::make_unique<FdOutputStream>(std::move(out), options);
  return streams;
}

}  // namespace spinrpc

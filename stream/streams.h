#pragma once

#include <memory>  // std::unique_ptr

#include "descriptor/unique_fd.h"
#include "stream/buffer_options.h"
#include "stream/input_stream.h"
#include "stream/output_stream.h"

namespace spinrpc {

/// One connection's two directions, whatever carries them: what a
/// Transport's accept() and a client's connect return, and what a channel
/// (channel/byte_stream.h) is built on. Adding a transport means one more
/// pair of implementations and one function that makes them, as
/// fd_streams() is for descriptors.
struct Streams {
  std::unique_ptr<InputStream> in;    ///< the peer's messages come from here
  std::unique_ptr<OutputStream> out;  ///< ours go here
};

/// Streams over two descriptors (the same socket twice, dup'ed, so each
/// direction owns its own): FdInputStream and FdOutputStream. `spinning`:
/// the reader will try without blocking (a spin budget over 0), so a pipe
/// gets its non-blocking description now. Throws std::system_error if `in`
/// is not an open descriptor.
Streams fd_streams(UniqueFd in, UniqueFd out, const BufferOptions& options, bool spinning);

}  // namespace spinrpc

#pragma once

#include "descriptor/unique_fd.h"
#include "stream/buffer_options.h"
#include "stream/streams.h"

namespace spinrpc {

/// Streams over two descriptors (a pipe pair, a FIFO pair, or one socket
/// twice, dup'ed, so that each direction owns its own): FdInputStream and
/// FdOutputStream. `spinning`: the reader will try without blocking (a spin
/// budget over 0), so a pipe gets its non-blocking description now. With
/// options.read_while_writing the output stream watches `in` while a write
/// waits (WhileWriteWaits). Neither descriptor's flags are changed. Throws
/// std::system_error if `in` is not an open descriptor.
Streams fd_streams(UniqueFd in, UniqueFd out, const BufferOptions& options, bool spinning);

}  // namespace spinrpc

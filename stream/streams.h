#pragma once

#include <memory>  // std::unique_ptr

#include "stream/input_stream.h"
#include "stream/output_stream.h"

namespace spinrpc {

/// One connection's two directions, whatever carries them: what every
/// connect and every accept returns (transport/endpoint.h,
/// transport/transport.h), and what a channel (channel/byte_stream.h) is
/// built on. Adding a transport means one more pair of implementations and
/// one function that makes them, as fd_streams() (stream/fd_streams_posix.h)
/// is for descriptors.
struct Streams {
  std::unique_ptr<InputStream> in;    ///< the peer's messages come from here
  std::unique_ptr<OutputStream> out;  ///< ours go here
};

}  // namespace spinrpc

#include "protocol/frame_encoder.h"

#include <cstring>    // std::memcpy
#include <limits>     // std::numeric_limits
#include <stdexcept>  // std::length_error

#include <msgpack/pack.hpp>  // msgpack::packer

namespace spinrpc {
namespace {

// A msgpack-c output stream over a fixed array; the packer only ever writes
// the few header bytes counted in FrameHeader, so there is no overflow path.
struct FixedStream {
  std::byte* out;
  std::uint8_t size = 0;
  void write(const char* data, std::size_t len) {
    std::memcpy(out + size, data, len);
    size = static_cast<std::uint8_t>(size + len);
  }
};

std::uint32_t bin_length(std::size_t len) {
  if (len > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("spinrpc: a name or payload of 4 GiB or more does not fit bin32");
  }
  return static_cast<std::uint32_t>(len);
}

}  // namespace

FrameHeader encode_frame_header(MessageType type, std::size_t name_bytes,
                                std::size_t payload_bytes) {
  FrameHeader header{};
  FixedStream prefix{header.prefix_bytes.data()};
  msgpack::packer<FixedStream> prefix_packer(prefix);
  prefix_packer.pack_array(3);
  prefix_packer.pack_uint8(static_cast<std::uint8_t>(type));  // 1..6: positive fixint
  prefix_packer.pack_bin(bin_length(name_bytes));
  header.prefix_size = prefix.size;

  FixedStream payload{header.payload_header_bytes.data()};
  msgpack::packer<FixedStream>(payload).pack_bin(bin_length(payload_bytes));
  header.payload_header_size = payload.size;
  return header;
}

void append_frame(std::vector<std::byte>& out, MessageType type, ByteView name,
                  ByteView payload) {
  const FrameHeader header = encode_frame_header(type, name.size(), payload.size());
  out.reserve(out.size() + header.prefix_size + name.size() + header.payload_header_size +
              payload.size());
  out.insert(out.end(), header.prefix().begin(), header.prefix().end());
  out.insert(out.end(), name.begin(), name.end());
  out.insert(out.end(), header.payload_header().begin(), header.payload_header().end());
  out.insert(out.end(), payload.begin(), payload.end());
}

}  // namespace spinrpc

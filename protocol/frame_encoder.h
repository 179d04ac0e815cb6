#pragma once

#include <array>    // std::array
#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint8_t
#include <span>     // std::span
#include <vector>   // std::vector

#include "protocol/frame.h"

namespace spinrpc {

/// The bytes of a frame that are not name or payload. On the wire a frame is
/// prefix, name, payload_header, payload: four pieces for one writev(2).
struct FrameHeader {
  /// Longest prefix: 0x93, the type as a positive fixint, a bin32 header.
  static constexpr std::size_t kMaxPrefixBytes = 7;
  /// Longest payload header: bin32.
  static constexpr std::size_t kMaxPayloadHeaderBytes = 5;

  std::array<std::byte, kMaxPrefixBytes> prefix_bytes;
  std::uint8_t prefix_size;
  std::array<std::byte, kMaxPayloadHeaderBytes> payload_header_bytes;
  std::uint8_t payload_header_size;

  ByteView prefix() const noexcept { return {prefix_bytes.data(), prefix_size}; }
  ByteView payload_header() const noexcept {
    return {payload_header_bytes.data(), payload_header_size};
  }
};

/// Encodes the header of [type, name, payload] the way every writer must
/// (docs/PROTOCOL.md#framing): 0x93, the type as a positive fixint, and for the
/// name and the payload the smallest bin header that fits (bin8 < 256 bytes,
/// bin16 < 64 KiB, bin32 otherwise). Uses msgpack-c's packer.
/// Throws std::length_error if a length does not fit bin32 (>= 4 GiB).
FrameHeader encode_frame_header(MessageType type, std::size_t name_bytes,
                                std::size_t payload_bytes);

/// Appends the whole frame to `out` (tests, fuzz seeds, and small frames that
/// are cheaper to copy than to gather). Throws as encode_frame_header does.
void append_frame(std::vector<std::byte>& out, MessageType type, ByteView name,
                  ByteView payload);

}  // namespace spinrpc

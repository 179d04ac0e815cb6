#pragma once

#include <cstddef>      // std::byte, std::size_t
#include <span>         // std::span
#include <string_view>  // std::string_view

#include "protocol/message_type.h"

namespace spinrpc {

/// A read-only run of bytes; never owns.
using ByteView = std::span<const std::byte>;

/// Views bytes as text without copying (payloads are usually UTF-8 JSON).
inline std::string_view as_text(ByteView bytes) noexcept {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// Views text as bytes without copying.
inline ByteView as_bytes(std::string_view text) noexcept {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

/// One decoded message: [type, name, payload]. name and payload point into
/// the buffer the frame was decoded from; they are valid only as long as
/// that buffer is (FrameChannel says how long that is).
struct FrameView {
  MessageType type;
  ByteView name;
  ByteView payload;

  std::string_view name_text() const noexcept { return as_text(name); }
  std::string_view payload_text() const noexcept { return as_text(payload); }
};

/// Size limits checked before any allocation.
struct Limits {
  /// Default for max_message_bytes: 256 MiB. tsgo sends whole source files
  /// and ASTs (tens of MiB for checker.ts) but never a quarter of a GiB; a
  /// bin32 length of 0xffffffff is refused instead of buffered.
  static constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{256} << 20;

  /// Largest whole frame (header, name and payload), in bytes, that a
  /// decoder accepts; for JSON-RPC, the largest body. A message announcing
  /// more is a ProtocolError as soon as its length is known, before any
  /// buffer grows for it.
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;

  /// Default for max_header_bytes: 64 KiB. Real JSON-RPC clients send one
  /// `Content-Length` line of about 20 bytes; tsgo buffers header lines
  /// without limit (docs/ASYNC.md, "Deliberate differences").
  static constexpr std::size_t kDefaultMaxHeaderBytes = std::size_t{64} << 10;

  /// JSON-RPC only: largest header block (every line, the blank one
  /// included), in bytes; max_message_bytes then bounds the body alone.
  std::size_t max_header_bytes = kDefaultMaxHeaderBytes;
};

}  // namespace spinrpc

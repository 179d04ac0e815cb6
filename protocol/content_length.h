#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "protocol/frame.h"

namespace spinrpc {

/// What ContentLengthDecoder::decode found at the start of its input.
struct ContentLengthResult {
  enum class Status {
    message,   ///< a whole message: `body` is set, `size_bytes` is header + body
    need_more,  ///< a valid prefix of a message: `size_bytes` bytes are needed
  };
  Status status;
  /// Status::message only: the body, a view into the decoded input.
  ByteView body;
  /// message: bytes the message occupies (consume that many).
  /// need_more: total bytes the message needs once its header block is
  /// complete, input.size() + 1 before that; always > input.size().
  std::size_t size_bytes;
  /// need_more only: what EOF at this point means. Empty when no byte of a
  /// message has arrived (a clean end); otherwise the one-line error for a
  /// message cut short (docs/ASYNC.md, "Deliberate differences": EOF inside a header or before the body).
  std::string_view eof_error;
};

/// Reads LSP-style `Content-Length` framing as tsgo --api --async does
/// (docs/ASYNC.md, "Framing"): header lines up to LF, the byte-exact name
/// `Content-Length` (any other header ignored), the value trimmed of
/// Unicode white space and parsed as a signed 64-bit decimal, the last one
/// winning, a CR LF line ending the block, then exactly that many body bytes.
///
/// Incremental: call decode() with the bytes of the current message so far
/// (from its first byte; more each time); it resumes scanning where it
/// stopped, so a message delivered byte by byte costs O(n), and never
/// allocates or copies. After a Message it is ready for the next message.
///
/// Throws ProtocolError with tsgo's stderr line (`jsonrpc: invalid header:
/// "<line>"`, `jsonrpc: invalid content length: …`, `jsonrpc: no content
/// length`) and with spinrpc's own for what tsgo does not bound: a header
/// block over limits.max_header_bytes (checked before the LF arrives) and a
/// body over limits.max_message_bytes (checked when the block ends, before
/// any body byte is buffered).
class ContentLengthDecoder {
 public:
  explicit ContentLengthDecoder(const Limits& limits) noexcept : limits_(limits) {}

  ContentLengthResult decode(ByteView input);

  /// Forgets a partly scanned message (the input now starts elsewhere).
  void reset() noexcept { *this = ContentLengthDecoder(limits_); }

 private:
  void header_line(std::string_view line);

  Limits limits_;
  std::size_t scanned_ = 0;       // header bytes already split into lines
  std::int64_t length_ = 0;       // last Content-Length seen; 0 = none
  std::size_t body_begin_ = 0;    // offset of the body once the block has ended; 0 before
};

/// Appends `Content-Length: <body_bytes>\r\n\r\n`, the only header tsgo writes.
void append_content_length_header(std::string& out, std::size_t body_bytes);

}  // namespace spinrpc

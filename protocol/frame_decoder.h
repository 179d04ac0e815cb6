#pragma once

#include <cstddef>  // std::size_t

#include "protocol/frame.h"

namespace spinrpc {

/// What decode_frame found at the start of its input.
struct DecodeResult {
  enum class Status {
    frame,     ///< a whole frame: `frame` is set, `size_bytes` is its length
    need_more,  ///< a valid prefix of a frame: `size_bytes` bytes are needed
  };
  Status status;
  /// Status::frame only; views into the decoded input.
  FrameView frame;
  /// frame: bytes the frame occupies (consume that many).
  /// need_more: total bytes the frame needs, once its lengths are known, or
  /// input.size() + 1 before that; always > input.size().
  std::size_t size_bytes;
  /// need_more only: the input ends inside a multi-byte field (a bin16/bin32
  /// length, or a name or payload that has begun). tsgo's reader treats EOF
  /// there as "unexpected EOF" and EOF at any other point as a clean end;
  /// docs/PROTOCOL.md#end-of-input.
  bool inside_field;
  /// need_more only, once the payload's length field is whole: the offset at
  /// which the payload begins (it ends at size_bytes), with `frame` holding
  /// the type and the name (its payload empty). 0 until then. Lets a reader
  /// put a big payload's remaining bytes straight where they are wanted
  /// (FrameChannel::try_read_frame with a PayloadSink).
  std::size_t payload_begin = 0;
};

/// Decodes the frame at the start of `input`, which may hold part of a
/// frame, one frame, or several (only the first is decoded). Pure: no I/O,
/// no allocation, no copies; the frame's views point into `input`.
///
/// Checks every byte in wire order, so the first offending byte is reported
/// even when the frame is incomplete. Throws ProtocolError, with tsgo's
/// message for the same byte (docs/PROTOCOL.md#messages-a-client-must-not-send), when:
///  - the first byte is not 0x93 (a fixed 3-element array);
///  - the type is neither a positive fixint nor 0xcc uint8, or is outside 1..6;
///  - the name or the payload is not bin8/bin16/bin32;
///  - the frame announces more than limits.max_message_bytes (checked as
///    soon as a length field is complete, before anything is allocated).
///
/// Why not msgpack-c's parser: the frame is a fixed shape whose every check
/// must name the marker byte and accept only the exact forms tsgo accepts
/// (0x93, never array16; fixint or uint8, never uint16), and the EOF rule
/// needs the position inside a field. msgpack-c's visitor reports neither
/// the marker nor the position, so it would run after these same checks and
/// only repeat them. The encoder uses msgpack-c; the tests use msgpack-c as
/// the oracle for both directions.
DecodeResult decode_frame(ByteView input, const Limits& limits);

}  // namespace spinrpc

#include "protocol/frame_decoder.h"

#include <cstdint>  // std::uint8_t, std::uint32_t
#include <cstdio>   // std::snprintf
#include <string>   // std::string

#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

constexpr std::uint8_t kFixArray3 = 0x93;
constexpr std::uint8_t kUint8 = 0xcc;
constexpr std::uint8_t kBin8 = 0xc4;
constexpr std::uint8_t kBin16 = 0xc5;
constexpr std::uint8_t kBin32 = 0xc6;

[[noreturn]] void fail_marker(const char* expected, std::uint8_t got) {
  char text[96];
  std::snprintf(text, sizeof text, "%s, received: 0x%02x", expected, got);
  throw ProtocolError(text);
}

[[noreturn]] void fail_limit(std::size_t announced, const Limits& limits) {
  throw ProtocolError("message of " + std::to_string(announced) +
                      " bytes exceeds the limit of " + std::to_string(limits.max_message_bytes) +
                      " bytes (max message size)");
}

DecodeResult need_more(std::size_t total, bool inside_field) {
  return {DecodeResult::Status::need_more, {}, total, inside_field};
}

std::uint8_t byte_at(ByteView in, std::size_t i) { return std::to_integer<std::uint8_t>(in[i]); }

// One bin field starting at `pos`: either its bounds or the need_more to report.
struct BinField {
  bool complete;
  std::size_t begin = 0;  // also set, with end, when only the length field is whole
  std::size_t end = 0;
  DecodeResult partial{};
};

// `min_after` is how many bytes must follow this field for the frame to be
// whole (1 after the name: the payload's marker; 0 after the payload).
BinField read_bin(ByteView in, std::size_t pos, std::size_t min_after, const Limits& limits) {
  const std::size_t n = in.size();
  // EOF before the marker: tsgo's ReadByte sees a clean io.EOF.
  if (pos >= n) return {false, 0, 0, need_more(n + 1, false)};
  const std::uint8_t marker = byte_at(in, pos);
  std::size_t length_bytes = 0;
  switch (marker) {
    case kBin8: length_bytes = 1; break;
    case kBin16: length_bytes = 2; break;
    case kBin32: length_bytes = 4; break;
    default: fail_marker("expected binary data (0xc4-0xc6)", marker);
  }
  const std::size_t begin = pos + 1 + length_bytes;
  if (begin > n) {
    // Length field incomplete. tsgo reads it with io.ReadFull, which reports
    // a clean EOF when no byte of it arrived and "unexpected EOF" otherwise.
    return {false, 0, 0, need_more(n + 1, n > pos + 1)};
  }
  std::uint32_t length = 0;
  for (std::size_t i = pos + 1; i < begin; ++i) length = (length << 8) | byte_at(in, i);
  const std::size_t end = begin + length;
  // Checked before anything is buffered for this field
  // (docs/CONVENTIONS.md#limits-before-allocation).
  if (end + min_after > limits.max_message_bytes) fail_limit(end + min_after, limits);
  // Data begun but incomplete is "unexpected EOF"; none of it yet is clean.
  if (end > n) return {false, begin, end, need_more(end + min_after, n > begin)};
  return {true, begin, end, {}};
}

}  // namespace

DecodeResult decode_frame(ByteView in, const Limits& limits) {
  const std::size_t n = in.size();
  if (n == 0) return need_more(1, false);

  // Branch: the array marker. Only the fixed 3-element form is a frame.
  const std::uint8_t array = byte_at(in, 0);
  if (array != kFixArray3) fail_marker("expected fixed 3-element array (0x93)", array);
  if (n < 2) return need_more(n + 1, false);

  // Branch: the type, as a positive fixint or as uint8 (0xcc NN).
  const std::uint8_t type_marker = byte_at(in, 1);
  std::uint8_t raw_type = type_marker;
  std::size_t pos = 2;
  if (type_marker == kUint8) {
    if (n < 3) return need_more(n + 1, false);
    raw_type = byte_at(in, 2);
    pos = 3;
  } else if (type_marker > 0x7f) {
    fail_marker("expected positive fixint or uint8 marker", type_marker);
  }
  const auto type = parse_message_type(raw_type);
  if (!type) throw ProtocolError("unknown message type: " + std::to_string(raw_type));

  // Branch: name, then payload, both bin.
  const BinField name = read_bin(in, pos, 1, limits);
  if (!name.complete) return name.partial;
  const BinField payload = read_bin(in, name.end, 0, limits);
  if (!payload.complete) {
    DecodeResult partial = payload.partial;
    if (payload.begin != 0) {
      // The payload's length is known: say where it starts, and what the
      // frame is so far.
      partial.frame = FrameView{*type, in.subspan(name.begin, name.end - name.begin), {}};
      partial.payload_begin = payload.begin;
    }
    return partial;
  }

  return {DecodeResult::Status::frame,
          FrameView{*type, in.subspan(name.begin, name.end - name.begin),
                    in.subspan(payload.begin, payload.end - payload.begin)},
          payload.end, false};
}

}  // namespace spinrpc

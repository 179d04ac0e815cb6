// Fuzz target: protocol/frame_decoder.h's decode_frame, on its own (it is
// pure, so every check here is on return values).
//
// The input is a byte stream as it would arrive on the wire. For each input:
//  1. One call on the whole input: a Frame lies inside the input, ends where
//     size_bytes says and fits the limit; a NeedMore asks for more than the
//     input holds; a ProtocolError is one line. Nothing else may be thrown.
//  2. Prefixes (every cut up to 32 bytes, 16 seeded random cuts, and n-1):
//     decoding is monotonic. Before a frame is whole the answer is NeedMore
//     asking for no more than the frame's size; once whole it is the same
//     frame; an error, once reported, stays the same error.
//  3. Streaming: the input is fed at seeded random split points into a
//     growing buffer, frames are consumed as FrameChannel consumes them, and the
//     frames and the final outcome must equal a one-shot decode of the whole
//     input frame after frame.
//  4. A small limit (seeded, 0..600 bytes): a frame of S bytes decodes under
//     limit L exactly when S <= L, and is a limit error otherwise.
//  5. Every decoded frame re-encoded with append_frame decodes to the same
//     frame and is no longer than the original (writers emit minimal headers).
#include <algorithm>  // std::min
#include <cstddef>    // std::byte, std::size_t
#include <cstdint>    // std::uint8_t, std::uint64_t
#include <cstring>    // std::memcmp
#include <string>     // std::string
#include <vector>     // std::vector

#include "fuzz_check.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"
#include "protocol/protocol_error.h"
#include "tests/support/splitmix64.h"

namespace {

using spinrpc::ByteView;
using spinrpc::DecodeResult;
using spinrpc::Limits;
using spinrpc::MessageType;

// What one decode_frame call said, with views turned into offsets so that
// results on different buffers can be compared.
struct Outcome {
  enum class Kind { Frame, NeedMore, Error } kind;
  std::size_t size_bytes = 0;  // Frame: its size; NeedMore: bytes needed
  MessageType type{};
  std::size_t name_offset = 0, name_size = 0, payload_offset = 0, payload_size = 0;
  bool inside_field = false;
  std::string error;  // Error: what()

  bool same_frame(const Outcome& o) const {
    return kind == Kind::Frame && o.kind == Kind::Frame && size_bytes == o.size_bytes &&
           type == o.type && name_offset == o.name_offset && name_size == o.name_size &&
           payload_offset == o.payload_offset && payload_size == o.payload_size;
  }
};

// Seeded from the input, so a crash replays exactly from its file.
using Rng = spinrpc::test::SplitMix64;

std::uint64_t seed_of(ByteView in) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (std::byte b : in) h = (h ^ std::to_integer<std::uint64_t>(b)) * 0x100000001b3ULL;
  return h;
}

// One decode_frame call and the invariants every single call must keep.
Outcome decode(ByteView in, const Limits& limits) {
  Outcome out{};
  DecodeResult r{};
  try {
    r = spinrpc::decode_frame(in, limits);
  } catch (const spinrpc::ProtocolError& e) {
    out.kind = Outcome::Kind::Error;
    out.error = e.what();
    FUZZ_CHECK(!out.error.empty(), "a ProtocolError has a message");
    FUZZ_CHECK(out.error.find('\n') == std::string::npos, "a ProtocolError is one line");
    return out;
  }
  // Anything else escaping decode_frame ends the process (std::terminate):
  // libFuzzer reports it as a crash.
  if (r.status == DecodeResult::Status::need_more) {
    out.kind = Outcome::Kind::NeedMore;
    out.size_bytes = r.size_bytes;
    out.inside_field = r.inside_field;
    FUZZ_CHECK(r.size_bytes > in.size(), "NeedMore asks for more than the input holds");
    FUZZ_CHECK(r.size_bytes <= std::max(limits.max_message_bytes, in.size() + 1),
               "NeedMore never asks for more than the limit once a length is known");
    return out;
  }
  FUZZ_CHECK(r.status == DecodeResult::Status::frame, "status is Frame or NeedMore");
  out.kind = Outcome::Kind::Frame;
  out.size_bytes = r.size_bytes;
  out.type = r.frame.type;
  FUZZ_CHECK(r.size_bytes <= in.size(), "a Frame fits in the input");
  FUZZ_CHECK(r.size_bytes <= limits.max_message_bytes, "a Frame fits the limit");
  FUZZ_CHECK(r.size_bytes >= 6, "a frame has at least 0x93, a type and two bin8 headers");
  const auto type_value = static_cast<unsigned>(r.frame.type);
  FUZZ_CHECK(type_value >= 1 && type_value <= 6, "the type is 1..6");
  const std::byte* begin = in.data();
  const std::byte* end = in.data() + in.size();
  const ByteView name = r.frame.name;
  const ByteView payload = r.frame.payload;
  // Empty fields still point at their place in the input.
  FUZZ_CHECK(name.data() > begin && name.data() + name.size() <= end, "the name lies in the input");
  FUZZ_CHECK(payload.data() > begin && payload.data() + payload.size() <= end,
             "the payload lies in the input");
  FUZZ_CHECK(name.data() + name.size() < payload.data(), "the payload's header follows the name");
  FUZZ_CHECK(payload.data() + payload.size() == begin + r.size_bytes,
             "the payload ends where the frame does");
  out.name_offset = static_cast<std::size_t>(name.data() - begin);
  out.name_size = name.size();
  out.payload_offset = static_cast<std::size_t>(payload.data() - begin);
  out.payload_size = payload.size();
  return out;
}

// 2. Decoding a prefix agrees with decoding the whole input.
void check_prefix(ByteView in, std::size_t cut, const Outcome& whole, const Limits& limits) {
  const Outcome part = decode(in.first(cut), limits);
  switch (whole.kind) {
    case Outcome::Kind::Frame:
      if (cut < whole.size_bytes) {
        FUZZ_CHECK(part.kind == Outcome::Kind::NeedMore, "a frame's prefix needs more");
        FUZZ_CHECK(part.size_bytes <= whole.size_bytes, "a prefix never asks past its frame");
      } else {
        FUZZ_CHECK(part.same_frame(whole), "a prefix holding the whole frame decodes it the same");
      }
      break;
    case Outcome::Kind::NeedMore:
      FUZZ_CHECK(part.kind == Outcome::Kind::NeedMore, "a prefix of an incomplete frame needs more");
      FUZZ_CHECK(part.size_bytes <= whole.size_bytes, "a prefix never asks for more than the whole");
      break;
    case Outcome::Kind::Error:
      FUZZ_CHECK(part.kind != Outcome::Kind::Frame, "a prefix of a bad frame is never a frame");
      if (part.kind == Outcome::Kind::Error) {
        FUZZ_CHECK(part.error == whole.error, "a prefix reports the same first error");
      }
      break;
  }
}

// A decoded frame, copied out of the buffer it was decoded from.
struct FrameCopy {
  MessageType type;
  std::vector<std::byte> name;
  std::vector<std::byte> payload;
  bool operator==(const FrameCopy&) const = default;
};

// Frames, in order, and how the stream ends.
struct StreamResult {
  std::vector<FrameCopy> frames;
  Outcome::Kind end = Outcome::Kind::NeedMore;
  std::string error;
};

void append_copy(StreamResult& s, ByteView frame_bytes, const Outcome& o) {
  const ByteView name = frame_bytes.subspan(o.name_offset, o.name_size);
  const ByteView payload = frame_bytes.subspan(o.payload_offset, o.payload_size);
  s.frames.push_back({o.type, {name.begin(), name.end()}, {payload.begin(), payload.end()}});
}

// The whole input, decoded frame after frame.
StreamResult one_shot(ByteView in, const Limits& limits) {
  StreamResult s;
  std::size_t at = 0;
  for (;;) {
    const ByteView rest = in.subspan(at);
    const Outcome o = decode(rest, limits);
    if (o.kind != Outcome::Kind::Frame) {
      s.end = o.kind;
      s.error = o.error;
      return s;
    }
    append_copy(s, rest, o);
    at += o.size_bytes;
  }
}

// 3. The input arriving in random chunks, consumed as FrameChannel does: decode
// after every chunk, take whole frames off the front.
StreamResult chunked(ByteView in, const Limits& limits, Rng& rng) {
  StreamResult s;
  std::vector<std::byte> buffer;
  std::size_t begin = 0;
  std::size_t fed = 0;
  for (;;) {
    const ByteView pending(buffer.data() + begin, buffer.size() - begin);
    const Outcome o = decode(pending, limits);
    if (o.kind == Outcome::Kind::Frame) {
      append_copy(s, pending, o);
      begin += o.size_bytes;
      continue;
    }
    if (o.kind == Outcome::Kind::Error || fed == in.size()) {
      s.end = o.kind;
      s.error = o.error;
      return s;
    }
    // Chunks of 1..8 bytes mostly, sometimes up to 300, as reads may return.
    const std::size_t want = rng.below(4) == 0 ? 1 + rng.below(300) : 1 + rng.below(8);
    const std::size_t take = std::min(want, in.size() - fed);
    buffer.insert(buffer.end(), in.begin() + static_cast<std::ptrdiff_t>(fed),
                  in.begin() + static_cast<std::ptrdiff_t>(fed + take));
    fed += take;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(reinterpret_cast<const std::byte*>(data), size);
  const Limits limits;  // the default 256 MiB
  Rng rng{seed_of(in)};

  // 1.
  const Outcome whole = decode(in, limits);

  // 2.
  for (std::size_t cut = 0; cut <= std::min<std::size_t>(size, 32); ++cut) {
    check_prefix(in, cut, whole, limits);
  }
  for (int i = 0; i < 16 && size > 0; ++i) check_prefix(in, rng.below(size + 1), whole, limits);
  if (size > 0) check_prefix(in, size - 1, whole, limits);

  // 3.
  const StreamResult reference = one_shot(in, limits);
  const StreamResult streamed = chunked(in, limits, rng);
  FUZZ_CHECK(streamed.frames == reference.frames, "chunked input yields the same frames");
  FUZZ_CHECK(streamed.end == reference.end && streamed.error == reference.error,
             "chunked input ends the same way");

  // 4.
  Limits small;
  small.max_message_bytes = rng.below(601);
  const Outcome limited = decode(in, small);
  if (whole.kind == Outcome::Kind::Frame) {
    if (whole.size_bytes <= small.max_message_bytes) {
      FUZZ_CHECK(limited.same_frame(whole), "a frame within a smaller limit decodes the same");
    } else {
      FUZZ_CHECK(limited.kind == Outcome::Kind::Error &&
                     limited.error.find("exceeds the limit") != std::string::npos,
                 "a frame over the limit is refused with the limit's message");
    }
  }
  if (limited.kind == Outcome::Kind::Frame) {
    FUZZ_CHECK(limited.same_frame(whole), "what a small limit accepts, the default accepts");
  }

  // 5.
  if (whole.kind == Outcome::Kind::Frame) {
    const ByteView name = in.subspan(whole.name_offset, whole.name_size);
    const ByteView payload = in.subspan(whole.payload_offset, whole.payload_size);
    std::vector<std::byte> encoded;
    spinrpc::append_frame(encoded, whole.type, name, payload);
    FUZZ_CHECK(encoded.size() <= whole.size_bytes, "the encoder's headers are minimal");
    const Outcome again = decode(encoded, limits);
    FUZZ_CHECK(again.kind == Outcome::Kind::Frame && again.size_bytes == encoded.size(),
               "a re-encoded frame decodes whole");
    FUZZ_CHECK(again.type == whole.type && again.name_size == name.size() &&
                   again.payload_size == payload.size(),
               "a re-encoded frame keeps type and sizes");
    FUZZ_CHECK(std::memcmp(encoded.data() + again.name_offset, name.data(), name.size()) == 0 &&
                   std::memcmp(encoded.data() + again.payload_offset, payload.data(),
                               payload.size()) == 0,
               "a re-encoded frame keeps name and payload bytes");
  }
  return 0;
}

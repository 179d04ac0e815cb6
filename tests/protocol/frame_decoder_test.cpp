// decode_frame: msgpack-c frames decode with views into the input, every
// malformed byte is reported in tsgo's words, and every prefix of a valid
// frame asks for more with the EOF position tsgo's reader would see.

#include <doctest/doctest.h>

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t
#include <string>   // std::string, std::to_string
#include <vector>   // std::vector

#include "protocol/frame_decoder.h"
#include "protocol/message_type.h"
#include "protocol/protocol_error.h"
#include "tests/protocol/frame_test_util.h"

namespace spinrpc {
namespace {

using test::Bytes;
using test::bytes;
using test::FrameLayout;
using test::kFieldSizes;
using test::kMiB;
using test::msgpack_frame;
using test::pattern;
using test::same_bytes;
using test::TypeMarker;

// Chunk sizes for partial input (docs/CONVENTIONS.md#tests); 0 means "all at once".
const std::vector<std::size_t> kChunks = {1, 4, 256, 0};

const Limits kDefaultLimits{};

// Decodes `frame` whole and checks every field against what was packed,
// including that the views point into `frame` itself (no copy).
void check_decodes_in_place(const Bytes& frame, std::uint8_t type, const Bytes& name,
                            const Bytes& payload, TypeMarker marker) {
  const FrameLayout layout(marker, name.size(), payload.size());
  REQUIRE(frame.size() == layout.total);
  const DecodeResult r = decode_frame(frame, kDefaultLimits);
  REQUIRE(r.status == DecodeResult::Status::frame);
  CHECK(static_cast<int>(r.frame.type) == type);
  CHECK(r.size_bytes == frame.size());
  CHECK_FALSE(r.inside_field);
  CHECK(r.frame.name.data() == frame.data() + layout.name_data);
  CHECK(r.frame.payload.data() == frame.data() + layout.payload_data);
  CHECK(same_bytes(r.frame.name, name));
  CHECK(same_bytes(r.frame.payload, payload));
}

TEST_CASE("decode_frame decodes msgpack-c frames of all six types, both type markers and every bin width") {
  const Bytes short_field = bytes("getTypeAtLocation");
  for (TypeMarker marker : {TypeMarker::PositiveFixint, TypeMarker::Uint8}) {
    for (std::uint8_t type = 1; type <= 6; ++type) {
      for (std::size_t size : kFieldSizes) {
        CAPTURE(test::to_string(marker));
        CAPTURE(static_cast<int>(type));
        CAPTURE(size);
        const Bytes data = pattern(size, static_cast<std::uint32_t>(size + type));
        // The size under test as the payload, then as the name.
        check_decodes_in_place(msgpack_frame(type, short_field, data, marker), type, short_field,
                               data, marker);
        check_decodes_in_place(msgpack_frame(type, data, short_field, marker), type, data,
                               short_field, marker);
      }
    }
  }
}

TEST_CASE("decode_frame reads the type from a positive fixint or a 0xcc uint8 byte for byte") {
  // Hand-written, not from msgpack-c: [Response, "echo", "hi"].
  const Bytes fixint = bytes({0x93, 0x04, 0xc4, 4, 'e', 'c', 'h', 'o', 0xc4, 2, 'h', 'i'});
  const Bytes uint8 = bytes({0x93, 0xcc, 0x04, 0xc4, 4, 'e', 'c', 'h', 'o', 0xc4, 2, 'h', 'i'});
  for (const Bytes* frame : {&fixint, &uint8}) {
    const DecodeResult r = decode_frame(*frame, kDefaultLimits);
    REQUIRE(r.status == DecodeResult::Status::frame);
    CHECK(r.frame.type == MessageType::Response);
    CHECK(r.frame.name_text() == "echo");
    CHECK(r.frame.payload_text() == "hi");
    CHECK(r.size_bytes == frame->size());
  }
}

TEST_CASE("decode_frame decodes only the first of several frames in a buffer and reports its size") {
  const Bytes first = msgpack_frame(1, bytes("echo"), bytes("one"));
  const Bytes second = msgpack_frame(6, bytes("readFile"), pattern(300), TypeMarker::Uint8);
  const Bytes third = msgpack_frame(4, bytes("echo"), {});
  const Bytes all = test::concat({first, second, third});

  const DecodeResult r1 = decode_frame(all, kDefaultLimits);
  REQUIRE(r1.status == DecodeResult::Status::frame);
  CHECK(r1.size_bytes == first.size());
  CHECK(r1.frame.type == MessageType::Request);
  CHECK(r1.frame.payload_text() == "one");
  CHECK(r1.frame.payload.data() + r1.frame.payload.size() == all.data() + first.size());

  const ByteView rest = ByteView(all).subspan(r1.size_bytes);
  const DecodeResult r2 = decode_frame(rest, kDefaultLimits);
  REQUIRE(r2.status == DecodeResult::Status::frame);
  CHECK(r2.size_bytes == second.size());
  CHECK(r2.frame.type == MessageType::Call);
  CHECK(r2.frame.name_text() == "readFile");
  CHECK(same_bytes(r2.frame.payload, pattern(300)));

  const DecodeResult r3 = decode_frame(rest.subspan(r2.size_bytes), kDefaultLimits);
  REQUIRE(r3.status == DecodeResult::Status::frame);
  CHECK(r3.size_bytes == third.size());
  CHECK(r3.frame.type == MessageType::Response);
  CHECK(r3.frame.payload.empty());
}

TEST_CASE("decode_frame ignores whatever follows a whole frame, even malformed bytes") {
  const Bytes frame = msgpack_frame(1, bytes("echo"), bytes("x"));
  const Bytes with_garbage = test::concat({frame, bytes({0x92, 0xff, 0xa4})});
  const DecodeResult r = decode_frame(with_garbage, kDefaultLimits);
  REQUIRE(r.status == DecodeResult::Status::frame);
  CHECK(r.size_bytes == frame.size());
  CHECK(r.frame.payload_text() == "x");
}

// --- Partial input -----------------------------------------------------------

struct Sample {
  const char* label;
  std::uint8_t type;
  Bytes name;
  Bytes payload;
  TypeMarker marker;
};

std::vector<Sample> partial_samples() {
  return {
      {"empty payload, fixint", 1, bytes("echo"), {}, TypeMarker::PositiveFixint},
      {"empty name and payload, uint8", 4, {}, {}, TypeMarker::Uint8},
      {"short fields, uint8", 2, bytes("readFile"), bytes("{\"x\":1}"), TypeMarker::Uint8},
      {"bin8 name, bin16 payload", 4, bytes("echo"), pattern(256, 7), TypeMarker::PositiveFixint},
      {"bin16 name, bin32 payload", 6, pattern(300, 8), pattern(70000, 9), TypeMarker::Uint8},
      {"bin32 name, bin8 payload", 3, pattern(65536, 10), pattern(255, 11),
       TypeMarker::PositiveFixint},
      {"bin16 edges", 5, pattern(65535, 12), pattern(256, 13), TypeMarker::PositiveFixint},
  };
}

// Feeds growing prefixes of `frame` (advancing by `chunk`, 0 = whole) and
// returns the first disagreement with the layout model, or "" when none.
std::string feed_in_chunks(const Bytes& frame, const Sample& s, std::size_t chunk) {
  const FrameLayout layout(s.marker, s.name.size(), s.payload.size());
  const std::size_t n = frame.size();
  if (n != layout.total) return "layout model disagrees with msgpack-c's size";
  for (std::size_t k = 0; k < n; k = chunk == 0 ? n : std::min(k + chunk, n)) {
    const std::string at = "prefix of " + std::to_string(k) + " of " + std::to_string(n) + ": ";
    // Small frames: decode an exact-size copy, so reading past the prefix is
    // a heap overflow under ASan/valgrind instead of a silent success.
    Bytes copy;
    ByteView prefix(frame.data(), k);
    if (n <= 4096) {
      copy.assign(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(k));
      prefix = copy;
    }
    const DecodeResult r = decode_frame(prefix, kDefaultLimits);
    if (r.status != DecodeResult::Status::need_more) return at + "not need_more";
    if (r.size_bytes <= k) return at + "size_bytes " + std::to_string(r.size_bytes) + " <= prefix";
    if (r.size_bytes > n) return at + "size_bytes " + std::to_string(r.size_bytes) + " > frame";
    if (layout.lengths_known(k) && r.size_bytes != n) {
      return at + "size_bytes " + std::to_string(r.size_bytes) + " though both lengths are known";
    }
    if (r.inside_field != layout.inside_field(k)) {
      return at + "inside_field " + (r.inside_field ? "true" : "false");
    }
  }
  const DecodeResult r = decode_frame(frame, kDefaultLimits);
  if (r.status != DecodeResult::Status::frame) return "whole frame: not Frame";
  if (r.size_bytes != n) return "whole frame: size_bytes " + std::to_string(r.size_bytes);
  if (static_cast<int>(r.frame.type) != s.type) return "whole frame: type";
  if (r.frame.name.data() != frame.data() + layout.name_data) return "whole frame: name copied";
  if (r.frame.payload.data() != frame.data() + layout.payload_data) return "whole frame: payload copied";
  if (!same_bytes(r.frame.name, s.name)) return "whole frame: name bytes";
  if (!same_bytes(r.frame.payload, s.payload)) return "whole frame: payload bytes";
  return "";
}

TEST_CASE("decode_frame asks for more at every prefix of a frame fed in chunks, then decodes it in place") {
  for (const Sample& s : partial_samples()) {
    const Bytes frame = msgpack_frame(s.type, s.name, s.payload, s.marker);
    for (std::size_t chunk : kChunks) {
      CAPTURE(s.label);
      CAPTURE(chunk);
      CHECK(feed_in_chunks(frame, s, chunk) == "");
    }
  }
}

TEST_CASE("decode_frame reports tsgo's EOF position and the needed size at each cut of a bin16/bin32 frame") {
  // [Request, 256-byte name (bin16), 65536-byte payload (bin32)], written out
  // by hand: offsets 0 0x93, 1 type, 2 0xc5, 3-4 length, 5-260 name,
  // 261 0xc6, 262-265 length, 266-65801 payload.
  const Bytes name = pattern(256, 21);
  const Bytes payload = pattern(65536, 22);
  const Bytes frame = test::concat(
      {bytes({0x93, 0x01, 0xc5, 0x01, 0x00}), name, bytes({0xc6, 0x00, 0x01, 0x00, 0x00}), payload});
  REQUIRE(frame.size() == 65802);

  struct Cut {
    std::size_t prefix;
    bool inside_field;
    std::size_t size_bytes;
  };
  const Cut cuts[] = {
      {0, false, 1},           // nothing yet
      {1, false, 2},           // after 0x93
      {2, false, 3},           // after the type
      {3, false, 4},           // after the bin16 marker
      {4, true, 5},            // inside the bin16 length
      {5, false, 262},         // length whole, no name byte yet
      {6, true, 262},          // one name byte
      {260, true, 262},        // all but one name byte
      {261, false, 262},       // name whole, no payload marker yet
      {262, false, 263},       // after the bin32 marker
      {263, true, 264},        // 1 of 4 length bytes
      {265, true, 266},        // 3 of 4 length bytes
      {266, false, 65802},     // both lengths known, no payload byte yet
      {267, true, 65802},      // one payload byte
      {65801, true, 65802},    // all but one payload byte
  };
  for (const Cut& cut : cuts) {
    CAPTURE(cut.prefix);
    const DecodeResult r = decode_frame(ByteView(frame).first(cut.prefix), kDefaultLimits);
    CHECK(r.status == DecodeResult::Status::need_more);
    CHECK(r.inside_field == cut.inside_field);
    CHECK(r.size_bytes == cut.size_bytes);
  }

  // The uint8 type form: EOF between 0xcc and its value is a clean EOF for
  // tsgo's byte reader, like EOF after any one-byte field.
  const DecodeResult after_cc = decode_frame(bytes({0x93, 0xcc}), kDefaultLimits);
  CHECK(after_cc.status == DecodeResult::Status::need_more);
  CHECK_FALSE(after_cc.inside_field);
  CHECK(after_cc.size_bytes == 3);
}

// --- Malformed input ---------------------------------------------------------

TEST_CASE("decode_frame rejects a first byte other than 0x93 with tsgo's message") {
  const Bytes rest = bytes({0x01, 0xc4, 0x00, 0xc4, 0x00});
  const std::vector<std::pair<int, const char*>> cases = {
      {0x92, "expected fixed 3-element array (0x93), received: 0x92"},
      {0x94, "expected fixed 3-element array (0x93), received: 0x94"},
      {0x90, "expected fixed 3-element array (0x93), received: 0x90"},
      {0xdc, "expected fixed 3-element array (0x93), received: 0xdc"},  // array16
      {0x00, "expected fixed 3-element array (0x93), received: 0x00"},
      {0xc4, "expected fixed 3-element array (0x93), received: 0xc4"},
      {0xff, "expected fixed 3-element array (0x93), received: 0xff"},
  };
  for (const auto& [first, message] : cases) {
    CAPTURE(first);
    // Alone (nothing else has arrived yet) and followed by a plausible rest.
    CHECK_THROWS_WITH_AS(decode_frame(bytes({first}), kDefaultLimits), message, ProtocolError);
    CHECK_THROWS_WITH_AS(decode_frame(test::concat({bytes({first}), rest}), kDefaultLimits),
                         message, ProtocolError);
  }
}

TEST_CASE("decode_frame rejects a type outside 1..6 with tsgo's message, in either type form") {
  const Bytes rest = bytes({0xc4, 0x00, 0xc4, 0x00});
  const std::vector<std::pair<Bytes, const char*>> cases = {
      {bytes({0x93, 0x09}), "unknown message type: 9"},
      {bytes({0x93, 0x00}), "unknown message type: 0"},
      {bytes({0x93, 0x07}), "unknown message type: 7"},
      {bytes({0x93, 0x7f}), "unknown message type: 127"},
      {bytes({0x93, 0xcc, 0x09}), "unknown message type: 9"},
      {bytes({0x93, 0xcc, 0x00}), "unknown message type: 0"},
      {bytes({0x93, 0xcc, 0x07}), "unknown message type: 7"},
      {bytes({0x93, 0xcc, 0xff}), "unknown message type: 255"},
  };
  for (const auto& [head, message] : cases) {
    CAPTURE(head.size());
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(decode_frame(head, kDefaultLimits), message, ProtocolError);
    CHECK_THROWS_WITH_AS(decode_frame(test::concat({head, rest}), kDefaultLimits), message,
                         ProtocolError);
  }
}

TEST_CASE("decode_frame rejects a type marker that is neither a positive fixint nor 0xcc") {
  const std::vector<std::pair<int, const char*>> cases = {
      {0xcd, "expected positive fixint or uint8 marker, received: 0xcd"},  // uint16
      {0xce, "expected positive fixint or uint8 marker, received: 0xce"},  // uint32
      {0xcf, "expected positive fixint or uint8 marker, received: 0xcf"},  // uint64
      {0xd0, "expected positive fixint or uint8 marker, received: 0xd0"},  // int8
      {0xff, "expected positive fixint or uint8 marker, received: 0xff"},  // negative fixint -1
      {0xe0, "expected positive fixint or uint8 marker, received: 0xe0"},  // negative fixint -32
      {0xc0, "expected positive fixint or uint8 marker, received: 0xc0"},  // nil
      {0x80, "expected positive fixint or uint8 marker, received: 0x80"},  // fixmap
      {0xa1, "expected positive fixint or uint8 marker, received: 0xa1"},  // fixstr
  };
  for (const auto& [marker, message] : cases) {
    CAPTURE(marker);
    CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, marker}), kDefaultLimits), message,
                         ProtocolError);
    // 0xcd 0x00 0x01 would be a valid uint16 1: still refused.
    CHECK_THROWS_WITH_AS(
        decode_frame(bytes({0x93, marker, 0x00, 0x01, 0xc4, 0x00, 0xc4, 0x00}), kDefaultLimits),
        message, ProtocolError);
  }
}

TEST_CASE("decode_frame rejects a name or payload that is not bin with tsgo's message") {
  const std::vector<std::pair<int, const char*>> markers = {
      {0xa4, "expected binary data (0xc4-0xc6), received: 0xa4"},  // fixstr of 4
      {0xa0, "expected binary data (0xc4-0xc6), received: 0xa0"},  // empty fixstr
      {0xd9, "expected binary data (0xc4-0xc6), received: 0xd9"},  // str8
      {0xda, "expected binary data (0xc4-0xc6), received: 0xda"},  // str16
      {0xdb, "expected binary data (0xc4-0xc6), received: 0xdb"},  // str32
      {0xc7, "expected binary data (0xc4-0xc6), received: 0xc7"},  // ext8
      {0xc3, "expected binary data (0xc4-0xc6), received: 0xc3"},  // true
      {0xc0, "expected binary data (0xc4-0xc6), received: 0xc0"},  // nil
      {0x04, "expected binary data (0xc4-0xc6), received: 0x04"},  // fixint
  };
  for (const auto& [marker, message] : markers) {
    CAPTURE(marker);
    // As the name: alone, and followed by "echo" and a valid payload.
    CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, 0x01, marker}), kDefaultLimits), message,
                         ProtocolError);
    CHECK_THROWS_WITH_AS(
        decode_frame(bytes({0x93, 0x01, marker, 'e', 'c', 'h', 'o', 0xc4, 0x00}), kDefaultLimits),
        message, ProtocolError);
    // As the payload, after a valid name (with either type form).
    CHECK_THROWS_WITH_AS(
        decode_frame(bytes({0x93, 0x01, 0xc4, 4, 'e', 'c', 'h', 'o', marker}), kDefaultLimits),
        message, ProtocolError);
    CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, 0xcc, 0x01, 0xc4, 4, 'e', 'c', 'h', 'o', marker,
                                             'a', 'b', 'c', 'd'}),
                                      kDefaultLimits),
                         message, ProtocolError);
  }
}

TEST_CASE("decode_frame refuses a frame over a custom max_message_bytes before its data arrives") {
  const Limits limits{100};
  const Bytes name = bytes("echo");
  // [Request, "echo", P]: 0x93 01 c4 04 e c h o c4 LL <P> = 10 + P bytes.
  SUBCASE("a frame of exactly the limit is accepted") {
    const Bytes frame = msgpack_frame(1, name, pattern(90));
    REQUIRE(frame.size() == 100);
    CHECK(decode_frame(frame, limits).status == DecodeResult::Status::frame);
  }
  SUBCASE("one byte more is refused as soon as the payload length is known") {
    const Bytes frame = msgpack_frame(1, name, pattern(91));
    REQUIRE(frame.size() == 101);
    const char* message = "message of 101 bytes exceeds the limit of 100 bytes (max message size)";
    // Only the header: no payload byte has arrived.
    CHECK_THROWS_WITH_AS(decode_frame(ByteView(frame).first(10), limits), message, ProtocolError);
    CHECK_THROWS_WITH_AS(decode_frame(frame, limits), message, ProtocolError);
    // Before the length is whole there is nothing to refuse yet.
    CHECK(decode_frame(ByteView(frame).first(9), limits).status == DecodeResult::Status::need_more);
  }
  SUBCASE("a bin16 payload length over the limit is refused with only its header") {
    // 0x93 01 c4 04 echo c5 01 2c: a 300-byte payload, 311 bytes in all.
    const Bytes header = bytes({0x93, 0x01, 0xc4, 4, 'e', 'c', 'h', 'o', 0xc5, 0x01, 0x2c});
    CHECK_THROWS_WITH_AS(decode_frame(header, limits),
                         "message of 311 bytes exceeds the limit of 100 bytes (max message size)",
                         ProtocolError);
  }
  SUBCASE("a name too long for the limit is refused before the payload is seen") {
    // 0x93 01 c4 c8: a 200-byte name; the frame needs at least 204 + 1 bytes.
    CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, 0x01, 0xc4, 0xc8}), limits),
                         "message of 205 bytes exceeds the limit of 100 bytes (max message size)",
                         ProtocolError);
  }
}

TEST_CASE("decode_frame refuses a bin32 length of 0xffffffff under the default 256 MiB limit") {
  CHECK_THROWS_WITH_AS(
      decode_frame(bytes({0x93, 0x01, 0xc4, 0x00, 0xc6, 0xff, 0xff, 0xff, 0xff}), kDefaultLimits),
      "message of 4294967304 bytes exceeds the limit of 268435456 bytes (max message size)",
      ProtocolError);
  CHECK_THROWS_WITH_AS(
      decode_frame(bytes({0x93, 0x01, 0xc6, 0xff, 0xff, 0xff, 0xff}), kDefaultLimits),
      "message of 4294967303 bytes exceeds the limit of 268435456 bytes (max message size)",
      ProtocolError);
}

TEST_CASE("decode_frame accepts a frame announcing exactly the default limit and asks for all of it") {
  // Empty name, bin32 payload of 256 MiB - 9 bytes: 9 header bytes, 256 MiB in all.
  const std::size_t payload = Limits::kDefaultMaxMessageBytes - 9;
  const auto b = [payload](int shift) { return static_cast<int>((payload >> shift) & 0xff); };
  const Bytes header = bytes({0x93, 0x01, 0xc4, 0x00, 0xc6, b(24), b(16), b(8), b(0)});
  const DecodeResult r = decode_frame(header, kDefaultLimits);
  CHECK(r.status == DecodeResult::Status::need_more);
  CHECK(r.size_bytes == Limits::kDefaultMaxMessageBytes);
  CHECK_FALSE(r.inside_field);

  const std::size_t over = payload + 1;
  const auto c = [over](int shift) { return static_cast<int>((over >> shift) & 0xff); };
  CHECK_THROWS_WITH_AS(
      decode_frame(bytes({0x93, 0x01, 0xc4, 0x00, 0xc6, c(24), c(16), c(8), c(0)}), kDefaultLimits),
      "message of 268435457 bytes exceeds the limit of 268435456 bytes (max message size)",
      ProtocolError);
}

TEST_CASE("decode_frame reports the first offending byte in wire order") {
  // Bad type and bad name marker: the type is reported.
  CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, 0x09, 0xa4}), kDefaultLimits),
                       "unknown message type: 9", ProtocolError);
  // Bad name marker and bad payload marker: the name is reported.
  CHECK_THROWS_WITH_AS(decode_frame(bytes({0x93, 0x01, 0xd9, 0x00, 0xa4}), kDefaultLimits),
                       "expected binary data (0xc4-0xc6), received: 0xd9", ProtocolError);
  // A bad payload marker behind a name still arriving is not seen yet.
  const DecodeResult r = decode_frame(bytes({0x93, 0x01, 0xc4, 0x05, 'e', 'c'}), kDefaultLimits);
  CHECK(r.status == DecodeResult::Status::need_more);
  CHECK(r.inside_field);
}

// --- MessageType --------------------------------------------------------------

TEST_CASE("parse_message_type accepts exactly the wire values 1..6 and to_string names them") {
  const char* names[] = {"Request", "CallResponse", "CallError", "Response", "Error", "Call"};
  for (int v = 0; v <= 255; ++v) {
    CAPTURE(v);
    const auto type = parse_message_type(static_cast<std::uint8_t>(v));
    if (v >= 1 && v <= 6) {
      REQUIRE(type.has_value());
      CHECK(static_cast<int>(*type) == v);
      CHECK(to_string(*type) == names[v - 1]);
    } else {
      CHECK_FALSE(type.has_value());
    }
  }
}

}  // namespace
}  // namespace spinrpc

// encode_frame_header / append_frame: byte-identical to msgpack-c's packer,
// readable by msgpack-c's unpacker, smallest bin header, and round trips
// through decode_frame.

#include <doctest/doctest.h>

#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint8_t
#include <stdexcept>  // std::length_error
#include <vector>     // std::vector

#include <msgpack.hpp>  // msgpack::unpack

#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"
#include "tests/protocol/frame_test_util.h"

namespace spinrpc {
namespace {

using test::Bytes;
using test::bytes;
using test::kFieldSizes;
using test::kMiB;
using test::msgpack_frame;
using test::pattern;
using test::same_bytes;


MessageType type_of(std::uint8_t value) { return *parse_message_type(value); }

Bytes encode(std::uint8_t type, ByteView name, ByteView payload) {
  Bytes out;
  append_frame(out, type_of(type), name, payload);
  return out;
}

// The smallest bin header for `size`, written out by hand (not by msgpack-c).
Bytes expected_bin_header(std::size_t size) {
  const auto b = [size](int shift) { return static_cast<int>((size >> shift) & 0xff); };
  if (size < 256) return bytes({0xc4, b(0)});
  if (size < 65536) return bytes({0xc5, b(8), b(0)});
  return bytes({0xc6, b(24), b(16), b(8), b(0)});
}

TEST_CASE("append_frame writes exactly what msgpack-c's packer writes for every type and bin width") {
  const Bytes short_field = bytes("echo");
  for (std::uint8_t type = 1; type <= 6; ++type) {
    for (std::size_t size : kFieldSizes) {
      CAPTURE(static_cast<int>(type));
      CAPTURE(size);
      const Bytes data = pattern(size, static_cast<std::uint32_t>(size * 7 + type));
      CHECK(encode(type, short_field, data) == msgpack_frame(type, short_field, data));
      CHECK(encode(type, data, short_field) == msgpack_frame(type, data, short_field));
    }
  }
}

TEST_CASE("append_frame output unpacks with msgpack-c into [uint, bin, bin] with the same bytes") {
  for (std::uint8_t type = 1; type <= 6; ++type) {
    for (std::size_t name_size : {std::size_t{0}, std::size_t{4}, std::size_t{256}, std::size_t{65536}}) {
      for (std::size_t size : kFieldSizes) {
        CAPTURE(static_cast<int>(type));
        CAPTURE(name_size);
        CAPTURE(size);
        const Bytes name = pattern(name_size, 3);
        const Bytes payload = pattern(size, static_cast<std::uint32_t>(size + 5));
        const Bytes frame = encode(type, name, payload);

        std::size_t offset = 0;
        const msgpack::object_handle handle =
            msgpack::unpack(reinterpret_cast<const char*>(frame.data()), frame.size(), offset);
        CHECK(offset == frame.size());  // one object, nothing left over
        const msgpack::object& obj = handle.get();
        REQUIRE(obj.type == msgpack::type::ARRAY);
        REQUIRE(obj.via.array.size == 3);
        const msgpack::object* e = obj.via.array.ptr;
        REQUIRE(e[0].type == msgpack::type::POSITIVE_INTEGER);
        CHECK(e[0].via.u64 == type);
        REQUIRE(e[1].type == msgpack::type::BIN);
        REQUIRE(e[2].type == msgpack::type::BIN);
        CHECK(same_bytes(ByteView(reinterpret_cast<const std::byte*>(e[1].via.bin.ptr), e[1].via.bin.size),
                         name));
        CHECK(same_bytes(ByteView(reinterpret_cast<const std::byte*>(e[2].via.bin.ptr), e[2].via.bin.size),
                         payload));
      }
    }
  }
}

TEST_CASE("append_frame writes 0x93, the type as a positive fixint and the smallest bin headers") {
  for (std::uint8_t type = 1; type <= 6; ++type) {
    for (std::size_t size : kFieldSizes) {
      CAPTURE(static_cast<int>(type));
      CAPTURE(size);
      const Bytes data = pattern(size, 17);
      const Bytes name = bytes("m");
      // Payload under test.
      CHECK(encode(type, name, data) ==
            test::concat({bytes({0x93, type, 0xc4, 0x01, 'm'}), expected_bin_header(size), data}));
      // Name under test.
      CHECK(encode(type, data, name) ==
            test::concat({bytes({0x93, type}), expected_bin_header(size), data, bytes({0xc4, 0x01, 'm'})}));
    }
  }
}

TEST_CASE("append_frame appends after bytes already in the vector and leaves them alone") {
  Bytes out = bytes({0xde, 0xad});
  append_frame(out, MessageType::Error, as_bytes("echo"), as_bytes("boom"));
  append_frame(out, MessageType::Call, as_bytes("readFile"), {});
  CHECK(out == test::concat({bytes({0xde, 0xad}), bytes({0x93, 0x05, 0xc4, 4, 'e', 'c', 'h', 'o', 0xc4, 4,
                                                       'b', 'o', 'o', 'm'}),
                             bytes({0x93, 0x06, 0xc4, 8, 'r', 'e', 'a', 'd', 'F', 'i', 'l', 'e', 0xc4, 0})}));
}

TEST_CASE("encode_frame_header splits the header into the prefix and the payload header for writev") {
  SUBCASE("bin8 name, bin16 payload") {
    const FrameHeader h = encode_frame_header(MessageType::Response, 4, 300);
    CHECK(same_bytes(h.prefix(), bytes({0x93, 0x04, 0xc4, 0x04})));
    CHECK(same_bytes(h.payload_header(), bytes({0xc5, 0x01, 0x2c})));
  }
  SUBCASE("the longest headers: bin32 lengths of 0xffffffff") {
    const FrameHeader h = encode_frame_header(MessageType::Call, 0xffffffff, 0xffffffff);
    CHECK(h.prefix_size == FrameHeader::kMaxPrefixBytes);
    CHECK(h.payload_header_size == FrameHeader::kMaxPayloadHeaderBytes);
    CHECK(same_bytes(h.prefix(), bytes({0x93, 0x06, 0xc6, 0xff, 0xff, 0xff, 0xff})));
    CHECK(same_bytes(h.payload_header(), bytes({0xc6, 0xff, 0xff, 0xff, 0xff})));
  }
  SUBCASE("empty name and payload") {
    const FrameHeader h = encode_frame_header(MessageType::Request, 0, 0);
    CHECK(same_bytes(h.prefix(), bytes({0x93, 0x01, 0xc4, 0x00})));
    CHECK(same_bytes(h.payload_header(), bytes({0xc4, 0x00})));
  }
}

TEST_CASE("encode_frame_header throws length_error for a name or payload of 4 GiB") {
  const std::size_t four_gib = std::size_t{1} << 32;
  const char* message = "spinrpc: a name or payload of 4 GiB or more does not fit bin32";
  CHECK_THROWS_WITH_AS(encode_frame_header(MessageType::Request, four_gib, 0), message,
                       std::length_error);
  CHECK_THROWS_WITH_AS(encode_frame_header(MessageType::Request, 0, four_gib), message,
                       std::length_error);
}

TEST_CASE("decode_frame reads back every frame append_frame writes, views in place") {
  for (std::uint8_t type = 1; type <= 6; ++type) {
    for (std::size_t size : kFieldSizes) {
      CAPTURE(static_cast<int>(type));
      CAPTURE(size);
      const Bytes name = pattern(size % 1000, 41);
      const Bytes payload = pattern(size, 42);
      const Bytes frame = encode(type, name, payload);
      const DecodeResult r = decode_frame(frame, Limits{});
      REQUIRE(r.status == DecodeResult::Status::frame);
      CHECK(r.size_bytes == frame.size());
      CHECK(r.frame.type == type_of(type));
      CHECK(same_bytes(r.frame.name, name));
      CHECK(same_bytes(r.frame.payload, payload));
      CHECK(r.frame.payload.data() + r.frame.payload.size() == frame.data() + frame.size());
    }
  }
}

}  // namespace
}  // namespace spinrpc

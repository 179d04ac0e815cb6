#pragma once

// Helpers shared by the protocol tests: byte builders, msgpack-c as the
// reference encoder, and an independent model of where a frame's fields lie.

#include <algorithm>         // std::equal
#include <cstddef>           // std::byte, std::size_t
#include <cstdint>           // std::uint8_t, std::uint32_t
#include <initializer_list>  // std::initializer_list
#include <string>            // std::string
#include <string_view>       // std::string_view
#include <vector>            // std::vector

#include <msgpack.hpp>  // msgpack::packer, msgpack::sbuffer

#include "protocol/frame.h"

namespace spinrpc::test {

using Bytes = std::vector<std::byte>;

/// Bytes from small integers: bytes({0x93, 0x01}).
inline constexpr std::size_t kMiB = std::size_t{1} << 20;
/// Every bin width and its edges: bin8 (0, 1, 255), bin16 (256, 65535), bin32.
inline const std::vector<std::size_t> kFieldSizes = {0, 1, 255, 256, 65535, 65536, kMiB};

inline Bytes bytes(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

inline Bytes bytes(std::string_view text) {
  const ByteView view = as_bytes(text);
  return {view.begin(), view.end()};
}

/// `size` deterministic bytes that take every value 0..255 (so a copy that
/// drops, repeats or shifts a byte is caught), different per seed.
inline Bytes pattern(std::size_t size, std::uint32_t seed = 1) {
  Bytes out(size);
  std::uint32_t x = seed * 2654435761u + 0x9e3779b9u;
  for (std::size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<std::byte>(x >> 24);
  }
  return out;
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline bool same_bytes(ByteView a, ByteView b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

/// Bytes of the smallest MessagePack bin header for `size` data bytes.
inline std::size_t bin_header_bytes(std::size_t size) {
  return size < 256 ? 2 : size < 65536 ? 3 : 5;
}

/// How the reference encoder writes the type.
enum class TypeMarker {
  PositiveFixint,  // 0x01..0x06 (what every writer emits)
  Uint8,           // 0xcc NN (what readers must also accept)
};

inline const char* to_string(TypeMarker marker) {
  return marker == TypeMarker::PositiveFixint ? "positive fixint" : "uint8 0xcc";
}

/// [type, name, payload] as msgpack-c's packer writes it.
inline Bytes msgpack_frame(std::uint8_t type, ByteView name, ByteView payload,
                           TypeMarker marker = TypeMarker::PositiveFixint) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(3);
  if (marker == TypeMarker::Uint8) {
    packer.pack_fix_uint8(type);
  } else {
    packer.pack_uint8(type);
  }
  for (ByteView field : {name, payload}) {
    packer.pack_bin(static_cast<std::uint32_t>(field.size()));
    // An empty field has no body (and maybe a null data(), which memcpy must not see).
    if (!field.empty()) {
      packer.pack_bin_body(reinterpret_cast<const char*>(field.data()),
                           static_cast<std::uint32_t>(field.size()));
    }
  }
  const auto* data = reinterpret_cast<const std::byte*>(buffer.data());
  return {data, data + buffer.size()};
}

/// Where each field of a well-formed frame lies, computed from the sizes
/// alone (not from the decoder), for the EOF rule and the needed size.
struct FrameLayout {
  std::size_t name_marker;     // offset of the name's bin marker
  std::size_t name_len_bytes;  // 1, 2 or 4
  std::size_t name_data;       // offset of the first name byte
  std::size_t payload_marker;
  std::size_t payload_len_bytes;
  std::size_t payload_data;
  std::size_t total;

  FrameLayout(TypeMarker marker, std::size_t name_size, std::size_t payload_size) {
    name_marker = marker == TypeMarker::Uint8 ? 3 : 2;
    name_len_bytes = bin_header_bytes(name_size) - 1;
    name_data = name_marker + 1 + name_len_bytes;
    payload_marker = name_data + name_size;
    payload_len_bytes = bin_header_bytes(payload_size) - 1;
    payload_data = payload_marker + 1 + payload_len_bytes;
    total = payload_data + payload_size;
  }

  /// tsgo's EOF rule: a prefix of `k` bytes ends inside a field when it cuts
  /// a bin16/bin32 length, or a name or payload that has begun but not ended.
  /// Field boundaries (after 0x93, after the type, after a bin marker, after
  /// a whole length, after a whole name) are not inside.
  bool inside_field(std::size_t k) const {
    const auto strictly_inside = [k](std::size_t begin, std::size_t end) {
      return k > begin && k < end;
    };
    return strictly_inside(name_marker + 1, name_data) ||  // empty for bin8
           strictly_inside(name_data, payload_marker) ||
           strictly_inside(payload_marker + 1, payload_data) ||
           strictly_inside(payload_data, total);
  }

  /// Both lengths are known once the payload's length field is whole.
  bool lengths_known(std::size_t k) const { return k >= payload_data; }
};

}  // namespace spinrpc::test

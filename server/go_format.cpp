#include "server/go_format.h"

#include <charconv>      // std::to_chars
#include <cmath>         // std::fabs
#include <cstdint>       // std::uint8_t
#include <system_error>  // std::errc

namespace spinrpc {
namespace {

constexpr char kHex[] = "0123456789abcdef";

struct Rune {
  char32_t value;
  std::size_t width;  // bytes consumed; 1 with valid == false for an invalid byte
  bool valid;
};

// Decodes one rune as Go's utf8.DecodeRuneInString: overlong forms,
// surrogates and values above U+10FFFF are invalid, one byte at a time.
Rune decode_rune(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<std::uint8_t>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xc0) == 0x80; };
  const std::uint8_t b0 = b(0);
  if (b0 < 0x80) return {b0, 1, true};
  if (b0 >= 0xc2 && b0 <= 0xdf && cont(1)) {
    return {char32_t((b0 & 0x1f) << 6 | (b(1) & 0x3f)), 2, true};
  }
  if (b0 >= 0xe0 && b0 <= 0xef && cont(1) && cont(2)) {
    const char32_t r = (b0 & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
    if (r >= 0x800 && (r < 0xd800 || r > 0xdfff)) return {r, 3, true};
  }
  if (b0 >= 0xf0 && b0 <= 0xf4 && cont(1) && cont(2) && cont(3)) {
    const char32_t r = (b0 & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
    if (r >= 0x10000 && r <= 0x10ffff) return {r, 4, true};
  }
  return {0xfffd, 1, false};
}

// Go's unicode.IsPrint for assigned runes: not Cc, Cf, Co, Zl, Zp, or a
// space other than U+0020. The ranges are Unicode 15's Cf/Co/Z* lists.
bool is_print(char32_t r) {
  if (r < 0x20 || (r >= 0x7f && r <= 0xa0) || r == 0xad) return false;
  if (r < 0x0600) return true;
  struct Range { char32_t lo, hi; };
  static constexpr Range kNonPrinting[] = {
      {0x0600, 0x0605}, {0x061c, 0x061c}, {0x06dd, 0x06dd}, {0x070f, 0x070f},
      {0x0890, 0x0891}, {0x08e2, 0x08e2}, {0x1680, 0x1680}, {0x180e, 0x180e},
      {0x2000, 0x200f}, {0x2028, 0x202f}, {0x205f, 0x2064}, {0x2066, 0x206f},
      {0x3000, 0x3000}, {0xe000, 0xf8ff}, {0xfeff, 0xfeff}, {0xfff9, 0xfffb},
      {0xfffe, 0xffff}, {0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x13430, 0x1343f},
      {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f},
      {0xf0000, 0x10ffff},
  };
  for (const Range& range : kNonPrinting) {
    if (r < range.lo) return true;
    if (r <= range.hi) return false;
  }
  return true;
}

void append_hex(std::string& out, char32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xf];
}

}  // namespace

void append_go_quoted(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const Rune rune = decode_rune(text, i);
    const char32_t r = rune.value;
    if (!rune.valid) {
      out += "\\x";
      append_hex(out, static_cast<std::uint8_t>(text[i]), 2);
    } else if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (is_print(r)) {
      out.append(text.substr(i, rune.width));
    } else {
      switch (r) {
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\v': out += "\\v"; break;
        default:
          if (r < 0x20 || r == 0x7f) {
            out += "\\x";
            append_hex(out, r, 2);
          } else if (r < 0x10000) {
            out += "\\u";
            append_hex(out, r, 4);
          } else {
            out += "\\U";
            append_hex(out, r, 8);
          }
      }
    }
    i += rune.width;
  }
  out += '"';
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<std::uint8_t>(text[i]);
    if (c >= 0x80) {
      const Rune rune = decode_rune(text, i);
      out.append(rune.valid ? text.substr(i, rune.width) : std::string_view("\xef\xbf\xbd"));
      i += rune.width;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          append_hex(out, c, 2);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void append_json_number(std::string& out, double value) {
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool plain = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e21);
  const auto result = plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  if (plain) {
    out += text;
    return;
  }
  // C++ writes "1e-07"; Go trims the exponent to "1e-7" (encoding/json).
  const std::size_t e = text.find('e');
  out += text.substr(0, e + 2);
  std::string_view exponent = text.substr(e + 2);
  while (exponent.size() > 1 && exponent.front() == '0') exponent.remove_prefix(1);
  out += exponent;
}

}  // namespace spinrpc

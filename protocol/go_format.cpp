#include "protocol/go_format.h"

#include <algorithm>     // std::upper_bound
#include <atomic>        // std::atomic
#include <charconv>      // std::to_chars
#include <cmath>         // std::fabs
#include <cstdint>       // std::uint8_t
#include <system_error>  // std::errc

#include <unicode/uchar.h>  // u_charType (ICU)

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

std::atomic<GoUnicodeVersion> unicode_version{GoUnicodeVersion::unicode_15};

struct RuneRange {
  char32_t first, last;
};

// Printable under Go 1.27's Unicode 17 tables, not under ICU 72's Unicode
// 15.0: recorded from a real 7.1 server, sorted.
constexpr RuneRange kPrintableSince15[] = {
#include "protocol/go_printable_unicode17.inc"
};

bool in_ranges(char32_t r) {
  const auto* next = std::upper_bound(std::begin(kPrintableSince15), std::end(kPrintableSince15), r,
                                      [](char32_t v, const RuneRange& range) { return v < range.first; });
  return next != std::begin(kPrintableSince15) && r <= (next - 1)->last;
}

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and
// U+0020; so unassigned runes, Cf, Co, Cs, Zl, Zp and Zs other than U+0020
// are escaped. The categories come from ICU 72, which implements Unicode
// 15.0, the version of the tables in Go 1.26; Go 1.27's Unicode 17 adds the
// recorded ranges. The interop suite checks every scalar value against each
// supported version's server.
bool is_print(char32_t r) {
  if (r == ' ') return true;
  if (unicode_version.load(std::memory_order_relaxed) == GoUnicodeVersion::unicode_17 && in_ranges(r)) {
    return true;
  }
  switch (u_charType(static_cast<UChar32>(r))) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER: case U_OTHER_LETTER:
    case U_NON_SPACING_MARK: case U_ENCLOSING_MARK: case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER: case U_LETTER_NUMBER: case U_OTHER_NUMBER:
    case U_DASH_PUNCTUATION: case U_START_PUNCTUATION: case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION: case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION: case U_FINAL_PUNCTUATION:
    case U_MATH_SYMBOL: case U_CURRENCY_SYMBOL: case U_MODIFIER_SYMBOL: case U_OTHER_SYMBOL:
      return true;
    default:
      return false;
  }
}

void append_hex(std::string& out, char32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xf];
}

}  // namespace

void set_go_unicode_version(GoUnicodeVersion version) noexcept {
  unicode_version.store(version, std::memory_order_relaxed);
}

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
  std::size_t run = 0;  // start of the valid UTF-8 not yet written
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<std::uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Rune rune = decode_rune(text, i);
    if (!rune.valid) {
      append_json_escaped(out, text.substr(run, i - run));
      out += "\xef\xbf\xbd";
      run = i + rune.width;
    }
    i += rune.width;
  }
  append_json_escaped(out, text.substr(run));
  out += '"';
}

void append_json_escaped(std::string& out, std::string_view utf8) {
  // Bytes that need an escape: '"', '\\' and the C0 controls. Everything
  // else, multi-byte sequences included, is copied in runs.
  const char* p = utf8.data();
  const char* const end = p + utf8.size();
  while (p < end) {
    const char* q = p;
    while (q < end) {
      const auto c = static_cast<std::uint8_t>(*q);
      if (c < 0x20 || c == '"' || c == '\\') break;
      ++q;
    }
    out.append(p, q);
    if (q == end) return;
    const auto c = static_cast<std::uint8_t>(*q);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        append_hex(out, c, 2);
    }
    p = q + 1;
  }
}

std::string_view go_trim_space(std::string_view text) {
  // unicode.IsSpace: the ASCII six, U+0085, U+00A0 and the other White_Space runes.
  const auto is_space = [](char32_t r) {
    switch (r) {
      case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
      case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f:
      case 0x205f: case 0x3000:
        return true;
      default:
        return r >= 0x2000 && r <= 0x200a;
    }
  };
  std::size_t begin = 0;
  while (begin < text.size()) {
    const Rune rune = decode_rune(text, begin);
    if (!rune.valid || !is_space(rune.value)) break;
    begin += rune.width;
  }
  std::size_t end = text.size();
  while (end > begin) {
    // The last rune: back up over at most 3 continuation bytes.
    std::size_t start = end - 1;
    while (start > begin && end - start < 4 && (static_cast<std::uint8_t>(text[start]) & 0xc0) == 0x80) --start;
    const Rune rune = decode_rune(text.substr(0, end), start);
    if (!rune.valid || start + rune.width != end || !is_space(rune.value)) break;
    end = start;
  }
  return text.substr(begin, end - begin);
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

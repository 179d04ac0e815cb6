#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

// Text formatting that matches the Go standard library byte for byte, so that
// spinrpc-server's replies equal tsgo's (docs/PROTOCOL.md#replies-in-detail).
// Hand-written because no JSON library in Debian 12 reproduces Go's choices (no
// HTML escaping, U+FFFD per invalid byte, Go's float notation), and %q has no
// library counterpart; ICU supplies the Unicode categories %q depends on.

namespace spinrpc {

/// The Unicode version of the tables Go's %q follows: that of the Go
/// toolchain the matched server is built with (dialect/api_dialect.h).
enum class GoUnicodeVersion {
  unicode_15,  ///< Go 1.26: ICU 72's tables as they are
  unicode_17,  ///< Go 1.27: ICU 72's plus protocol/go_printable_unicode17.inc
};

/// Sets the tables append_go_quoted uses, for the whole process; chosen once
/// at start-up, before any quoting (the default is unicode_15).
void set_go_unicode_version(GoUnicodeVersion version) noexcept;

/// Appends `text` quoted as Go's strconv.Quote (fmt's %q) does: `"` and `\`
/// escaped, \a \b \f \n \r \t \v, other controls and invalid UTF-8 bytes as
/// \xNN, non-printing runes (unicode.IsPrint false in the tables
/// set_go_unicode_version chose) as \uXXXX or \UXXXXXXXX, printing runes
/// raw. tsgo quotes unknown method names this way.
void append_go_quoted(std::string& out, std::string_view text);

/// Appends `text` as a JSON string the way tsgo's encoder writes it: `"`,
/// `\`, \b \f \n \r \t escaped, other bytes below 0x20 as \u00XX, each
/// invalid UTF-8 byte replaced by U+FFFD, everything else raw (no HTML or
/// U+2028 escaping). Measured against tsgo 7.0.0-dev.20260707.2.
void append_json_string(std::string& out, std::string_view text);

/// Appends the inside of a JSON string (no quotes) with the fewest escapes,
/// as tsgo writes them (docs/ASYNC.md, "Replies and handlers"): `"` and `\` get a
/// backslash, U+0000–U+001F use \b \f \n \r \t or \u00xx (lower-case hex),
/// every other byte is copied. `utf8` must be valid UTF-8 (the JSON-RPC
/// decoder's strings are); append_json_string handles arbitrary bytes.
void append_json_escaped(std::string& out, std::string_view utf8);

/// Go's strings.TrimSpace: strips leading and trailing runes with the
/// Unicode White_Space property (ASCII \t \n \v \f \r space, U+0085,
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
/// An invalid UTF-8 byte is not white space. Returns a view into `text`.
std::string_view go_trim_space(std::string_view text);

/// Appends a float64 as Go's encoding/json does: the shortest decimal that
/// reads back the same, in plain notation for 1e-6 <= |v| < 1e21 (and 0),
/// otherwise in exponent notation with Go's exponent form ("1e-7", "1e+21").
void append_json_number(std::string& out, double value);

}  // namespace spinrpc

#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

// Text formatting that matches the Go standard library byte for byte, so that
// spinrpc-server's replies equal tsgo's (docs/PROTOCOL.md#replies-in-detail).
// Hand-written because no JSON library in Debian 12 reproduces Go's choices (no
// HTML escaping, U+FFFD per invalid byte, Go's float notation), and %q has no
// library counterpart; ICU supplies the Unicode categories %q depends on.

namespace spinrpc {

/// Appends `text` quoted as Go's strconv.Quote (fmt's %q) does: `"` and `\`
/// escaped, \a \b \f \n \r \t \v, other controls and invalid UTF-8 bytes as
/// \xNN, non-printing runes (unicode.IsPrint false, Unicode 15.0 via ICU)
/// as \uXXXX or \UXXXXXXXX, printing runes raw. tsgo quotes unknown method
/// names this way.
void append_go_quoted(std::string& out, std::string_view text);

/// Appends `text` as a JSON string the way tsgo's encoder writes it: `"`,
/// `\`, \b \f \n \r \t escaped, other bytes below 0x20 as \u00XX, each
/// invalid UTF-8 byte replaced by U+FFFD, everything else raw (no HTML or
/// U+2028 escaping). Measured against tsgo 7.0.0-dev.20260707.2.
void append_json_string(std::string& out, std::string_view text);

/// Appends a float64 as Go's encoding/json does: the shortest decimal that
/// reads back the same, in plain notation for 1e-6 <= |v| < 1e21 (and 0),
/// otherwise in exponent notation with Go's exponent form ("1e-7", "1e+21").
void append_json_number(std::string& out, double value);

}  // namespace spinrpc

// ContentLengthDecoder: tsgo's header rules (docs/ASYNC.md, "Framing") line
// by line, every prefix of a message asks for more with the right EOF
// meaning, any split of a stream gives the same messages, and both limits
// are checked before a byte of the over-long part is buffered.

#include <doctest/doctest.h>

#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "protocol/content_length.h"
#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

using Status = ContentLengthResult::Status;

std::string message(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// Decodes the first message of `input` given whole; returns its body.
std::string body_of(std::string_view input, Limits limits = {}) {
  ContentLengthDecoder decoder(limits);
  const ContentLengthResult r = decoder.decode(as_bytes(input));
  REQUIRE(r.status == Status::message);
  return std::string(as_text(r.body));
}

std::string error_of(std::string_view input, Limits limits = {}) {
  ContentLengthDecoder decoder(limits);
  try {
    decoder.decode(as_bytes(input));
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "(no error)";
}

// Splits `stream` into messages feeding it in chunks of `chunk` bytes (0:
// whole) to a decoder that sees the unconsumed bytes each time, as a
// channel's buffer does.
std::vector<std::string> split(std::string_view stream, std::size_t chunk) {
  ContentLengthDecoder decoder{Limits{}};
  std::vector<std::string> bodies;
  std::size_t begin = 0;
  std::size_t available = chunk == 0 ? stream.size() : 0;
  for (;;) {
    const std::string_view pending = stream.substr(begin, available - begin);
    const ContentLengthResult r = decoder.decode(as_bytes(pending));
    if (r.status == Status::message) {
      REQUIRE(r.body.data() >= as_bytes(stream).data());  // a view, not a copy
      bodies.emplace_back(as_text(r.body));
      begin += r.size_bytes;
      continue;
    }
    CHECK(r.size_bytes > pending.size());
    if (available == stream.size()) {
      CHECK(pending.empty());
      CHECK(r.eof_error.empty());
      return bodies;
    }
    available = std::min(stream.size(), available + (chunk == 0 ? stream.size() : chunk));
  }
}

TEST_CASE("a message is a Content-Length header, a blank line and exactly that many bytes") {
  CHECK(body_of(message(R"({"id":1})")) == R"({"id":1})");
  CHECK(body_of("Content-Length: 3\r\n\r\nabcdef") == "abc");  // the rest is the next message
}

TEST_CASE("every split of a stream, byte by byte included, yields the same messages") {
  const std::vector<std::string> bodies = {"{}", R"({"jsonrpc":"2.0","id":1,"method":"echo","params":"é"})",
                                           std::string(70000, 'x'), "null"};
  std::string stream;
  for (const auto& b : bodies) stream += message(b);
  stream += "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}";
  std::vector<std::string> expected = bodies;
  expected.push_back("{}");
  for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{64},
                            std::size_t{4096}, std::size_t{0}}) {
    CAPTURE(chunk);
    CHECK(split(stream, chunk) == expected);
  }
}

TEST_CASE("every prefix of a message asks for more; EOF there is an error, except before its first byte") {
  const std::string m = message("{\"a\":1}");
  const std::size_t header = m.find("\r\n\r\n") + 4;
  for (std::size_t n = 0; n < m.size(); ++n) {
    CAPTURE(n);
    ContentLengthDecoder decoder{Limits{}};
    const ContentLengthResult r = decoder.decode(as_bytes(std::string_view(m).substr(0, n)));
    REQUIRE(r.status == Status::need_more);
    CHECK(r.size_bytes > n);
    if (n >= header) CHECK(r.size_bytes == m.size());
    if (n == 0) CHECK(r.eof_error.empty());
    else if (n < header) CHECK(r.eof_error == "jsonrpc: read header: unexpected EOF");
    else CHECK(r.eof_error == "jsonrpc: read content: unexpected EOF");
  }
}

TEST_CASE("the value is trimmed of Unicode white space and read as a signed decimal") {
  CHECK(body_of("Content-Length:2\r\n\r\n{}") == "{}");
  CHECK(body_of("Content-Length:\t2\t\r\n\r\n{}") == "{}");
  CHECK(body_of("Content-Length: \xc2\xa0" "2\xe3\x80\x80\r\n\r\n{}") == "{}");    // NBSP, U+3000
  CHECK(body_of("Content-Length: \xe2\x80\x8a\xc2\x85+0002\r\n\r\n{}") == "{}");  // U+200A, U+0085, sign, zeros
  CHECK(body_of("Content-Length: 2\n\r\n{}") == "{}");                            // a bare LF line
}

TEST_CASE("only the byte-exact name counts; the last one wins; other headers are ignored") {
  CHECK(body_of("Content-Length: 5\r\nContent-Length: 2\r\n\r\n{}") == "{}");
  CHECK(body_of("content-length: 9\r\nX: y\r\n: empty name\r\nContent-Length: 2\r\n\r\n{}") == "{}");
  CHECK(error_of("content-length: 2\r\n\r\n{}") == "jsonrpc: no content length");
  CHECK(error_of("CONTENT-LENGTH: 2\r\n\r\n{}") == "jsonrpc: no content length");
  CHECK(error_of("Content-Length : 2\r\n\r\n{}") == "jsonrpc: no content length");
  CHECK(error_of(std::string("N\0ul: 1\r\n\r\n", 11)) == "jsonrpc: no content length");
}

TEST_CASE("malformed headers fail with tsgo's text") {
  CHECK(error_of("Garbage\r\n") == R"(jsonrpc: invalid header: "Garbage\r\n")");
  CHECK(error_of("\n") == R"(jsonrpc: invalid header: "\n")");
  CHECK(error_of("Content-Length: 2\n\n{}") == R"(jsonrpc: invalid header: "\n")");
  CHECK(error_of("\xff\x01\x7f\t\xc3\xa9\xe2\x80\xa8 x\r\n") ==
        R"(jsonrpc: invalid header: "\xff\x01\x7f\té\u2028 x\r\n")");
  CHECK(error_of("\r\n") == "jsonrpc: no content length");
  CHECK(error_of("Content-Length: 0\r\n\r\n") == "jsonrpc: no content length");
  CHECK(error_of("Content-Length: -0\r\n\r\n") == "jsonrpc: no content length");
  CHECK(error_of("Content-Length: 2\r\nContent-Length: x\r\n\r\n{}") ==
        R"(jsonrpc: invalid content length: parse error: strconv.ParseInt: parsing "x": invalid syntax)");
}

TEST_CASE("Content-Length values tsgo refuses, with its strconv text") {
  const auto parse_error = [](std::string_view quoted, std::string_view why) {
    return "jsonrpc: invalid content length: parse error: strconv.ParseInt: parsing " + std::string(quoted) +
           ": " + std::string(why);
  };
  CHECK(error_of("Content-Length: 0x33\r\n") == parse_error(R"("0x33")", "invalid syntax"));
  CHECK(error_of("Content-Length: \r\n") == parse_error(R"("")", "invalid syntax"));
  CHECK(error_of("Content-Length: +\r\n") == parse_error(R"("+")", "invalid syntax"));
  CHECK(error_of("Content-Length: 5\r1\r\n") == parse_error(R"("5\r1")", "invalid syntax"));
  CHECK(error_of("Content-Length: 1_0\r\n") == parse_error(R"("1_0")", "invalid syntax"));
  CHECK(error_of("Content-Length: 1.0\r\n") == parse_error(R"("1.0")", "invalid syntax"));
  CHECK(error_of("Content-Length: 1e3\r\n") == parse_error(R"("1e3")", "invalid syntax"));
  CHECK(error_of("Content-Length: 5 1\r\n") == parse_error(R"("5 1")", "invalid syntax"));
  CHECK(error_of("Content-Length: \xef\xbc\x95" "1\r\n") == parse_error("\"\xef\xbc\x95" "1\"", "invalid syntax"));
  CHECK(error_of("Content-Length: 9223372036854775808\r\n") ==
        parse_error(R"("9223372036854775808")", "value out of range"));
  CHECK(error_of("Content-Length: -9223372036854775809\r\n") ==
        parse_error(R"("-9223372036854775809")", "value out of range"));
  // ParseUint stops at the digit that overflows uint64, before a later bad byte.
  CHECK(error_of("Content-Length: 99999999999999999999x\r\n") ==
        parse_error(R"("99999999999999999999x")", "value out of range"));
  CHECK(error_of("Content-Length: 9223372036854775808x\r\n") ==
        parse_error(R"("9223372036854775808x")", "invalid syntax"));
  CHECK(error_of("Content-Length: -5\r\n") == "jsonrpc: invalid content length: negative value -5");
  CHECK(error_of("Content-Length: -0005\r\n") == "jsonrpc: invalid content length: negative value -5");
  CHECK(error_of("Content-Length: -9223372036854775808\r\n") ==
        "jsonrpc: invalid content length: negative value -9223372036854775808");
}

TEST_CASE("the body limit is checked when the header block ends, before any body byte") {
  Limits limits;
  limits.max_message_bytes = 100;
  CHECK(body_of(message(std::string(100, ' ')), limits).size() == 100);
  CHECK(error_of("Content-Length: 101\r\n\r\n", limits) ==
        "jsonrpc: message of 101 bytes exceeds the limit of 100 bytes (--max-message-bytes)");
  CHECK(error_of("Content-Length: 9223372036854775807\r\n\r\n") ==
        "jsonrpc: message of 9223372036854775807 bytes exceeds the limit of 268435456 bytes (--max-message-bytes)");
}

TEST_CASE("the header block is bounded before its line ends") {
  Limits limits;
  limits.max_header_bytes = 64;
  const std::string long_line = "X-Padding: " + std::string(40, 'p') + "\r\n";
  CHECK(body_of(long_line + "Content-Length: 2\r\n\r\n{}", Limits{}) == "{}");
  CHECK(error_of(long_line + "Content-Length: 2\r\n\r\n{}", limits) ==
        "jsonrpc: header block exceeds the limit of 64 bytes");
  // No LF yet: refused as soon as the limit is reached, not when the line ends.
  CHECK(error_of(std::string(64, 'a'), limits) == "jsonrpc: header block exceeds the limit of 64 bytes");
  CHECK_NOTHROW(ContentLengthDecoder(limits).decode(as_bytes(std::string(63, 'a'))));
  // tsgo accepts a 128 KiB header line; a raised limit does too.
  limits.max_header_bytes = 256 << 10;
  CHECK(body_of("X: " + std::string(128 << 10, 'v') + "\r\nContent-Length: 2\r\n\r\n{}", limits) == "{}");
}

TEST_CASE("the writer emits only Content-Length") {
  std::string out;
  append_content_length_header(out, 51);
  CHECK(out == "Content-Length: 51\r\n\r\n");
}

}  // namespace
}  // namespace spinrpc

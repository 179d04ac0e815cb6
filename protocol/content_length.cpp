#include "protocol/content_length.h"

#include <cstring>  // std::memchr

#include "protocol/go_format.h"
#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

constexpr std::string_view kContentLength = "Content-Length";
constexpr std::string_view kEofInHeader = "jsonrpc: read header: unexpected EOF";
constexpr std::string_view kEofInBody = "jsonrpc: read content: unexpected EOF";

[[noreturn]] void fail_length_syntax(std::string_view value, const char* why) {
  std::string message = "jsonrpc: invalid content length: parse error: strconv.ParseInt: parsing ";
  append_go_quoted(message, value);
  message += ": ";
  message += why;
  throw ProtocolError(message);
}

// strconv.ParseInt(value, 10, 64), with its two errors; Go stops at the
// first digit that overflows, so a later bad byte is never seen.
std::int64_t parse_int64(std::string_view value) {
  std::string_view digits = value;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) fail_length_syntax(value, "invalid syntax");
  // Go's ParseUint runs first, over uint64: a non-digit is a syntax error
  // unless the uint64 overflowed before it; then ParseInt checks the sign's range.
  constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;
  std::uint64_t magnitude = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') fail_length_syntax(value, "invalid syntax");
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) fail_length_syntax(value, "value out of range");
    magnitude = magnitude * 10 + digit;
  }
  if (negative ? magnitude > kMaxMagnitude : magnitude >= kMaxMagnitude) {
    fail_length_syntax(value, "value out of range");
  }
  return negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
}

}  // namespace

void ContentLengthDecoder::header_line(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    std::string message = "jsonrpc: invalid header: ";
    append_go_quoted(message, line);
    throw ProtocolError(message);
  }
  // Only the byte-exact name counts; every other header is ignored.
  if (line.substr(0, colon) != kContentLength) return;
  const std::int64_t length = parse_int64(go_trim_space(line.substr(colon + 1)));
  if (length < 0) {
    throw ProtocolError("jsonrpc: invalid content length: negative value " + std::to_string(length));
  }
  length_ = length;
}

ContentLengthResult ContentLengthDecoder::decode(ByteView input) {
  const std::string_view text = as_text(input);
  while (body_begin_ == 0) {
    const void* lf = text.size() > scanned_
                         ? std::memchr(text.data() + scanned_, '\n', text.size() - scanned_)
                         : nullptr;
    if (lf == nullptr) {
      // The line is incomplete: bound it before more of it is buffered.
      if (text.size() >= limits_.max_header_bytes) {
        throw ProtocolError("jsonrpc: header block exceeds the limit of " +
                            std::to_string(limits_.max_header_bytes) + " bytes");
      }
      return {ContentLengthResult::Status::need_more, {}, text.size() + 1,
              text.empty() ? std::string_view{} : kEofInHeader};
    }
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(lf) - text.data()) + 1;
    if (end > limits_.max_header_bytes) {
      throw ProtocolError("jsonrpc: header block exceeds the limit of " +
                          std::to_string(limits_.max_header_bytes) + " bytes");
    }
    const std::string_view line = text.substr(scanned_, end - scanned_);
    scanned_ = end;
    if (line == "\r\n") {
      if (length_ == 0) throw ProtocolError("jsonrpc: no content length");
      const auto length = static_cast<std::uint64_t>(length_);
      if (length > limits_.max_message_bytes) {
        throw ProtocolError("jsonrpc: message of " + std::to_string(length) +
                            " bytes exceeds the limit of " +
                            std::to_string(limits_.max_message_bytes) + " bytes (--max-message-bytes)");
      }
      body_begin_ = end;
      break;
    }
    header_line(line);
  }
  const std::size_t total = body_begin_ + static_cast<std::size_t>(length_);
  if (input.size() < total) {
    return {ContentLengthResult::Status::need_more, {}, total,
            kEofInBody};
  }
  const ByteView body = input.subspan(body_begin_, total - body_begin_);
  reset();
  return {ContentLengthResult::Status::message, body, total, {}};
}

void append_content_length_header(std::string& out, std::size_t body_bytes) {
  out += "Content-Length: ";
  out += std::to_string(body_bytes);
  out += "\r\n\r\n";
}

}  // namespace spinrpc

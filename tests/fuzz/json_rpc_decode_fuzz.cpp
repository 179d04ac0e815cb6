// Fuzz target: the async decode path on its own: protocol/content_length.h
// splitting a byte stream into bodies and protocol/json_rpc.h decoding each
// (docs/ASYNC.md, "Framing", "Bodies").
//
// For each input:
//  1. The stream is split in one pass and again fed at seeded random split
//     points into a growing buffer; both must give the same bodies and the
//     same final outcome (an error's text, or the EOF meaning).
//  2. Every body is decoded. Only ProtocolError may be thrown. A decoded
//     message's params and result are valid JSON to an independent parser
//     (nlohmann-json) and a fixed point of canonicalize().
//  3. The body decoded from a copy without padding gives the same message.
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uint64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <nlohmann/json.hpp>

#include "fuzz_check.h"
#include "json_oracle.h"
#include "protocol/content_length.h"
#include "protocol/json_rpc.h"
#include "protocol/protocol_error.h"
#include "tests/support/splitmix64.h"

namespace {

using spinrpc::ByteView;
using spinrpc::ContentLengthDecoder;
using spinrpc::ContentLengthResult;
using spinrpc::JsonRpcDecoder;
using spinrpc::JsonRpcMessage;
using spinrpc::Limits;
using spinrpc::ProtocolError;
using spinrpc::fuzz::valid_json;

struct Split {
  std::vector<std::string> bodies;
  std::string end;  // error text, or "eof:" + eof_error
};

Limits small_limits() {
  Limits limits;
  limits.max_message_bytes = 2048;
  limits.max_header_bytes = 256;
  return limits;
}

Split split(std::string_view stream, std::uint64_t seed, bool random_cuts) {
  spinrpc::test::SplitMix64 rng{seed};
  ContentLengthDecoder decoder(small_limits());
  Split out;
  std::size_t begin = 0;
  std::size_t available = random_cuts ? 0 : stream.size();
  try {
    for (;;) {
      const std::string_view pending = stream.substr(begin, available - begin);
      const ContentLengthResult r = decoder.decode(spinrpc::as_bytes(pending));
      if (r.status == ContentLengthResult::Status::message) {
        FUZZ_CHECK(r.size_bytes <= pending.size(), "a message lies inside its input");
        out.bodies.emplace_back(spinrpc::as_text(r.body));
        begin += r.size_bytes;
        continue;
      }
      FUZZ_CHECK(r.size_bytes > pending.size(), "NeedMore asks for more than it has");
      if (available == stream.size()) {
        out.end = "eof:" + std::string(r.eof_error);
        FUZZ_CHECK(pending.empty() == r.eof_error.empty(), "EOF is clean exactly between messages");
        return out;
      }
      available = std::min(stream.size(), available + 1 + static_cast<std::size_t>(rng.next() % 64));
    }
  } catch (const ProtocolError& e) {
    out.end = e.what();
    FUZZ_CHECK(out.end.find('\n') == std::string::npos, "one-line error");
  }
  return out;
}

void check_message(JsonRpcDecoder& decoder, const JsonRpcMessage& m) {
  for (std::string_view json : {m.params, m.result}) {
    if (json.empty()) continue;
    FUZZ_CHECK(valid_json(json), "output form is valid JSON");
    const std::string copy(json);
    FUZZ_CHECK(decoder.canonicalize(copy) == copy, "output form is a fixed point");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view stream(reinterpret_cast<const char*>(data), size);
  std::uint64_t seed = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 0x100000001b3ULL;

  const Split whole = split(stream, seed, false);
  const Split cut = split(stream, seed, true);
  FUZZ_CHECK(whole.bodies == cut.bodies && whole.end == cut.end, "any split gives the same messages");

  JsonRpcDecoder decoder, other;
  // The input itself as one body too, so the JSON rules are fuzzed directly.
  std::vector<std::string> bodies = whole.bodies;
  bodies.emplace_back(stream);
  for (const std::string& body : bodies) {
    std::string first_error, second_error;
    std::string params, result;
    try {
      const JsonRpcMessage& m = decoder.decode(spinrpc::as_bytes(body));
      params = m.params;
      result = m.result;
      check_message(other, m);
    } catch (const ProtocolError& e) {
      first_error = e.what();
      FUZZ_CHECK(first_error.find('\n') == std::string::npos, "one-line error");
    }
    // The same body with the start of another message after it, as in a
    // read buffer: the bytes after a body must change nothing.
    const std::string followed = body + "[[[[\"{ Content-Length: 9\r\n\r\n";
    try {
      const JsonRpcMessage& m = decoder.decode(spinrpc::as_bytes(std::string_view(followed).substr(0, body.size())));
      FUZZ_CHECK(first_error.empty() && m.params == params && m.result == result, "followed == alone");
    } catch (const ProtocolError& e) {
      second_error = e.what();
      FUZZ_CHECK(first_error == second_error, "the same error followed and alone");
    }
  }
  return 0;
}

// JsonRpcDecoder and the reply writers: tsgo's strict rules for incoming
// bodies and its output form (docs/ASYNC.md, "Bodies", "Replies and handlers"). The
// output bytes are checked against nlohmann-json, an independent parser and
// printer: random documents written with random white space and escapes
// must come back as nlohmann's compact dump of the same value, with every
// number token as written.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <random>       // std::mt19937_64
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "protocol/content_length.h"
#include "protocol/json_rpc.h"
#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

using Kind = JsonRpcMessage::Kind;

std::string error_of(std::string_view body) {
  JsonRpcDecoder decoder;
  try {
    decoder.decode(as_bytes(body));
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string params_of(std::string_view params_json) {
  JsonRpcDecoder decoder;
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"echo","params":)" + std::string(params_json) + "}";
  return std::string(decoder.decode(as_bytes(body)).params);
}

TEST_CASE("section 4's examples come back byte for byte") {
  CHECK(params_of("{\r\n \"a\" :\t1 ,\n \"b\" : [ true , false , null ] } ") == R"({"a":1,"b":[true,false,null]})");
  CHECK(params_of(R"("\u003c\u003e\u0026 \/ \u00e9 \u2028\u2029 \u007f\u0080 \uD83D\uDE00")") ==
        "\"<>& / \xc3\xa9 \xe2\x80\xa8\xe2\x80\xa9 \x7f\xc2\x80 \xf0\x9f\x98\x80\"");
  CHECK(params_of(R"("\t\n\r\b\f \u0001\u001f\u0000 \"\\")") == R"("\t\n\r\b\f \u0001\u001f\u0000 \"\\")");
  CHECK(params_of(R"({"b":[1,2],"a":"x"})") == R"({"b":[1,2],"a":"x"})");
  for (std::string_view n : {"1.50e+10", "1E+2", "0.1e-2", "-0", "-0.0e-0", "1e400", "123456789012345678901234567890"}) {
    CHECK(params_of(std::string("[ ") + std::string(n) + " ]") == "[" + std::string(n) + "]");
  }
  CHECK(params_of(R"({"\u0061":"\u00E9"})") == "{\"a\":\"\xc3\xa9\"}");
}

TEST_CASE("compact input in output form is returned as a view of the body") {
  JsonRpcDecoder decoder;
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"hello":"wörld","n":[1,2.5],"e":"\n\"\u0001"}})";
  const JsonRpcMessage& m = decoder.decode(as_bytes(body));
  CHECK(m.params == R"({"hello":"wörld","n":[1,2.5],"e":"\n\"\u0001"})");
  CHECK(m.params.data() == body.data() + body.find("{\"hello"));
  // Not in output form: a rewritten copy.
  const std::string spaced = R"({"jsonrpc":"2.0","id":1,"method":"echo","params": [ 1 ] })";
  const JsonRpcMessage& m2 = decoder.decode(as_bytes(spaced));
  CHECK(m2.params == "[1]");
  CHECK((m2.params.data() < spaced.data() || m2.params.data() >= spaced.data() + spaced.size()));
}

TEST_CASE("classification by id and method") {
  JsonRpcDecoder d;
  CHECK(d.decode(as_bytes("null")).kind == Kind::Ignored);
  CHECK(d.decode(as_bytes(" {} ")).kind == Kind::Ignored);
  const auto& req = d.decode(as_bytes(R"({"jsonrpc":"2.0","id":7,"method":"echo"})"));
  CHECK(req.kind == Kind::Request);
  CHECK(req.params == "null");
  CHECK(d.decode(as_bytes(R"({"method":"echo","id":"x"})")).kind == Kind::Request);
  CHECK(d.decode(as_bytes(R"({"jsonrpc":"2.0","id":1,"method":"","params":1})")).kind == Kind::Response);
  CHECK(d.decode(as_bytes(R"({"jsonrpc":"2.0","ID":1,"method":"echo"})")).kind == Kind::Notification);
  CHECK(d.decode(as_bytes(R"({"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}})")).kind ==
        Kind::Notification);
  CHECK(d.decode(as_bytes(R"({"jsonrpc":"2.0","id":null,"method":null})")).kind == Kind::Ignored);
  const auto& resp = d.decode(as_bytes(R"({"jsonrpc":"2.0","id":"api1","result":{"content": "x"}})"));
  CHECK(resp.kind == Kind::Response);
  CHECK(resp.id.text == "api1");
  CHECK(resp.result == R"({"content":"x"})");
  const auto& err = d.decode(as_bytes(R"({"jsonrpc":"2.0","id":"api2","error":{"code":-32601,"message":"Unhandled method fileExists"}})"));
  CHECK(err.has_error);
  CHECK(err.error_code == -32601);
  CHECK(err.error_message == "Unhandled method fileExists");
  // Unknown members, result or error on a request included, are ignored.
  CHECK(d.decode(as_bytes(R"({"x":[1,{"y":2}],"id":1,"method":"m","result":5,"error":null})")).kind == Kind::Request);
}

TEST_CASE("ids: int32 literals and strings") {
  JsonRpcDecoder d;
  const auto id_of = [&](std::string_view id) {
    const JsonRpcMessage& m = d.decode(as_bytes(R"({"id":)" + std::string(id) + R"(,"method":"m"})"));
    std::string out;
    append_json_rpc_id(out, m.id);
    return out;
  };
  CHECK(id_of("2147483647") == "2147483647");
  CHECK(id_of("-2147483648") == "-2147483648");
  CHECK(id_of("-0") == "0");
  CHECK(id_of(R"("\u00e9/x")") == "\"\xc3\xa9/x\"");
  CHECK(id_of(R"("")") == "0");  // tsgo's D9
  CHECK(error_of(R"({"id":1.5,"method":"m"})") ==
        R"(json: cannot unmarshal JSON number 1.5 into Go int32 within "/id": invalid syntax)");
  CHECK(error_of(R"({"id":1e2,"method":"m"})") ==
        R"(json: cannot unmarshal JSON number 1e2 into Go int32 within "/id": invalid syntax)");
  CHECK(error_of(R"({"id":2147483648,"method":"m"})") ==
        R"(json: cannot unmarshal JSON number 2147483648 into Go int32 within "/id": value out of range)");
  CHECK(error_of(R"({"id":-2147483649,"method":"m"})") ==
        R"(json: cannot unmarshal JSON number -2147483649 into Go int32 within "/id": value out of range)");
  CHECK(error_of(R"({"id":true,"method":"m"})") == R"(json: cannot unmarshal JSON boolean into Go int32 within "/id")");
  CHECK(error_of(R"({"id":[],"method":"m"})") == R"(json: cannot unmarshal JSON array into Go int32 within "/id")");
}

TEST_CASE("envelope members of the wrong type are fatal") {
  CHECK(error_of(R"({"jsonrpc":"1.0","id":1,"method":"m"})") ==
        R"(json: cannot unmarshal JSON string into Go jsonrpc.JSONRPCVersion within "/jsonrpc": invalid JSON-RPC version)");
  CHECK(error_of(R"({"jsonrpc":"2\u002e0","id":1,"method":"m"})").find("invalid JSON-RPC version") != std::string::npos);
  CHECK(error_of(R"({"jsonrpc":2,"id":1,"method":"m"})").find("invalid JSON-RPC version") != std::string::npos);
  CHECK(error_of(R"({"id":1,"method":5})") == R"(json: cannot unmarshal JSON number into Go string within "/method")");
  CHECK(error_of(R"({"id":1,"error":5})") ==
        R"(json: cannot unmarshal JSON number into Go jsonrpc.ResponseError within "/error")");
  CHECK(error_of("[]") == "json: cannot unmarshal JSON array into Go jsonrpc.Message");
  CHECK(error_of(R"([{"id":1,"method":"m"}])") == "json: cannot unmarshal JSON array into Go jsonrpc.Message");
  CHECK(error_of("5") == "json: cannot unmarshal JSON number into Go jsonrpc.Message");
  CHECK(error_of(R"("x")") == "json: cannot unmarshal JSON string into Go jsonrpc.Message");
  CHECK(error_of("true") == "json: cannot unmarshal JSON boolean into Go jsonrpc.Message");
}

TEST_CASE("syntax tsgo's strict decoder refuses") {
  const std::string head = R"({"jsonrpc":"2.0","id":1,"method":"echo","params":)";
  for (std::string_view bad :
       {"{\"a\":1} x", "{\"a\":1}{}", "{\"a\":1,}", "[1,]", "01", "NaN", "'x'", "[1 /* c */]", "tru", "nul",
        "-", "1.", ".5", "1e", "+1", "\"\x01\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\xff\"",
        "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{\"a\":1,\"a\":2}", "{\"a\":{\"b\":1,\"\\u0062\":2}}", "[1 2]",
        "{\"a\" 1}", "\"abc", "[", "{"}) {
    CAPTURE(bad);
    const std::string body = head + std::string(bad) + "}";
    const std::string e = error_of(body);
    CHECK((e.rfind("jsontext: ", 0) == 0 || e.rfind("json: ", 0) == 0));
  }
  CHECK(error_of("\xef\xbb\xbf{}").rfind("jsontext: ", 0) == 0);  // a byte order mark
  CHECK(error_of("").rfind("jsontext: ", 0) == 0);
  CHECK(error_of(R"({"id":1,"id":2})") == R"(jsontext: duplicate object member name "id")");
  // A large object's duplicate is found too (sorted, not pairwise).
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += "\"k" + std::to_string(i) + "\":0,";
  CHECK(error_of(head + many + "\"k3\":1}}") == R"(jsontext: duplicate object member name "k3")");
  CHECK(error_of(head + many + "\"k100\":1}}") == "(no error)");
}

TEST_CASE("depth: 10000 levels counting the envelope, not 10001") {
  const auto nested = [](std::size_t arrays) {
    return R"({"id":1,"method":"echo","params":)" + std::string(arrays, '[') + std::string(arrays, ']') + "}";
  };
  CHECK(error_of(nested(9999)) == "(no error)");
  CHECK(error_of(nested(10000)) == "jsontext: exceeded max depth");
}

TEST_CASE("a body is read from a copy, whatever follows it; views still point into the body") {
  JsonRpcDecoder d;
  for (const std::string& after : {std::string(), std::string(100, 'z'), std::string("[[[[Content-Length: 9\r\n")}) {
    const std::string storage = R"({"id":1,"method":"echo","params":[1,2]})" + after;
    const ByteView body = as_bytes(std::string_view(storage).substr(0, storage.size() - after.size()));
    const JsonRpcMessage& m = d.decode(body);
    CHECK(m.params == "[1,2]");
    CHECK(m.params.data() == storage.data() + storage.find("[1,2]"));
  }
}

TEST_CASE("take_output moves rewritten params out without a copy") {
  JsonRpcDecoder d;
  std::string held;
  held.reserve(64);
  const JsonRpcMessage& m = d.decode(as_bytes(R"({"id":1,"method":"echo","params": [ 1 ]})"));
  const std::string_view params = m.params;
  d.take_output(held);
  d.decode(as_bytes(R"({"id":2,"method":"echo","params": [ 2 ]})"));
  CHECK(params == "[1]");
}

TEST_CASE("canonicalize: handler results in output form") {
  JsonRpcDecoder d;
  const std::string compact = R"({"useCaseSensitiveFileNames":true,"currentDirectory":"/x"})";
  CHECK(d.canonicalize(compact).data() == compact.data());
  CHECK(d.canonicalize(" { \"a\" : \"\\u00e9\" } ") == "{\"a\":\"\xc3\xa9\"}");
  CHECK(d.canonicalize("\"pong\"") == "\"pong\"");
  CHECK(d.canonicalize(" 1.0e5 ") == "1.0e5");
  CHECK(d.canonicalize("null") == "null");
  CHECK_THROWS_AS(d.canonicalize("{\"a\":1} 2"), ProtocolError);
  CHECK_THROWS_AS(d.canonicalize(std::string_view("\x93\xc4\x00", 3)), ProtocolError);
  CHECK_THROWS_AS(d.canonicalize(""), ProtocolError);
}

TEST_CASE("reply writers: tsgo's member order, compact, Content-Length") {
  JsonRpcId number{JsonRpcId::Type::Number, 5, {}};
  JsonRpcId text{JsonRpcId::Type::String, 0, "a\"b"};
  const auto framed = [](std::string_view body) {
    return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
  };
  std::string out;
  append_json_rpc_result(out, number, "\"pong\"");
  CHECK(out == framed(R"({"jsonrpc":"2.0","id":5,"result":"pong"})"));
  out.clear();
  append_json_rpc_error(out, text, "api: invalid request: unknown API method \"x\"");
  CHECK(out == framed(R"({"jsonrpc":"2.0","id":"a\"b","error":{"code":-32603,"message":"api: invalid request: unknown API method \"x\""}})"));
  out.clear();
  append_json_rpc_request(out, "api1", "readFile", "\"/virtual/probe-cwd/tsconfig.json\"");
  CHECK(out == framed(R"({"jsonrpc":"2.0","id":"api1","method":"readFile","params":"/virtual/probe-cwd/tsconfig.json"})"));
  // Every length matches the body (checked by the framing decoder).
  for (const std::string& m : {out}) {
    ContentLengthDecoder decoder{Limits{}};
    const auto r = decoder.decode(as_bytes(m));
    REQUIRE(r.status == ContentLengthResult::Status::message);
    CHECK(r.size_bytes == m.size());
    CHECK(nlohmann::json::parse(as_text(r.body))["method"] == "readFile");
  }
}

// --- the oracle ---------------------------------------------------------

// Writes a random JSON value twice: `input` with random white space and
// escapes, `expected` compact with nlohmann's string dump (which escapes as
// tsgo does) and number tokens as written.
struct Generator {
  std::mt19937_64 rng;
  std::string input, expected;

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  void ws() {
    static const char* kSpace[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
    input += kSpace[pick(7)];
  }
  std::string random_text() {
    static const std::vector<std::string> kPieces = {"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f",
                                                     "\x7f", "\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "<", "&"};
    std::string s;
    for (std::size_t n = pick(8); n > 0; --n) s += kPieces[pick(kPieces.size())];
    return s;
  }
  void string_value(const std::string& s) {
    expected += nlohmann::json(s).dump();
    input += '"';
    // Escape randomly: \uXXXX for any code point, \/ for '/', else as needed.
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      std::size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      const std::string piece = s.substr(i, len);
      const bool must = c < 0x20 || c == '"' || c == '\\';
      if (must || pick(3) == 0) {
        char32_t cp = c;
        if (len == 2) cp = (c & 0x1f) << 6 | (s[i + 1] & 0x3f);
        if (len == 3) cp = (c & 0x0f) << 12 | (s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
        if (len == 4) cp = (c & 0x07) << 18 | (s[i + 1] & 0x3f) << 12 | (s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f);
        char buf[16];
        if (c == '/' && pick(2) == 0) input += "\\/";
        else if (c == '"' ) input += "\\\"";
        else if (c == '\\' && pick(2) == 0) input += "\\\\";
        else if (cp >= 0x10000) {
          const char32_t v = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04X\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
          input += buf;
        } else {
          std::snprintf(buf, sizeof buf, pick(2) ? "\\u%04x" : "\\u%04X", static_cast<unsigned>(cp));
          input += buf;
        }
      } else {
        input += piece;
      }
      i += len;
    }
    input += '"';
  }
  void value(int depth) {
    ws();
    const std::size_t kind = depth > 4 ? pick(4) : pick(6);
    static const std::vector<std::string> kNumbers = {"0", "-0", "1", "-12", "1.5", "1.50e+10", "1E+2", "0.1e-2",
                                                      "-0.0e-0", "1e400", "123456789012345678901234567890", "2.5"};
    switch (kind) {
      case 0: { const auto& n = kNumbers[pick(kNumbers.size())]; input += n; expected += n; break; }
      case 1: { const char* l = pick(3) == 0 ? "null" : pick(2) ? "true" : "false"; input += l; expected += l; break; }
      case 2: case 3: string_value(random_text()); break;
      case 4: {
        input += '['; expected += '[';
        for (std::size_t n = pick(4), i = 0; i < n; ++i) {
          if (i) { ws(); input += ','; expected += ','; }
          value(depth + 1);
        }
        ws(); input += ']'; expected += ']';
        break;
      }
      default: {
        input += '{'; expected += '{';
        for (std::size_t n = pick(4), i = 0; i < n; ++i) {
          if (i) { ws(); input += ','; expected += ','; }
          ws();
          string_value("k" + std::to_string(i) + random_text());
          ws(); input += ':'; expected += ':';
          value(depth + 1);
        }
        ws(); input += '}'; expected += '}';
      }
    }
    ws();
  }
};

TEST_CASE("oracle: random documents come back as nlohmann's compact form, numbers as written") {
  Generator g{std::mt19937_64(12), {}, {}};
  JsonRpcDecoder decoder;
  for (int round = 0; round < 3000; ++round) {
    g.input.clear();
    g.expected.clear();
    g.value(0);
    CAPTURE(g.input);
    const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"echo","params":)" + g.input + "}";
    const JsonRpcMessage& m = decoder.decode(as_bytes(body));
    CHECK(m.params == g.expected);
    // The same value to an independent parser (numbers that fit a double).
    if (g.input.find("1e400") == std::string::npos) {
      CHECK(nlohmann::json::parse(m.params) == nlohmann::json::parse(g.input));
      CHECK(decoder.canonicalize(m.params) == m.params);  // output form is a fixed point
    }
  }
}

}  // namespace
}  // namespace spinrpc

// go_format: Go's %q, tsgo's JSON strings and Go's float64 notation, each
// byte for byte. Where tsgo can show its own output (the unknown-method
// Error quotes the name with %q; initialize writes --cwd as a JSON string),
// the real tsgo is the oracle; the fixed expectations beside it are Go's
// documented behaviour, so a failure says which side moved.
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "protocol/remote_error.h"
#include "protocol/go_format.h"
#include "tests/support/paths.h"  // tsgo_path

namespace {

using spinrpc::append_go_quoted;
using spinrpc::append_json_number;
using spinrpc::append_json_string;

std::string go_quoted(std::string_view text) {
  std::string out;
  append_go_quoted(out, text);
  return out;
}

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string json_number(double value) {
  std::string out;
  append_json_number(out, value);
  return out;
}

struct QuoteCase {
  std::string text;
  std::string quoted;  // what Go's strconv.Quote returns
};

const std::vector<QuoteCase> kQuoteCases = {
    {"echo2", R"("echo2")"},
    {"a\"b\\c", R"("a\"b\\c")"},
    {"\a\b\f\n\r\t\v", R"("\a\b\f\n\r\t\v")"},
    {"\x01\x1f\x7f", R"("\x01\x1f\x7f")"},
    {"\xff", R"("\xff")"},                          // not UTF-8
    {"\xed\xa0\x80", R"("\xed\xa0\x80")"},          // a surrogate, encoded: not UTF-8 either
    {"\xe2\x82", R"("\xe2\x82")"},                  // a truncated sequence, byte by byte
    {"caf\xc3\xa9 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""},  // printing runes stay raw
    {"\xc2\xad", R"("\u00ad")"},                    // soft hyphen: a format character
    {"\xc2\xa0", R"("\u00a0")"},                    // no-break space: only ASCII space prints
    {"\xcd\xb8", R"("\u0378")"},                    // unassigned in Unicode 15.0
    {"\xee\x80\x80", R"("\ue000")"},                // private use
    {"\xf4\x8f\xbf\xbf", R"("\U0010ffff")"},        // beyond the BMP: \U and 8 digits
};

TEST_CASE("append_go_quoted writes each case as Go's strconv.Quote does") {
  for (const QuoteCase& c : kQuoteCases) {
    CAPTURE(c.quoted);
    CHECK(go_quoted(c.text) == c.quoted);
  }
}

TEST_CASE("append_go_quoted matches the real tsgo's unknown-method Error for every case") {
  spinrpc::SyncRpcChannel tsgo(spinrpc::test::tsgo_path(), {"--api"});
  for (const QuoteCase& c : kQuoteCases) {
    CAPTURE(c.quoted);
    try {
      tsgo.request(c.text, "");
      FAIL("tsgo answered an unknown method");
    } catch (const spinrpc::RemoteError& e) {
      CHECK(std::string(e.what()) == "api: invalid request: unknown API method " + go_quoted(c.text));
    }
  }
  CHECK(tsgo.close() == 0);
}

TEST_CASE("append_json_string appends to what is already there") {
  std::string out = "x=";
  append_json_string(out, "y");
  CHECK(out == R"(x="y")");
}

// Every byte class tsgo's encoder treats specially, in one directory name.
const std::string kAwkwardCwd =
    "/a\"b\\c\b\f\n\r\t\x01\x1f<>&\xe2\x80\xa8\x7f\xff\xc3\xa9";
const std::string kAwkwardCwdJson =
    R"("/a\"b\\c\b\f\n\r\t\u0001\u001f<>&)" "\xe2\x80\xa8\x7f\xef\xbf\xbd\xc3\xa9\"";

TEST_CASE("append_json_string escapes as tsgo does: controls, quote and backslash only; U+FFFD per invalid byte") {
  CHECK(json_string(kAwkwardCwd) == kAwkwardCwdJson);
  CHECK(json_string("") == R"("")");
  CHECK(json_string("\xff\xfe") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");
}

TEST_CASE("append_json_string matches the real tsgo's initialize reply for an awkward --cwd") {
  spinrpc::SyncRpcChannel tsgo(spinrpc::test::tsgo_path(), {"--api", "--cwd", kAwkwardCwd});
  CHECK(tsgo.request("initialize", "null") ==
        R"({"useCaseSensitiveFileNames":true,"currentDirectory":)" + json_string(kAwkwardCwd) + "}");
  CHECK(tsgo.close() == 0);
}

TEST_CASE("append_json_number writes float64 as Go's encoding/json does") {
  CHECK(json_number(0) == "0");
  CHECK(json_number(1) == "1");
  CHECK(json_number(-2.5) == "-2.5");
  CHECK(json_number(0.000771) == "0.000771");
  // Sums of float64 ms keep their rounding, as tsgo's totals do.
  CHECK(json_number(100 / 1e6 + 200 / 1e6) == "0.00030000000000000003");
  CHECK(json_number(0.1 + 0.2) == "0.30000000000000004");
  // Plain notation for 1e-6 <= |v| < 1e21, Go's exponent form outside.
  CHECK(json_number(1e-6) == "0.000001");
  CHECK(json_number(1e-7) == "1e-7");
  CHECK(json_number(1.5e-10) == "1.5e-10");
  CHECK(json_number(1e20) == "100000000000000000000");
  CHECK(json_number(1e21) == "1e+21");
  CHECK(json_number(123456.789) == "123456.789");
}

}  // namespace

#include <simdjson.h>

#include <algorithm>  // std::sort, std::adjacent_find
#include <cmath>      // std::isinf
#include <cstdlib>    // std::strtod
#include <cstring>    // std::memcmp, std::memchr
#include <string>     // std::string, std::to_string
#include <vector>     // std::vector

#include "protocol/go_format.h"
#include "protocol/json_rpc.h"
#include "protocol/protocol_error.h"

namespace spinrpc {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

// A parser that grew past this for one big body is replaced once that body
// is done: On-Demand keeps about 5 bytes per input byte (docs/ASYNC.md, "Limits").
constexpr std::size_t kRetainedParserBytes = std::size_t{16} << 20;
// Up to this many members, duplicate names are looked for as each arrives;
// beyond it, once, by sorting, at the object's end (no quadratic cost).
constexpr std::size_t kLinearDuplicateCheck = 16;

[[noreturn]] void fail(std::string message) { throw ProtocolError(message); }

[[noreturn]] void fail_simdjson(error_code error) {
  switch (error) {
    case simdjson::UTF8_ERROR: fail("jsontext: invalid UTF-8");
    case simdjson::UNESCAPED_CHARS:
      fail("jsontext: invalid character in string (expecting non-control character)");
    case simdjson::STRING_ERROR: fail("jsontext: invalid escape sequence or surrogate pair in string");
    case simdjson::EMPTY: fail("jsontext: unexpected EOF");
    case simdjson::DEPTH_ERROR: fail("jsontext: exceeded max depth");
    case simdjson::MEMALLOC: fail("jsonrpc: out of memory decoding the message");
    default: fail(std::string("jsontext: invalid JSON: ") + simdjson::error_message(error));
  }
}

void check(error_code error) {
  if (error != simdjson::SUCCESS) fail_simdjson(error);
}

template <class T>
T get(simdjson::simdjson_result<T>&& result) {
  T value{};
  check(std::move(result).get(value));
  return value;
}

// value::raw_json_token() cannot fail; document::raw_json_token() can.
std::string_view token_of(std::string_view token) { return token; }
std::string_view token_of(simdjson::simdjson_result<std::string_view>&& token) { return get(std::move(token)); }

std::string_view kind_name(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::string: return "string";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
  }
  return "value";
}

std::string_view trim_trailing_space(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  return token;
}

// RFC 8259's number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool is_json_number(std::string_view t) {
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) { return k < t.size() && t[k] >= '0' && t[k] <= '9'; };
  if (i < t.size() && t[i] == '-') ++i;
  if (!digit(i)) return false;
  if (t[i] == '0') ++i;
  else while (digit(i)) ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == t.size();
}

[[noreturn]] void fail_token(std::string_view token) {
  std::string message = "jsontext: invalid literal or number ";
  append_go_quoted(message, token.substr(0, 32));
  fail(message);
}

}  // namespace

struct JsonRpcDecoder::Impl {
  od::parser parser{};
  std::string padded;        // the body copied with padding, when it has none
  std::string out;           // output-form text that is not a view of the body
  std::string scratch;       // one string's output form, for comparison
  std::vector<std::string_view> keys;     // member names of the open objects
  std::vector<std::string_view> sorted;   // duplicate check of a large object
  JsonRpcMessage message;

  // The value being rewritten. While the output equals the input byte for
  // byte, nothing is written: `expected` is where the next output byte
  // would be in the input. At the first difference the equal prefix is
  // copied to `out` and writing begins.
  bool emit = false;         // false: validate only
  // While not empty: the JSON pointer of the value being walked, whose
  // numbers must fit a Go float64 (error.data).
  std::string float64_pointer;
  bool diverged = false;
  const char* begin = nullptr;
  const char* expected = nullptr;
  const char* input_end = nullptr;

  Impl() {
    out.reserve(64);
    allocate_parser();
  }

  void allocate_parser() {
    parser = od::parser{};
    check(parser.allocate(4096, kMaxDepth + 2));
  }

  // --- the writer -------------------------------------------------------

  void diverge() {
    if (diverged) return;
    diverged = true;
    out.append(begin, expected);
  }

  void put_char(char c) {
    if (!emit) return;
    if (!diverged && expected < input_end && *expected == c) {
      ++expected;
      return;
    }
    diverge();
    out += c;
  }

  // `token` is copied verbatim (numbers, literals); `at` is where it is in the input.
  void put_token(std::string_view token, const char* at) {
    if (!emit) return;
    if (!diverged && at == expected) {
      expected += token.size();
      return;
    }
    diverge();
    out += token;
  }

  // A string whose raw form (opening quote included) starts at `at`.
  void put_string(std::string_view decoded, const char* at) {
    if (!emit) return;
    if (!diverged && at == expected) {
      // Fast path: no backslash in the raw text means no escape, so the
      // raw text is the output form (raw controls were refused already).
      const std::size_t n = decoded.size();
      if (static_cast<std::size_t>(input_end - at) >= n + 2 && at[n + 1] == '"' &&
          std::memchr(at + 1, '\\', n) == nullptr) {
        expected += n + 2;
        return;
      }
      scratch.clear();
      scratch += '"';
      append_json_escaped(scratch, decoded);
      scratch += '"';
      if (static_cast<std::size_t>(input_end - at) >= scratch.size() &&
          std::memcmp(at, scratch.data(), scratch.size()) == 0) {
        expected += scratch.size();
        return;
      }
      diverge();
      out += scratch;
      return;
    }
    diverge();
    out += '"';
    append_json_escaped(out, decoded);
    out += '"';
  }

  // --- the walk ---------------------------------------------------------

  // Go's strconv.ParseFloat: a number past the largest float64 (by more
  // than half a unit in the last place) is out of range; one too small
  // rounds to 0 and is not.
  //
  // These helpers are kept out of walk() (noinline): walk recurses once per
  // level, up to 10000 levels, and a std::string temporary in its frame
  // took those levels past 64 MiB of stack under ASan, where ASan warns on
  // stderr at the throw (CI, async conformance "10000 nested arrays").
  [[gnu::noinline]] void check_float64(std::string_view token) const {
    const std::string text(token);
    if (!std::isinf(std::strtod(text.c_str(), nullptr))) return;
    std::string error = "json: cannot unmarshal JSON number " + text + " into Go float64 within ";
    append_go_quoted(error, float64_pointer);
    fail(error + ": value out of range");
  }

  // A number, true, false or null token as Go reads it: well formed, and
  // inside error.data (float64_pointer set) a number that fits a float64.
  void check_scalar(od::json_type type, std::string_view token) const {
    const bool valid = type == od::json_type::number ? is_json_number(token)
                       : type == od::json_type::boolean ? token == "true" || token == "false"
                                                         : token == "null";
    if (!valid) fail_token(token);
    if (type == od::json_type::number && !float64_pointer.empty()) check_float64(token);
  }

  // One reference token of a JSON pointer (RFC 6901: ~ as ~0, / as ~1).
  [[gnu::noinline]] void push_pointer_name(std::string_view name) {
    float64_pointer += '/';
    for (const char c : name) {
      if (c == '~') float64_pointer += "~0";
      else if (c == '/') float64_pointer += "~1";
      else float64_pointer += c;
    }
  }

  // The pointer of an array's element `index`, the array's own being the
  // first `array_size` bytes.
  [[gnu::noinline]] void push_pointer_index(std::size_t array_size, std::size_t index) {
    float64_pointer.resize(array_size);
    float64_pointer += '/';
    float64_pointer += std::to_string(index);
  }

  void check_duplicates_sorted(std::size_t first) {
    sorted.assign(keys.begin() + static_cast<std::ptrdiff_t>(first), keys.end());
    std::sort(sorted.begin(), sorted.end());
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) fail_duplicate(*dup);
  }

  [[noreturn]] static void fail_duplicate(std::string_view name) {
    std::string message = "jsontext: duplicate object member name ";
    append_json_string(message, name);
    fail(message);
  }

  // Records a member name of the object whose names start at keys[first].
  void add_key(std::size_t first, std::string_view name) {
    if (keys.size() - first < kLinearDuplicateCheck) {
      for (std::size_t i = first; i < keys.size(); ++i) {
        if (keys[i] == name) fail_duplicate(name);
      }
    }
    keys.push_back(name);
  }

  void end_object(std::size_t first) {
    if (keys.size() - first > kLinearDuplicateCheck) check_duplicates_sorted(first);
    keys.resize(first);
  }

  // `depth`: the depth this value has if it is an object or array.
  void walk(od::value value, std::size_t depth) {
    const od::json_type type = get(value.type());
    switch (type) {
      case od::json_type::object: {
        if (depth > kMaxDepth) fail("jsontext: exceeded max depth");
        const char* at = token_of(value.raw_json_token()).data();
        od::object object = get(value.get_object());
        put_token("{", at);
        const std::size_t first = keys.size();
        bool comma = false;
        for (auto member : object) {
          od::field field = get(std::move(member));
          if (comma) put_char(',');
          comma = true;
          const char* key_at = field.key().raw() - 1;
          const std::string_view name = get(field.unescaped_key());
          add_key(first, name);
          put_string(name, key_at);
          put_char(':');
          const std::size_t pointer_size = float64_pointer.size();
          if (pointer_size != 0) push_pointer_name(name);
          walk(field.value(), depth + 1);
          if (pointer_size != 0) float64_pointer.resize(pointer_size);
        }
        end_object(first);
        put_char('}');
        return;
      }
      case od::json_type::array: {
        if (depth > kMaxDepth) fail("jsontext: exceeded max depth");
        const char* at = token_of(value.raw_json_token()).data();
        od::array array = get(value.get_array());
        put_token("[", at);
        bool comma = false;
        const std::size_t pointer_size = float64_pointer.size();
        std::size_t index = 0;
        for (auto element : array) {
          od::value item = get(std::move(element));
          if (comma) put_char(',');
          comma = true;
          if (pointer_size != 0) push_pointer_index(pointer_size, index++);
          walk(item, depth + 1);
        }
        if (pointer_size != 0) float64_pointer.resize(pointer_size);
        put_char(']');
        return;
      }
      case od::json_type::string: {
        const char* at = token_of(value.raw_json_token()).data();
        put_string(get(value.get_string()), at);
        return;
      }
      case od::json_type::number:
      case od::json_type::boolean:
      case od::json_type::null: {
        const std::string_view raw = token_of(value.raw_json_token());
        const std::string_view token = trim_trailing_space(raw);
        check_scalar(type, token);
        put_token(token, token.data());
        return;
      }
    }
  }

  // Walks one value in output form; returns where the text is: a view of
  // the input, or (offset in `out`, length) marked by in_out.
  struct Span {
    bool in_out;
    const char* data;
    std::size_t offset;
    std::size_t size;
  };

  Span rewrite(od::value value, std::size_t depth) {
    emit = true;
    diverged = false;
    begin = expected = token_of(value.raw_json_token()).data();
    const std::size_t out_begin = out.size();
    walk(value, depth);
    emit = false;
    if (!diverged) return {false, begin, 0, static_cast<std::size_t>(expected - begin)};
    return {true, nullptr, out_begin, out.size() - out_begin};
  }

  std::string_view view(const Span& span) const {
    return span.in_out ? std::string_view(out).substr(span.offset, span.size)
                       : std::string_view(span.data, span.size);
  }

  void validate(od::value value, std::size_t depth) {
    emit = false;
    walk(value, depth);
  }

  // --- the envelope -----------------------------------------------------

  // A number decoded into a Go int32 at `pointer` ("/id"): Go's errors for
  // a fraction or exponent and for a value out of range.
  std::int32_t go_int32(od::value value, const char* pointer) {
    const std::string_view token = trim_trailing_space(token_of(value.raw_json_token()));
    if (!is_json_number(token)) fail_token(token);
    const auto fail_int = [&](const char* why) {
      fail("json: cannot unmarshal JSON number " + std::string(token) + " into Go int32 within \"" +
           pointer + "\": " + why);
    };
    if (token.find_first_of(".eE") != std::string_view::npos) fail_int("invalid syntax");
    std::int64_t n = 0;
    for (const char c : token.substr(token[0] == '-' ? 1 : 0)) {
      n = n * 10 + (c - '0');
      if (n > std::int64_t{1} << 31) fail_int("value out of range");
    }
    if (token[0] == '-') n = -n;
    if (n > INT32_MAX || n < INT32_MIN) fail_int("value out of range");
    return static_cast<std::int32_t>(n);
  }

  JsonRpcId decode_id(od::value value) {
    const od::json_type type = get(value.type());
    JsonRpcId id;
    switch (type) {
      case od::json_type::null: get(value.is_null()); return id;
      case od::json_type::string:
        id.type = JsonRpcId::Type::String;
        id.text = get(value.get_string());
        return id;
      case od::json_type::number:
        id.type = JsonRpcId::Type::Number;
        id.number = go_int32(value, "/id");
        return id;
      default:
        fail("json: cannot unmarshal JSON " + std::string(kind_name(type)) + " into Go int32 within \"/id\"");
    }
  }

  void decode_error(od::value value, JsonRpcMessage& m) {
    const od::json_type type = get(value.type());
    if (type == od::json_type::null) {
      get(value.is_null());
      return;
    }
    if (type != od::json_type::object) {
      fail("json: cannot unmarshal JSON " + std::string(kind_name(type)) +
           " into Go jsonrpc.ResponseError within \"/error\"");
    }
    m.has_error = true;
    od::object object = get(value.get_object());
    const std::size_t first = keys.size();
    for (auto member : object) {
      od::field field = get(std::move(member));
      const std::string_view name = get(field.unescaped_key());
      add_key(first, name);
      od::value item = field.value();
      const od::json_type item_type = get(item.type());
      if (name == "code" && item_type == od::json_type::number) {
        m.error_code = go_int32(item, "/error/code");
      } else if (name == "code" && item_type == od::json_type::null) {
        get(item.is_null());  // Go leaves the field as it is
      } else if (name == "code") {
        fail("json: cannot unmarshal JSON " + std::string(kind_name(item_type)) +
             " into Go int32 within \"/error/code\"");
      } else if (name == "data") {
        // tsgo decodes data into a Go `any`: every number in it becomes a
        // float64, and one beyond its range ends the session.
        float64_pointer = "/error/data";
        validate(item, 3);
        float64_pointer.clear();
      } else if (name == "message" && item_type == od::json_type::string) {
        m.error_message = get(item.get_string());
      } else if (name == "message" && item_type != od::json_type::null) {
        fail("json: cannot unmarshal JSON " + std::string(kind_name(item_type)) +
             " into Go string within \"/error/message\"");
      } else {
        validate(item, 3);
      }
    }
    end_object(first);
  }

  JsonRpcMessage& decode(std::string_view json) {
    keys.clear();
    out.clear();
    float64_pointer.clear();  // a body that failed inside error.data left it set
    message = JsonRpcMessage{};
    JsonRpcMessage& m = message;
    input_end = json.data() + json.size();
    od::document doc = get(parser.iterate(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING));
    const od::json_type type = get(doc.type());
    if (type == od::json_type::null) {
      const std::string_view token = trim_trailing_space(token_of(doc.raw_json_token()));
      if (token != "null") fail_token(token);
      check_scalar_end(token.data() + token.size());
      return m;
    }
    if (type != od::json_type::object) {
      if (type == od::json_type::array) {
        validate(get(doc.get_value()), 1);
        check_end(doc);
      }
      fail("json: cannot unmarshal JSON " + std::string(kind_name(type)) + " into Go jsonrpc.Message");
    }
    od::object object = get(doc.get_object());
    Span params{false, "null", 0, 4};
    Span result{false, "null", 0, 4};
    for (auto member : object) {
      od::field field = get(std::move(member));
      const std::string_view name = get(field.unescaped_key());
      add_key(0, name);
      od::value value = field.value();
      if (name == "jsonrpc") {
        const od::json_type t = get(value.type());
        const std::string_view token = trim_trailing_space(token_of(value.raw_json_token()));
        validate(value, 2);
        if (t != od::json_type::string || token != "\"2.0\"") {
          fail("json: cannot unmarshal JSON " + std::string(kind_name(t)) +
               " into Go jsonrpc.JSONRPCVersion within \"/jsonrpc\": invalid JSON-RPC version");
        }
      } else if (name == "id") {
        m.id = decode_id(value);
      } else if (name == "method") {
        const od::json_type t = get(value.type());
        if (t == od::json_type::string) {
          m.method = get(value.get_string());
        } else if (t == od::json_type::null) {
          get(value.is_null());
          m.method = {};
        } else {
          fail("json: cannot unmarshal JSON " + std::string(kind_name(t)) + " into Go string within \"/method\"");
        }
      } else if (name == "params") {
        params = rewrite(value, 2);
        m.has_params = true;
      } else if (name == "result") {
        result = rewrite(value, 2);
      } else if (name == "error") {
        decode_error(value, m);
      } else {
        validate(value, 2);
      }
    }
    end_object(0);
    check_end(doc);
    m.params = view(params);
    m.result = view(result);
    const bool has_id = m.id.type != JsonRpcId::Type::None;
    if (has_id) m.kind = m.method.empty() ? JsonRpcMessage::Kind::Response : JsonRpcMessage::Kind::Request;
    else if (!m.method.empty()) m.kind = JsonRpcMessage::Kind::Notification;
    return m;
  }

  // A scalar document ends where its token does; only white space may follow.
  void check_scalar_end(const char* token_end) const {
    for (const char* p = token_end; p < input_end; ++p) {
      if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
        fail("jsontext: invalid character after top-level value");
      }
    }
  }

  // The end of the raw string that starts (with its quote) at `at`.
  static const char* string_end(const char* at) {
    const char* p = at + 1;
    while (*p != '"') p += *p == '\\' ? 2 : 1;
    return p + 1;
  }

  static void check_end(od::document& doc) {
    const auto location = doc.current_location();
    if (location.error() == simdjson::OUT_OF_BOUNDS) return;
    check(location.error());
    fail("jsontext: invalid character after top-level value");
  }

  std::string_view canonicalize(std::string_view json) {
    keys.clear();
    out.clear();
    input_end = json.data() + json.size();
    od::document doc = get(parser.iterate(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING));
    const od::json_type type = get(doc.type());
    Span span{};
    if (type == od::json_type::object || type == od::json_type::array) {
      span = rewrite(get(doc.get_value()), 2);
    } else {
      // A scalar document: simdjson reads it whole; trailing content is its error.
      const std::string_view raw = type == od::json_type::string ? std::string_view{} : token_of(doc.raw_json_token());
      emit = true;
      diverged = false;
      begin = expected = json.data() + (json.find_first_not_of(" \t\r\n") == std::string_view::npos ? 0 : json.find_first_not_of(" \t\r\n"));
      const std::size_t out_begin = out.size();
      if (type == od::json_type::string) {
        put_string(get(doc.get_string()), begin);
        check_scalar_end(string_end(begin));
      } else {
        const std::string_view token = trim_trailing_space(raw);
        check_scalar(type, token);
        put_token(token, token.data());
        check_scalar_end(token.data() + token.size());
      }
      emit = false;
      span = diverged ? Span{true, nullptr, out_begin, out.size() - out_begin}
                      : Span{false, begin, 0, static_cast<std::size_t>(expected - begin)};
      return view(span);
    }
    check_end(doc);
    return view(span);
  }

  // simdjson reads past the end of its input: parse a copy padded with
  // spaces (its capacity kept, so no allocation in steady state).
  std::string_view padded_input(std::string_view json) {
    padded.assign(json);
    padded.resize(json.size() + simdjson::SIMDJSON_PADDING, ' ');
    return std::string_view(padded).substr(0, json.size());
  }

  // Before a parse: memory grown for an earlier big body is given back
  // (not after one: the last message's views point into the parser).
  void before_parse(std::size_t size) {
    if (size <= kRetainedParserBytes && parser.capacity() > kRetainedParserBytes) allocate_parser();
    if (size <= kRetainedParserBytes && padded.capacity() > kRetainedParserBytes) std::string().swap(padded);
  }
};

JsonRpcDecoder::JsonRpcDecoder() : impl_(std::make_unique<Impl>()) {}
JsonRpcDecoder::~JsonRpcDecoder() = default;
JsonRpcDecoder::JsonRpcDecoder(JsonRpcDecoder&&) noexcept = default;
JsonRpcDecoder& JsonRpcDecoder::operator=(JsonRpcDecoder&&) noexcept = default;

const JsonRpcMessage& JsonRpcDecoder::decode(ByteView body) {
  const std::string_view text = as_text(body);
  impl_->before_parse(text.size());
  // Always from a copy padded with spaces, never in place: read in place,
  // simdjson looks at the next message's bytes after the body, so a body
  // that ends early is judged by them, and deep unclosed '[' make
  // On-Demand read outside its index (the server_serve_async fuzz corpus
  // holds both inputs). The copy costs a memcpy of the body, small beside
  // the decode itself.
  const std::string_view json = impl_->padded_input(text);
  JsonRpcMessage& m = impl_->decode(json);
  if (json.data() != text.data()) {
    // Views of the padded copy stand for the same bytes of the body.
    const auto remap = [&](std::string_view& v) {
      if (v.data() >= json.data() && v.data() <= json.data() + json.size()) {
        v = text.substr(static_cast<std::size_t>(v.data() - json.data()), v.size());
      }
    };
    remap(m.params);
    remap(m.result);
  }
  return m;
}

std::string_view JsonRpcDecoder::canonicalize(std::string_view json) {
  impl_->before_parse(json.size());
  const std::string_view input = impl_->padded_input(json);
  const std::string_view result = impl_->canonicalize(input);
  // A view of the padded copy stands for the caller's own text.
  if (result.data() >= input.data() && result.data() <= input.data() + input.size() && input.data() != json.data()) {
    return json.substr(static_cast<std::size_t>(result.data() - input.data()), result.size());
  }
  return result;
}

const JsonRpcMessage& JsonRpcDecoder::decode_result() const noexcept { return impl_->message; }

void JsonRpcDecoder::take_output(std::string& storage) noexcept { impl_->out.swap(storage); }

}  // namespace spinrpc

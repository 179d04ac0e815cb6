#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int32_t, std::int64_t
#include <memory>       // std::unique_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "protocol/frame.h"

namespace spinrpc {

/// A JSON-RPC id as tsgo keeps it (docs/ASYNC.md, "Bodies"): none
/// (absent or null), an int32, or a string. The string "" is kept as tsgo
/// keeps it, as "no string", and so is written as 0.
struct JsonRpcId {
  enum class Type { None, Number, String };
  Type type = Type::None;
  std::int32_t number = 0;  ///< Type::Number
  std::string_view text;    ///< Type::String: the decoded (unescaped) id
};

/// One decoded message body. Every view points into the decoded body or
/// into the decoder's buffers, valid until the decoder's next call, except
/// where JsonRpcDecoder::take_output says otherwise.
struct JsonRpcMessage {
  /// How tsgo classifies a body by its id and method (docs/ASYNC.md).
  enum class Kind {
    Ignored,       ///< `null`, or neither id nor method: dropped
    Request,       ///< id and a non-empty method: exactly one reply
    Response,      ///< id, no method: the answer to one of our requests
    Notification,  ///< method, no id: dropped, never answered
  };
  Kind kind = Kind::Ignored;
  JsonRpcId id;
  std::string_view method;  ///< decoded; empty when absent or null
  /// Request: params as compact JSON in tsgo's output form (numbers as
  /// written, strings re-escaped minimally); "null" when absent or null.
  std::string_view params;
  /// Request: whether a `params` member came (null included).
  bool has_params = false;
  /// Response: the result in the same form ("null" when absent or null).
  std::string_view result;
  /// Response: whether an `error` object came (then `result` is unset).
  bool has_error = false;
  std::int64_t error_code = 0;
  std::string_view error_message;  ///< decoded
};

/// Decodes JSON-RPC bodies with simdjson's On-Demand parser and the strict
/// rules of tsgo's decoder (docs/ASYNC.md, "Bodies"): valid UTF-8 and
/// escapes, no duplicate member names at any depth, depth at most 10000
/// counting the envelope, one object or `null` and nothing after it,
/// `jsonrpc` absent or exactly the bytes "2.0", id absent, null, a string or
/// an int32 literal, method a string or null, error an object or null.
///
/// While it validates, it writes params and result in tsgo's output form.
/// When the input already is in that form (JSON.stringify output is), the
/// views point into the body itself: no copy.
///
/// The walk is recursive: a body nested 10000 deep (the limit) takes 1 to
/// 2 MiB of stack in a release build (measured with `ulimit -s`), several
/// times that under ASan; call it on a thread with at least 4 MiB.
///
/// Throws ProtocolError with a one-line message in the manner of tsgo's
/// (`jsontext: …` for syntax, `json: cannot unmarshal …` for types); the
/// wording is best-effort, the offsets of tsgo's messages are not kept.
class JsonRpcDecoder {
 public:
  /// The deepest nesting accepted, the envelope counting as 1.
  static constexpr std::size_t kMaxDepth = 10000;
  JsonRpcDecoder();
  ~JsonRpcDecoder();
  JsonRpcDecoder(JsonRpcDecoder&&) noexcept;
  JsonRpcDecoder& operator=(JsonRpcDecoder&&) noexcept;

  /// Decodes one body. It is parsed from a copy padded for simdjson, never
  /// in place (the bytes after a body belong to the next message; see
  /// json_rpc_decoder.cpp); the views in the result point into `body`.
  const JsonRpcMessage& decode(ByteView body);

  /// The message the last decode() returned.
  const JsonRpcMessage& decode_result() const noexcept;

  /// Rewrites one JSON value (a handler's result) in tsgo's output form,
  /// under the same rules, at depth 2 (inside a reply envelope). Returns a
  /// view of `json` itself when it already is in that form, else of an
  /// internal buffer, valid until the next call. Throws ProtocolError if
  /// `json` is not exactly one valid JSON value.
  std::string_view canonicalize(std::string_view json);

  /// Swaps the buffer that holds the views of the last decode() that do
  /// not point into the body with `storage`: they then live in `storage`
  /// (its heap block; keep its capacity above 15 so it is never inline) and
  /// the decoder writes into what `storage` held. No copy, no allocation.
  void take_output(std::string& storage) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The id written back: an int32 as decimal, a string JSON-quoted with the
/// fewest escapes, "" and None as 0 (tsgo's D9).
void append_json_rpc_id(std::string& out, const JsonRpcId& id);

/// Appends a whole reply message (header and body) for a successful
/// request: {"jsonrpc":"2.0","id":<id>,"result":<result>}. `result` must be
/// in output form already (JsonRpcDecoder::canonicalize).
void append_json_rpc_result(std::string& out, const JsonRpcId& id, std::string_view result);

/// The same message in three pieces for a gathered write, so a large result
/// is never copied: `head` gets header and `{"jsonrpc":…,"result":`, the
/// result follows, then kJsonRpcResultTail.
void append_json_rpc_result_head(std::string& head, const JsonRpcId& id, std::size_t result_bytes);
inline constexpr std::string_view kJsonRpcResultTail = "}";

/// Appends a whole error reply: {"jsonrpc":"2.0","id":<id>,"error":{"code":
/// -32603,"message":<message>}}. tsgo uses -32603 for every error;
/// `message` may hold any bytes (invalid UTF-8 becomes U+FFFD, as tsgo's).
void append_json_rpc_error(std::string& out, const JsonRpcId& id, std::string_view message);
inline constexpr std::int64_t kJsonRpcInternalError = -32603;

/// Appends a whole request from the server: {"jsonrpc":"2.0","id":"<id>",
/// "method":<method>,"params":<params>}; `params` in output form.
void append_json_rpc_request(std::string& out, std::string_view id, std::string_view method,
                             std::string_view params);

}  // namespace spinrpc

#pragma once

#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint64_t
#include <deque>          // std::deque
#include <optional>       // std::optional
#include <stdexcept>      // std::invalid_argument
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // std::unordered_map
#include <vector>         // std::vector

// 7.1's batchRequests (docs/PROTOCOL.md, "batchRequests"): many Requests in
// one, answered in one reply or in pages that the client fetches with a
// continuation token. The Server runs the items through its handlers; this
// is the wire shape around them: the params, the response entries, the
// pages and the tokens.

namespace spinrpc::detail {

/// The params of one batchRequests Request.
struct BatchParams {
  struct Item {
    std::string method;  ///< "" when the item has none (answered as an unknown method)
    /// The item's params as the client wrote them; std::nullopt when absent.
    std::optional<std::string> params;
  };
  std::vector<Item> requests;
  std::optional<std::string> continuation_token;
  /// maxResponseBytesPerPage; 0 (or below) when absent: the default page.
  long long max_response_bytes_per_page = 0;
};

/// An Error reply for the whole batchRequests Request; what() is its text.
class BatchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Parses `json` (the Request's payload; empty for an async Request without
/// params). Throws BatchError: "api: invalid request: failed to unmarshal
/// *api.BatchRequestsParams: …" for params that are not JSON (a member name
/// twice in one object included) or not of the shape (tsgo's prefix; the
/// rest is ours), and for a maxResponseBytesPerPage number that is not an
/// int64 (a fraction, an exponent, beyond ±2^63) with Go's own text after
/// the prefix. An empty continuationToken is none, as for tsgo.
BatchParams parse_batch_params(std::string_view json);

/// tsgo's default page: 300,000,000 bytes of encoded JSON.
inline constexpr std::size_t kDefaultBatchPageBytes = 300'000'000;

/// The page size to use: the client's maxResponseBytesPerPage when above 0,
/// else the default, and never more than `max_reply_bytes` (the largest
/// reply body this server's frames may carry), so a page always fits both
/// ends' limits.
std::size_t batch_page_limit(long long requested, std::size_t max_reply_bytes) noexcept;

/// Appends one response entry: {"method":M,"result":R} with `result_json`
/// (JSON text) as R.
void append_batch_result(std::string& out, std::string_view method, std::string_view result_json);
/// The same, with `bytes` as a base64 JSON string, as tsgo sends a binary
/// result inside a batch.
void append_batch_binary_result(std::string& out, std::string_view method, std::string_view bytes);
/// Whether `text` is one JSON value (a handler's result must be).
bool is_json(std::string_view text) noexcept;
/// Appends one failed entry: {"method":M,"result":null,"error":E}.
void append_batch_error(std::string& out, std::string_view method, std::string_view error);

/// The pages of the batches a session has started: each reply holds the
/// longest run of entries that fits the page (at least one), and a
/// continuation token when entries remain ("api-session-1-N", a new one for
/// every page, each good once).
class BatchPages {
 public:
  /// The first page of a batch of `entries`.
  std::string first_page(std::vector<std::string> entries, std::size_t page_limit);
  /// The next page of the batch `token` names. Throws BatchError ("api:
  /// client error: invalid batch continuation token") for a token this
  /// session did not hand out or already used.
  std::string next_page(std::string_view token, std::size_t page_limit);

 private:
  std::string page(std::deque<std::string> entries, std::size_t page_limit);

  std::unordered_map<std::string, std::deque<std::string>> pending_;  // token -> entries not sent yet
  std::uint64_t tokens_issued_ = 0;
};

}  // namespace spinrpc::detail

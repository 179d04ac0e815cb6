#include "server/batch_requests.h"

#include <algorithm>  // std::find, std::find_if
#include <charconv>   // std::from_chars

#include <boost/beast/core/detail/base64.hpp>
#include <nlohmann/json.hpp>

#include "protocol/go_format.h"

namespace spinrpc::detail {
namespace {

constexpr std::string_view kUnmarshalError = "api: invalid request: failed to unmarshal *api.BatchRequestsParams: ";
constexpr std::string_view kPageHead = R"({"responses":[)";
constexpr std::string_view kTokenHead = R"(],"continuationToken":)";

[[noreturn]] void bad_params(const std::string& why) { throw BatchError(std::string(kUnmarshalError) + why); }

constexpr std::string_view kPageSizeMember = "maxResponseBytesPerPage";

// Values of the params as the client wrote them, from `json`, already
// parsed as valid JSON with no duplicate member names: nlohmann/json tells
// no value's place in the text, so this walks the text itself.
struct RawValues {
  // Each "requests" item's "params" member, in order (no value for an item
  // without one): tsgo hands an item's handler its params as written (echo
  // returns them so).
  std::vector<std::optional<std::string_view>> item_params;
  // The maxResponseBytesPerPage number as written: Go's decoder reads the
  // literal, and its error quotes it.
  std::string_view page_size;
};

class RawValueFinder {
 public:
  explicit RawValueFinder(std::string_view json) : text_(json) {}

  RawValues find() {
    RawValues found;
    skip_space();
    if (peek() != '{') return found;
    for_each_member([&](const std::string& key) {
      if (key == kPageSizeMember) {
        const std::size_t start = at_;
        skip_value_only();
        found.page_size = text_.substr(start, at_ - start);
        return skip_space();
      }
      if (key != "requests" || peek() != '[') return skip_value();
      for_each_element([&] {
        if (peek() != '{') {
          found.item_params.emplace_back();
          return skip_value();
        }
        std::optional<std::string_view> params;
        for_each_member([&](const std::string& item_key) {
          const std::size_t start = at_;
          skip_value_only();
          if (item_key == "params") params = text_.substr(start, at_ - start);
          skip_space();
        });
        found.item_params.push_back(params);
      });
    });
    return found;
  }

 private:
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) ++at_;
  }
  void skip_string() {
    for (++at_; at_ < text_.size() && text_[at_] != '"'; ++at_) {
      if (text_[at_] == '\\') ++at_;
    }
    ++at_;
  }
  // Leaves at_ just past the value that starts at at_, then past any space.
  void skip_value() {
    skip_value_only();
    skip_space();
  }
  // Leaves at_ just past the value that starts at at_.
  void skip_value_only() {
    if (peek() == '"') {
      skip_string();
    } else if (peek() == '{' || peek() == '[') {
      int depth = 0;
      do {
        const char c = text_[at_];
        if (c == '"') {
          skip_string();
          continue;
        }
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
        ++at_;
      } while (depth > 0 && at_ < text_.size());
    } else {
      while (at_ < text_.size() && std::string_view(",]} \t\n\r").find(text_[at_]) == std::string_view::npos) ++at_;
    }
  }
  template <class F>
  void for_each_member(F&& on_value) {
    ++at_;  // '{'
    skip_space();
    while (peek() == '"') {
      const std::size_t key_start = at_;
      skip_string();
      const std::string key =
          nlohmann::json::parse(text_.substr(key_start, at_ - key_start)).template get<std::string>();
      skip_space();
      ++at_;  // ':'
      skip_space();
      on_value(key);
      if (peek() == ',') {
        ++at_;
        skip_space();
      }
    }
    ++at_;  // '}'
    skip_space();
  }
  template <class F>
  void for_each_element(F&& on_element) {
    ++at_;  // '['
    skip_space();
    while (peek() != ']' && at_ < text_.size()) {
      on_element();
      if (peek() == ',') {
        ++at_;
        skip_space();
      }
    }
    ++at_;  // ']'
    skip_space();
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

// Parses `json`, refusing a member name twice in one object as tsgo's
// decoder does (nlohmann/json would keep the last).
nlohmann::json parse_without_duplicates(std::string_view json) {
  std::vector<std::vector<std::string>> open;  // member names of each object being read
  std::string duplicate;
  const auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open.emplace_back();
    if (event == Event::object_end && !open.empty()) open.pop_back();
    if (event == Event::key && !open.empty() && duplicate.empty()) {
      const std::string& name = parsed.get_ref<const std::string&>();
      std::vector<std::string>& names = open.back();
      if (std::find(names.begin(), names.end(), name) != names.end()) duplicate = name;
      names.push_back(name);
    }
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(json, callback);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number beyond a double's range
    // (1e400), which nlohmann_json cannot hold.
    bad_params(std::string("not JSON: ") + e.what());
  }
  if (!duplicate.empty()) {
    std::string why = "duplicate object member name ";
    append_json_string(why, duplicate);
    bad_params(why);
  }
  return value;
}

// A JSON number `literal` (as written) decoded into a Go int (64 bits) as
// tsgo's decoder (Go's encoding/json/v2) decodes it: digits only, with an
// optional '-' ("invalid syntax" for a fraction or an exponent, even
// 1e3), within int64 ("value out of range"), and the error is Go's text.
// Go words it "cannot unmarshal" or "unable to unmarshal", picked once per
// process at random; this is the first (docs/PROTOCOL.md#batch-differences).
long long go_int_from_json_number(std::string_view literal, std::string_view pointer) {
  const bool negative = literal.starts_with('-');
  const std::string_view digits = literal.substr(negative ? 1 : 0);
  const auto go_error = [&](std::string_view why) {
    return "json: cannot unmarshal JSON number " + std::string(literal) + " into Go int within \"" +
           std::string(pointer) + "\": " + std::string(why);
  };
  if (digits.empty() || std::find_if(digits.begin(), digits.end(), [](char c) { return c < '0' || c > '9'; }) !=
                            digits.end()) {
    bad_params(go_error("invalid syntax"));
  }
  unsigned long long magnitude = 0;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  constexpr unsigned long long kMaxMagnitude = 1ULL << 63;  // -2^63 is an int64, 2^63 is not
  if (result.ec == std::errc::result_out_of_range || magnitude > kMaxMagnitude - (negative ? 0 : 1)) {
    bad_params(go_error("value out of range"));
  }
  return negative ? static_cast<long long>(0ULL - magnitude) : static_cast<long long>(magnitude);
}

}  // namespace

BatchParams parse_batch_params(std::string_view json) {
  const nlohmann::json value = parse_without_duplicates(json);
  BatchParams params;
  if (value.is_null()) return params;
  if (!value.is_object()) bad_params("params must be an object, not " + std::string(value.type_name()));
  const RawValues raw = RawValueFinder(json).find();
  if (const auto requests = value.find("requests"); requests != value.end() && !requests->is_null()) {
    if (!requests->is_array()) bad_params("/requests must be an array, not " + std::string(requests->type_name()));
    for (std::size_t i = 0; i < requests->size(); ++i) {
      const nlohmann::json& item = (*requests)[i];
      if (!item.is_object()) {
        bad_params("/requests/" + std::to_string(i) + " must be an object, not " + item.type_name());
      }
      BatchParams::Item parsed;
      if (const auto method = item.find("method"); method != item.end() && !method->is_null()) {
        if (!method->is_string()) {
          bad_params("/requests/" + std::to_string(i) + "/method must be a string, not " + method->type_name());
        }
        parsed.method = method->get<std::string>();
      }
      if (i < raw.item_params.size() && raw.item_params[i]) parsed.params = std::string(*raw.item_params[i]);
      params.requests.push_back(std::move(parsed));
    }
  }
  // tsgo takes an empty token for none.
  if (const auto token = value.find("continuationToken"); token != value.end() && !token->is_null()) {
    if (!token->is_string()) bad_params("/continuationToken must be a string, not " + std::string(token->type_name()));
    if (!token->get_ref<const std::string&>().empty()) params.continuation_token = token->get<std::string>();
  }
  if (const auto page = value.find(kPageSizeMember); page != value.end() && !page->is_null()) {
    if (!page->is_number()) {
      bad_params("/maxResponseBytesPerPage must be an integer, not " + std::string(page->type_name()));
    }
    params.max_response_bytes_per_page = go_int_from_json_number(raw.page_size, "/maxResponseBytesPerPage");
  }
  return params;
}

std::size_t batch_page_limit(long long requested, std::size_t max_reply_bytes) noexcept {
  const std::size_t wanted = requested > 0 ? static_cast<std::size_t>(requested) : kDefaultBatchPageBytes;
  return std::min(wanted, max_reply_bytes);
}

void append_batch_result(std::string& out, std::string_view method, std::string_view result_json) {
  out += R"({"method":)";
  append_json_string(out, method);
  out += R"(,"result":)";
  out += result_json.empty() ? std::string_view("null") : result_json;
  out += '}';
}

void append_batch_binary_result(std::string& out, std::string_view method, std::string_view bytes) {
  namespace base64 = boost::beast::detail::base64;
  out += R"({"method":)";
  append_json_string(out, method);
  out += R"(,"result":")";
  const std::size_t at = out.size();
  out.resize(at + base64::encoded_size(bytes.size()));
  out.resize(at + base64::encode(out.data() + at, bytes.data(), bytes.size()));
  out += "\"}";
}

bool is_json(std::string_view text) noexcept { return nlohmann::json::accept(text); }

void append_batch_error(std::string& out, std::string_view method, std::string_view error) {
  out += R"({"method":)";
  append_json_string(out, method);
  out += R"(,"result":null,"error":)";
  append_json_string(out, error);
  out += '}';
}

std::string BatchPages::first_page(std::vector<std::string> entries, std::size_t page_limit) {
  return page(std::deque<std::string>(std::make_move_iterator(entries.begin()),
                                      std::make_move_iterator(entries.end())),
              page_limit);
}

std::string BatchPages::next_page(std::string_view token, std::size_t page_limit) {
  const auto found = pending_.find(std::string(token));
  if (found == pending_.end()) throw BatchError("api: client error: invalid batch continuation token");
  std::deque<std::string> entries = std::move(found->second);
  pending_.erase(found);
  return page(std::move(entries), page_limit);
}

// tsgo's rule, measured against its 7.1 server: everything left when it all
// fits in the page without a token; else the longest run (at least one
// entry) that fits with the token the page then carries.
std::string BatchPages::page(std::deque<std::string> entries, std::size_t page_limit) {
  std::size_t all = kPageHead.size() + 2;  // "]}"
  for (std::size_t i = 0; i < entries.size(); ++i) all += entries[i].size() + (i > 0 ? 1 : 0);
  std::size_t count = entries.size();
  std::string token;
  if (all > page_limit && entries.size() > 1) {
    token = "api-session-1-" + std::to_string(tokens_issued_ + 1);
    const std::size_t fixed = kPageHead.size() + kTokenHead.size() + token.size() + 3;  // quotes and "}"
    std::size_t size = fixed + entries[0].size();
    count = 1;
    while (count + 1 < entries.size() && size + 1 + entries[count].size() <= page_limit) {
      size += 1 + entries[count].size();
      ++count;
    }
  }
  std::string out(kPageHead);
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += ',';
    out += entries[i];
  }
  if (count == entries.size()) {
    out += "]}";
    return out;
  }
  ++tokens_issued_;
  out += kTokenHead;
  append_json_string(out, token);
  out += '}';
  entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(count));
  pending_.emplace(std::move(token), std::move(entries));
  return out;
}

}  // namespace spinrpc::detail

#include <charconv>  // std::to_chars

#include "protocol/content_length.h"
#include "protocol/go_format.h"
#include "protocol/json_rpc.h"

namespace spinrpc {
namespace {

constexpr std::string_view kVersionAndId = R"({"jsonrpc":"2.0","id":)";

std::size_t id_bytes(const JsonRpcId& id, std::string& scratch) {
  scratch.clear();
  append_json_rpc_id(scratch, id);
  return scratch.size();
}

}  // namespace

void append_json_rpc_id(std::string& out, const JsonRpcId& id) {
  if (id.type == JsonRpcId::Type::String && !id.text.empty()) {
    out += '"';
    append_json_escaped(out, id.text);
    out += '"';
    return;
  }
  char digits[16];
  const std::int32_t n = id.type == JsonRpcId::Type::Number ? id.number : 0;
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

void append_json_rpc_result_head(std::string& head, const JsonRpcId& id, std::size_t result_bytes) {
  // The id is written twice (once to count it) only in the rare string case.
  thread_local std::string id_text;
  const std::size_t body = kVersionAndId.size() + id_bytes(id, id_text) + std::string_view(R"(,"result":)").size() +
                           result_bytes + kJsonRpcResultTail.size();
  append_content_length_header(head, body);
  head += kVersionAndId;
  head += id_text;
  head += R"(,"result":)";
}

void append_json_rpc_result(std::string& out, const JsonRpcId& id, std::string_view result) {
  append_json_rpc_result_head(out, id, result.size());
  out += result;
  out += kJsonRpcResultTail;
}

void append_json_rpc_error(std::string& out, const JsonRpcId& id, std::string_view message) {
  thread_local std::string body;
  body.assign(kVersionAndId);
  append_json_rpc_id(body, id);
  body += R"(,"error":{"code":-32603,"message":)";
  append_json_string(body, message);
  body += "}}";
  append_content_length_header(out, body.size());
  out += body;
}

void append_json_rpc_request(std::string& out, std::string_view id, std::string_view method,
                             std::string_view params) {
  thread_local std::string body;
  body.assign(R"({"jsonrpc":"2.0","id":")");
  append_json_escaped(body, id);
  body += R"(","method":")";
  append_json_escaped(body, method);
  body += R"(","params":)";
  body += params;
  body += '}';
  append_content_length_header(out, body.size());
  out += body;
}

}  // namespace spinrpc

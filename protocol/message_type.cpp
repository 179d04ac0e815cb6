#include "protocol/message_type.h"

namespace spinrpc {

std::string_view to_string(MessageType type) noexcept {
  switch (type) {
    case MessageType::Request: return "Request";
    case MessageType::CallResponse: return "CallResponse";
    case MessageType::CallError: return "CallError";
    case MessageType::Response: return "Response";
    case MessageType::Error: return "Error";
    case MessageType::Call: return "Call";
  }
  return "unknown";
}

}  // namespace spinrpc

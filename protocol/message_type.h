#pragma once

#include <cstdint>      // std::uint8_t
#include <optional>     // std::optional
#include <string_view>  // std::string_view

namespace spinrpc {

/// The second element of every frame. Values and names are the wire
/// protocol's (docs/PROTOCOL.md#message-types); exactly one request is open at a time.
enum class MessageType : std::uint8_t {
  // Sent by the client (the channel that spawned the server):
  Request = 1,       ///< call method <name>; followed by Calls, then one Response or Error
  CallResponse = 2,  ///< result of the server's Call; <name> repeats the Call's name
  CallError = 3,     ///< the client's callback <name> failed; payload is the message

  // Sent by the server (the child):
  Response = 4,  ///< result of the open Request; <name> repeats the method
  Error = 5,     ///< the open Request failed; <name> repeats the method, payload is UTF-8 text
  Call = 6,      ///< invoke the client's callback <name>; answered by CallResponse or CallError
};

/// Maps a wire value to a MessageType; std::nullopt outside 1..6.
constexpr std::optional<MessageType> parse_message_type(std::uint8_t value) noexcept {
  if (value < 1 || value > 6) return std::nullopt;
  return static_cast<MessageType>(value);
}

/// The standard name ("Request", "CallResponse", ...), for messages and logs.
std::string_view to_string(MessageType type) noexcept;

}  // namespace spinrpc

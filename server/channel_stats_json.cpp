#include "server/channel_stats_json.h"

#include <string_view>  // std::string_view
#include <type_traits>  // std::decay_t, std::is_same_v

#include "protocol/go_format.h"

namespace spinrpc {

std::string to_json(const ChannelStats& stats) {
  std::string json;
  append_json(json, stats);
  return json;
}

void append_json(std::string& json, const ChannelStats& s) {
  char separator = '{';
  for_each_stats_field(s, [&](std::string_view name, const auto& value) {
    json += separator;
    separator = ',';
    json += '"';
    json += name;
    json += "\":";
    using Value = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<Value, bool>) {
      json += value ? "true" : "false";
    } else if constexpr (std::is_same_v<Value, std::string_view>) {
      append_json_string(json, value);
    } else {
      json += std::to_string(value);
    }
  });
  json += '}';
}

}  // namespace spinrpc

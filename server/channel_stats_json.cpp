#include "server/channel_stats_json.h"

#include "protocol/go_format.h"

namespace spinrpc {

std::string to_json(const ChannelStats& stats) {
  std::string json;
  append_json(json, stats);
  return json;
}

void append_json(std::string& json, const ChannelStats& s) {
  json += '{';
  const auto key = [&](std::string_view name) {
    json += '"';
    json += name;
    json += "\":";
  };
  for (const ChannelCounter& c : kChannelCounters) {
    key(c.name);
    json += std::to_string(s.*c.member);
    json += ',';
  }
  key("budget_us");
  json += std::to_string(s.budget.count());
  json += ',';
  key("adaptive");
  json += s.adaptive ? "true," : "false,";
  key("spinning");
  json += s.spinning ? "true," : "false,";
  key("budget_reason");
  append_json_string(json, s.budget_reason);
  json += '}';
}

}  // namespace spinrpc

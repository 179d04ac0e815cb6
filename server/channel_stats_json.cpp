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
  const auto text = [&](std::string_view name, std::string_view value) {
    json += ',';
    key(name);
    append_json_string(json, value);
  };
  const auto number = [&](std::string_view name, long long value) {
    json += ',';
    key(name);
    json += std::to_string(value);
  };
  text("placement", s.placement);
  text("placement_setting_reason", s.placement_setting_reason);
  text("placement_mode", s.placement_mode);
  text("placement_decision", s.placement_decision);
  number("free_cycle_ns", static_cast<long long>(s.free_cycle_ns));
  number("occupy_cycle_ns", static_cast<long long>(s.occupy_cycle_ns));
  number("block_cycle_ns", static_cast<long long>(s.block_cycle_ns));
  number("cpu", s.cpu);
  number("occupier_cpu", s.occupier_cpu);
  number("occupier_avoided_cpu", s.occupier_avoided_cpu);
  number("followed_pid", s.followed_pid);
  json += '}';
}

}  // namespace spinrpc

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
  const auto field = [&](const char* name, std::uint64_t value) {
    json += '"';
    json += name;
    json += "\":";
    json += std::to_string(value);
    json += ',';
  };
  field("waits", s.waits);
  field("spin_hits", s.spin_hits);
  field("spin_misses", s.spin_misses);
  field("spin_contended", s.spin_contended);
  field("blocked_while_suspended", s.blocked_while_suspended);
  field("plain_waits", s.plain_waits);
  field("suspensions", s.suspensions);
  field("resumptions", s.resumptions);
  field("spin_us", s.spin_us);
  field("budget_us", static_cast<std::uint64_t>(s.budget.count()));
  json += R"("adaptive":)";
  json += s.adaptive ? "true" : "false";
  json += R"(,"spinning":)";
  json += s.spinning ? "true" : "false";
  json += R"(,"budget_reason":)";
  append_json_string(json, s.budget_reason);
  json += '}';
}

}  // namespace spinrpc

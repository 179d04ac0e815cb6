#include "bench/peers/peers.h"

#include <stdexcept>  // std::runtime_error, std::logic_error
#include <vector>     // std::vector

#include "bench/harness/integrity.h"
#include "bench/harness/payloads.h"
#include "bench/harness/spin_counters.h"

namespace spinrpc::bench {

namespace {

void expect_variant(const SpinCounters& c, Variant v, std::string_view side, std::string_view where) {
  if (c.budget.count() == variant_spin_us(v) && (v == Variant::off || c.adaptive == variant_adaptive(v))) return;
  throw std::runtime_error(std::string(where) + ": the " + std::string(side) + " runs budget " +
                           std::to_string(c.budget.count()) + " µs, adaptive " + (c.adaptive ? "on" : "off") +
                           ", not the variant `" + std::string(variant_name(v)) + "`");
}

}  // namespace

SyncRpcOptions shim_options(Variant v) {
  SyncRpcOptions options;
  options.spin = shim_spin(v);
  return options;
}

void check_variant_and_warm_up(const BenchPlan& plan, SyncRpcChannel& channel, Variant v, std::string_view where) {
  expect_variant(client_spin_counters(channel), v, "client shim", where);
  expect_variant(server_spin_counters(channel), v, "server", where);
  warm_up(channel, plan.warmup_echoes, 8, where);
}

void warm_up(SyncRpcChannel& channel, std::size_t count, std::size_t bytes, std::string_view where) {
  const std::vector<std::vector<std::byte>> payloads = make_payloads(bytes, bytes >= (std::size_t{64} << 10) ? 2 : 16);
  const std::string context = std::string(where) + " (warm-up)";
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<std::byte>& p = payloads[i % payloads.size()];
    check_reply(p, channel.request_bytes("echo", p), context, i);
  }
}

SyncRpcChannel start_spinrpc_server(const BenchPlan& plan, Variant v, std::string_view where) {
  std::vector<std::string> args{"--api"};
  for (std::string& a : server_spin_args(v)) args.push_back(std::move(a));
  SyncRpcChannel channel(plan.server_path, args, shim_options(v));
  check_variant_and_warm_up(plan, channel, v, where);
  return channel;
}

SyncRpcChannel start_tsgo(const BenchPlan& plan, Variant v, std::string_view where) {
  if (!plan.tsgo_path) throw std::logic_error("start_tsgo without a tsgo path");
  SyncRpcChannel channel(*plan.tsgo_path, {"--api"}, shim_options(v));
  expect_variant(client_spin_counters(channel), v, "client shim", where);
  warm_up(channel, plan.warmup_echoes, 8, where);
  return channel;
}

}  // namespace spinrpc::bench

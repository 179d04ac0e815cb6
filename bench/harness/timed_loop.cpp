#include "bench/harness/timed_loop.h"

#include "bench/harness/integrity.h"
#include "bench/harness/registration.h"

namespace spinrpc::bench {

RoundTrip timed_request(SyncRpcChannel& channel, std::string_view method, ByteView payload, ByteView expected,
                        std::string_view benchmark, std::size_t request) {
  RoundTrip rt;
  rt.sent = Measurement::Clock::now();
  const ByteView reply = channel.request_bytes(method, payload);
  rt.replied = Measurement::Clock::now();
  check_reply(expected, reply, benchmark, request);
  return rt;
}

void record_iteration(benchmark::State& state, Measurement& m, Measurement::Clock::duration latency) {
  m.add(latency);
  state.SetIterationTime(seconds(latency));
}

SpinBaseline::SpinBaseline(SyncRpcChannel& channel, bool with_server)
    : server0_(with_server ? server_spin_counters(channel) : SpinCounters{}),
      client0_(client_spin_counters(channel)),
      with_server_(with_server) {}

SpinCounters SpinBaseline::client_since(const SyncRpcChannel& channel) const {
  return client_spin_counters(channel) - client0_;
}

SpinCounters SpinBaseline::server_since(SyncRpcChannel& channel) const {
  return server_spin_counters(channel) - server0_;
}

void SpinBaseline::set_deltas(Measurement& m, SyncRpcChannel& channel) const {
  m.set_client_spin(client_since(channel));
  if (with_server_) m.set_server_spin(server_since(channel));
}

void stop_timed_loop(Measurement& m, SyncRpcChannel& channel, const SpinBaseline& base) {
  m.stop();
  base.set_deltas(m, channel);
}

void publish_and_close(const Measurement& m, benchmark::State& state, const BenchPlan& plan,
                       SyncRpcChannel& channel) {
  m.publish(state, plan);
  channel.close();
}

void timed_echoes(benchmark::State& state, Measurement& m, SyncRpcChannel& channel,
                  const std::vector<std::vector<std::byte>>& payloads, std::string_view benchmark) {
  std::size_t i = 0;
  m.start();
  for (auto _ : state) {
    const std::vector<std::byte>& p = payloads[i % payloads.size()];
    record_iteration(state, m, timed_request(channel, "echo", p, p, benchmark, i).latency());
    ++i;
  }
}

}  // namespace spinrpc::bench

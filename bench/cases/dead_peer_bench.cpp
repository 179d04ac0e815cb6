// BM_DeadPeer: how long a peer's death takes to become a typed error, over
// pipes and over shared memory (docs/SHARED-MEMORY.md, "Liveness"). Each
// iteration spawns a server (spinrpc-bench-server, the shim at defaults)
// and times one death:
//   server_in_request   the server is killed (SIGKILL) 20 ms into a request
//                       that would take 2 s: kill → the request's ChildExited
//   server_between      the server is killed between requests and has
//                       exited: the next request's start → its ChildExited
//   client_waiting      the client process is killed while the server
//                       waits for its next request: kill → the server's exit
// The benchmark's time is those latencies; tests only guard against hangs.
#include <poll.h>          // ::poll, POLLIN
#include <signal.h>        // ::kill, SIGKILL
#include <sys/syscall.h>   // SYS_pidfd_open
#include <sys/wait.h>      // ::waitpid
#include <unistd.h>        // ::fork, ::pipe, ::read, ::write, ::_exit, ::pause

#include <chrono>     // std::chrono
#include <cstddef>    // std::size_t
#include <stdexcept>  // std::runtime_error
#include <string>     // std::string
#include <thread>     // std::thread, std::this_thread::sleep_for

#include "bench/harness/measurement.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/peers/bench_work.h"
#include "bench/peers/peers.h"
#include "bench/cases/workloads.h"
#include "descriptor/unique_fd.h"
#include "stream/peer_closed.h"

namespace spinrpc::bench {

namespace {

using Clock = std::chrono::steady_clock;

enum class Death { server_in_request, server_between, client_waiting };
constexpr Death kDeaths[] = {Death::server_in_request, Death::server_between, Death::client_waiting};

const char* death_name(Death d) {
  switch (d) {
    case Death::server_in_request: return "server_in_request";
    case Death::server_between: return "server_between";
    case Death::client_waiting: return "client_waiting";
  }
  return "?";
}

// A server of ours at the shim's defaults, on the transport asked for,
// warmed up; throws if the channel is not on it.
SyncRpcChannel start_server(const BenchPlan& plan, bool shm, const std::string& where) {
  SyncRpcOptions options;
  options.shared_memory = shm;
  SyncRpcChannel channel(plan.server_path, {"--api"}, options);
  warm_up(channel, 100, 8, where);
  const std::string_view transport = channel.stats().transport;
  if (transport != (shm ? "shared memory" : "descriptor")) {
    throw std::runtime_error(where + ": the channel is on " + std::string(transport));
  }
  return channel;
}

UniqueFd open_pidfd(int pid) {
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) throw std::runtime_error("pidfd_open failed");
  return UniqueFd(static_cast<int>(fd));
}

// Blocks until the process behind `pidfd` has exited (at most 10 s).
void wait_exited(const UniqueFd& pidfd) {
  pollfd p{pidfd.get(), POLLIN, 0};
  if (::poll(&p, 1, 10'000) != 1) throw std::runtime_error("the process did not exit within 10 s");
}

// Runs `request` and returns when it threw PeerClosed (ChildExited is one).
template <class F>
Clock::time_point when_it_fails(F&& request, const std::string& where) {
  try {
    request();
  } catch (const PeerClosed&) {
    return Clock::now();
  }
  throw std::runtime_error(where + ": the request to a dead server succeeded");
}

Clock::duration one_death(const BenchPlan& plan, Death death, bool shm, const std::string& where) {
  if (death == Death::client_waiting) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t client = ::fork();
    if (client < 0) throw std::runtime_error("fork failed");
    if (client == 0) {
      ::close(fds[0]);
      try {
        SyncRpcChannel channel = start_server(plan, shm, where);
        const int pid = channel.pid();
        if (::write(fds[1], &pid, sizeof pid) != sizeof pid) ::_exit(1);
        for (;;) ::pause();
      } catch (...) {
        ::_exit(1);
      }
    }
    ::close(fds[1]);
    int server = 0;
    const bool got = ::read(fds[0], &server, sizeof server) == sizeof server;
    ::close(fds[0]);
    if (!got) {
      ::waitpid(client, nullptr, 0);
      throw std::runtime_error(where + ": the client could not start its server");
    }
    const UniqueFd pidfd = open_pidfd(server);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the server is asleep by now
    const Clock::time_point killed = Clock::now();
    ::kill(client, SIGKILL);
    wait_exited(pidfd);
    const Clock::time_point exited = Clock::now();
    ::waitpid(client, nullptr, 0);
    return exited - killed;
  }
  SyncRpcChannel channel = start_server(plan, shm, where);
  const int pid = channel.pid();
  if (death == Death::server_between) {
    const UniqueFd pidfd = open_pidfd(pid);
    ::kill(pid, SIGKILL);
    wait_exited(pidfd);
    const Clock::time_point start = Clock::now();
    return when_it_fails([&] { channel.request("echo", "12345678"); }, where) - start;
  }
  Clock::time_point killed;
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    killed = Clock::now();
    ::kill(pid, SIGKILL);
  });
  const Clock::time_point failed =
      when_it_fails([&] { channel.request("benchWork", bench_work_request(2'000'000, 8)); }, where);
  killer.join();
  return failed - killed;
}

}  // namespace

void register_dead_peer_benchmarks(const BenchPlan& plan, int round) {
  const std::size_t count = plan.smoke ? 2 : 10;
  for (const Death death : kDeaths) {
    for (const bool shm : {round % 2 == 0, round % 2 != 0}) {
      const std::string name = BenchName("BM_DeadPeer")
                                   .add("death", death_name(death))
                                   .add("transport", shm ? "shm" : "pipes")
                                   .add("count", count)
                                   .add("round", static_cast<std::size_t>(round))
                                   .str();
      register_run(name, count, [&plan, name, death, shm](benchmark::State& state) {
        Measurement m(name, -1, false, static_cast<std::size_t>(state.max_iterations));
        m.start();
        for (auto _ : state) {
          const Clock::duration latency = one_death(plan, death, shm, name);
          state.SetIterationTime(seconds(latency));
          m.add(std::chrono::duration_cast<std::chrono::nanoseconds>(latency));
        }
        m.stop();
        m.publish(state, plan);
      });
    }
  }
}

}  // namespace spinrpc::bench

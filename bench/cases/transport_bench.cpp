// BM_Transport: back-to-back 8-byte echoes through the client shim over each
// of spinrpc-server's transports, under every variant:
//   stdio   spawned behind the shim on two pipes (as BM_Echo)
//   socket  `--pipe PATH`, a Unix domain socket; SyncRpcChannel::connect(Endpoint::pipe(PATH))
//   fifo    `--fifo-in PATH --fifo-out PATH`; SyncRpcChannel::connect(Endpoint::fifos(IN, OUT))
// For socket and fifo this file spawns the server itself (stdin and stdout
// on /dev/null, stderr inherited), with its endpoint in a fresh temp dir that
// is removed afterwards. Closing the channel must end the server with status
// 0 and without its files (it removes the socket or the FIFOs it created);
// anything else fails the run (exit 1), as a broken fixture does.
//
// The server has threads besides the one serving requests: a Boost.Asio
// signal_set watcher (app/shutdown_on_signal.h) and, with --pipe, an Asio
// acceptor that turns further clients away (transport/unix_socket_posix.cpp).
// They must add no wake-up to the round trip. Besides Measurement's counters:
//   srv_aux_threads       server threads other than the main one (tid != pid)
//   srv_aux_thread_runs   how many times those threads were put on a CPU over
//                         the timed loop (third field of schedstat): ~0
//   srv_main_thread_runs  the same for the main thread, for scale and as a
//                         check that the count sees wake-ups (about one per
//                         request when its reads block)
// (-1: unknown, /proc could not be read).
#include <fcntl.h>     // ::open, O_*
#include <stdlib.h>    // ::mkdtemp
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG

#include <array>         // std::array
#include <cerrno>        // errno
#include <chrono>        // std::chrono::milliseconds
#include <csignal>       // SIGKILL
#include <cstdio>        // std::fopen, std::fread, std::fclose
#include <cstring>       // std::strrchr
#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::int64_t
#include <filesystem>    // std::filesystem
#include <map>           // std::map
#include <optional>      // std::optional
#include <stdexcept>     // std::runtime_error
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error, std::error_code
#include <thread>        // std::this_thread::sleep_for
#include <vector>        // std::vector

#include "bench/harness/measurement.h"
#include "bench/harness/payloads.h"
#include "bench/peers/peers.h"
#include "bench/harness/process_cpu.h"
#include "bench/harness/registration.h"
#include "bench/harness/timed_loop.h"
#include "bench/cases/workloads.h"
#include "descriptor/unique_fd.h"
#include "client-shim/child_process.h"
#include "transport/unix_socket_posix.h"

namespace spinrpc::bench {

namespace {

namespace fs = std::filesystem;

enum class Transport { stdio, socket, fifo };

constexpr std::array<Transport, 3> kTransports{Transport::stdio, Transport::socket, Transport::fifo};

std::string_view transport_name(Transport t) noexcept {
  switch (t) {
    case Transport::stdio: return "stdio";
    case Transport::socket: return "socket";
    case Transport::fifo: return "fifo";
  }
  return "?";
}

// How long the server may take to exit once the client has closed.
constexpr std::chrono::milliseconds kExitGrace{5000};

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// A fresh directory (mkdtemp under $TMPDIR or /tmp), removed with whatever
// is left in it when this object goes, however the benchmark ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "spinrpc-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "cannot create a temp dir " + pattern);
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

UniqueFd open_dev_null(int flags) {
  UniqueFd fd(::open("/dev/null", flags | O_CLOEXEC));
  if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open /dev/null");
  return fd;
}

// spinrpc-server over one transport, running `v`, and the shim's channel to
// it, checked and warmed up (check_variant_and_warm_up). Members go in
// reverse order: the channel closes (the server sees EOF), then a server
// still running is killed and reaped, then the temp dir goes.
class TransportPeer {
 public:
  TransportPeer(const BenchPlan& plan, Transport t, Variant v, const std::string& where) : transport_(t) {
    if (t == Transport::stdio) {
      channel_.emplace(start_spinrpc_server(plan, v, where));
      server_pid_ = channel_->pid();
      return;
    }
    dir_.emplace();
    std::vector<std::string> args{"--api"};
    if (t == Transport::socket) {
      const std::string socket = (dir_->path() / "api.sock").string();
      unix_socket_address(socket, "cannot benchmark a socket at");  // the length rule, before spawning
      files_.push_back(socket);
      args.insert(args.end(), {"--pipe", socket});
    } else {
      const std::string to_server = (dir_->path() / "requests").string();
      const std::string from_server = (dir_->path() / "replies").string();
      files_.push_back(to_server);
      files_.push_back(from_server);
      args.insert(args.end(), {"--fifo-in", to_server, "--fifo-out", from_server});
    }
    for (std::string& a : server_spin_args(v)) args.push_back(std::move(a));
    {
      // The server's stdin and stdout: it serves on its endpoint only.
      const UniqueFd in = open_dev_null(O_RDONLY);
      const UniqueFd out = open_dev_null(O_WRONLY);
      child_ = ChildProcess::spawn(plan.server_path, args, in.get(), out.get());
    }
    server_pid_ = child_.pid();
    // connect_timeout (default 5 s) covers the server's start-up.
    const SyncRpcOptions options = shim_options(v);
    channel_.emplace(t == Transport::socket ? SyncRpcChannel::connect(spinrpc::Endpoint::pipe(files_[0]), options)
                                            : SyncRpcChannel::connect(spinrpc::Endpoint::fifos(files_[0], files_[1]), options));
    check_variant_and_warm_up(plan, *channel_, v, where);
  }

  SyncRpcChannel& channel() noexcept { return *channel_; }
  int server_pid() const noexcept { return server_pid_; }

  // Closes the channel: the server must exit 0 within kExitGrace (stdio:
  // the shim's close_grace) and leave none of its files behind. Throws
  // std::runtime_error otherwise (register_run names the benchmark).
  void finish() {
    if (transport_ == Transport::stdio) {
      const int status = channel_->close();
      if (status != 0) throw std::runtime_error("spinrpc-server " + describe_wait_status(status) + " after close");
      return;
    }
    channel_->close();
    const std::optional<int> status = child_.try_wait_for(kExitGrace);
    if (!status) {
      child_.kill(SIGKILL);
      child_.wait();
      throw std::runtime_error("spinrpc-server was still running " + std::to_string(kExitGrace.count()) +
                               " ms after the client closed (killed)");
    }
    if (*status != 0) throw std::runtime_error("spinrpc-server " + describe_wait_status(*status) + " after close");
    for (const std::string& file : files_) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(file, ec))) {
        throw std::runtime_error("spinrpc-server exited 0 but left " + file + " behind");
      }
    }
  }

 private:
  Transport transport_;
  std::optional<TempDir> dir_;      // socket, fifo: holds files_
  std::vector<std::string> files_;  // the server's endpoint: socket, or to-server then from-server FIFO
  ChildProcess child_;              // socket, fifo: the server (stdio: the shim owns it)
  std::optional<SyncRpcChannel> channel_;
  int server_pid_ = -1;
};

// The state letter of thread `tid` of process `pid` (/proc/PID/task/TID/stat,
// the field after the command name: 'R' runnable, 'S' asleep...), or '?'.
char thread_state(int pid, int tid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat").c_str(), "r");
  if (f == nullptr) return '?';
  char line[512];
  const std::size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  line[n] = '\0';
  // The command name is in parentheses and may hold anything: the state
  // follows its last ')'.
  const char* close = std::strrchr(line, ')');
  return close != nullptr && close[1] == ' ' && close[2] != '\0' ? close[2] : '?';
}

// Fixture, before the timed loop: waits (up to 1 s) until every server
// thread but the main one is asleep and has not run for 2 ms. A thread still
// starting up (the socket's acceptor starts at accept(), just before the
// warm-up) belongs to the fixture, not to the round trips; a thread that
// keeps waking up never settles and shows in srv_aux_thread_runs.
void wait_for_aux_threads_to_sleep(int pid) {
  const auto deadline = Measurement::Clock::now() + std::chrono::seconds(1);
  while (Measurement::Clock::now() < deadline) {
    const auto before = thread_runs(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const auto after = thread_runs(pid);
    if (!before || !after) return;  // no schedstat: nothing to wait for
    bool asleep = thread_runs_between(*before, *after, pid) == 0;
    for (const auto& entry : *after) {
      if (entry.first != pid && thread_state(pid, entry.first) != 'S') asleep = false;
    }
    if (asleep) return;
  }
}

// Readings of the server's threads' run counts around the timed loop.
struct ThreadActivity {
  std::int64_t aux_threads = -1;
  std::int64_t aux_runs = -1;
  std::int64_t main_runs = -1;
};

ThreadActivity thread_activity(int pid, const std::optional<std::map<int, std::int64_t>>& before,
                               const std::optional<std::map<int, std::int64_t>>& after) {
  ThreadActivity a;
  if (!before || !after) return a;
  a.aux_threads = static_cast<std::int64_t>(after->size()) - (after->contains(pid) ? 1 : 0);
  a.aux_runs = thread_runs_between(*before, *after, pid);
  if (before->contains(pid) && after->contains(pid)) a.main_runs = after->at(pid) - before->at(pid);
  return a;
}

void run_transport(benchmark::State& state, const BenchPlan& plan, const std::string& name, Transport t, Variant v) {
  // Fixture, untimed: spawn, connect, check the variant, warm up, payloads.
  TransportPeer peer(plan, t, v, name);
  SyncRpcChannel& channel = peer.channel();
  const std::vector<std::vector<std::byte>> payloads = make_payloads(kSmallBytes, 16);

  wait_for_aux_threads_to_sleep(peer.server_pid());
  const SpinBaseline spin0(channel);
  Measurement m(name, peer.server_pid(), true, static_cast<std::size_t>(state.max_iterations));
  const auto runs0 = thread_runs(peer.server_pid());
  timed_echoes(state, m, channel, payloads, name);
  m.stop();
  const auto runs1 = thread_runs(peer.server_pid());
  spin0.set_deltas(m, channel);
  const ThreadActivity a = thread_activity(peer.server_pid(), runs0, runs1);
  m.set_counter("srv_aux_threads", static_cast<double>(a.aux_threads));
  m.set_counter("srv_aux_thread_runs", static_cast<double>(a.aux_runs));
  m.set_counter("srv_main_thread_runs", static_cast<double>(a.main_runs));
  peer.finish();
  m.publish(state, plan);
}

}  // namespace

void register_transport_benchmarks(const BenchPlan& plan, int round) {
  // The transports rotate from round to round like the variants, so that no
  // transport always runs first after a change of workload.
  const std::size_t shift = static_cast<std::size_t>(round < 0 ? 0 : round) % kTransports.size();
  for (std::size_t k = 0; k < kTransports.size(); ++k) {
    const Transport t = kTransports[(k + shift) % kTransports.size()];
    for (const Variant v : variants_in_round(round)) {
      const std::size_t count = plan.transport_echoes;
      const std::string name = BenchName("BM_Transport")
                                   .add("transport", transport_name(t))
                                   .add("bytes", kSmallBytes)
                                   .add("count", count)
                                   .add("variant", variant_name(v))
                                   .add("round", static_cast<std::size_t>(round))
                                   .str();
      register_run(name, count, [&plan, name, t, v](benchmark::State& state) {
        run_transport(state, plan, name, t, v);
      });
    }
  }
}

}  // namespace spinrpc::bench

#include "app/shutdown_on_signal.h"

#include <pthread.h>  // pthread_sigmask
#include <signal.h>   // SIGINT, SIGTERM, sigset_t
#include <unistd.h>  // ::_exit

#include <chrono>  // std::chrono::milliseconds
#include <mutex>   // std::mutex, std::lock_guard
#include <thread>  // std::thread

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "descriptor/stderr_lines.h"
#include "transport/created_files.h"
#include "trace/trace_registry.h"

namespace spinrpc {

namespace {

// How long a signal waits for a request being answered (or a message
// arriving) to finish before it reports it cut short and exits: far longer
// than an echo takes, short enough that nobody waits for a shutdown.
constexpr std::chrono::milliseconds kGrace{100};
constexpr std::chrono::milliseconds kGraceStep{1};

sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

struct ShutdownOnSignal::State {
  boost::asio::io_context io;
  boost::asio::signal_set signals{io, SIGINT, SIGTERM};
  std::thread thread;
  sigset_t saved_mask;  // the mask before block_signals(), restored at the end
  std::mutex cut_short_mutex;
  CutShort cut_short;  // guarded by cut_short_mutex
};

void ShutdownOnSignal::set_cut_short(CutShort cut_short) {
  const std::lock_guard lock(state_->cut_short_mutex);
  state_->cut_short = std::move(cut_short);
}

sigset_t ShutdownOnSignal::block_signals() noexcept {
  const sigset_t set = shutdown_signals();
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &set, &saved);
  return saved;
}

ShutdownOnSignal::ShutdownOnSignal(CreatedFiles& files, std::string program, const sigset_t& saved_mask)
    : state_(std::make_unique<State>()) {
  state_->saved_mask = saved_mask;
  state_->signals.async_wait([&files, program = std::move(program), state = state_.get()](
                                 const boost::system::error_code& error, int signal_number) {
    if (error) return;  // cancelled by the destructor
    files.remove_all(/*hold_lock=*/true);
    // The lock is kept to the end: the owner cannot clear the function (and
    // free what it reads) while it runs, and _exit follows.
    const std::lock_guard lock(state->cut_short_mutex);
    const char* what = state->cut_short ? state->cut_short() : nullptr;
    // A moment for what is nearly done: a client that read its reply and at
    // once sends SIGTERM (the TypeScript client's close()) often finds the
    // main thread still on its way back from the write that woke it.
    for (std::chrono::milliseconds waited{0}; what != nullptr && waited < kGrace; waited += kGraceStep) {
      std::this_thread::sleep_for(kGraceStep);
      what = state->cut_short();
    }
    if (what != nullptr) {
      write_stderr_before_exit(program + ": " + (signal_number == SIGINT ? "SIGINT" : "SIGTERM") +
                               " received while " + what + "; it is cut short\n");
    }
    // The trace, if one is kept (docs/TRACE.md): within the budget a
    // client's close grace leaves, cut to the newest requests past it. The
    // main thread is blocked in a wait or between two records; at worst the
    // record it is filling reads half old.
    trace::write_all(std::chrono::steady_clock::now() + trace::kServerWriteBudget);
    // _exit, not exit: the main thread may be inside a read or write with
    // objects that exit()'s destructors would tear down under it.
    ::_exit(128 + signal_number);
  });
  // The signals go to the watcher thread only. Blocked here (and so in the
  // thread at birth, which unblocks them), they never interrupt the main
  // thread's accept, open or read with EINTR midway through the shutdown.
  block_signals();
  state_->thread = std::thread([this] {
    const sigset_t set = shutdown_signals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    state_->io.run();
  });
}

ShutdownOnSignal::~ShutdownOnSignal() {
  boost::system::error_code ignored;
  state_->signals.cancel(ignored);
  state_->io.stop();
  state_->thread.join();
  pthread_sigmask(SIG_SETMASK, &state_->saved_mask, nullptr);
}

}  // namespace spinrpc

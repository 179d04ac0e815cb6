#pragma once

#include <signal.h>  // sigset_t

#include <functional>  // std::function
#include <memory>      // std::unique_ptr
#include <string>      // std::string

namespace spinrpc {

class CreatedFiles;

/// Ends the process cleanly on SIGINT or SIGTERM: removes the files the
/// server created and exits with 128 + the signal number (130, 143), as a
/// shell reports a process ended by that signal. Quietly, since a signal is
/// how clients close a server (the TypeScript client's close() sends SIGTERM
/// as it closes the pipes, and stray stderr lines fail users' CI): one line
/// goes to stderr only when something is cut short, "spinrpc-server: SIGTERM
/// received while answering a request; it is cut short", after a grace of
/// 100 ms in which it may still finish
/// (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
///
/// Boost.Asio's signal_set waits on its own thread, so the request path
/// keeps its spin-aware reads on the main thread and gains no wake-up: the
/// thread sleeps until a signal comes. A request being answered at that
/// moment is cut off; its client sees EOF.
///
/// SIGINT and SIGTERM are blocked from the first line of the server's main
/// (block_signals()), so one that comes before the handlers are installed
/// waits, pending, and the thread handles it as soon as it runs. The thread
/// starts with the object, before the first request is read: deferring it
/// past the first reply would shorten a spawn a little, but a first request
/// that never ended (a handler stuck in a loop) would then never see its SIGTERM
/// (docs/NODE.md, "Spawn to first reply").
class ShutdownOnSignal {
 public:
  /// Blocks SIGINT and SIGTERM in the calling thread (and in threads it
  /// creates from now on) and returns the mask it had before, for the
  /// constructor. Call it first thing in main: a signal that arrives while
  /// blocked waits, even for a process started with the signal ignored,
  /// where one that arrives before the handler is installed is lost.
  static sigset_t block_signals() noexcept;

  /// Installs the handlers and starts the watching thread. `files` must
  /// outlive this object; `saved_mask` (from block_signals()) is restored
  /// when it is destroyed. Throws std::system_error if the handlers cannot
  /// be installed or the thread cannot be created.
  ShutdownOnSignal(CreatedFiles& files, std::string program, const sigset_t& saved_mask);
  /// Stops watching (the default dispositions come back).
  ~ShutdownOnSignal();
  ShutdownOnSignal(const ShutdownOnSignal&) = delete;

  /// What a signal would cut short right now: called on the signal thread,
  /// so it must only read what is safe to read from there (CrossThreadFlag).
  /// Returns nullptr for "nothing" or a phrase ("a request being answered").
  /// An empty function (the default, and what the owner sets before the
  /// state it reads goes away) means nothing.
  using CutShort = std::function<const char*()>;
  void set_cut_short(CutShort cut_short);

  ShutdownOnSignal& operator=(const ShutdownOnSignal&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spinrpc

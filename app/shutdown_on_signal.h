#pragma once

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
class ShutdownOnSignal {
 public:
  /// Starts watching. `files` must outlive this object. Throws
  /// std::system_error if the handlers cannot be installed.
  ShutdownOnSignal(CreatedFiles& files, std::string program);
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

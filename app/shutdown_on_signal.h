#pragma once

#include <memory>  // std::unique_ptr
#include <string>  // std::string

namespace spinrpc {

class CreatedFiles;

/// Ends the process cleanly on SIGINT or SIGTERM: removes the files the
/// server created, writes one line to stderr ("spinrpc-server: SIGTERM
/// received, shutting down"), and exits with 128 + the signal number (130,
/// 143), as a shell reports a process ended by that signal.
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
  ShutdownOnSignal& operator=(const ShutdownOnSignal&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spinrpc

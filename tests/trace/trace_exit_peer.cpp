// A traced client process for tests/trace/written_once_test.cpp: what a
// process's trace files are once it has exited through exit(), with its
// exit writer (trace/trace_registry.h). Prints what the test needs on
// stdout; any failure of its own is one stderr line and exit status 2.
//
//   trace_exit_peer SERVER PATTERN moved TO
//     one channel to SERVER traced to PATTERN, one request, close(); the
//     client's file is then renamed to TO, and the process exits.
//   trace_exit_peer SERVER PATTERN removed
//     the same, then the directory of the client's file is removed with
//     all in it.
//   trace_exit_peer SERVER PATTERN fork
//     a channel (1 request) open across fork(); the child opens its own,
//     makes 1 request, closes it and exits; the parent then makes a second
//     request on its channel and exits with it open. Prints
//     "parent P child C server S parent-file-before-exit absent": S the
//     server of the parent's channel, and whether the parent's file was
//     there (written by the child's exit) before the parent's exit.
#include <sys/wait.h>  // ::waitpid
#include <unistd.h>    // ::fork, ::getpid

#include <cstdio>      // std::printf, std::fflush
#include <cstdlib>     // std::exit
#include <exception>   // std::exception
#include <stdexcept>   // std::runtime_error
#include <filesystem>  // std::filesystem
#include <iostream>    // std::cerr
#include <string>      // std::string
#include <vector>      // std::vector

#include "client-shim/sync_rpc_channel.h"
#include "trace/trace_registry.h"

namespace {

using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;

SyncRpcOptions traced(const std::string& pattern) {
  SyncRpcOptions options;
  options.trace = pattern;
  return options;
}

int run(const std::vector<std::string>& args) {
  const std::string& server = args.at(0);
  const std::string& pattern = args.at(1);
  const std::string& mode = args.at(2);
  if (mode == "moved" || mode == "removed") {
    SyncRpcChannel channel(server, {"--api"}, traced(pattern));
    channel.request("echo", "x");
    channel.close();
    const std::filesystem::path file = spinrpc::trace::expand_path(pattern);
    if (mode == "moved") {
      std::filesystem::rename(file, args.at(3));
    } else {
      std::filesystem::remove_all(file.parent_path());
    }
    std::printf("pid %d\n", static_cast<int>(::getpid()));
    return 0;
  }
  if (mode == "fork") {
    SyncRpcChannel parent(server, {"--api"}, traced(pattern));
    parent.request("echo", "before the fork");
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
      SyncRpcChannel own(server, {"--api"}, traced(pattern));
      own.request("echo", "the child's");
      own.close();
      // exit, not _exit: its exit writer runs, with the parent's open
      // channel among the entries it inherited.
      std::exit(0);
    }
    int status = 0;
    if (::waitpid(child, &status, 0) != child || status != 0) throw std::runtime_error("the child failed");
    parent.request("echo", "after the fork");
    // The child must have left the parent's open channel to the parent.
    const bool written = std::filesystem::exists(spinrpc::trace::expand_path(pattern));
    std::printf("parent %d child %d server %d parent-file-before-exit %s\n", static_cast<int>(::getpid()),
                static_cast<int>(child), static_cast<int>(parent.pid()), written ? "present" : "absent");
    std::fflush(stdout);
    // The channel stays open: the exit writer writes it.
    std::exit(0);
  }
  throw std::runtime_error("unknown mode " + mode);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "trace_exit_peer: " << e.what() << '\n';
    return 2;
  }
}

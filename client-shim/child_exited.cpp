#include "client-shim/child_exited.h"

#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS, WIFSIGNALED, WTERMSIG, WCOREDUMP

#include <string>  // std::string, std::to_string

namespace spinrpc {
namespace {

std::string describe(std::string_view executable, std::optional<int> wait_status, PeerClosed::Where where) {
  // The last path component: "tsgo", not ".../native-preview-linux-x64/lib/tsgo".
  std::string text(executable.substr(executable.rfind('/') + 1));
  if (!wait_status) {
    // EPIPE on our write: it stopped reading; otherwise our read met EOF.
    return text + (where == PeerClosed::Where::writing ? " closed its input" : " closed its output") +
           " and is still running";
  }
  const int status = *wait_status;
  if (WIFEXITED(status)) return text + " exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    text += " was killed by signal " + std::to_string(WTERMSIG(status));
    if (WCOREDUMP(status)) text += " (core dumped)";
    return text;
  }
  // waitpid is never asked for stop/continue reports (no WUNTRACED), so this
  // is unreachable in practice; still say something true.
  return text + " changed state (wait status " + std::to_string(status) + ")";
}

}  // namespace

ChildExited::ChildExited(std::string_view executable, std::optional<int> wait_status, Where where)
    : PeerClosed(describe(executable, wait_status, where), where), wait_status_(wait_status) {}

std::optional<int> ChildExited::exit_code() const noexcept {
  if (wait_status_ && WIFEXITED(*wait_status_)) return WEXITSTATUS(*wait_status_);
  return std::nullopt;
}

std::optional<int> ChildExited::term_signal() const noexcept {
  if (wait_status_ && WIFSIGNALED(*wait_status_)) return WTERMSIG(*wait_status_);
  return std::nullopt;
}

}  // namespace spinrpc

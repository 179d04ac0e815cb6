// ChildProcess::spawn's add_env: an entry reaches the child unless the
// environment already names the variable (what the user set wins). The
// shim passes SPINRPC_LEND_REPLIES=1 this way (channel/byte_stream.h).
// And the child's stderr is ours, even when our fd 2 is close-on-exec, as
// Node makes it.
#include <doctest/doctest.h>

#include <fcntl.h>     // ::fcntl, F_GETFD, F_SETFD, FD_CLOEXEC
#include <signal.h>    // ::sigaction, SIGCHLD, SIG_IGN, SIGKILL
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::read, ::dup, ::dup2, ::close, STDERR_FILENO

#include <cerrno>       // ECHILD
#include <cstdlib>      // ::setenv, ::unsetenv, std::getenv
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::system_error
#include <vector>       // std::vector

#include "channel/pipe.h"
#include "client-shim/child_process.h"

namespace spinrpc {
namespace {

// What the child prints of the variable SPINRPC_TEST_ADDED.
std::string seen_by_child(std::span<const std::string_view> add_env,
                          const std::optional<std::vector<std::string>>& environment = std::nullopt) {
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  ChildProcess child = ChildProcess::spawn(
      "sh", {"-c", "printf '%s' \"${SPINRPC_TEST_ADDED-unset}\""}, in.read_end.get(),
      out.write_end.get(), add_env, environment);
  out.write_end.reset();
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(out.read_end.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  const int status = child.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return text;
}

TEST_CASE("ChildProcess::spawn adds an environment entry unless the variable is set already") {
  constexpr std::string_view kAdded[] = {"SPINRPC_TEST_ADDED=1"};
  ::unsetenv("SPINRPC_TEST_ADDED");
  CHECK(seen_by_child({}) == "unset");
  CHECK(seen_by_child(kAdded) == "1");
  ::setenv("SPINRPC_TEST_ADDED", "0", 1);
  CHECK(seen_by_child(kAdded) == "0");  // the user's value wins
  ::unsetenv("SPINRPC_TEST_ADDED");
}

TEST_CASE("ChildProcess::spawn with an environment given: the child gets that one, add_env on top") {
  constexpr std::string_view kAdded[] = {"SPINRPC_TEST_ADDED=1"};
  ::setenv("SPINRPC_TEST_ADDED", "ours", 1);  // not the child's: it gets only what is given
  const std::string path = std::string("PATH=") + std::getenv("PATH");
  CHECK(seen_by_child({}, std::vector<std::string>{path}) == "unset");
  CHECK(seen_by_child(kAdded, std::vector<std::string>{path}) == "1");
  CHECK(seen_by_child(kAdded, std::vector<std::string>{path, "SPINRPC_TEST_ADDED=given"}) == "given");
  ::unsetenv("SPINRPC_TEST_ADDED");
}

TEST_CASE("environment_value reads NAME=value entries as getenv reads environ") {
  const std::optional<std::vector<std::string>> env = std::vector<std::string>{"A=1", "AB=2", "B=", "A=3", "C"};
  CHECK(std::string_view(environment_value(env, "A")) == "1");  // the first wins
  CHECK(std::string_view(environment_value(env, "AB")) == "2");
  CHECK(std::string_view(environment_value(env, "B")).empty());
  CHECK(environment_value(env, "C") == nullptr);  // no '=': no value
  CHECK(environment_value(env, "D") == nullptr);
}

// What a child that writes "to-stderr" on fd 2 (and says whether it had
// one on stdout) leaves in a pipe put at our fd 2 with `our_flags`; -1 =
// fd 2 closed. Restores our fd 2 after.
struct StderrSeen {
  std::string on_stderr;
  std::string said;  // "open" or "closed": whether the child had an fd 2
  int our_flags_after = -1;
};
StderrSeen child_stderr(int our_flags) {
  // Every fd first: with fd 2 closed, the next one made would be fd 2.
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  const int saved = ::dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  PipePair err = make_pipe();
  if (our_flags >= 0) {
    REQUIRE(::dup2(err.write_end.get(), STDERR_FILENO) == STDERR_FILENO);
    REQUIRE(::fcntl(STDERR_FILENO, F_SETFD, our_flags) == 0);
  } else {
    ::close(STDERR_FILENO);
  }
  err.write_end.reset();
  StderrSeen seen;
  {
    ChildProcess child = ChildProcess::spawn(
        "sh", {"-c", "if [ -e /proc/$$/fd/2 ]; then echo to-stderr >&2; printf open; else printf closed; fi"},
        in.read_end.get(), out.write_end.get(), {});
    seen.our_flags_after = ::fcntl(STDERR_FILENO, F_GETFD);
    // The child's stderr ends when it exits; ours is put back first, so
    // that the pipe's write end is closed here too.
    REQUIRE(::dup2(saved, STDERR_FILENO) == STDERR_FILENO);
    ::close(saved);
    out.write_end.reset();
    char buf[256];
    for (ssize_t n; (n = ::read(out.read_end.get(), buf, sizeof buf)) > 0;) seen.said.append(buf, static_cast<std::size_t>(n));
    for (ssize_t n; (n = ::read(err.read_end.get(), buf, sizeof buf)) > 0;) seen.on_stderr.append(buf, static_cast<std::size_t>(n));
    CHECK(child.wait() == 0);
  }
  return seen;
}

TEST_CASE("ChildProcess::spawn gives the child our stderr, also when it is close-on-exec here") {
  const StderrSeen plain = child_stderr(0);
  CHECK(plain.said == "open");
  CHECK(plain.on_stderr == "to-stderr\n");
  CHECK(plain.our_flags_after == 0);
  // Node marks its fd 2 close-on-exec at start-up: the binding's server lost
  // every line it wrote to stderr until the spawn passed fd 2 explicitly.
  const StderrSeen cloexec = child_stderr(FD_CLOEXEC);
  CHECK(cloexec.said == "open");
  CHECK(cloexec.on_stderr == "to-stderr\n");
  CHECK(cloexec.our_flags_after == FD_CLOEXEC);  // ours left as it was
  // No fd 2 here: none in the child either, and the spawn still works.
  const StderrSeen closed = child_stderr(-1);
  CHECK(closed.said == "closed");
  CHECK(closed.our_flags_after == -1);
}

TEST_CASE("ChildProcess with SIGCHLD set to SIG_IGN: the lost child is reported once and never signalled again") {
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  REQUIRE(::sigaction(SIGCHLD, &ignore, &before) == 0);
  const PipePair in = make_pipe();
  const PipePair out = make_pipe();
  std::string what;
  int pid_after = 0;
  try {
    ChildProcess child = ChildProcess::spawn("true", {}, in.read_end.get(), out.write_end.get());
    const int pid = child.pid();
    // The kernel reaps it as it exits; wait (blocking) then fails ECHILD.
    try {
      child.wait();
    } catch (const std::system_error& e) {
      CHECK(e.code().value() == ECHILD);
      what = e.what();
    }
    pid_after = child.pid();
    CHECK_NOTHROW(child.kill(SIGKILL));  // nothing sent: the pid is not ours
    CHECK(what.find("true (pid " + std::to_string(pid) + ") was reaped by someone else") == 0);
  } catch (...) {
    ::sigaction(SIGCHLD, &before, nullptr);
    throw;
  }
  ::sigaction(SIGCHLD, &before, nullptr);
  CHECK(pid_after == -1);
}

}  // namespace
}  // namespace spinrpc

// ChildProcess::spawn's add_env: an entry reaches the child unless the
// environment already names the variable (what the user set wins). The
// shim passes SPINRPC_LEND_REPLIES=1 this way (channel/byte_stream.h).
// And the child's stderr is ours, even when our fd 2 is close-on-exec, as
// Node makes it. And the child starts as Node's child_process.spawn starts
// one: PATH search in the child's environment, /bin/sh for ENOEXEC, argv[0],
// the errors, signals and descriptors (docs/HARDENING.md, "Starting a child
// as Node does").
#include <doctest/doctest.h>

#include <fcntl.h>     // ::fcntl, ::open, F_GETFD, F_SETFD, FD_CLOEXEC
#include <pthread.h>   // ::pthread_sigmask
#include <signal.h>    // ::sigaction, SIGCHLD, SIG_IGN, SIGKILL, SIGUSR1, SIGXFSZ
#include <sys/stat.h>  // ::chmod, ::mkdir
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::read, ::dup, ::dup2, ::close, ::chdir, ::getcwd, ::symlink, STDERR_FILENO

#include <cerrno>       // ECHILD, ENOENT, EACCES, ENOTDIR, ENAMETOOLONG, ELOOP
#include <cstdlib>      // ::setenv, ::unsetenv, std::getenv, ::mkdtemp, std::system
#include <fstream>      // std::ofstream
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <system_error> // std::system_error
#include <vector>       // std::vector

#include "descriptor/pipe.h"
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

// ── Started as Node's spawn starts a child (docs/HARDENING.md, "Starting a
// child as Node does"); tests/interop/spawn_like_node.test.mjs compares the
// Node binding with Node's own spawn case by case.

// A scratch directory, removed with everything in it.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char name[] = "/tmp/spinrpc-spawn-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~ScratchDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  // Writes `text` to `name` here with `mode`; returns its path.
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0755) const {
    const std::string file = path + "/" + name;
    std::ofstream(file) << text;
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    return file;
  }
};

// What the child prints on stdout, and its wait status.
struct Ran {
  std::string out;
  int status = -1;
};
Ran run(const std::string& executable, const std::vector<std::string>& args,
        const std::optional<std::vector<std::string>>& environment = std::nullopt) {
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  ChildProcess child = ChildProcess::spawn(executable, args, in.read_end.get(), out.write_end.get(), {}, environment);
  out.write_end.reset();
  in.read_end.reset();
  Ran ran;
  char buf[256];
  for (ssize_t n; (n = ::read(out.read_end.get(), buf, sizeof buf)) > 0;) ran.out.append(buf, static_cast<std::size_t>(n));
  ran.status = child.wait();
  return ran;
}

// The errno of a spawn that fails; 0 if it starts.
int spawn_errno(const std::string& executable, const std::optional<std::vector<std::string>>& environment = std::nullopt) {
  try {
    run(executable, {"arg"}, environment);
    return 0;
  } catch (const SpawnError& e) {
    CHECK(e.executable() == executable);
    CHECK(e.args() == std::vector<std::string>{"arg"});
    CHECK(std::string(e.what()).find("cannot spawn " + executable + ": ") == 0);
    return e.code().value();
  }
}

constexpr const char* kSays = "printf '%s' \"$0 $*\"\n";  // the script's $0 and arguments

TEST_CASE("ChildProcess::spawn searches the PATH of the child's environment, as execvp") {
  const ScratchDir dir;
  dir.write("spinrpc-test-prog", std::string("#!/bin/sh\n") + kSays);
  const std::string prog = dir.path + "/spinrpc-test-prog";
  // The given environment's PATH, not ours.
  CHECK(run("spinrpc-test-prog", {"a"}, std::vector<std::string>{"PATH=/nonexistent:" + dir.path}).out == prog + " a");
  CHECK(spawn_errno("spinrpc-test-prog", std::vector<std::string>{"PATH=/nonexistent"}) == ENOENT);
  // The first PATH entry wins, as the child's getenv finds it.
  CHECK(run("spinrpc-test-prog", {}, std::vector<std::string>{"PATH=" + dir.path, "PATH=/nonexistent"}).out == prog + " ");
  // No environment given: ours.
  CHECK(spawn_errno("spinrpc-test-prog") == ENOENT);
  const std::string saved = std::getenv("PATH");
  ::setenv("PATH", (dir.path + ":" + saved).c_str(), 1);
  CHECK(run("spinrpc-test-prog", {"b"}).out == prog + " b");
  ::setenv("PATH", saved.c_str(), 1);
  // No PATH at all: /bin:/usr/bin.
  CHECK(run("sh", {"-c", "printf found"}, std::vector<std::string>{}).out == "found");
  CHECK(spawn_errno("spinrpc-test-prog", std::vector<std::string>{"HOME=/"}) == ENOENT);
}

TEST_CASE("ChildProcess::spawn: an empty PATH entry is the current directory; a name with a slash is not searched") {
  const ScratchDir dir;
  dir.write("spinrpc-test-prog", std::string("#!/bin/sh\n") + kSays);
  REQUIRE(::mkdir((dir.path + "/sub").c_str(), 0755) == 0);
  dir.write("sub/spinrpc-test-sub", std::string("#!/bin/sh\n") + kSays);
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(::chdir(dir.path.c_str()) == 0);
  for (const char* path : {"PATH=:/nonexistent", "PATH=/nonexistent:", "PATH=/nonexistent::/bin", "PATH="}) {
    CAPTURE(path);
    CHECK(run("spinrpc-test-prog", {"x"}, std::vector<std::string>{path}).out == "spinrpc-test-prog x");
  }
  REQUIRE(::chdir("/") == 0);
  CHECK(spawn_errno("sub/spinrpc-test-sub", std::vector<std::string>{"PATH=" + dir.path}) == ENOENT);
  CHECK(run(dir.path + "/sub/spinrpc-test-sub", {}).out == dir.path + "/sub/spinrpc-test-sub ");
  REQUIRE(::chdir(cwd) == 0);
}

TEST_CASE("ChildProcess::spawn runs an executable without #! through /bin/sh (ENOEXEC)") {
  const ScratchDir dir;
  const std::string plain = dir.write("spinrpc-test-plain", kSays);
  CHECK(run(plain, {"a", "b c"}).out == plain + " a b c");
  CHECK(run("spinrpc-test-plain", {"x"}, std::vector<std::string>{"PATH=/nonexistent:" + dir.path}).out == plain + " x");
  // An empty executable file too (the kernel says ENOEXEC; sh runs nothing).
  const std::string empty = dir.write("spinrpc-test-empty", "");
  CHECK(run(empty, {}).status == 0);
}

TEST_CASE("ChildProcess::spawn: argv[0] is the name as given") {
  CHECK(run("sh", {"-c", "tr '\\0' ' ' < /proc/$$/cmdline"}).out == "sh -c tr '\\0' ' ' < /proc/$$/cmdline ");
  CHECK(run("/bin/sh", {"-c", "tr '\\0' ' ' < /proc/$$/cmdline"}).out == "/bin/sh -c tr '\\0' ' ' < /proc/$$/cmdline ");
}

TEST_CASE("ChildProcess::spawn: EACCES when a file is found but none can run; ENOENT, ENOTDIR as execvp gives them") {
  const ScratchDir first;
  const ScratchDir second;
  const std::string denied = first.write("spinrpc-test-mode", std::string("#!/bin/sh\n") + kSays, 0644);
  CHECK(spawn_errno(denied) == EACCES);
  CHECK(spawn_errno(first.path) == EACCES);  // a directory
  CHECK(spawn_errno("spinrpc-test-mode", std::vector<std::string>{"PATH=" + first.path + ":/nonexistent"}) == EACCES);
  // A later entry that has one that runs: that one runs.
  const std::string allowed = second.write("spinrpc-test-mode", std::string("#!/bin/sh\n") + kSays);
  CHECK(run("spinrpc-test-mode", {}, std::vector<std::string>{"PATH=" + first.path + ":" + second.path}).out == allowed + " ");
  CHECK(spawn_errno(denied + "/x") == ENOTDIR);
  CHECK(spawn_errno("/nonexistent/spinrpc") == ENOENT);
  CHECK(spawn_errno(std::string(300, 'x')) == ENAMETOOLONG);
  CHECK(spawn_errno("") == ENOENT);
  // A #! interpreter that does not exist: ENOENT for the script, and a
  // search goes on past it.
  CHECK(spawn_errno(first.write("spinrpc-test-interp", "#!/nonexistent/sh\n")) == ENOENT);
  const std::string interp = second.write("spinrpc-test-interp", std::string("#!/bin/sh\n") + kSays);
  CHECK(run("spinrpc-test-interp", {}, std::vector<std::string>{"PATH=" + first.path + ":" + second.path}).out == interp + " ");
  // A symlink loop ends the search: ELOOP, not ENOENT.
  REQUIRE(::symlink((first.path + "/loop-b").c_str(), (first.path + "/loop-a").c_str()) == 0);
  REQUIRE(::symlink((first.path + "/loop-a").c_str(), (first.path + "/loop-b").c_str()) == 0);
  CHECK(spawn_errno(first.path + "/loop-a") == ELOOP);
  CHECK(spawn_errno("loop-a", std::vector<std::string>{"PATH=" + first.path + ":" + second.path}) == ELOOP);
}

TEST_CASE("ChildProcess::spawn: every signal from 1 to 31 at its default, an empty mask, whatever we set") {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  struct sigaction before_usr1 {};
  struct sigaction before_xfsz {};
  REQUIRE(::sigaction(SIGUSR1, &ignore, &before_usr1) == 0);
  REQUIRE(::sigaction(SIGXFSZ, &ignore, &before_xfsz) == 0);
  sigset_t block;
  sigset_t before_mask;
  ::sigemptyset(&block);
  ::sigaddset(&block, SIGTERM);
  ::sigaddset(&block, SIGUSR2);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &block, &before_mask) == 0);
  // grep reports its own state: what exec left it.
  const Ran ran = run("grep", {"-E", "^Sig(Blk|Ign):", "/proc/self/status"});
  ::pthread_sigmask(SIG_SETMASK, &before_mask, nullptr);
  ::sigaction(SIGUSR1, &before_usr1, nullptr);
  ::sigaction(SIGXFSZ, &before_xfsz, nullptr);
  CHECK(ran.out == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST_CASE("ChildProcess::spawn: the child has fds 0, 1 and 2 only, close-on-exec or not here") {
  const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  REQUIRE(leaked >= 0);
  // The shell's own descriptors; the directory the glob reads is closed by the test -e.
  const Ran ran = run("sh", {"-c", "for f in /proc/$$/fd/*; do [ -e \"$f\" ] && printf ' %s' \"${f##*/}\"; done"});
  ::close(leaked);
  CHECK(ran.out == " 0 1 2");
}

}  // namespace
}  // namespace spinrpc

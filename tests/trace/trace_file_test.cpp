// Where a trace's bytes go (docs/HARDENING.md, "Trace files"): write_trace()
// against what its path can be (absent, a regular file, a symbolic link, a
// FIFO with and without a reader, a character device, a directory), against
// names planted beside it, and, as root, against names a second user
// (nobody) planted in a shared directory, sticky and not, with the client
// shim and the real spinrpc-server writing. A write that could block runs
// in a forked child under the hang guard, so a hang fails the test.
#include <fcntl.h>      // ::open, O_RDONLY, O_NONBLOCK
#include <poll.h>       // ::poll
#include <signal.h>     // ::kill, ::signal, SIGKILL, SIGPIPE
#include <stdlib.h>     // ::mkdtemp
#include <sys/stat.h>   // ::lstat, ::mkfifo, ::mknod, ::umask, ::chmod, ::mkdir
#include <sys/sysmacros.h>  // makedev
#include <sys/wait.h>   // ::waitpid, WIFEXITED, WEXITSTATUS
#include <unistd.h>     // ::fork, ::pipe2, ::read, ::write, ::dup, ::dup2, ::getpid, ::geteuid, ::_exit

#include <array>       // std::array
#include <cerrno>      // errno
#include <chrono>      // std::chrono
#include <cstring>     // std::strerror
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ofstream
#include <stdexcept>   // std::runtime_error
#include <cstdlib>     // std::system
#include <functional>  // std::function
#include <string>      // std::string
#include <vector>      // std::vector

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "descriptor/unique_fd.h"
#include "tests/support/paths.h"
#include "tests/support/proc.h"
#include "tests/trace/ring_fill.h"
#include "tests/trace/run_shell.h"
#include "tests/trace/scratch_dir.h"
#include "tests/trace/trace_rules.h"
#include "trace/trace_ring.h"
#include "trace/trace_writer.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::SyncRpcChannel;
using spinrpc::SyncRpcOptions;
using spinrpc::UniqueFd;
using spinrpc::test::bin_path;
using spinrpc::test::client_request;
using spinrpc::test::eventually;
using spinrpc::test::load_trace;
using spinrpc::test::quoted;
using spinrpc::test::read_text;
using spinrpc::test::ScratchDir;
using spinrpc::trace::Ring;

// A ring of `requests` client requests, each 4 records.
struct FilledRing {
  explicit FilledRing(int requests) : ring(static_cast<std::size_t>(requests), "file test") {
    for (int i = 0; i < requests; ++i) client_request(ring, Ring::Clock::now() + std::chrono::microseconds(i));
  }
  void write(const std::string& path) const {
    const std::array<const Ring*, 1> rings{&ring};
    spinrpc::trace::write_trace(path, rings, std::nullopt);
  }
  Ring ring;
};

// What a path is now, without following it: 'l' link, 'p' FIFO, 'c'
// character device, 'f' regular file, 'd' directory, '-' absent.
char kind_at(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return '-';
  if (S_ISLNK(st.st_mode)) return 'l';
  if (S_ISFIFO(st.st_mode)) return 'p';
  if (S_ISCHR(st.st_mode)) return 'c';
  if (S_ISDIR(st.st_mode)) return 'd';
  return S_ISREG(st.st_mode) ? 'f' : '?';
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}

// A forked child running `work`: it exits 0, or 1 with the what() of what
// `work` threw sent back on a pipe.
struct Child {
  pid_t pid = -1;
  UniqueFd what;  // read end
};

struct ChildEnd {
  bool ended = false;  // false: the hang guard ran out and it was SIGKILLed
  int status = 0;
  std::string what;
};

Child start_child(const std::function<void()>& work) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string what;
    try {
      work();
      ::_exit(0);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "(not a std::exception)";
    }
    [[maybe_unused]] const ssize_t n = ::write(fds[1], what.data(), what.size());
    ::_exit(1);
  }
  ::close(fds[1]);
  return {pid, UniqueFd(fds[0])};
}

ChildEnd finish_child(Child& child) {
  ChildEnd end;
  end.ended = eventually([&] { return ::waitpid(child.pid, &end.status, WNOHANG) == child.pid; });
  if (!end.ended) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, &end.status, 0);
  }
  char buffer[512];
  for (ssize_t n; (n = ::read(child.what.get(), buffer, sizeof buffer)) > 0;) end.what.append(buffer, n);
  return end;
}

ChildEnd in_child(const std::function<void()>& work) {
  Child child = start_child(work);
  return finish_child(child);
}

bool exited_with(const ChildEnd& end, int code) {
  return end.ended && WIFEXITED(end.status) && WEXITSTATUS(end.status) == code;
}

// Everything a FIFO's reader gets until every writer has closed, under the
// hang guard. `reader` was opened O_RDONLY|O_NONBLOCK before any writer.
std::string read_to_eof(int reader) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + spinrpc::test::kHangGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{reader, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(reader, buffer, sizeof buffer);
    if (n == 0) return got;  // ready and empty: the writer has closed
    if (n > 0) got.append(buffer, n);
  }
  FAIL("the FIFO's writer never closed");
  return got;
}

struct Umask {
  explicit Umask(mode_t mask) : saved(::umask(mask)) {}
  ~Umask() { ::umask(saved); }
  mode_t saved;
};

TEST_CASE("a trace file is created 0600 whatever the umask, and replaces a regular file with a new 0600 one") {
  ScratchDir dir;
  const std::string path = dir / "t.json";
  const Umask permissive(0);
  FilledRing(1).write(path);
  CHECK(kind_at(path) == 'f');
  CHECK(mode_of(path) == 0600);
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  FilledRing(3).write(path);
  CHECK(mode_of(path) == 0600);
  CHECK(load_trace(path).request_seqs(::getpid()).size() == 3);
  CHECK(dir.files() == std::vector<std::string>{"t.json"});  // no temporary left
}

TEST_CASE("a symbolic link at the trace's name is refused in one line and never followed") {
  ScratchDir dir;
  const std::string target = dir / "target";
  write_text(target, "precious\n");
  for (const std::string& pointee : {target, dir / "absent"}) {
    CAPTURE(pointee);
    const std::string path = dir / "t.json";
    REQUIRE(::symlink(pointee.c_str(), path.c_str()) == 0);
    CHECK_THROWS_WITH_AS(FilledRing(1).write(path),
                         ("spinrpc: not writing the trace " + path + ": it is a symbolic link, never followed").c_str(),
                         std::runtime_error);
    CHECK(kind_at(path) == 'l');
    CHECK(read_text(target) == "precious\n");
    CHECK(kind_at(dir / "absent") == '-');
    CHECK(dir.files() == std::vector<std::string>{"t.json", "target"});
    REQUIRE(::unlink(path.c_str()) == 0);
  }
}

TEST_CASE("names planted at the old temporary name (FILE.tmp.<pid>) are neither opened nor followed") {
  ScratchDir dir;
  const std::string target = dir / "target";
  write_text(target, "precious\n");
  // Planted in the writing process itself, whose pid the old name used. A
  // FIFO there made the old open(O_CREAT) wait forever for a reader.
  const ChildEnd end = in_child([&] {
    const std::string pid = std::to_string(::getpid());
    if (::mkfifo((dir / "a.json.tmp." + pid).c_str(), 0600) != 0) throw std::runtime_error("mkfifo");
    if (::symlink(target.c_str(), (dir / "b.json.tmp." + pid).c_str()) != 0) throw std::runtime_error("symlink");
    FilledRing(2).write(dir / "a.json");
    FilledRing(2).write(dir / "b.json");
  });
  CHECK(end.what == "");
  REQUIRE(exited_with(end, 0));
  CHECK(read_text(target) == "precious\n");
  for (const char* name : {"a.json", "b.json"}) {
    CAPTURE(name);
    CHECK(kind_at(dir / name) == 'f');
    CHECK(mode_of(dir / name) == 0600);
    CHECK(load_trace(dir / name).spinrpc().at("channels").at(0).at("requests_written") == 2);
  }
  // a.json, b.json, target and the two planted names, as they were.
  const std::vector<std::string> files = dir.files();
  CHECK(files.size() == 5);
  for (const std::string& name : files) {
    if (name.find(".tmp.") != std::string::npos) CHECK(kind_at(dir / name) == (name[0] == 'a' ? 'p' : 'l'));
  }
}

TEST_CASE("a FIFO at the trace's name with no reader: one line, nothing written, no wait") {
  ScratchDir dir;
  const std::string path = dir / "t.json";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  const ChildEnd end = in_child([&] { FilledRing(1).write(path); });
  CHECK(exited_with(end, 1));
  CHECK(end.what == "spinrpc: not writing the trace " + path + ": it is a FIFO with no reader");
  CHECK(kind_at(path) == 'p');
  CHECK(dir.files() == std::vector<std::string>{"t.json"});
}

TEST_CASE("a FIFO at the trace's name with a reader: the reader gets the whole trace, and the FIFO stays") {
  ScratchDir dir;
  const std::string path = dir / "t.json";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  const UniqueFd reader(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(reader);
  // Several MiB: the pipe fills many times over, so the writer waits for
  // room again and again.
  Child child = start_child([&] { FilledRing(20000).write(path); });
  const std::string got = read_to_eof(reader.get());
  const ChildEnd end = finish_child(child);
  CHECK(end.what == "");
  CHECK(exited_with(end, 0));
  CHECK(got.size() > (1u << 20));
  write_text(dir / "got.json", got);
  CHECK(load_trace(dir / "got.json").spinrpc().at("channels").at(0).at("requests_written") == 20000);
  CHECK(kind_at(path) == 'p');
}

TEST_CASE("a FIFO whose reader leaves mid-trace: one line (EPIPE), never SIGPIPE, even at SIG_DFL") {
  ScratchDir dir;
  const std::string path = dir / "t.json";
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  UniqueFd reader(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  REQUIRE(reader);
  Child child = start_child([&] {
    reader.reset();  // the child's copy: the parent's must be the FIFO's last reader
    ::signal(SIGPIPE, SIG_DFL);
    FilledRing(20000).write(path);
  });
  // Once the writer has sent something, the reader goes.
  REQUIRE(eventually([&] {
    pollfd p{reader.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }));
  reader.reset();
  const ChildEnd end = finish_child(child);
  CHECK(exited_with(end, 1));
  CHECK(end.what == "spinrpc: cannot write the trace " + path + ": Broken pipe");
  CHECK(kind_at(path) == 'p');
}

TEST_CASE("a character device at the trace's name is written through, never replaced") {
  ScratchDir dir;
  const std::string path = dir / "null";
  // A node of /dev/null's device (1, 3) of our own, so that a writer that
  // replaced it would not replace the system's.
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    MESSAGE("skipped: cannot make a character device node here (mknod needs CAP_MKNOD): "
            << std::string(std::strerror(errno)));
    return;
  }
  const ChildEnd end = in_child([&] { FilledRing(5).write(path); });
  CHECK(end.what == "");
  CHECK(exited_with(end, 0));
  CHECK(kind_at(path) == 'c');
  CHECK(dir.files() == std::vector<std::string>{"null"});
}

TEST_CASE("a directory at the trace's name is refused in one line that says what is replaced and written through") {
  ScratchDir dir;
  const std::string path = dir / "t.json";
  REQUIRE(::mkdir(path.c_str(), 0700) == 0);
  CHECK_THROWS_WITH_AS(FilledRing(1).write(path),
                       ("spinrpc: not writing the trace " + path +
                        ": it is a directory (a trace replaces a regular file, or is written through a FIFO or a "
                        "character device)")
                           .c_str(),
                       std::runtime_error);
  CHECK(dir.files() == std::vector<std::string>{"t.json"});
}


// A directory under /tmp that a second user can reach, holding `sticky`
// (mode 1777, as /tmp) and `plain` (0777: world-writable, not sticky);
// removed with everything in it at the end.
class SharedDirs {
 public:
  SharedDirs() {
    std::string pattern = "/tmp/spinrpc-trace-shared-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make " + pattern);
    root_ = pattern;
    // chmod, not mkdir's mode: the umask does not apply.
    if (::chmod(root_.c_str(), 0755) != 0 || ::mkdir((root_ + "/sticky").c_str(), 0700) != 0 ||
        ::chmod((root_ + "/sticky").c_str(), 01777) != 0 || ::mkdir((root_ + "/plain").c_str(), 0700) != 0 ||
        ::chmod((root_ + "/plain").c_str(), 0777) != 0) {
      throw std::runtime_error("cannot make the shared directories in " + root_);
    }
  }
  ~SharedDirs() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  SharedDirs(const SharedDirs&) = delete;
  SharedDirs& operator=(const SharedDirs&) = delete;
  std::string operator/(const std::string& name) const { return root_ + "/" + name; }

 private:
  std::string root_;
};

// Runs `command` with sh as user nobody (uid and gid 65534, no
// supplementary groups): the second user. Needs root.
void as_nobody(const std::string& command) {
  const std::string line = "setpriv --reuid=65534 --regid=65534 --clear-groups sh -c " + quoted(command);
  INFO(line);
  REQUIRE(std::system(line.c_str()) == 0);
}

// fd 2 of this process, and so of a child spawned meanwhile, sent to a file
// for the while.
class StderrTo {
 public:
  explicit StderrTo(const std::string& path) : saved_(::dup(2)) {
    const UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(file);
    REQUIRE(::dup2(file.get(), 2) == 2);
  }
  ~StderrTo() { ::dup2(saved_.get(), 2); }
  StderrTo(const StderrTo&) = delete;
  StderrTo& operator=(const StderrTo&) = delete;

 private:
  UniqueFd saved_;
};

TEST_CASE("names another user planted in a shared directory, sticky or not, are never followed or handed the trace") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: becoming the second user (nobody) who plants the names needs root; run as root, as CI does");
    return;
  }
  ScratchDir mine;  // 0700: the victim is out of nobody's reach, but not out of a root writer's
  const std::string victim = mine / "victim";
  write_text(victim, "precious\n");
  const SharedDirs shared;
  for (const std::string kind : {"sticky", "plain"}) {
    CAPTURE(kind);
    const std::string dir = shared / kind;
    const std::string pid = std::to_string(::getpid());
    // The client shim's file (its pid is ours, so its name is known), and
    // the names the old writer used, one of them the server's.
    const std::string client_file = dir + "/t-" + pid + ".json";
    as_nobody("ln -s " + quoted(victim) + " " + quoted(client_file) + " && ln -s " + quoted(victim) + " " +
              quoted(client_file + ".tmp." + pid));
    const std::string err = mine / ("stderr-" + kind);
    int server_pid = 0;
    {
      const StderrTo to_file(err);
      SyncRpcOptions options;
      options.trace = dir + "/t-%p.json";
      SyncRpcChannel channel(bin_path("spinrpc-server"), {"--api"}, options);
      server_pid = channel.pid();
      const std::string server_file = dir + "/t-" + std::to_string(server_pid) + ".json";
      as_nobody("ln -s " + quoted(victim) + " " + quoted(server_file + ".tmp." + std::to_string(server_pid)));
      CHECK(channel.request("echo", "x") == "x");
      CHECK(channel.close() == 0);
    }
    const std::string server_file = dir + "/t-" + std::to_string(server_pid) + ".json";
    CHECK(read_text(victim) == "precious\n");
    CHECK(read_text(err) == "spinrpc: not writing the trace " + client_file + ": it is a symbolic link, never followed\n");
    CHECK(kind_at(client_file) == 'l');
    CHECK(kind_at(client_file + ".tmp." + pid) == 'l');
    CHECK(kind_at(server_file + ".tmp." + std::to_string(server_pid)) == 'l');
    // The server's own file is whole, its own, and private.
    REQUIRE(kind_at(server_file) == 'f');
    CHECK(mode_of(server_file) == 0600);
    CHECK(load_trace(server_file).spinrpc().at("pid") == server_pid);

    // A FIFO of nobody's at the name, with a reader: it would get the trace.
    const std::string fifo = dir + "/f.json";
    as_nobody("mkfifo -m 0666 " + quoted(fifo));
    const UniqueFd reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(reader);
    const ChildEnd end = in_child([&] { FilledRing(1).write(fifo); });
    CHECK(exited_with(end, 1));
    CHECK(end.what == "spinrpc: not writing the trace " + fifo + ": it is a FIFO of another user (uid 65534), who would read it");
    CHECK(kind_at(fifo) == 'p');
    char byte;
    CHECK(::read(reader.get(), &byte, 1) == 0);  // nothing came, and the writer is gone
  }
}

}  // namespace

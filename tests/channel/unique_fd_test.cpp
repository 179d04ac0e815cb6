// UniqueFd and make_pipe: ownership moves, the fd is closed exactly once,
// and a failed close is reported (close() throws, the destructor prints).

#include <doctest/doctest.h>

#include <fcntl.h>   // ::fcntl, F_GETFD, F_GETFL, FD_CLOEXEC, O_NONBLOCK
#include <unistd.h>  // ::close, ::dup, ::dup2, ::read, ::write

#include <cerrno>        // errno, EBADF
#include <string>        // std::string, std::to_string
#include <system_error>  // std::system_error, std::errc
#include <utility>       // std::move

#include "descriptor/pipe.h"
#include "descriptor/unique_fd.h"

namespace spinrpc {
namespace {

// True when `fd` is not an open descriptor of this process.
bool is_closed(int fd) {
  errno = 0;
  return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// A fresh open descriptor (one end of a pipe; the other end is closed).
int open_fd() {
  PipePair p = make_pipe();
  return p.read_end.release();
}

TEST_CASE("UniqueFd move construction leaves -1 behind and keeps the fd open") {
  const int fd = open_fd();
  UniqueFd a(fd);
  UniqueFd b(std::move(a));
  CHECK(a.get() == -1);
  CHECK_FALSE(static_cast<bool>(a));
  CHECK(b.get() == fd);
  CHECK(static_cast<bool>(b));
  CHECK(is_open(fd));
}

TEST_CASE("UniqueFd move assignment closes the fd it held and takes the other's") {
  const int old_fd = open_fd();
  const int new_fd = open_fd();
  UniqueFd target(old_fd);
  UniqueFd source(new_fd);
  target = std::move(source);
  CHECK(source.get() == -1);
  CHECK(target.get() == new_fd);
  CHECK(is_closed(old_fd));
  CHECK(is_open(new_fd));
}

TEST_CASE("UniqueFd move assignment to itself keeps the fd open") {
  const int fd = open_fd();
  UniqueFd a(fd);
  UniqueFd& alias = a;
  a = std::move(alias);
  CHECK(a.get() == fd);
  CHECK(is_open(fd));
}

TEST_CASE("UniqueFd::release gives the fd up without closing it") {
  const int fd = open_fd();
  int released = -1;
  {
    UniqueFd a(fd);
    released = a.release();
    CHECK(a.get() == -1);
  }  // the destructor must not close it now
  CHECK(released == fd);
  CHECK(is_open(fd));
  ::close(fd);
}

TEST_CASE("UniqueFd::reset closes the held fd and holds the new one") {
  const int first = open_fd();
  const int second = open_fd();
  UniqueFd a(first);
  a.reset(second);
  CHECK(is_closed(first));
  CHECK(a.get() == second);
  CHECK(is_open(second));
  a.reset();
  CHECK(a.get() == -1);
  CHECK(is_closed(second));
}

TEST_CASE("UniqueFd's destructor closes its fd") {
  const int fd = open_fd();
  { UniqueFd a(fd); }
  CHECK(is_closed(fd));
}

TEST_CASE("UniqueFd::close closes the fd and leaves -1, and does nothing when empty") {
  const int fd = open_fd();
  UniqueFd a(fd);
  a.close();
  CHECK(a.get() == -1);
  CHECK(is_closed(fd));
  CHECK_NOTHROW(a.close());
  UniqueFd empty;
  CHECK_NOTHROW(empty.close());
}

TEST_CASE("UniqueFd::close throws system_error naming the fd when it was closed behind its back") {
  const int fd = open_fd();
  UniqueFd a(fd);
  REQUIRE(::close(fd) == 0);  // behind its back
  try {
    a.close();
    FAIL("close() did not throw");
  } catch (const std::system_error& e) {
    CHECK(e.code().value() == EBADF);
    CHECK(std::string(e.what()) == "cannot close fd " + std::to_string(fd) + ": Bad file descriptor");
  }
  CHECK(a.get() == -1);  // released either way
}

TEST_CASE("UniqueFd's destructor reports a failed close as one line on stderr") {
  // Route fd 2 into a pipe for the duration of the destructor.
  PipePair capture = make_pipe();
  const int saved_stderr = ::dup(2);
  REQUIRE(saved_stderr >= 0);
  const int fd = open_fd();
  {
    UniqueFd a(fd);
    REQUIRE(::close(fd) == 0);  // behind its back
    REQUIRE(::dup2(capture.write_end.get(), 2) == 2);
  }  // ~UniqueFd: close fails with EBADF
  ::dup2(saved_stderr, 2);
  ::close(saved_stderr);
  capture.write_end.reset();
  std::string text;
  char piece[256];
  for (ssize_t n; (n = ::read(capture.read_end.get(), piece, sizeof piece)) > 0;) {
    text.append(piece, static_cast<std::size_t>(n));
  }
  CHECK(text == "spinrpc: cannot close fd " + std::to_string(fd) + ": Bad file descriptor\n");
}

TEST_CASE("make_pipe creates both ends close-on-exec and blocking, and bytes flow from write to read end") {
  PipePair p = make_pipe();
  for (int fd : {p.read_end.get(), p.write_end.get()}) {
    CAPTURE(fd);
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  }
  REQUIRE(::write(p.write_end.get(), "ping", 4) == 4);
  p.write_end.reset();
  char got[8] = {};
  CHECK(::read(p.read_end.get(), got, sizeof got) == 4);
  CHECK(std::string(got, 4) == "ping");
  CHECK(::read(p.read_end.get(), got, sizeof got) == 0);  // EOF: the write end is closed
}

}  // namespace
}  // namespace spinrpc

// check_syscall: the one retry rule (docs/CONVENTIONS.md#system-calls) on real and scripted
// failures.

#include <doctest/doctest.h>

#include <unistd.h>  // ::read, ::write

#include <cerrno>        // errno, EINTR, EAGAIN, EPIPE, ECONNRESET, EBADF
#include <string>        // std::string, std::to_string
#include <system_error>  // std::system_error, std::errc

#include "descriptor/pipe.h"
#include "descriptor/syscall.h"
#include "tests/channel/channel_test_util.h"

namespace spinrpc {
namespace {

TEST_CASE("check_syscall retries a call that fails with EINTR and returns its result") {
  int calls = 0;
  const long result = check_syscall(
      [&]() -> long {
        if (++calls <= 3) {
          errno = EINTR;
          return -1;
        }
        return 42;
      },
      "read from", 5);
  CHECK(result == 42);
  CHECK(calls == 4);
}

TEST_CASE("check_syscall returns -1 with errno intact for EAGAIN, EPIPE and ECONNRESET") {
  for (int err : {EAGAIN, EWOULDBLOCK, EPIPE, ECONNRESET}) {
    CAPTURE(err);
    int calls = 0;
    const long result = check_syscall(
        [&]() -> long {
          ++calls;
          errno = err;
          return -1;
        },
        "write to", 5);
    CHECK(result == -1);
    CHECK(errno == err);
    CHECK(calls == 1);
  }
}

TEST_CASE("check_syscall returns EAGAIN from a real empty non-blocking pipe as a value") {
  PipePair p = make_pipe();
  test::set_nonblocking(p.read_end.get());
  char c;
  const int fd = p.read_end.get();
  const ssize_t n = check_syscall([&] { return ::read(fd, &c, 1); }, "read from", fd);
  CHECK(n == -1);
  CHECK(errno == EAGAIN);
}

TEST_CASE("check_syscall throws system_error naming the call and the fd for any other failure") {
  PipePair p = make_pipe();
  const int fd = p.read_end.get();
  try {
    // Writing to a pipe's read end fails with EBADF.
    check_syscall([&] { return ::write(fd, "x", 1); }, "write to", fd);
    FAIL("check_syscall did not throw");
  } catch (const std::system_error& e) {
    CHECK(e.code().value() == EBADF);
    CHECK(std::string(e.what()) == "cannot write to fd " + std::to_string(fd) + ": Bad file descriptor");
  }
}

}  // namespace
}  // namespace spinrpc

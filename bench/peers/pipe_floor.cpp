#include "bench/peers/pipe_floor.h"

#include <fcntl.h>     // ::fcntl, O_NONBLOCK
#include <sys/wait.h>  // ::waitpid
#include <unistd.h>    // ::fork, ::read, ::write, ::_exit

#include <cerrno>        // errno, EAGAIN, EINTR
#include <cstdio>        // std::fprintf
#include <stdexcept>     // std::runtime_error
#include <system_error>  // std::system_error
#include <vector>        // std::vector

#include "descriptor/pipe.h"

namespace spinrpc::bench {

namespace {

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    throw std::system_error(errno, std::generic_category(), "cannot make pipe fd " + std::to_string(fd) + " non-blocking");
  }
}

// Reads exactly `len` bytes. Returns `len`, or the count read before EOF,
// or -1 on an error other than EAGAIN/EINTR. EAGAIN (the polled fd has
// nothing yet) retries at once: that is the polled floor.
long read_exactly(int fd, std::byte* buf, std::size_t len) {
  std::size_t got = 0;
  while (got < len) {
    const ssize_t n = ::read(fd, buf + got, len - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0) {
      // EOF.
      break;
    } else if (errno != EAGAIN && errno != EINTR) {
      return -1;
    }
  }
  return static_cast<long>(got);
}

bool write_all(int fd, const std::byte* buf, std::size_t len) {
  std::size_t put = 0;
  while (put < len) {
    const ssize_t n = ::write(fd, buf + put, len - put);
    if (n > 0) {
      put += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

// The echoing child's whole life: EOF between messages ends it with 0,
// anything else with 1.
[[noreturn]] void echo_forever(int in, int out, std::size_t message_bytes) {
  std::vector<std::byte> buf(message_bytes);
  for (;;) {
    const long n = read_exactly(in, buf.data(), message_bytes);
    if (n == 0) ::_exit(0);
    if (n != static_cast<long>(message_bytes) || !write_all(out, buf.data(), message_bytes)) ::_exit(1);
  }
}

}  // namespace

std::string_view floor_read_name(FloorRead read) noexcept {
  return read == FloorRead::blocking ? "blocking" : "polled";
}

PipeFloor::PipeFloor(std::size_t message_bytes, FloorRead read) : message_bytes_(message_bytes) {
  PipePair request = make_pipe();
  PipePair reply = make_pipe();
  if (read == FloorRead::polled) {
    set_nonblocking(request.read_end.get());
    set_nonblocking(reply.read_end.get());
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "cannot fork the pipe floor's echo child");
  if (pid == 0) {
    // Child: keep only its two ends. The parent's ends must close here, or
    // the request pipe would never reach EOF.
    request.write_end.reset();
    reply.read_end.reset();
    echo_forever(request.read_end.get(), reply.write_end.get(), message_bytes);
  }
  pid_ = pid;
  to_child_ = std::move(request.write_end);
  from_child_ = std::move(reply.read_end);
}

PipeFloor::~PipeFloor() {
  to_child_.reset();
  from_child_.reset();
  if (pid_ < 0) return;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "spinrpc-bench: cannot reap the pipe floor's child %d\n", pid_);
      return;
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "spinrpc-bench: the pipe floor's child ended with status %d\n", status);
  }
}

void PipeFloor::round_trip(ByteView message, std::span<std::byte> reply) {
  if (!write_all(to_child_.get(), message.data(), message_bytes_)) {
    throw std::system_error(errno, std::generic_category(), "cannot write to the pipe floor's child");
  }
  const long n = read_exactly(from_child_.get(), reply.data(), message_bytes_);
  if (n < 0) throw std::system_error(errno, std::generic_category(), "cannot read from the pipe floor's child");
  if (n != static_cast<long>(message_bytes_)) throw std::runtime_error("the pipe floor's child closed its end");
}

}  // namespace spinrpc::bench

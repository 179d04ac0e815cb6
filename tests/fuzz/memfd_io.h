// The server fuzz targets' input and output: memfds (a real fd, a real EOF,
// no threads), created, filled and read back under FUZZ_CHECK.
#pragma once

#include <sys/mman.h>  // ::memfd_create, MFD_CLOEXEC
#include <unistd.h>    // ::write, ::lseek, ::read

#include <cstddef>  // std::size_t
#include <string>   // std::string

#include "fuzz_check.h"
#include "protocol/frame.h"

namespace spinrpc::fuzz {

inline int make_memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "memfd_create");
  return fd;
}

inline void write_all(int fd, ByteView bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    FUZZ_CHECK(n > 0, "write to a memfd");
    done += static_cast<std::size_t>(n);
  }
}

/// Everything written to `fd` so far, from its start.
inline std::string read_back(int fd) {
  std::string bytes;
  FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0, "lseek on a memfd");
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    FUZZ_CHECK(n >= 0, "read from a memfd");
    if (n == 0) return bytes;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace spinrpc::fuzz

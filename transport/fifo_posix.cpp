#include "transport/fifo_posix.h"

#include <fcntl.h>     // ::open, ::fcntl, O_*
#include <sys/stat.h>  // ::mkfifo, ::stat, ::fstat, ::chmod, S_ISFIFO
#include <unistd.h>    // ::geteuid

#include <poll.h>        // ::poll

#include <cstdio>              // std::snprintf
#include <condition_variable>  // std::condition_variable
#include <mutex>         // std::mutex
#include <system_error>  // std::system_error
#include <thread>        // std::thread

#include "descriptor/syscall.h"
#include "stream/fd_streams_posix.h"
#include "transport/connect_retry.h"
#include "transport/created_files.h"

namespace spinrpc {
namespace {

[[noreturn]] void fail(int err, const std::string& path, const char* why = nullptr) {
  std::string what = "cannot use FIFO " + path;
  if (why != nullptr) what += std::string(": ") + why;
  throw std::system_error(err, std::generic_category(), what);
}

// A FIFO spinrpc reads requests from or writes replies to must be this
// user's and closed to everyone else (docs/HARDENING.md, "Endpoints are
// private"): another user could otherwise send requests or read replies.
void check_private_fifo(const struct stat& st, const std::string& path) {
  if (!S_ISFIFO(st.st_mode)) fail(EEXIST, path, "it exists and is not a FIFO");
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    fail(EACCES, path, ("other users may reach it (mode " + std::string(mode) + ", owner uid " +
                        std::to_string(st.st_uid) + "): use a FIFO of this user's with mode 0600, or a path " +
                        "where spinrpc-server creates one").c_str());
  }
}

// Creates the FIFO (0600 whatever the umask: mkfifo's mode can only lose
// bits to it, chmod sets the owner's back) unless one is there; returns
// whether it created it. One that is there must be private already.
bool ensure_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) == 0) {
    if (::chmod(path.c_str(), 0600) != 0) fail(errno, path);
    return true;
  }
  if (errno != EEXIST) fail(errno, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(errno, path);
  check_private_fifo(st, path);
  return false;
}

// Whether both paths name one file (device and inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

UniqueFd open_fifo(const std::string& path, int flags) {
  const int fd = check_syscall([&] { return ::open(path.c_str(), flags | O_CLOEXEC); }, "open", -1);
  if (fd < 0) fail(errno, path);
  UniqueFd opened(fd);
  // What was opened, not what the path named a moment ago.
  struct stat st {};
  if (::fstat(opened.get(), &st) != 0) fail(errno, path);
  check_private_fifo(st, path);
  return opened;
}

class FifoTransport final : public Transport {
 public:
  FifoTransport(std::string in_path, std::string out_path, CreatedFiles& files)
      : in_path_(std::move(in_path)), out_path_(std::move(out_path)), files_(files) {
    try {
      if (ensure_fifo(in_path_)) files_.add(in_path_);
      if (ensure_fifo(out_path_)) files_.add(out_path_);
      // Two spellings of one FIFO (`dir/q` and `dir//q`, a symlink, a
      // relative path) pass the command line's string check; the server
      // would then read its own replies.
      if (same_file(in_path_, out_path_)) {
        fail(EINVAL, out_path_, ("it is the same FIFO as --fifo-in " + in_path_ +
                                 ", so the server would read its own replies").c_str());
      }
      // A reader on the request FIFO from the start: the client's open for
      // writing then succeeds at once, whichever FIFO it opens first.
      early_reader_ = open_fifo(in_path_, O_RDONLY | O_NONBLOCK);
    } catch (...) {
      // No destructor runs for a constructor that throws: a FIFO made here
      // goes now (the other one refused: a regular file there, a missing
      // directory). Only ours: remove() forgets
      // paths it did not record.
      files_.remove(in_path_);
      files_.remove(out_path_);
      throw;
    }
  }

  ~FifoTransport() override {
    files_.remove(in_path_);
    files_.remove(out_path_);
  }

  Streams accept(const BufferOptions& options, bool spinning) override {
    // Blocks until the client opens the reply FIFO for reading: waiting for
    // a client, as a socket's accept does. If it opens the request FIFO
    // first, that succeeded already (early_reader_).
    UniqueFd out = open_fifo(out_path_, O_WRONLY);
    // The request FIFO is read through the reader held since the start, not
    // a fresh open: a client may write its request and close the FIFO before
    // it opens the reply FIFO (a shell's `printf ... > in; cat out`), and a
    // fresh open(O_RDONLY) would then wait for a writer that has left. Until
    // bytes arrive or a writer has come and gone, a read would report EOF
    // for "no writer yet"; poll(2) tells them apart: a FIFO reader sees
    // POLLHUP only once a writer has opened and closed it since the reader
    // opened (Linux pipe_poll).
    pollfd p{early_reader_.get(), POLLIN, 0};
    check_syscall([&] { return ::poll(&p, 1, -1); }, "poll", p.fd);
    // The fd is ours (we opened it): the channel gets it blocking.
    set_nonblocking(p.fd, false);
    return fd_streams(std::move(early_reader_), std::move(out), options, spinning);
  }

 private:
  std::string in_path_;   // client -> server
  std::string out_path_;  // server -> client
  CreatedFiles& files_;   // removes the FIFOs this transport made
  UniqueFd early_reader_;  // the request FIFO's reader from the start: see accept()
};

// Opens the FIFO at `path` for reading, which blocks until a writer opens
// it, giving up at `deadline`. open(2) has no timeout, so it runs on a
// thread of its own; on time-out this side opens the FIFO for writing
// itself (which succeeds at once, the blocked opener being a reader), the
// blocked open returns, and both fds are closed.
UniqueFd open_reader_within(const std::string& path, std::chrono::steady_clock::time_point deadline) {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  int fd = -1;
  int err = 0;
  std::thread opener([&] {
    const int opened = retry_on_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    const int open_errno = errno;
    const std::lock_guard lock(mutex);
    fd = opened;
    err = open_errno;
    finished = true;
    done.notify_one();
  });
  std::unique_lock lock(mutex);
  const bool in_time = done.wait_until(lock, deadline, [&] { return finished; });
  while (!finished) {
    // Release the opener; ENXIO until its open has counted it as a reader.
    const UniqueFd release(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    done.wait_for(lock, detail::kConnectRetryPause, [&] { return finished; });
  }
  lock.unlock();
  opener.join();
  UniqueFd reader(fd);
  if (!in_time) {
    throw std::system_error(ETIMEDOUT, std::generic_category(),
                            "cannot connect to " + path + ": the server did not open it for writing in time");
  }
  if (!reader) throw std::system_error(err, std::generic_category(), "cannot connect to " + path);
  return reader;
}

}  // namespace

std::unique_ptr<Transport> make_fifo_transport(const std::string& in_path,
                                               const std::string& out_path, CreatedFiles& files) {
  return std::make_unique<FifoTransport>(in_path, out_path, files);
}

Streams connect_fifo_pair(const std::string& to_server, const std::string& from_server,
                          const ConnectOptions& options) {
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  // O_NONBLOCK: an open for writing fails with ENXIO instead of blocking
  // while the server has no reader on its request FIFO yet.
  UniqueFd out = detail::retry_connect(
      [&] { return UniqueFd(::open(to_server.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)); },
      {ENOENT, ENXIO}, to_server, options.timeout);
  // Our own open description: blocking, unless writes are to be bounded.
  set_nonblocking(out.get(), options.bounded_writes);
  // Blocking, so the first read cannot mistake "no writer yet" for EOF,
  // but bounded by what is left of the timeout: a server that died or hangs
  // between the two opens must not hold the client forever.
  UniqueFd in = open_reader_within(from_server, deadline);
  return fd_streams(std::move(in), std::move(out), options.buffer, options.spinning);
}

}  // namespace spinrpc

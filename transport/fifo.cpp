#include "transport/fifo.h"

#include <fcntl.h>     // ::open, ::fcntl, O_*
#include <sys/stat.h>  // ::mkfifo, ::stat, S_ISFIFO

#include <system_error>  // std::system_error

#include "channel/syscall.h"
#include "transport/connect_retry.h"
#include "transport/created_files.h"

namespace spinrpc {
namespace {

[[noreturn]] void fail(int err, const std::string& path, const char* why = nullptr) {
  std::string what = "cannot use FIFO " + path;
  if (why != nullptr) what += std::string(": ") + why;
  throw std::system_error(err, std::generic_category(), what);
}

// Creates the FIFO (0600) unless one is there; returns whether it created it.
bool ensure_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) == 0) return true;
  if (errno != EEXIST) fail(errno, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(errno, path);
  if (!S_ISFIFO(st.st_mode)) fail(EEXIST, path, "it exists and is not a FIFO");
  return false;
}

UniqueFd open_fifo(const std::string& path, int flags) {
  const int fd = check_syscall([&] { return ::open(path.c_str(), flags | O_CLOEXEC); }, "open", -1);
  if (fd < 0) fail(errno, path);
  return UniqueFd(fd);
}

class FifoTransport final : public Transport {
 public:
  FifoTransport(std::string in_path, std::string out_path, CreatedFiles& files)
      : in_path_(std::move(in_path)), out_path_(std::move(out_path)), files_(files) {
    if (ensure_fifo(in_path_)) files_.add(in_path_);
    if (ensure_fifo(out_path_)) files_.add(out_path_);
    // A reader on the request FIFO from the start: the client's open for
    // writing then succeeds at once, whichever FIFO it opens first.
    early_reader_ = open_fifo(in_path_, O_RDONLY | O_NONBLOCK);
  }

  ~FifoTransport() override {
    files_.remove(in_path_);
    files_.remove(out_path_);
  }

  Connection accept() override {
    // Blocks until the client opens the reply FIFO for reading. If it opens
    // the request FIFO first, that succeeded already (early_reader_).
    UniqueFd out = open_fifo(out_path_, O_WRONLY);
    // Blocks until the client has the request FIFO open for writing, so the
    // first read cannot mistake "no writer yet" for EOF.
    UniqueFd in = open_fifo(in_path_, O_RDONLY);
    early_reader_.reset();
    return {std::move(in), std::move(out)};
  }

 private:
  std::string in_path_;   // client -> server
  std::string out_path_;  // server -> client
  CreatedFiles& files_;   // removes the FIFOs this transport made
  UniqueFd early_reader_;  // held until accept(): see the constructor
};

}  // namespace

std::unique_ptr<Transport> make_fifo_transport(const std::string& in_path,
                                               const std::string& out_path, CreatedFiles& files) {
  return std::make_unique<FifoTransport>(in_path, out_path, files);
}

Connection connect_fifo_pair(const std::string& to_server, const std::string& from_server,
                             std::chrono::milliseconds timeout) {
  // O_NONBLOCK: an open for writing fails with ENXIO instead of blocking
  // while the server has no reader on its request FIFO yet.
  UniqueFd out = detail::retry_connect(
      [&] { return UniqueFd(::open(to_server.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)); }, ENOENT,
      ENXIO, to_server, timeout);
  const int flags = ::fcntl(out.get(), F_GETFL);
  if (flags < 0 || ::fcntl(out.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    throw std::system_error(errno, std::generic_category(), "cannot set up " + to_server);
  }
  // Blocking: returns once the server opens its reply FIFO for writing, so
  // the first read cannot mistake "no writer yet" for EOF.
  const int in = check_syscall([&] { return ::open(from_server.c_str(), O_RDONLY | O_CLOEXEC); },
                               "open", -1);
  if (in < 0) throw std::system_error(errno, std::generic_category(), "cannot connect to " + from_server);
  return {UniqueFd(in), std::move(out)};
}

}  // namespace spinrpc

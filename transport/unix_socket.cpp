#include "transport/unix_socket.h"

#include <fcntl.h>       // ::fcntl, FD_CLOEXEC
#include <sys/socket.h>  // ::socket, ::connect
#include <sys/stat.h>    // ::lstat, S_ISSOCK
#include <unistd.h>      // ::unlink

#include <cstring>       // std::memcpy
#include <system_error>  // std::system_error
#include <thread>        // std::thread

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "channel/syscall.h"
#include "transport/connect_retry.h"
#include "transport/created_files.h"

namespace spinrpc {
namespace {

using boost::asio::local::stream_protocol;

[[noreturn]] void fail(int err, const std::string& path, const char* why = nullptr) {
  std::string what = "cannot listen on " + path;
  if (why != nullptr) what += std::string(": ") + why;
  throw std::system_error(err, std::generic_category(), what);
}

// tsgo removes whatever is at the path. spinrpc removes only a socket that
// nobody answers on: a regular file is somebody's data, and a live server's
// socket is its client's way in.
void remove_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail(errno, path);
  }
  if (!S_ISSOCK(st.st_mode)) fail(EEXIST, path, "it exists and is not a socket (not removing it)");
  const sockaddr_un address = unix_socket_address(path, "cannot listen on");
  // Non-blocking: a stuck server whose backlog is full makes a blocking
  // connect wait for it forever; here that is EAGAIN, and still a live server.
  const UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!probe) fail(errno, path);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 ||
      errno == EAGAIN) {
    fail(EADDRINUSE, path, "a live server is listening there");
  }
  if (errno != ECONNREFUSED) fail(errno, path);
  // Branch: a socket file whose server is gone.
  ::unlink(path.c_str());
}

class UnixSocketTransport final : public Transport {
 public:
  UnixSocketTransport(std::string path, CreatedFiles& files)
      : path_(std::move(path)), files_(files), acceptor_(io_) {
    unix_socket_address(path_, "cannot listen on");  // the length rule, before anything is touched
    remove_stale_socket(path_);
    boost::system::error_code error;
    acceptor_.open(stream_protocol(), error);
    if (error) fail(error.value(), path_);
    acceptor_.bind(stream_protocol::endpoint(path_), error);
    if (error) fail(error.value(), path_);
    files_.add(path_);
    acceptor_.listen(1, error);
    if (error) fail(error.value(), path_);
  }

  ~UnixSocketTransport() override {
    io_.stop();
    if (rejecter_.joinable()) rejecter_.join();
    files_.remove(path_);
  }

  Connection accept() override {
    boost::system::error_code error;
    stream_protocol::socket socket = acceptor_.accept(error);
    if (error) throw std::system_error(error.value(), std::generic_category(), "cannot accept on " + path_);
    // Exactly one connection, as tsgo. The listener stays open so that the
    // path visibly belongs to a live server (another spinrpc-server's stale
    // check connects to it), and a second client is accepted and closed at
    // once, seeing EOF instead of waiting in the backlog. That happens on a
    // thread of its own that sleeps in epoll: the served connection's reads
    // and writes stay on this thread, with no wake-up added.
    reject_next();
    rejecter_ = std::thread([this] { io_.run(); });
    UniqueFd in(socket.release());
    // The server never execs, but every fd spinrpc holds is close-on-exec.
    ::fcntl(in.get(), F_SETFD, FD_CLOEXEC);
    UniqueFd out = UniqueFd::duplicate(in.get());
    return {std::move(in), std::move(out)};
  }

 private:
  void reject_next() {
    acceptor_.async_accept([this](const boost::system::error_code& error, stream_protocol::socket extra) {
      if (error) return;  // the acceptor is closing
      boost::system::error_code ignored;
      extra.close(ignored);
      reject_next();
    });
  }

  std::string path_;
  CreatedFiles& files_;                      // removes path_ however the server ends
  boost::asio::io_context io_;               // the acceptor's executor
  stream_protocol::acceptor acceptor_;       // listens for the server's whole life
  std::thread rejecter_;                     // runs io_: turns further clients away
};

}  // namespace

sockaddr_un unix_socket_address(const std::string& path, const char* what_for) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    throw std::system_error(ENAMETOOLONG, std::generic_category(),
                            std::string(what_for) + " " + path + ": a Unix socket path must have 1 to " +
                                std::to_string(sizeof address.sun_path - 1) + " bytes");
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

std::unique_ptr<Transport> make_unix_socket_transport(const std::string& path, CreatedFiles& files) {
  return std::make_unique<UnixSocketTransport>(path, files);
}

Connection connect_unix_socket(const std::string& path, std::chrono::milliseconds timeout) {
  const sockaddr_un address = unix_socket_address(path, "cannot connect to");
  UniqueFd socket = detail::retry_connect(
      [&] {
        // Non-blocking while connecting: a blocking connect to a server that
        // is stuck with a full backlog waits forever; non-blocking, that is
        // EAGAIN, tried again until the timeout. The socket is ours; the
        // channel gets it blocking.
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!fd) throw std::system_error(errno, std::generic_category(), "cannot create a socket for " + path);
        // Not check_syscall: ENOENT, ECONNREFUSED and EAGAIN are answers
        // here ("not listening yet", "busy"), and an interrupted connect is
        // simply tried again on a fresh socket.
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
          const int err = errno == EINTR ? ECONNREFUSED : errno;
          fd.reset();
          errno = err;
        }
        return fd;
      },
      {ENOENT, ECONNREFUSED, EAGAIN}, path, timeout);
  set_nonblocking(socket.get(), false);
  UniqueFd out = UniqueFd::duplicate(socket.get());
  return {std::move(socket), std::move(out)};
}

}  // namespace spinrpc

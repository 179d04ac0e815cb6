#include "transport/unix_socket_posix.h"

#include <fcntl.h>       // ::fcntl, FD_CLOEXEC, AT_FDCWD
#include <stdlib.h>      // ::mkdtemp
#include <sys/socket.h>  // ::socket, ::connect, ::getsockopt, SO_PEERCRED
#include <sys/stat.h>    // ::lstat, ::mkdir, ::chmod, S_ISSOCK
#include <unistd.h>      // ::unlink, ::rmdir, ::geteuid

#include <cstring>       // std::memcpy
#include <system_error>  // std::system_error
#include <thread>        // std::thread

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "descriptor/glibc_extensions.h"
#include "descriptor/stderr_lines.h"
#include "descriptor/syscall.h"
#include "stream/fd_streams_posix.h"
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

// The folder part of `path` ("." for a bare name), for a sibling of it.
std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class UnixSocketTransport final : public Transport {
 public:
  UnixSocketTransport(const std::string& path, SocketPlace place, CreatedFiles& files, std::string program)
      : path_(place == SocketPlace::in_private_directory ? path + "/socket" : path),
        files_(files),
        program_(std::move(program)),
        acceptor_(io_) {
    unix_socket_address(path_, "cannot listen on");  // the length rule, before anything is touched
    boost::system::error_code error;
    acceptor_.open(stream_protocol(), error);
    if (error) fail(error.value(), path_);
    if (place == SocketPlace::in_private_directory) {
      // 7.1's layout: PATH must not exist; mkdir's 0700 can only lose bits
      // to the umask, and the chmod restores the owner's.
      if (::mkdir(path.c_str(), 0700) != 0) fail(errno, path, "cannot create the socket's private directory");
      directory_ = path;
      files_.add(directory_);
      try {
        if (::chmod(path.c_str(), 0700) != 0) fail(errno, path);
        bind_private(path_);
        files_.add(path_);
      } catch (...) {
        files_.remove(path_);
        files_.remove(directory_);
        throw;
      }
    } else {
      remove_stale_socket(path_);
      // Bound in a private directory beside PATH (mkdtemp: 0700 whatever the
      // umask), made 0600 there, then renamed onto PATH, which must still be
      // free: no moment at which another user can reach it.
      std::string staging = folder_of(path_) + "/.spinrpc-socket-XXXXXX";
      if (::mkdtemp(staging.data()) == nullptr) {
        fail(errno, path_, errno == ENOENT ? nullptr : "cannot create a private directory beside it");
      }
      const std::string staged = staging + "/socket";
      try {
        bind_private(staged);
        if (rename_no_replace(staged.c_str(), path_.c_str()) != 0) {
          fail(errno, path_, errno == EEXIST ? "something took the path meanwhile" : nullptr);
        }
      } catch (...) {
        ::unlink(staged.c_str());
        ::rmdir(staging.c_str());
        throw;
      }
      ::rmdir(staging.c_str());
      files_.add(path_);
    }
    acceptor_.listen(1, error);
    if (error) fail(error.value(), path_);
  }

  ~UnixSocketTransport() override {
    io_.stop();
    if (rejecter_.joinable()) rejecter_.join();
    files_.remove(path_);
    if (!directory_.empty()) files_.remove(directory_);
  }

  Streams accept(const BufferOptions& options, bool spinning) override {
    boost::system::error_code error;
    stream_protocol::socket socket(io_);
    // Only this user's processes: the file's mode already says so, and the
    // peer's credentials (SO_PEERCRED) are checked too, in case the mode was
    // changed or a process got hold of the path another way.
    for (;;) {
      socket = acceptor_.accept(error);
      if (error) throw std::system_error(error.value(), std::generic_category(), "cannot accept on " + path_);
      ucred peer{};
      socklen_t size = sizeof peer;
      if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
          peer.uid == ::geteuid()) {
        break;
      }
      write_stderr_without_waiting(program_ + ": refused a client on " + path_ + ": uid " +
                                   std::to_string(peer.uid) + " (pid " + std::to_string(peer.pid) +
                                   ") is not this server's user (uid " + std::to_string(::geteuid()) + ")\n");
      boost::system::error_code ignored;
      socket.close(ignored);
    }
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
    return fd_streams(std::move(in), std::move(out), options, spinning);
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

  // Binds the acceptor at `where` and makes the socket file 0600.
  void bind_private(const std::string& where) {
    boost::system::error_code error;
    acceptor_.bind(stream_protocol::endpoint(where), error);
    if (error) fail(error.value(), where);
    if (::chmod(where.c_str(), 0600) != 0) fail(errno, where);
  }

  std::string path_;                         // the socket file
  std::string directory_;                    // the directory made for it (in_private_directory)
  CreatedFiles& files_;                      // removes what we created however the server ends
  std::string program_;                      // names us in the refusal line
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

std::unique_ptr<Transport> make_unix_socket_transport(const std::string& path, SocketPlace place,
                                                     CreatedFiles& files, const std::string& program) {
  return std::make_unique<UnixSocketTransport>(path, place, files, program);
}

Streams connect_unix_socket(const std::string& path, const ConnectOptions& options) {
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
      {ENOENT, ECONNREFUSED, EAGAIN}, path, options.timeout);
  // One open description both ways: blocking, unless writes are to be bounded.
  set_nonblocking(socket.get(), options.bounded_writes);
  UniqueFd out = UniqueFd::duplicate(socket.get());
  return fd_streams(std::move(socket), std::move(out), options.buffer, options.spinning);
}

}  // namespace spinrpc

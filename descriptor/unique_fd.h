#pragma once

namespace spinrpc {

/// Owns one file descriptor; -1 means "none". Move-only: moving leaves -1
/// behind. The destructor never throws; a failed close(2) there is reported
/// as one line on stderr. A bare `int fd` anywhere else in spinrpc is borrowed.
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  /// Takes ownership of `fd` (may be -1).
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

  /// A close-on-exec duplicate of `fd` (borrowed), numbered `lowest` or
  /// above (F_DUPFD_CLOEXEC): a socket channel owns one fd per direction,
  /// and a child's pipe ends are moved out of 0..2. Throws std::system_error.
  static UniqueFd duplicate(int fd, int lowest = 0);

  /// Gives the fd up without closing it; returns it (or -1).
  int release() noexcept;
  /// Closes the held fd, if any (reporting a failure on stderr), then holds `fd`.
  void reset(int fd = -1) noexcept;
  /// Closes the held fd now. Throws std::system_error if close(2) fails;
  /// the fd is released either way (close is never retried: Linux frees the
  /// descriptor even when it reports EINTR).
  void close();

 private:
  int fd_ = -1;  // -1: nothing owned
};

}  // namespace spinrpc

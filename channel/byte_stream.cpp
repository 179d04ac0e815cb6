#include "channel/byte_stream.h"

#include <fcntl.h>       // ::vmsplice, O_WRONLY
#include <poll.h>        // ::poll
#include <sys/socket.h>  // msghdr, MSG_DONTWAIT, MSG_NOSIGNAL
#include <sys/stat.h>    // ::fstat, S_ISFIFO, S_ISSOCK
#include <sys/uio.h>     // ::writev
#include <unistd.h>      // ssize_t

#include <algorithm>  // std::max, std::min
#include <bit>        // std::bit_ceil
#include <cstring>    // std::memcpy, std::memmove
#include <new>        // std::bad_alloc
#include <string>     // std::to_string
#include <system_error>  // std::system_error
#include <utility>    // std::move

#include "channel/peer_closed.h"
#include "descriptor/syscall.h"
#include "wait/timed_out.h"

namespace spinrpc {
namespace {

// poll(2)'s timeout for a write's wait: -1 without a deadline. Throws
// TimedOut once the deadline has passed.
int write_timeout_ms(const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) throw TimedOut("the peer took no more bytes before the deadline");
  return static_cast<int>(left.count());
}

// Waits until `fd` can take more bytes, until `deadline` if there is one;
// only reached when a non-blocking fd reports a full buffer.
void wait_writable(int fd, const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  for (;;) {
    const int timeout_ms = write_timeout_ms(deadline);
    pollfd p{fd, POLLOUT, 0};
    if (check_syscall([&] { return ::poll(&p, 1, timeout_ms); }, "poll", fd) > 0) return;
  }
}

// Grows the pipe `fd` is an end of to hold `bytes` (a power of two, at most
// ByteStream::kMaxPipeBytes). `known` caches its capacity (0 = not read
// yet). Not a pipe, or refused (past pipe-max-size or the user's pipe
// budget): the pipe stays as it is and is not asked again.
void grow_pipe(int fd, std::size_t& known, std::size_t bytes) {
  if (known == 0) {
    const int now = ::fcntl(fd, F_GETPIPE_SZ);
    known = now > 0 ? static_cast<std::size_t>(now) : ByteStream::kMaxPipeBytes;  // unknown: leave it
  }
  const std::size_t want = std::min(std::bit_ceil(bytes), ByteStream::kMaxPipeBytes);
  if (want <= known) return;
  const int got = ::fcntl(fd, F_SETPIPE_SZ, static_cast<int>(want));
  known = got > 0 ? static_cast<std::size_t>(got) : ByteStream::kMaxPipeBytes;
}

bool is_pipe(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

}  // namespace

ByteStream::ByteStream(UniqueFd in, UniqueFd out, BufferOptions buffer, SpinPolicy spin)
    : reader_(std::move(in), std::move(spin)), out_(std::move(out)), options_(buffer) {
  if (options_.read_while_writing) {
    options_.large_writes = BufferOptions::LargeWrites::copy;  // vmsplice would wait for room
    choose_write();
  }
  lend_ = options_.large_writes != BufferOptions::LargeWrites::copy && out_ && is_pipe(out_.get());
  if (lend_ && options_.large_writes == BufferOptions::LargeWrites::lend_copies) {
    lent_copies_.emplace(options_.retained_buffer_bytes);
  }
  replace_buffer(initial_capacity());
}

std::size_t ByteStream::fill(std::size_t need) {
  if (begin_ == end_ && holds_ == 0) {
    // Nothing buffered and nothing held: rewind for free instead of memmove.
    begin_ = end_ = 0;
    // The message just consumed needed a big buffer: the next may too
    // (BufferOptions::retained_buffer_bytes).
    const bool big_before = largest_need_ > options_.retained_buffer_bytes;
    largest_need_ = 0;
    if (!big_before && capacity_ > std::max(options_.retained_buffer_bytes, initial_capacity())) {
      // LargeWrites::lend: a message we lent may still point into it.
      if (lends_callers_memory()) parked_.push_back(std::move(buffer_));
      replace_buffer(initial_capacity());
    }
  }
  largest_need_ = std::max(largest_need_, need);
  // Bytes buffered but not a whole message: the peer is writing the rest.
  const auto wait_for = begin_ != end_ ? SpinReader::WaitFor::rest_of_message : SpinReader::WaitFor::message;
  // Before waiting for the peer's next message: copies lent to it that it
  // has read are ours again, kept for reuse or freed (LentCopies).
  if (lent_copies_ && wait_for == SpinReader::WaitFor::message) lent_copies_->reclaim_if_read(out_.get());
  reserve_for(need);
  const std::size_t n = reader_.read_some(buffer_.get() + end_, capacity_ - end_, wait_for);
  after_read(n);
  end_ += n;
  return n;
}

std::size_t ByteStream::read_direct(std::byte* buf, std::size_t len) {
  const std::size_t n = reader_.read_some(buf, len, SpinReader::WaitFor::rest_of_message);
  after_read(n);
  return n;
}

void ByteStream::after_read(std::size_t n) noexcept {
  // The peer's next bytes: it has read all we wrote, lent pages included.
  if (n > 0 && !parked_.empty()) parked_.clear();
}

void ByteStream::reserve_for(std::size_t need) {
  // Read-ahead wants free space after end_; the message wants `need` bytes from begin_.
  const auto fits = [&] { return end_ < capacity_ && capacity_ - begin_ >= need; };
  if (fits()) return;
  if (begin_ > floor_) {
    // Slide the unconsumed bytes down to the lowest byte that is not held.
    std::memmove(buffer_.get() + floor_, buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_ - floor_;
    begin_ = floor_;
    if (fits()) return;
  }
  const std::size_t pending = end_ - begin_;
  const std::size_t capacity = std::max({capacity_ * 2, need + options_.initial_buffer_bytes});
  if (holds_ == 0) {
    // Nothing held: begin_ == 0 here, a plain grow-and-copy.
    ReadBuffer grown = allocate_read_buffer(capacity, need);
    std::memcpy(grown.get(), buffer_.get(), pending);
    if (lends_callers_memory()) parked_.push_back(std::move(buffer_));  // as in fill()
    buffer_ = std::move(grown);
    capacity_ = capacity;
    return;
  }
  // Held bytes must not move: copy only the unconsumed bytes to a new
  // buffer and keep the old one alive until the last Hold ends.
  ReadBuffer fresh = allocate_read_buffer(capacity, need);
  std::memcpy(fresh.get(), buffer_.get() + begin_, pending);
  retired_.push_back(std::move(buffer_));
  buffer_ = std::move(fresh);
  capacity_ = capacity;
  begin_ = 0;
  end_ = pending;
  floor_ = 0;
  ++generation_;
}

std::size_t ByteStream::initial_capacity() const noexcept {
  // Room for any frame header, so a first read always makes progress.
  return std::max<std::size_t>(options_.initial_buffer_bytes, 16);
}

void ByteStream::replace_buffer(std::size_t capacity) {
  buffer_ = allocate_read_buffer(capacity, capacity);
  capacity_ = capacity;
}

ByteStream::ReadBuffer ByteStream::allocate_read_buffer(std::size_t capacity, std::size_t need) {
  try {
    return allocate_at_page_offset(capacity, kReadPageOffset);
  } catch (const std::bad_alloc&) {
    throw std::system_error(ENOMEM, std::generic_category(),
                            "cannot allocate " + std::to_string(capacity) + " bytes to read a message of " +
                                std::to_string(need) + " bytes");
  }
}

void ByteStream::write_all(std::span<iovec> parts) {
  // The peer may be blocked waiting for these bytes: placement acts now,
  // before its wake-up is placed (docs/PLACEMENT.md).
  reader_.before_write();
  // Nothing of this message is in the pipe yet, so an empty pipe means the
  // reader has read every buffer lent before: they can be written again.
  // (Asked later, at the big part, the pipe would hold this message's own
  // header, and a reader that had not taken it yet would cost a buffer.)
  if (lent_copies_) lent_copies_->reclaim_if_read(out_.get());
  if (!lend_) {
    write_copied(parts.data(), static_cast<int>(parts.size()));
    return;
  }
  // In order: runs of small parts copied with one writev, big parts lent.
  std::size_t run = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].iov_len < kLendMinBytes) continue;
    if (i > run) write_copied(parts.data() + run, static_cast<int>(i - run));
    write_lent(parts[i]);
    run = i + 1;
  }
  if (parts.size() > run) write_copied(parts.data() + run, static_cast<int>(parts.size() - run));
}

void ByteStream::expect(std::size_t bytes) {
  // More than a pipeful still to come: the writer would wait for us before it ends.
  if (!options_.grow_read_pipe || bytes < buffered().size() + kDefaultPipeBytes) return;
  grow_pipe(reader_.fd(), in_pipe_bytes_, bytes);
}

void ByteStream::write_lent(iovec part) {
  const int fd = out_.get();
  std::byte* const source = static_cast<std::byte*>(part.iov_base);
  const std::size_t total = part.iov_len;
  // What the pipe is lent: the caller's bytes, or a copy of ours.
  std::byte* lent = source;
  // How many bytes of `lent` hold the message so far.
  std::size_t ready = total;
  if (lent_copies_) {
    lent = lent_copies_->take(total);
    if (lent == nullptr) {
      // The reader has not caught up (a pipelining peer): copy into the pipe.
      ++reader_.stats().unlent_parts;
      write_copied(&part, 1);
      return;
    }
    ready = 0;
  }
  grow_pipe(fd, out_pipe_bytes_, total);
  for (std::size_t sent = 0; sent < total;) {
    // A copy is made a step ahead of what is lent, not whole before the
    // first vmsplice: the reader copies the first steps out while the
    // rest is copied in (a 16 MiB Response's copy took 3.7 ms before its
    // first byte left; docs/NODE.md, "Large payloads").
    if (ready < total && ready - sent < kLendStepBytes) {
      const std::size_t step = std::min(kLendStepBytes, total - ready);
      std::memcpy(lent + ready, source + ready, step);
      ready += step;
    }
    iovec piece{lent + sent, ready - sent};
    // No SPLICE_F_GIFT: the pages stay the caller's; the pipe only refers
    // to them until the reader has copied them out (BufferOptions). With a
    // deadline, SPLICE_F_NONBLOCK: vmsplice(2) ignores the pipe's
    // O_NONBLOCK and would wait for room forever (a FIFO server that stopped
    // reading held a 16 MiB request past its deadline; transport_test).
    const ssize_t n = ::vmsplice(fd, &piece, 1, write_deadline_ ? SPLICE_F_NONBLOCK : 0u);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN) {
        wait_writable(fd, write_deadline_);
        continue;
      }
      if (err == EPIPE) {
        throw PeerClosed("cannot write to peer: it closed the connection", PeerClosed::Where::Writing);
      }
      if (err == EINVAL || err == ENOSYS || err == EPERM) {
        // No vmsplice here (a seccomp filter, an odd pipe): copy from now
        // on, the rest straight from the caller's bytes.
        ++reader_.stats().unlent_parts;
        lend_ = false;
        iovec rest{source + sent, total - sent};
        write_copied(&rest, 1);
        return;
      }
      throw_syscall_error(err, "vmsplice to", fd);
    }
    sent += static_cast<std::size_t>(n);
  }
  ++reader_.stats().lent_parts;
}

void ByteStream::write_copied(iovec* iov, int count) {
  const int fd = out_.get();
  // A small message in several parts (header, method, payload) is copied
  // into one run and written with write(2): writev's iovec import costs
  // ~0.25 µs more per call here, a copy of a few hundred bytes ~0.02
  // (docs/SPIN-NOTES.md#descriptors-left-as-found).
  iovec gathered;
  if (count > 1) {
    std::size_t total = 0;
    for (int i = 0; i < count; ++i) total += iov[i].iov_len;
    if (total <= gather_.size()) {
      std::byte* at = gather_.data();
      for (int i = 0; i < count; ++i) at = std::copy_n(static_cast<const std::byte*>(iov[i].iov_base), iov[i].iov_len, at);
      gathered = {gather_.data(), total};
      iov = &gathered;
      count = 1;
    }
  }
  while (count > 0) {
    const ssize_t n = check_syscall([&] { return write_once(iov, count); }, "write to", fd);
    if (n < 0) {
      // Branch: pipe or socket full on a non-blocking fd.
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_until_writable();
        continue;
      }
      // Branch: EPIPE/ECONNRESET, the reader is gone.
      throw PeerClosed("cannot write to peer: it closed the connection",
                       PeerClosed::Where::Writing);
    }
    // Branch: partial write; skip what the kernel took and go on.
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
}

void ByteStream::choose_write() {
  struct stat st {};
  if (!out_ || ::fstat(out_.get(), &st) != 0) return;
  if (S_ISSOCK(st.st_mode)) {
    write_with_ = WriteWith::send_dontwait;
  } else if (S_ISFIFO(st.st_mode)) {
    // Our own open file description of the same pipe, as SpinReader's for
    // reading: O_NONBLOCK there leaves the fd we were given as found.
    const int own = reopen_nonblocking(out_.get(), O_WRONLY);
    if (own >= 0) {
      nonblocking_out_ = UniqueFd(own);
      write_with_ = WriteWith::own_nonblocking;
    }
  }
}

ssize_t ByteStream::write_once(const iovec* iov, int count) {
  switch (write_with_) {
    case WriteWith::send_dontwait: {
      msghdr message{};
      message.msg_iov = const_cast<iovec*>(iov);
      message.msg_iovlen = static_cast<std::size_t>(count);
      return sendmsg_uncancellable(out_.get(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    case WriteWith::own_nonblocking:
      return count == 1 ? write_uncancellable(nonblocking_out_.get(), iov->iov_base, iov->iov_len)
                        : ::writev(nonblocking_out_.get(), iov, count);
    case WriteWith::as_found:
      break;
  }
  return count == 1 ? write_uncancellable(out_.get(), iov->iov_base, iov->iov_len)
                    : ::writev(out_.get(), iov, count);
}

void ByteStream::wait_until_writable() {
  const int out = out_.get();
  if (!options_.read_while_writing) {
    wait_writable(out, write_deadline_);
    return;
  }
  for (;;) {
    const int timeout_ms = write_timeout_ms(write_deadline_);
    // The peer may be blocked writing to us, waiting for us to read before
    // it reads what we write: read while we wait (a socket is one fd both
    // ways, and both events come on it).
    pollfd p[2] = {{out, POLLOUT, 0}, {reader_.fd(), POLLIN, 0}};
    const nfds_t count = input_ended_ || reader_.fd() == out ? 1 : 2;
    if (count == 1 && !input_ended_) p[0].events |= POLLIN;
    if (check_syscall([&] { return ::poll(p, count, timeout_ms); }, "poll", out) <= 0) continue;
    const short in_events = count == 2 ? p[1].revents : p[0].revents;
    if (!input_ended_ && (in_events & (POLLIN | POLLHUP | POLLERR)) != 0) read_ahead();
    if ((p[0].revents & (POLLOUT | POLLHUP | POLLERR)) != 0) return;  // or the write says EPIPE
  }
}

void ByteStream::read_ahead() {
  reserve_for(end_ - begin_ + initial_capacity());
  const long n = reader_.read_available(buffer_.get() + end_, capacity_ - end_);
  if (n == 0) input_ended_ = true;  // EOF: the next fill() sees it again
  if (n > 0) end_ += static_cast<std::size_t>(n);
}

ByteStream::Hold ByteStream::hold(std::size_t bytes) noexcept {
  // Everything below begin_ + bytes now stays where it is.
  Hold hold(this, floor_, generation_);
  floor_ = begin_ + bytes;
  ++holds_;
  return hold;
}

void ByteStream::release_hold(std::size_t saved_floor, std::uint64_t saved_generation) noexcept {
  --holds_;
  // If the buffer was replaced since the Hold began, the held bytes live in
  // a retired buffer and nothing in the current one is held by it.
  floor_ = saved_generation == generation_ ? saved_floor : 0;
  if (holds_ == 0) {
    // A Response written from a held frame may still be lent from these.
    if (lend_) {
      for (auto& buffer : retired_) parked_.push_back(std::move(buffer));
    }
    retired_.clear();
    floor_ = 0;
  }
}

ByteStream::Hold::Hold(Hold&& other) noexcept
    : stream_(other.stream_),
      saved_floor_(other.saved_floor_),
      saved_generation_(other.saved_generation_) {
  other.stream_ = nullptr;
}

ByteStream::Hold::~Hold() {
  if (stream_ != nullptr) stream_->release_hold(saved_floor_, saved_generation_);
}

}  // namespace spinrpc

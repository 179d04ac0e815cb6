#include "channel/fd_channel.h"

#include <poll.h>     // ::poll
#include <sys/uio.h>  // ::writev
#include <unistd.h>   // ::read

#include <algorithm>  // std::max
#include <cstring>    // std::memcpy, std::memmove
#include <memory>     // std::construct_at, std::destroy_at
#include <string>     // std::string
#include <utility>    // std::move

#include "channel/peer_closed.h"
#include "channel/syscall.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"

namespace spinrpc {
namespace {

// Waits until `fd` can take more bytes; only reached when a non-blocking fd
// (a socket whose reader side spins) reports a full buffer.
void wait_writable(int fd) {
  pollfd p{fd, POLLOUT, 0};
  check_syscall([&] { return ::poll(&p, 1, -1); }, "poll", fd);
}

void write_all(int fd, iovec* iov, int count) {
  while (count > 0) {
    const ssize_t n = check_syscall([&] { return ::writev(fd, iov, count); }, "write to", fd);
    if (n < 0) {
      // Branch: pipe or socket full on a non-blocking fd.
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wait_writable(fd);
        continue;
      }
      // Branch: EPIPE/ECONNRESET, the reader is gone.
      throw PeerClosed("cannot write to peer: it closed the connection", false);
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

iovec to_iovec(ByteView bytes) {
  return {const_cast<std::byte*>(bytes.data()), bytes.size()};
}

}  // namespace

FdChannel::FdChannel(UniqueFd in, UniqueFd out, ChannelOptions options)
    : in_(std::move(in)),
      out_(std::move(out)),
      options_(std::move(options)),
      reader_(in_.get(), options_.spin) {
  replace_buffer(initial_capacity());
}

FdChannel::FdChannel(FdChannel&&) noexcept = default;

FdChannel& FdChannel::operator=(FdChannel&& other) noexcept {
  // Not defaulted: member-wise assignment closes in_ first and only then
  // lets reader_ put back in_'s O_NONBLOCK flag, on a closed fd (or on
  // whatever another thread has opened under that number meanwhile), so a
  // file description shared with another process stays non-blocking.
  // Destroying first runs the members' destructors in reverse order:
  // reader_ restores the flag, then in_ and out_ close. The move
  // constructor cannot throw, so *this is never left destroyed.
  if (this != &other) {
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}
FdChannel::~FdChannel() = default;

std::optional<FrameView> FdChannel::try_read_frame() {
  begin_ += frame_size_;
  frame_size_ = 0;
  if (begin_ == end_ && holds_ == 0) {
    // Nothing buffered and nothing held: rewind for free instead of memmove.
    begin_ = end_ = 0;
    if (capacity_ > std::max(options_.retained_buffer_bytes, initial_capacity())) {
      replace_buffer(initial_capacity());
    }
  }
  for (;;) {
    const ByteView pending(buffer_.get() + begin_, end_ - begin_);
    const DecodeResult result = decode_frame(pending, options_.limits);
    if (result.status == DecodeResult::Status::Frame) {
      frame_size_ = result.size_bytes;
      return result.frame;
    }
    reserve_for(result.size_bytes);
    const std::size_t n = read_some();
    if (n == 0) {
      // Branch: EOF. Between frames it is the peer's normal exit.
      if (begin_ == end_) return std::nullopt;
      throw PeerClosed(result.inside_field ? "unexpected EOF" : "unexpected EOF between fields",
                       result.inside_field);
    }
    end_ += n;
  }
}

FrameView FdChannel::read_frame() {
  if (auto frame = try_read_frame()) return *frame;
  throw PeerClosed("unexpected EOF: the peer closed the connection between frames", false);
}

std::size_t FdChannel::read_some() {
  return reader_.read_some(buffer_.get() + end_, capacity_ - end_);
}

void FdChannel::reserve_for(std::size_t need) {
  // Read-ahead wants free space after end_; the frame wants `need` bytes from begin_.
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
    auto grown = std::make_unique_for_overwrite<std::byte[]>(capacity);
    std::memcpy(grown.get(), buffer_.get(), pending);
    buffer_ = std::move(grown);
    capacity_ = capacity;
    return;
  }
  // Held frames must not move: copy only the unconsumed bytes to a new
  // buffer and keep the old one alive until the last Hold ends.
  auto fresh = std::make_unique_for_overwrite<std::byte[]>(capacity);
  std::memcpy(fresh.get(), buffer_.get() + begin_, pending);
  retired_.push_back(std::move(buffer_));
  buffer_ = std::move(fresh);
  capacity_ = capacity;
  begin_ = 0;
  end_ = pending;
  floor_ = 0;
  ++generation_;
}

std::size_t FdChannel::initial_capacity() const noexcept {
  // Room for any frame header, so a first read always makes progress.
  return std::max<std::size_t>(options_.initial_buffer_bytes, 16);
}

void FdChannel::replace_buffer(std::size_t capacity) {
  buffer_ = std::make_unique_for_overwrite<std::byte[]>(capacity);
  capacity_ = capacity;
}

void FdChannel::write_frame(MessageType type, ByteView name, ByteView payload) {
  const FrameHeader header = encode_frame_header(type, name.size(), payload.size());
  iovec iov[4] = {to_iovec(header.prefix()), to_iovec(name), to_iovec(header.payload_header()),
                  to_iovec(payload)};
  reader_.before_write();
  write_all(out_.get(), iov, 4);
}

FdChannel::Hold FdChannel::hold_frame() noexcept {
  // The frame last returned ends at begin_ + frame_size_; everything below
  // that offset now stays where it is.
  Hold hold(this, floor_, generation_);
  floor_ = begin_ + frame_size_;
  ++holds_;
  return hold;
}

void FdChannel::release_hold(std::size_t saved_floor, std::uint64_t saved_generation) noexcept {
  --holds_;
  // If the buffer was replaced since the Hold began, the held bytes live in
  // a retired buffer and nothing in the current one is held by it.
  floor_ = saved_generation == generation_ ? saved_floor : 0;
  if (holds_ == 0) {
    retired_.clear();
    floor_ = 0;
  }
}

FdChannel::Hold::Hold(Hold&& other) noexcept
    : channel_(other.channel_),
      saved_floor_(other.saved_floor_),
      saved_generation_(other.saved_generation_) {
  other.channel_ = nullptr;
}

FdChannel::Hold::~Hold() {
  if (channel_ != nullptr) channel_->release_hold(saved_floor_, saved_generation_);
}

}  // namespace spinrpc

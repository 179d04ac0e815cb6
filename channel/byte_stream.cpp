#include "channel/byte_stream.h"

#include <algorithm>  // std::max
#include <cstring>    // std::memcpy, std::memmove
#include <new>        // std::bad_alloc
#include <string>     // std::to_string
#include <system_error>  // std::system_error
#include <utility>    // std::move


namespace spinrpc {

// What a write does while it waits for room (BufferOptions::read_while_writing).
class ByteStream::ReadAhead final : public WhileWriteWaits {
 public:
  explicit ReadAhead(ByteStream& stream) noexcept : stream_(stream) {}
  bool read_ahead() override {
    stream_.reserve_for(stream_.end_ - stream_.begin_ + stream_.initial_capacity());
    const long n = stream_.reader_->read_available(stream_.buffer_.get() + stream_.end_,
                                                   stream_.capacity_ - stream_.end_);
    if (n > 0) stream_.end_ += static_cast<std::size_t>(n);
    return n != 0;  // EOF: the next fill() sees it again
  }

 private:
  ByteStream& stream_;
};

ByteStream::ByteStream(Streams streams, BufferOptions buffer, SpinPolicy spin)
    : reader_(std::make_unique<SpinReader>(std::move(streams.in), std::move(spin))),
      out_(std::move(streams.out)),
      options_(buffer) {
  out_->set_before_write(reader_.get());
  replace_buffer(initial_capacity());
}

const ChannelStats& ByteStream::stats() const noexcept {
  // The reader's stats live on the heap: filling the writer's counters in
  // changes no member of this object.
  ChannelStats& stats = reader_->stats();
  StreamCounters counted;
  reader_->input().add_counters(counted);
  out_->add_counters(counted);
  stats.lent_parts = counted.lent_parts;
  stats.unlent_parts = counted.unlent_parts;
  stats.ring_sleeps = counted.ring_sleeps;
  stats.ring_wakes = counted.ring_wakes;
  stats.ring_full_waits = counted.ring_full_waits;
  stats.transport = reader_->input().traits().name;
  if (stats.transport_reason != transport_reason_) stats.transport_reason = transport_reason_;
  return std::as_const(*reader_).stats();
}

void ByteStream::replace_streams(const std::function<Streams(Streams)>& make, std::string reason) {
  Streams current;
  current.out = std::move(out_);
  current.in = reader_->replace_input(nullptr);
  Streams next = make(std::move(current));
  reader_->replace_input(std::move(next.in));
  out_ = std::move(next.out);
  out_->set_before_write(reader_.get());
  // The reader keeps its deadline across the move; the new writer must
  // get it too, or a write after the move would wait without bound.
  out_->set_deadline(reader_->deadline());
  transport_reason_ = std::move(reason);
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
      if (out_->lends_callers_memory()) parked_.push_back(std::move(buffer_));
      replace_buffer(initial_capacity());
    }
  }
  largest_need_ = std::max(largest_need_, need);
  // Bytes buffered but not a whole message: the peer is writing the rest.
  const auto wait_for = begin_ != end_ ? SpinReader::WaitFor::rest_of_message : SpinReader::WaitFor::message;
  // Before waiting for the peer's next message: memory lent to it that it
  // has read is ours again.
  if (wait_for == SpinReader::WaitFor::message) out_->reclaim_lent();
  reserve_for(need);
  const std::size_t n = reader_->read_some(buffer_.get() + end_, capacity_ - end_, wait_for);
  after_read(n);
  end_ += n;
  return n;
}

std::size_t ByteStream::read_direct(std::byte* buf, std::size_t len) {
  const std::size_t n = reader_->read_some(buf, len, SpinReader::WaitFor::rest_of_message);
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
    if (out_->lends_callers_memory()) parked_.push_back(std::move(buffer_));  // as in fill()
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
  if (!options_.read_while_writing) {
    out_->write_all(parts);
    return;
  }
  ReadAhead read_ahead(*this);
  out_->write_all(parts, &read_ahead);
}

void ByteStream::expect(std::size_t bytes) {
  // Only a stream with room to make says so (StreamTraits::size_hint); its
  // rule decides whether this message needs it.
  if (MessageSizeHint* hint = reader_->input().traits().size_hint) hint->message_arriving(bytes, buffered().size());
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
    if (out_->lends_callers_memory()) {
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

// Fuzz target: the server's side of the shared-memory transport
// (stream/shm_streams_linux.h) read by a FrameChannel, as spinrpc-server reads it,
// while a hostile client writes the ring.
//
// Each input is one connection. The client offers a 4 KiB ring
// (SharedRing::create), the server maps it (open) and its FrameChannel moves
// onto it at its first Response (shm_switch), exactly as spinrpc-server does
// after take_shm_offer. Then three threads run at once:
//  - the server (this thread): reads frames and answers each Request with a
//    Response echoing it, every read and write bounded by a deadline;
//  - the scribbler: runs the input as a list of operations on the client's
//    end: legitimate frames through the client's ShmOutputStream, and
//    arbitrary stores into the ring's control words (head, tail, closed,
//    asleep, the header), its bytes and the pipe beside it; at the end it
//    destroys the client's writer (the closed flag) and its pipe;
//  - the drainer: reads the server's replies through the client's
//    ShmInputStream.
//
// The property: no crash, no out-of-bounds access (ASan), no hang (libFuzzer's
// -timeout; each wait here is bounded, and the scribbler always closes), and
// the server's reads and writes end only in the documented ways: EOF between
// frames, ProtocolError, PeerClosed, TimedOut, or std::system_error
// (RingCorrupt among them). Any other exception escapes and is a finding.
// And when the input scribbled nothing (legitimate frames only), the server
// reads exactly the frames sent, ends at a clean EOF, and the drainer gets
// exactly the echoes.
//
// Reproducible: the input fixes every operation and value; only how the
// threads interleave is the scheduler's, and the property holds for any
// interleaving. Input format (little-endian; missing bytes read as 0):
//   byte 0: bit 0 the server spins (20 µs budget) before it sleeps
//   then operations, one byte each (its value mod 12) followed by its arguments:
//    0 frame     name_len%9, len:u16 (mod 12289), seed   legitimate Request via the client's writer
//    1 raw       name_len%9, len:u16 (mod 12289), seed   the frame copied at head, head advanced, no room check
//    2 head      u32                                    store the client→server head
//    3 nudge     d                                      head += one of ±1, ±size, ±(size+1), 2^31, 7
//    4 tail      mode, u32                              the server→client tail: set (odd mode) or nudged by u32's low byte
//    5 closed    v                                      store the client→server closed flag, wake
//    6 asleep    which, v                               store one of the four asleep flags, wake every futex word
//    7 bytes     offset:u16, n, n bytes                 into the client→server ring's bytes
//    8 pipe      -                                      one byte on the pipe beside the ring
//    9 run       n                                      let the server catch up (at most n*64 yields)
//   10 replyhead u32                                    store the server→client head (the server's own word)
//   11 header    field, u32                             store accepted, a fences word, ring_bytes or magic
#include <sched.h>    // ::sched_yield
#include <sys/uio.h>  // iovec
#include <unistd.h>   // ::read, ::write

#include <algorithm>     // std::min
#include <csignal>       // std::signal, SIGPIPE
#include <atomic>        // std::atomic
#include <chrono>        // std::chrono
#include <cstddef>       // std::byte, std::size_t
#include <cstdint>       // std::uint8_t, std::uint32_t, std::int64_t
#include <cstring>       // std::memcpy
#include <memory>        // std::shared_ptr
#include <optional>      // std::optional
#include <span>          // std::span
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <thread>        // std::thread
#include <utility>       // std::move
#include <vector>        // std::vector

#include "channel/frame_channel.h"
#include "channel/shm_switch.h"
#include "descriptor/pipe.h"
#include "fuzz_check.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"
#include "protocol/protocol_error.h"
#include "stream/futex_linux.h"
#include "stream/peer_closed.h"
#include "stream/shm_ring_linux.h"
#include "stream/shm_streams_linux.h"
#include "stream/timed_out.h"
#include "stream/fd_streams_posix.h"

namespace {

using spinrpc::ByteView;
using spinrpc::MessageType;
using spinrpc::SharedRing;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kRingBytes = 4096;
constexpr std::size_t kMaxMessageBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxOps = 64;
// Hang guards, never expected to pass in a healthy run: the server's reads
// and writes, and the client's while it has scribbled nothing.
constexpr std::chrono::seconds kGuard{5};
// The client's writes once it has scribbled: the server may rightly stall.
constexpr std::chrono::milliseconds kHostileWrite{20};
// The drainer looks this often whether the scribbler told it to stop.
constexpr std::chrono::milliseconds kDrainerPoll{5};

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  std::uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint32_t u16() {
    const std::uint32_t low = u8();
    return low | (std::uint32_t{u8()} << 8);
  }
  std::uint32_t u32() {
    const std::uint32_t low = u16();
    return low | (u16() << 16);
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

std::vector<std::byte> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::byte> bytes(n);
  std::uint32_t x = 0x9e3779b9U * (seed + 1U);
  for (auto& b : bytes) {
    x = x * 1103515245U + 12345U;
    b = static_cast<std::byte>(x >> 24);
  }
  return bytes;
}

struct Frame {
  std::string name;
  std::vector<std::byte> payload;
};

Frame frame_from(Input& in) {
  const std::size_t name_len = in.u8() % 9;
  const std::size_t len = in.u16() % 12289;
  const std::uint8_t seed = in.u8();
  return Frame{std::string("abcdefgh").substr(0, name_len), pattern(len, seed)};
}

std::vector<std::byte> encoded(MessageType type, const Frame& f) {
  std::vector<std::byte> out;
  spinrpc::append_frame(out, type, spinrpc::as_bytes(f.name), ByteView(f.payload.data(), f.payload.size()));
  return out;
}

std::string key(MessageType type, ByteView name, ByteView payload) {
  std::string k(1, static_cast<char>(type));
  k.append(reinterpret_cast<const char*>(name.data()), name.size());
  k += '\0';
  k.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return k;
}

// Every word a side may sleep on, woken so that no sleeper misses a store.
void wake_all(const SharedRing::Direction& a, const SharedRing::Direction& b) {
  for (const SharedRing::Direction* d : {&a, &b}) {
    spinrpc::futex_wake_shared(d->control->producer.head);
    spinrpc::futex_wake_shared(d->control->consumer.tail);
  }
}

void check_one_line(const char* what) {
  const std::string text(what);
  FUZZ_CHECK(!text.empty() && text.find('\n') == std::string::npos, "an error's what() is one line");
}

enum class End { Eof, ProtocolError, PeerClosed, TimedOut, SystemError };

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // As spinrpc-server does (run_server_main): a write to a pipe whose
  // reader has gone must be EPIPE, not the death of the process. The
  // scribbler's stray byte meets a closed pipe whenever the server ended first.
  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  FUZZ_CHECK(sigpipe_ignored, "SIGPIPE ignored");
  Input in(data, size);
  const std::uint8_t config = in.u8();

  // ── The connection, as the shim spawns spinrpc-server ──
  auto client_ring = std::make_shared<SharedRing>(SharedRing::create(kRingBytes));
  auto server_ring = std::make_shared<SharedRing>(SharedRing::open(client_ring->fd()));
  client_ring->close_fd();
  spinrpc::PipePair to_server = spinrpc::make_pipe();
  spinrpc::PipePair to_client = spinrpc::make_pipe();
  spinrpc::UniqueFd pipe_copy = spinrpc::UniqueFd::duplicate(to_server.write_end.get());

  spinrpc::ChannelOptions options;
  options.limits.max_message_bytes = kMaxMessageBytes;
  if ((config & 1) != 0) options.spin.budget = std::chrono::microseconds(20);
  const bool spinning = options.spin.budget.count() > 0;
  std::optional<spinrpc::FrameChannel> server;
  server.emplace(spinrpc::fd_streams(std::move(to_server.read_end), std::move(to_client.write_end), options, spinning),
                 options);
  server->switch_at_first_reply(spinrpc::shm_switch(server_ring, spinrpc::StreamSwitch::Side::server),
                                spinrpc::StreamSwitch::Side::server);

  // The first exchange on the pipes.
  const Frame first{"echo", pattern(16, 0)};
  std::vector<std::string> sent{key(MessageType::Request, spinrpc::as_bytes(first.name),
                                    ByteView(first.payload.data(), first.payload.size()))};
  {
    const std::vector<std::byte> request = encoded(MessageType::Request, first);
    FUZZ_CHECK(::write(to_server.write_end.get(), request.data(), request.size()) ==
                   static_cast<ssize_t>(request.size()),
               "the first request fits the pipe");
    server->set_deadline(Clock::now() + kGuard);
    const spinrpc::FrameView f = server->read_frame();
    server->write_frame(MessageType::Response, f.name, f.payload);
    FUZZ_CHECK(server->stats().transport == std::string_view("shared memory"), "the server moved at its first reply");
    const std::vector<std::byte> response = encoded(MessageType::Response, first);
    std::vector<std::byte> got(response.size());
    std::size_t at = 0;
    while (at < got.size()) {
      const ssize_t n = ::read(to_client.read_end.get(), got.data() + at, got.size() - at);
      FUZZ_CHECK(n > 0, "the first reply comes on the pipe");
      at += static_cast<std::size_t>(n);
    }
    FUZZ_CHECK(got == response, "the first reply is the echo");
    FUZZ_CHECK(client_ring->accepted(), "the server stored the accept word before its first reply");
  }
  spinrpc::Streams client = spinrpc::shm_streams(
      client_ring, SharedRing::Side::client,
      spinrpc::fd_streams(std::move(to_client.read_end), std::move(to_server.write_end), options, false));

  const SharedRing::Direction up = client_ring->outbound(SharedRing::Side::client);    // client → server
  const SharedRing::Direction down = client_ring->inbound(SharedRing::Side::client);   // server → client
  // The header page: the client→server ring's bytes follow it.
  auto* header = reinterpret_cast<spinrpc::RingHeader*>(up.bytes - spinrpc::kRingPageBytes);

  std::vector<std::string> received{sent.front()};

  // ── The drainer: the client reading replies ──
  std::atomic<bool> drainer_stop{false};
  std::vector<std::byte> replies;
  bool drainer_eof = false;
  std::thread drainer([&, in_stream = std::move(client.in)]() mutable {
    std::vector<std::byte> buf(8192);
    while (!drainer_stop.load()) {
      try {
        const std::size_t n = in_stream->read_blocking(buf.data(), buf.size(), Clock::now() + kDrainerPoll);
        if (n == 0) {
          drainer_eof = true;
          break;
        }
        replies.insert(replies.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
      } catch (const spinrpc::TimedOut&) {
        continue;
      } catch (const std::system_error& e) {  // RingCorrupt: a scribbled head
        check_one_line(e.what());
        break;
      }
    }
    in_stream.reset();  // its pipe end closes: a server waiting for room sees the reader gone
  });

  // ── The scribbler: the client writing, legitimately or not ──
  std::atomic<bool> scribbled{false};
  bool client_write_failed = false;
  std::thread scribbler([&, out = std::move(client.out)]() mutable {
    bool broken = false;  // the client's writer threw: raw frames from then on
    auto raw_frame = [&](const std::vector<std::byte>& bytes) {
      const std::uint32_t head = up.control->producer.head.load();
      for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t offset = (head + i) & (up.size - 1);
        const std::size_t n = std::min(bytes.size() - i, up.size - offset);
        std::memcpy(up.bytes + offset, bytes.data() + i, n);
        i += n;
      }
      up.control->producer.head.store(head + static_cast<std::uint32_t>(bytes.size()));
      spinrpc::futex_wake_shared(up.control->producer.head);
    };
    for (std::size_t op = 0; op < kMaxOps && !in.empty(); ++op) {
      const unsigned kind = in.u8() % 12;
      if (kind != 0 && kind != 9) scribbled = true;
      switch (kind) {
        case 0:
        case 1: {
          const Frame f = frame_from(in);
          const std::vector<std::byte> bytes = encoded(MessageType::Request, f);
          if (kind == 0 && !broken) {
            sent.push_back(key(MessageType::Request, spinrpc::as_bytes(f.name),
                               ByteView(f.payload.data(), f.payload.size())));
            out->set_deadline(Clock::now() + (scribbled ? std::chrono::milliseconds(kHostileWrite) : kGuard));
            iovec part{const_cast<std::byte*>(bytes.data()), bytes.size()};
            try {
              out->write_all(std::span(&part, 1), nullptr);
            } catch (const spinrpc::TimedOut& e) {
              check_one_line(e.what());
              broken = client_write_failed = true;
            } catch (const spinrpc::PeerClosed& e) {
              check_one_line(e.what());
              broken = client_write_failed = true;
            } catch (const std::system_error& e) {  // RingCorrupt: a scribbled tail
              check_one_line(e.what());
              broken = client_write_failed = true;
            }
          } else {
            scribbled = true;
            raw_frame(bytes);
          }
          break;
        }
        case 2:
          up.control->producer.head.store(in.u32());
          spinrpc::futex_wake_shared(up.control->producer.head);
          break;
        case 3: {
          static constexpr std::int64_t kNudges[] = {1, -1, kRingBytes, -static_cast<std::int64_t>(kRingBytes),
                                                     kRingBytes + 1, -static_cast<std::int64_t>(kRingBytes) - 1,
                                                     std::int64_t{1} << 31, 7};
          const std::int64_t d = kNudges[in.u8() % 8];
          up.control->producer.head.fetch_add(static_cast<std::uint32_t>(d));
          spinrpc::futex_wake_shared(up.control->producer.head);
          break;
        }
        case 4: {
          const std::uint8_t mode = in.u8();
          const std::uint32_t value = in.u32();
          if ((mode & 1) != 0) {
            down.control->consumer.tail.store(value);
          } else {
            down.control->consumer.tail.fetch_add(static_cast<std::uint32_t>(static_cast<std::int8_t>(value)));
          }
          spinrpc::futex_wake_shared(down.control->consumer.tail);
          break;
        }
        case 5:
          up.control->producer.closed.store(in.u8());
          spinrpc::futex_wake_shared(up.control->producer.head);
          break;
        case 6: {
          const std::uint8_t which = in.u8() % 4;
          const std::uint8_t v = in.u8();
          spinrpc::RingControl* c = which < 2 ? up.control : down.control;
          ((which & 1) == 0 ? c->reader.asleep : c->writer.asleep).store(v);
          wake_all(up, down);
          break;
        }
        case 7: {
          const std::size_t offset = in.u16();
          const std::size_t n = in.u8();
          for (std::size_t i = 0; i < n; ++i) {
            up.bytes[(offset + i) & (up.size - 1)] = static_cast<std::byte>(in.u8());
          }
          break;
        }
        case 8: {
          const char stray = 's';
          (void)!::write(pipe_copy.get(), &stray, 1);
          break;
        }
        case 9: {
          const std::size_t tries = std::size_t{in.u8()} * 64;
          for (std::size_t i = 0; i < tries; ++i) {
            if (up.control->consumer.tail.load() == up.control->producer.head.load()) break;
            ::sched_yield();
          }
          break;
        }
        case 10:
          down.control->producer.head.store(in.u32());
          spinrpc::futex_wake_shared(down.control->producer.head);
          break;
        case 11: {
          const std::uint8_t field = in.u8() % 5;
          const std::uint32_t v = in.u32();
          switch (field) {
            case 0: header->accepted.store(v); break;
            case 1: header->version = v; break;
            case 2: header->accepted.store(~v); break;
            case 3: header->ring_bytes = v; break;
            default: header->magic = v; break;
          }
          break;
        }
      }
    }
    // The end of the connection: the closed flag (the writer's destructor)
    // and the pipe beside the ring.
    out.reset();
    pipe_copy.reset();
    // Replies are only checked for a legitimate client; otherwise the
    // server may wait for room the drainer will never make.
    if (scribbled) drainer_stop = true;
  });

  // ── The server ──
  End end = End::Eof;
  try {
    for (;;) {
      server->set_deadline(Clock::now() + kGuard);
      const std::optional<spinrpc::FrameView> f = server->try_read_frame();
      if (!f) break;
      received.push_back(key(f->type, f->name, f->payload));
      server->set_deadline(Clock::now() + kGuard);
      server->write_frame(MessageType::Response, f->name, f->payload);
    }
  } catch (const spinrpc::ProtocolError& e) {
    end = End::ProtocolError;
    check_one_line(e.what());
  } catch (const spinrpc::PeerClosed& e) {
    end = End::PeerClosed;
    check_one_line(e.what());
  } catch (const spinrpc::TimedOut& e) {
    end = End::TimedOut;
    check_one_line(e.what());
  } catch (const std::system_error& e) {
    end = End::SystemError;
    check_one_line(e.what());
  }
  // Any other exception escapes: a finding.
  server.reset();  // the server→client closed flag; its pipe ends close
  scribbler.join();
  drainer.join();

  if (!scribbled) {
    FUZZ_CHECK(!client_write_failed, "a legitimate client's writes succeed");
    FUZZ_CHECK(end == End::Eof, "a legitimate client's connection ends at a clean EOF");
    FUZZ_CHECK(received == sent, "the server reads exactly the frames a legitimate client sent");
    FUZZ_CHECK(drainer_eof, "the client reads the server's replies to EOF");
    // The echoes after the first (which came on the pipe), in order.
    ByteView rest(replies.data(), replies.size());
    spinrpc::Limits limits;
    limits.max_message_bytes = kMaxMessageBytes;
    for (std::size_t i = 1; i < sent.size(); ++i) {
      const spinrpc::DecodeResult r = spinrpc::decode_frame(rest, limits);
      FUZZ_CHECK(r.status == spinrpc::DecodeResult::Status::frame, "every echo is a whole frame");
      std::string expected = sent[i];
      expected[0] = static_cast<char>(MessageType::Response);
      FUZZ_CHECK(key(r.frame.type, r.frame.name, r.frame.payload) == expected, "each echo is its request's");
      rest = rest.subspan(r.size_bytes);
    }
    FUZZ_CHECK(rest.empty(), "nothing after the echoes");
  }
  return 0;
}

// FrameChannel's move onto the ring at the end of the first exchange
// (channel/shm_switch.h, FrameChannel::switch_at_first_reply) within one
// process: a client and a server channel on real pipes, each with its
// switch, the server answering on a thread of its own. The rules of the
// handshake (docs/SHARED-MEMORY.md, "Handshake") and what the channel keeps
// across the move. Every wait is bounded by a hang guard.
#include <unistd.h>  // ::write

#include <chrono>              // std::chrono
#include <condition_variable>  // std::condition_variable
#include <cstddef>             // std::byte, std::size_t
#include <memory>              // std::shared_ptr, std::make_shared
#include <mutex>               // std::mutex
#include <optional>            // std::optional
#include <string>              // std::string
#include <string_view>         // std::string_view
#include <thread>              // std::thread
#include <utility>             // std::move
#include <vector>              // std::vector

#include <doctest/doctest.h>

#include "channel/frame_channel.h"
#include "channel/shm_switch.h"
#include "descriptor/pipe.h"
#include "protocol/frame_encoder.h"
#include "protocol/protocol_error.h"
#include "stream/peer_closed.h"
#include "stream/shm_ring_linux.h"
#include "stream/timed_out.h"
#include "tests/support/proc.h"
#include "tests/support/fd_channel.h"
#include "stream/fd_output_stream_posix.h"

namespace {

using spinrpc::FrameChannel;
using spinrpc::MessageType;
using spinrpc::SharedRing;
using spinrpc::StreamSwitch;
using spinrpc::UniqueFd;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kRing = 4096;
constexpr std::string_view kShared = "shared memory";
constexpr std::string_view kDescriptor = "descriptor";

spinrpc::ByteView bytes_of(std::string_view s) { return spinrpc::as_bytes(s); }
std::string text_of(spinrpc::ByteView b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// The pipes of one spawned connection and the ring the client offers.
struct Setup {
  std::shared_ptr<SharedRing> client_ring = std::make_shared<SharedRing>(SharedRing::create(kRing));
  std::shared_ptr<SharedRing> server_ring = std::make_shared<SharedRing>(SharedRing::open(client_ring->fd()));
  spinrpc::PipePair to_server = spinrpc::make_pipe();
  spinrpc::PipePair to_client = spinrpc::make_pipe();

  FrameChannel server_channel() {
    FrameChannel channel = spinrpc::test::fd_channel(std::move(to_server.read_end), std::move(to_client.write_end));
    channel.switch_at_first_reply(spinrpc::shm_switch(server_ring, StreamSwitch::Side::server),
                                  StreamSwitch::Side::server);
    return channel;
  }
  FrameChannel client_channel() {
    FrameChannel channel = spinrpc::test::fd_channel(std::move(to_client.read_end), std::move(to_server.write_end));
    channel.switch_at_first_reply(spinrpc::shm_switch(client_ring, StreamSwitch::Side::client),
                                  StreamSwitch::Side::client);
    return channel;
  }
};

// Answers every Request with a Response echoing it until EOF.
void echo_until_eof(FrameChannel& server) {
  while (const std::optional<spinrpc::FrameView> f = server.try_read_frame()) {
    server.write_frame(MessageType::Response, f->name, f->payload);
  }
}

TEST_CASE("client and server channels move onto the ring after the first exchange and carry frames of any size") {
  Setup s;
  FrameChannel server = s.server_channel();
  FrameChannel client = s.client_channel();
  std::thread serving([&] { echo_until_eof(server); });
  client.set_deadline(Clock::now() + spinrpc::test::kHangGuard);
  CHECK(client.stats().transport == kDescriptor);
  client.write_frame(MessageType::Request, bytes_of("echo"), bytes_of("first"));
  CHECK(text_of(client.read_frame().payload) == "first");
  CHECK(client.stats().transport == kShared);
  CHECK(client.stats().transport_reason == "shared memory: the client offered a ring and the server took it");
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kRing - 1, kRing, 5 * kRing + 3, std::size_t{1} << 20}) {
    CAPTURE(size);
    std::string payload(size, '\0');
    for (std::size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 31 + size);
    client.write_frame(MessageType::Request, bytes_of("echo"), bytes_of(payload));
    const spinrpc::FrameView reply = client.read_frame();
    CHECK(reply.type == MessageType::Response);
    CHECK(text_of(reply.payload) == payload);
  }
  // The client's end: its ring writer goes (the closed flag), the server reads EOF.
  { FrameChannel gone = std::move(client); }
  serving.join();
  CHECK(server.stats().transport == kShared);
}

TEST_CASE("a server with more of the client's bytes buffered than the request stays on pipes, and so does the client") {
  Setup s;
  FrameChannel server = s.server_channel();
  FrameChannel client = s.client_channel();
  // Two requests at once (a pipelining client): the second would be left
  // behind on the pipe if the server moved.
  std::vector<std::byte> two;
  spinrpc::append_frame(two, MessageType::Request, bytes_of("echo"), bytes_of("one"));
  spinrpc::append_frame(two, MessageType::Request, bytes_of("echo"), bytes_of("two"));
  // Written by hand on the client's pipe, as one write: both are buffered
  // by the server's first read.
  const int client_out = static_cast<spinrpc::FdOutputStream&>(client.output()).fd();
  REQUIRE(::write(client_out, two.data(), two.size()) == static_cast<ssize_t>(two.size()));
  server.set_deadline(Clock::now() + spinrpc::test::kHangGuard);
  {
    const spinrpc::FrameView f = server.read_frame();
    server.write_frame(MessageType::Response, f.name, f.payload);
  }
  CHECK(server.stats().transport == kDescriptor);
  CHECK(server.stats().transport_reason == "pipes: the first reply came with more of the client's bytes buffered");
  CHECK_FALSE(s.client_ring->accepted());
  client.set_deadline(Clock::now() + spinrpc::test::kHangGuard);
  CHECK(text_of(client.read_frame().payload) == "one");
  CHECK(client.stats().transport == kDescriptor);
  // Both go on over the pipes.
  {
    const spinrpc::FrameView f = server.read_frame();
    server.write_frame(MessageType::Response, f.name, f.payload);
  }
  CHECK(text_of(client.read_frame().payload) == "two");
}

TEST_CASE("a client that finds the accept word and bytes behind the first reply on the pipe throws ProtocolError") {
  Setup s;
  FrameChannel client = s.client_channel();
  client.write_frame(MessageType::Request, bytes_of("echo"), bytes_of("x"));
  // A server that agreed, then wrote more than its reply on the pipe.
  s.server_ring->accept();
  std::vector<std::byte> reply;
  spinrpc::append_frame(reply, MessageType::Response, bytes_of("echo"), bytes_of("x"));
  spinrpc::append_frame(reply, MessageType::Response, bytes_of("echo"), bytes_of("stray"));
  REQUIRE(::write(s.to_client.write_end.get(), reply.data(), reply.size()) == static_cast<ssize_t>(reply.size()));
  client.set_deadline(Clock::now() + spinrpc::test::kHangGuard);
  try {
    client.read_frame();
    FAIL("no ProtocolError");
  } catch (const spinrpc::ProtocolError& e) {
    CHECK(std::string(e.what()).find("after its first reply") != std::string::npos);
  }
}

TEST_CASE("a deadline set before the move bounds the writes after it, as it bounds the reads") {
  Setup s;
  FrameChannel server = s.server_channel();
  FrameChannel client = s.client_channel();
  // The first exchange, by hand on the server's side.
  client.write_frame(MessageType::Request, bytes_of("echo"), bytes_of("x"));
  server.set_deadline(Clock::now() + std::chrono::milliseconds(100));
  {
    const spinrpc::FrameView f = server.read_frame();
    server.write_frame(MessageType::Response, f.name, f.payload);
  }
  REQUIRE(server.stats().transport == kShared);
  // The hang guard: a writer that lost its deadline in the move would wait
  // for room for ever; closing the client's end then makes it PeerClosed.
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread guard([&] {
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, spinrpc::test::kHangGuard, [&] { return done; })) {
      FrameChannel gone = std::move(client);
    }
  });
  // Nobody reads the client's side: a reply three rings long cannot go.
  const std::string big(3 * kRing, 'b');
  CHECK_THROWS_AS(server.write_frame(MessageType::Response, bytes_of("echo"), bytes_of(big)), spinrpc::TimedOut);
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_one();
  guard.join();
}

}  // namespace

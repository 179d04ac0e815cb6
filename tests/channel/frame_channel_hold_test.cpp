// FrameChannel::Hold: frames under a Hold stay valid and in place while the
// buffer grows, slides or is given back, under nested Holds and moved ones.
#include <doctest/doctest.h>

#include <algorithm>  // std::sort, std::unique
#include <cstddef>    // std::size_t
#include <optional>   // std::optional
#include <string>     // std::string
#include <thread>     // std::thread
#include <vector>     // std::vector

#include "channel/frame_channel.h"
#include "tests/channel/frame_channel_test_util.h"

namespace spinrpc {
namespace {

using namespace test;  // tests/channel/frame_channel_test_util.h, channel_test_util.h

std::vector<Expected> hold_frames() {
  return {
      {MessageType::Request, bytes("held"), pattern(40, 61)},           // A
      {MessageType::CallResponse, bytes("readFile"), pattern(100, 62)},  // B
      {MessageType::CallResponse, bytes("readFile"), pattern(5000, 63)},
      {MessageType::CallResponse, bytes("readFile"), pattern(70000, 64)},
      {MessageType::CallResponse, bytes("realpath"), pattern(3, 65)},
      {MessageType::Request, bytes("after"), pattern(20000, 66)},
      {MessageType::Request, bytes("last"), bytes("x")},
  };
}

TEST_CASE("FrameChannel keeps a held frame valid while the buffer grows, and reads on after the Hold ends") {
  const std::vector<Expected> frames = hold_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      CAPTURE(to_string(transport));
      CAPTURE(chunk);
      Link link = make_link(transport);
      Dribbler writer(link, wire(frames), {chunk});
      FrameChannel channel = reading_channel(link, small_buffer(16));
      const FrameView held = channel.read_frame();
      REQUIRE(mismatch(held, frames[0]) == "");
      {
        const FrameChannel::Hold hold = channel.hold_frame();
        for (std::size_t i = 1; i <= 4; ++i) {
          CAPTURE(i);
          CHECK(mismatch(channel.read_frame(), frames[i]) == "");
          // The held frame still reads as it did, in the same place.
          CHECK(mismatch(held, frames[0]) == "");
        }
      }
      CHECK(mismatch(channel.read_frame(), frames[5]) == "");
      CHECK(mismatch(channel.read_frame(), frames[6]) == "");
      CHECK_FALSE(channel.try_read_frame().has_value());
      CHECK(writer.wait() == "");
    }
  }
}

TEST_CASE("FrameChannel keeps frames under nested Holds valid until each Hold ends") {
  const std::vector<Expected> frames = hold_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      for (std::size_t initial : {std::size_t{16}, std::size_t{4096}}) {
        CAPTURE(to_string(transport));
        CAPTURE(chunk);
        CAPTURE(initial);
        Link link = make_link(transport);
        Dribbler writer(link, wire(frames), {chunk});
        FrameChannel channel = reading_channel(link, small_buffer(initial));
        const FrameView a = channel.read_frame();
        REQUIRE(mismatch(a, frames[0]) == "");
        {
          const FrameChannel::Hold outer = channel.hold_frame();
          const FrameView b = channel.read_frame();
          REQUIRE(mismatch(b, frames[1]) == "");
          {
            const FrameChannel::Hold inner = channel.hold_frame();
            CHECK(mismatch(channel.read_frame(), frames[2]) == "");
            CHECK(mismatch(channel.read_frame(), frames[3]) == "");  // forces growth
            CHECK(mismatch(a, frames[0]) == "");
            CHECK(mismatch(b, frames[1]) == "");
          }
          // Only the outer Hold is left: more reads, and `a` still stands.
          CHECK(mismatch(channel.read_frame(), frames[4]) == "");
          CHECK(mismatch(channel.read_frame(), frames[5]) == "");
          CHECK(mismatch(a, frames[0]) == "");
        }
        CHECK(mismatch(channel.read_frame(), frames[6]) == "");
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK(writer.wait() == "");
      }
    }
  }
}

TEST_CASE("FrameChannel keeps held frames in place while the unheld bytes behind them slide down") {
  // A 64-byte buffer takes A, B and X (12 bytes each) and the first 28
  // bytes of C (37) in its first read. A and B are held, X is not. C does
  // not fit behind X (28 bytes left) but does behind B (40): the bytes slide
  // down to the end of B, the held floor, over X, in the same buffer. Then
  // D needs a bigger buffer while A and B are still held.
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("a"), bytes("12345")},
      {MessageType::CallResponse, bytes("b"), bytes("67890")},
      {MessageType::CallResponse, bytes("x"), bytes("abcde")},
      {MessageType::CallResponse, bytes("c"), pattern(30, 9)},
      {MessageType::CallResponse, bytes("d"), pattern(200, 10)},
  };
  REQUIRE(wire({frames[0]}).size() == 12);
  REQUIRE(wire({frames[3]}).size() == 37);
  Link link = make_link(Transport::Pipe);
  const Bytes all = wire(frames);
  FrameChannel channel = preloaded_channel(link, all, small_buffer(64));
  const FrameView a = channel.read_frame();
  REQUIRE(mismatch(a, frames[0]) == "");
  {
    const FrameChannel::Hold hold_a = channel.hold_frame();
    const FrameView b = channel.read_frame();
    REQUIRE(mismatch(b, frames[1]) == "");
    {
      const FrameChannel::Hold hold_b = channel.hold_frame();
      CHECK(mismatch(channel.read_frame(), frames[2]) == "");
      const FrameView c = channel.read_frame();
      CHECK(mismatch(c, frames[3]) == "");
      // C now starts right behind B: its name follows C's 4 header bytes.
      CHECK(c.name.data() == b.payload.data() + b.payload.size() + 4);
      CHECK(mismatch(a, frames[0]) == "");
      CHECK(mismatch(b, frames[1]) == "");
      CHECK(mismatch(channel.read_frame(), frames[4]) == "");
      CHECK(mismatch(a, frames[0]) == "");
      CHECK(mismatch(b, frames[1]) == "");
    }
    CHECK(mismatch(a, frames[0]) == "");
  }
  CHECK_FALSE(channel.try_read_frame().has_value());
}

TEST_CASE("FrameChannel keeps the outer Hold's frame in place after an inner Hold ends") {
  // A 64-byte buffer takes A, B and C (12 bytes each) and the first 28
  // bytes of D (37). A is held by the outer Hold, B by the inner one, which
  // ends before D is read. D does not fit behind C, so the bytes slide down:
  // to the end of A (the outer Hold's floor), over B and C, never over A.
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("a"), bytes("12345")},
      {MessageType::CallResponse, bytes("b"), bytes("67890")},
      {MessageType::CallResponse, bytes("c"), bytes("abcde")},
      {MessageType::CallResponse, bytes("d"), pattern(30, 11)},
  };
  REQUIRE(wire({frames[3]}).size() == 37);
  Link link = make_link(Transport::Pipe);
  const Bytes all = wire(frames);
  FrameChannel channel = preloaded_channel(link, all, small_buffer(64));
  const FrameView a = channel.read_frame();
  REQUIRE(mismatch(a, frames[0]) == "");
  {
    const FrameChannel::Hold outer = channel.hold_frame();
    const FrameView b = channel.read_frame();
    REQUIRE(mismatch(b, frames[1]) == "");
    {
      const FrameChannel::Hold inner = channel.hold_frame();
      CHECK(mismatch(channel.read_frame(), frames[2]) == "");
      CHECK(mismatch(b, frames[1]) == "");
    }
    const FrameView d = channel.read_frame();
    CHECK(mismatch(d, frames[3]) == "");
    // D slid down to just behind A (4 header bytes before its name).
    CHECK(d.name.data() == a.payload.data() + a.payload.size() + 4);
    CHECK(mismatch(a, frames[0]) == "");
  }
  CHECK_FALSE(channel.try_read_frame().has_value());
}

TEST_CASE("FrameChannel Hold moved from releases nothing; the moved-to Hold keeps the frame") {
  // If the moved-from Hold released too, both Holds would be gone after the
  // inner scope, the buffer would rewind and the next reads would overwrite
  // `a` in place (no sanitizer needed to see it).
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("held"), pattern(40, 71)},
      {MessageType::CallResponse, bytes("a"), pattern(20, 72)},
      {MessageType::CallResponse, bytes("b"), pattern(20, 73)},
      {MessageType::CallResponse, bytes("c"), pattern(20, 74)},
  };
  for (std::size_t chunk : {std::size_t{4}, std::size_t{0}}) {
    CAPTURE(chunk);
    Link link = make_link(Transport::Pipe);
    Dribbler writer(link, wire(frames), {chunk});
    FrameChannel channel = reading_channel(link, small_buffer(256));
    const FrameView a = channel.read_frame();
    REQUIRE(mismatch(a, frames[0]) == "");
    std::optional<FrameChannel::Hold> kept;
    {
      FrameChannel::Hold first = channel.hold_frame();
      kept.emplace(std::move(first));
    }  // `first`, moved from, ends here
    for (std::size_t i = 1; i < frames.size(); ++i) {
      CHECK(mismatch(channel.read_frame(), frames[i]) == "");
      CHECK(mismatch(a, frames[0]) == "");
    }
    kept.reset();
    CHECK_FALSE(channel.try_read_frame().has_value());
    CHECK(writer.wait() == "");
  }
}

TEST_CASE("FrameChannel keeps a held frame bigger than retained_buffer_bytes while it reads on") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), pattern(2 * kMiB, 81)},
      {MessageType::CallResponse, bytes("readFile"), bytes("small")},
      {MessageType::CallResponse, bytes("readFile"), pattern(3 * kMiB, 82)},
      {MessageType::Request, bytes("echo"), bytes("end")},
  };
  ChannelOptions options;
  options.retained_buffer_bytes = kMiB;
  Link link = make_link(Transport::SocketPair);
  FrameChannel reader = reading_channel(link, options);
  std::string error;
  std::thread t = write_frames(link, frames, {false, true, true, true}, error);
  const FrameView big = reader.read_frame();
  REQUIRE(mismatch(big, frames[0]) == "");
  {
    const FrameChannel::Hold hold = reader.hold_frame();
    CHECK(mismatch(reader.read_frame(), frames[1]) == "");
    CHECK(mismatch(big, frames[0]) == "");
    CHECK(mismatch(reader.read_frame(), frames[2]) == "");
    CHECK(mismatch(big, frames[0]) == "");
  }
  CHECK(mismatch(reader.read_frame(), frames[3]) == "");
  CHECK_FALSE(reader.try_read_frame().has_value());
  t.join();
  CHECK(error == "");
}

}  // namespace
}  // namespace spinrpc

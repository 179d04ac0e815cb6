// FrameChannel reading real pipes and socketpairs: frames dribbled in chunks
// arrive whole; EOF between frames, EOF inside one and malformed bytes
// become the documented results and errors; the size limit applies as soon
// as a length arrives.
#include <doctest/doctest.h>

#include <unistd.h>  // ::write

#include <chrono>    // std::chrono::microseconds
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <string>    // std::string
#include <vector>    // std::vector

#include "channel/frame_channel.h"
#include "stream/peer_closed.h"
#include "protocol/frame_decoder.h"
#include "protocol/protocol_error.h"
#include "tests/channel/frame_channel_test_util.h"

namespace spinrpc {
namespace {

using namespace test;  // tests/channel/frame_channel_test_util.h, channel_test_util.h

TEST_CASE("FrameChannel reads whole frames that a writer dribbles in chunks over a pipe and a socketpair") {
  const std::vector<Expected> frames = mixed_frames();
  const Bytes all = wire(frames);
  // A 16-byte buffer that must grow and slide, the default 64 KiB, and a
  // spinning reader (non-blocking reads, EAGAIN while the writer dribbles).
  struct Config {
    const char* label;
    std::size_t initial_bytes;
    std::chrono::microseconds spin_budget;
  };
  const Config configs[] = {{"16-byte buffer", 16, std::chrono::microseconds{0}},
                            {"64 KiB buffer", std::size_t{64} << 10, std::chrono::microseconds{0}},
                            {"16-byte buffer, spinning 20 us", 16, std::chrono::microseconds{20}}};
  for (Transport transport : kTransports) {
    for (const Config& config : configs) {
      for (std::size_t chunk : kChunks) {
        CAPTURE(to_string(transport));
        CAPTURE(config.label);
        CAPTURE(chunk);
        ChannelOptions options = small_buffer(config.initial_bytes);
        options.spin = SpinPolicy{config.spin_budget, true, "test"};
        Link link = make_link(transport);
        Dribbler writer(link, all, {chunk});
        FrameChannel channel = reading_channel(link, options);
        for (const Expected& want : frames) CHECK(mismatch(channel.try_read_frame(), want) == "");
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK(writer.wait() == "");
      }
    }
  }
}

TEST_CASE("FrameChannel returns several frames that arrived in one write one at a time") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), bytes("1")},
      {MessageType::Request, bytes("echo"), bytes("22")},
      {MessageType::CallResponse, bytes("fileExists"), bytes("true"), TypeMarker::Uint8},
      {MessageType::Request, bytes("getServerTiming"), {}},
  };
  const Bytes all = wire(frames);
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel channel = preloaded_channel(link, all);
    for (const Expected& want : frames) CHECK(mismatch(channel.read_frame(), want) == "");
    CHECK_FALSE(channel.try_read_frame().has_value());
  }
}

TEST_CASE("FrameChannel::try_read_frame returns nullopt on EOF between frames, and again when asked again") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    SUBCASE("EOF before any byte") {
      Link link = make_link(transport);
      link.write_end.reset();
      FrameChannel channel = reading_channel(link);
      CHECK_FALSE(channel.try_read_frame().has_value());
      CHECK_FALSE(channel.try_read_frame().has_value());
    }
    SUBCASE("EOF after two frames") {
      const std::vector<Expected> frames = {{MessageType::Request, bytes("echo"), bytes("a")},
                                            {MessageType::Request, bytes("initialize"), bytes("null")}};
      for (std::size_t chunk : kChunks) {
        CAPTURE(chunk);
        Link link = make_link(transport);
        Dribbler writer(link, wire(frames), {chunk});
        FrameChannel channel = reading_channel(link, small_buffer());
        CHECK(mismatch(channel.try_read_frame(), frames[0]) == "");
        CHECK(mismatch(channel.try_read_frame(), frames[1]) == "");
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK(writer.wait() == "");
      }
    }
  }
}

TEST_CASE("FrameChannel::read_frame throws PeerClosed, not inside a field, on EOF between frames") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    const Expected frame{MessageType::Request, bytes("echo"), bytes("x")};
    Link link = make_link(transport);
    Dribbler writer(link, wire({frame}), {1});
    FrameChannel channel = reading_channel(link);
    CHECK(mismatch(channel.read_frame(), frame) == "");
    const auto error = thrown<PeerClosed>([&] { channel.read_frame(); });
    REQUIRE(error.has_value());
    CHECK(std::string(error->what()) == "unexpected EOF: the peer closed the connection between frames");
    CHECK_FALSE(error->inside_field());
    CHECK(writer.wait() == "");
  }
}

TEST_CASE("FrameChannel over a socket whose peer closed with our reply unread throws PeerClosed for a reply not read") {
  // ECONNRESET on the read: tsgo exits 1 there too ("read: connection reset
  // by peer"), where a clean EOF between frames is the normal end.
  for (const auto budget : {std::chrono::microseconds{0}, std::chrono::microseconds{100}}) {
    CAPTURE(budget.count());
    Link link = make_link(Transport::SocketPair);
    ChannelOptions options;
    options.spin.budget = budget;
    FrameChannel channel = reading_channel(link, options);
    channel.write_frame(MessageType::Response, bytes("echo"), bytes("unread"));
    link.write_end.reset();  // the peer goes, our Response still in its queue
    const auto error = thrown<PeerClosed>([&] { (void)channel.try_read_frame(); });
    REQUIRE(error.has_value());
    CHECK(error->where() == PeerClosed::Where::writing);
  }
}

// The cut points worth testing in a frame: each field boundary and one byte
// either side of it.
std::vector<std::size_t> cuts_of(const FrameLayout& l) {
  std::vector<std::size_t> cuts = {1, 2, 3};
  for (std::size_t at : {l.name_marker, l.name_data, l.payload_marker, l.payload_data, l.total}) {
    for (std::size_t c : {at - 1, at, at + 1, at + 2}) {
      if (c >= 1 && c < l.total) cuts.push_back(c);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

TEST_CASE("FrameChannel throws PeerClosed on EOF inside a frame, telling a cut field from a field boundary") {
  // A small frame cut at every byte, and a bin16-name, bin32-payload frame
  // cut at every field boundary and either side of it.
  const Expected small{MessageType::Request, bytes("echo"), bytes("hi"), TypeMarker::Uint8};
  const Expected wide{MessageType::Call, pattern(300, 5), pattern(65536, 6)};
  for (const Expected* frame : {&small, &wide}) {
    const Bytes whole = wire({*frame});
    const FrameLayout layout(frame->marker, frame->name.size(), frame->payload.size());
    std::vector<std::size_t> cuts;
    if (frame == &small) {
      for (std::size_t c = 1; c < whole.size(); ++c) cuts.push_back(c);
    } else {
      cuts = cuts_of(layout);
    }
    const Expected before{MessageType::Request, bytes("echo"), bytes("first")};
    for (Transport transport : kTransports) {
      for (std::size_t cut : cuts) {
        for (std::size_t chunk : kChunks) {
          // Chunk 1 over 65 KiB of payload is 65536 lockstep round trips per
          // cut; the cuts inside the wide payload use the other sizes.
          if (chunk == 1 && cut > 4096) continue;
          CAPTURE(to_string(transport));
          CAPTURE(whole.size());
          CAPTURE(cut);
          CAPTURE(chunk);
          const bool inside = layout.inside_field(cut);
          CAPTURE(inside);
          // A whole frame first, so the cut one is not at the stream's start.
          Bytes bytes_sent = wire({before});
          bytes_sent.insert(bytes_sent.end(), whole.begin(),
                            whole.begin() + static_cast<std::ptrdiff_t>(cut));
          Link link = make_link(transport);
          Dribbler writer(link, bytes_sent, {chunk});
          FrameChannel channel = reading_channel(link, small_buffer());
          CHECK(mismatch(channel.try_read_frame(), before) == "");
          const auto error = thrown<PeerClosed>([&] { channel.try_read_frame(); });
          REQUIRE(error.has_value());
          CHECK(error->inside_field() == inside);
          // Inside a field, tsgo's words; at a field boundary, how much of
          // the message came (docs/PROTOCOL.md#end-of-input).
          CHECK(std::string(error->what()) ==
                (inside ? std::string("unexpected EOF")
                        : "unexpected EOF: the peer closed the connection after " + std::to_string(cut) +
                              (cut == 1 ? " byte" : " bytes") +
                              " of a message, at a field boundary; the message is incomplete"));
          CHECK((error->where() == (inside ? PeerClosed::Where::inside_field : PeerClosed::Where::field_boundary)));
          CHECK(writer.wait() == "");
        }
      }
    }
  }
}

TEST_CASE("FrameChannel throws ProtocolError with tsgo's text for malformed bytes, also after a good frame") {
  struct Case {
    Bytes bytes;
    const char* message;
  };
  const std::vector<Case> cases = {
      {bytes({0x92, 0x01, 0xc4, 0x00}), "expected fixed 3-element array (0x93), received: 0x92"},
      {bytes({0x93, 0x09, 0xc4, 0x00, 0xc4, 0x00}), "unknown message type: 9"},
      {bytes({0x93, 0x00, 0xc4, 0x00, 0xc4, 0x00}), "unknown message type: 0"},
      {bytes({0x93, 0x7f, 0xc4, 0x00, 0xc4, 0x00}), "unknown message type: 127"},
      {bytes({0x93, 0xcc, 0x09, 0xc4, 0x00, 0xc4, 0x00}), "unknown message type: 9"},
      {bytes({0x93, 0xcd, 0x00, 0x01}), "expected positive fixint or uint8 marker, received: 0xcd"},
      {bytes({0x93, 0x01, 0xa4, 'e', 'c', 'h', 'o', 0xc4, 0x00}),
       "expected binary data (0xc4-0xc6), received: 0xa4"},
      {bytes({0x93, 0x01, 0xc4, 0x04, 'e', 'c', 'h', 'o', 0xa4, 'a', 'b', 'c', 'd'}),
       "expected binary data (0xc4-0xc6), received: 0xa4"},
  };
  const Expected good{MessageType::Request, bytes("echo"), bytes("ok")};
  for (const Case& c : cases) {
    for (bool after_good : {false, true}) {
      for (std::size_t chunk : kChunks) {
        CAPTURE(c.message);
        CAPTURE(after_good);
        CAPTURE(chunk);
        Bytes sent = after_good ? wire({good}) : Bytes{};
        sent.insert(sent.end(), c.bytes.begin(), c.bytes.end());
        Link link = make_link(Transport::Pipe);
        // The writer keeps the pipe open: the error must come from the bytes,
        // not from an EOF.
        Dribbler writer(link, sent, {chunk, true, true});
        FrameChannel channel = reading_channel(link, small_buffer());
        if (after_good) CHECK(mismatch(channel.read_frame(), good) == "");
        CHECK_THROWS_WITH_AS(channel.read_frame(), c.message, ProtocolError);
        CHECK(writer.finish() == "");
      }
    }
  }
}

TEST_CASE("FrameChannel refuses a frame over its limit once the length arrives, without waiting for the data") {
  SUBCASE("a custom limit of 100 bytes and a 101-byte frame") {
    ChannelOptions options;
    options.limits.max_message_bytes = 100;
    // [Request, "echo", 91 bytes] is 101 bytes; only its 10 header bytes are sent.
    const Bytes frame = msgpack_frame(1, bytes("echo"), pattern(91));
    REQUIRE(frame.size() == 101);
    Link link = make_link(Transport::Pipe);
    Dribbler writer(link, Bytes(frame.begin(), frame.begin() + 10), {1, true, true});
    FrameChannel channel = reading_channel(link, options);
    CHECK_THROWS_WITH_AS(channel.read_frame(),
                         "message of 101 bytes exceeds the limit of 100 bytes (max message size)",
                         ProtocolError);
    CHECK(writer.finish() == "");
  }
  SUBCASE("the default limit and a bin32 length of 0xffffffff") {
    Link link = make_link(Transport::SocketPair);
    Dribbler writer(link, bytes({0x93, 0x01, 0xc4, 0x00, 0xc6, 0xff, 0xff, 0xff, 0xff}),
                    {4, true, true});
    FrameChannel channel = reading_channel(link);
    CHECK_THROWS_WITH_AS(
        channel.read_frame(),
        "message of 4294967304 bytes exceeds the limit of 268435456 bytes (max message size)",
        ProtocolError);
    CHECK(writer.finish() == "");
  }
}

}  // namespace
}  // namespace spinrpc

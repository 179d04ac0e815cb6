// FrameChannel::try_read_frame with a PayloadSink: a big payload still to come
// is read into the sink's memory, whatever the cuts it arrives in; small
// payloads, frames already whole and a sink that declines leave the buffer
// in charge; the frames after a sunk one read as usual; EOF inside a sunk
// payload is PeerClosed; the sink sees the frame's type and length; and a
// first reply read into the sink settles the client's stream switch.
// prepare_while_waiting gives the sink steps only while nothing is there to
// read.
#include <doctest/doctest.h>

#include <cstddef>  // std::byte, std::size_t
#include <memory>   // std::make_unique
#include <span>     // std::span
#include <string>   // std::string
#include <vector>   // std::vector

#include "channel/payload_sink.h"
#include "channel/stream_switch.h"
#include "stream/peer_closed.h"
#include "tests/channel/frame_channel_test_util.h"

namespace spinrpc {
namespace {

using namespace test;

// Hands out memory of its own for Responses, declines the rest (as the
// Node binding's sink does); records what it was asked.
class RecordingSink final : public PayloadSink {
 public:
  std::span<std::byte> payload_memory(MessageType type, std::size_t bytes) override {
    asked.push_back({type, bytes});
    if (type != MessageType::Response) return {};
    memory.assign(bytes, std::byte{0xee});
    return memory;
  }
  struct Ask {
    MessageType type;
    std::size_t bytes;
  };
  std::vector<Ask> asked;
  std::vector<std::byte> memory;
};

bool points_into(ByteView view, const std::vector<std::byte>& memory) {
  return !view.empty() && view.data() == memory.data();
}

TEST_CASE("a big Response still to come is read into the sink, in any cuts, and the next frame reads as usual") {
  const std::size_t big = PayloadSink::kMinBytes * 4 + 3;
  const std::vector<Expected> frames = {
      {MessageType::Response, bytes("echo"), pattern(big, 7)},
      {MessageType::Response, bytes("echo"), bytes("small after")},
  };
  for (const std::size_t chunk : {std::size_t{4096}, std::size_t{1} << 20, std::size_t{0}}) {
    for (Transport transport : kTransports) {
      CAPTURE(chunk);
      CAPTURE(to_string(transport));
      Link link = make_link(transport);
      // A buffer smaller than the frame's header, so the header's cuts vary too.
      FrameChannel reader = reading_channel(link, small_buffer());
      Dribbler writer(link, wire(frames), {.chunk = chunk, .lockstep = chunk != 0});
      RecordingSink sink;
      const std::optional<FrameView> first = reader.try_read_frame(&sink);
      CHECK(mismatch(first, frames[0]) == "");
      REQUIRE(sink.asked.size() == 1);
      CHECK(sink.asked[0].type == MessageType::Response);
      CHECK(sink.asked[0].bytes == big);
      CHECK(points_into(first->payload, sink.memory));
      CHECK(mismatch(reader.try_read_frame(&sink), frames[1]) == "");
      CHECK(sink.asked.size() == 1);  // a small payload is never offered
      CHECK_FALSE(reader.try_read_frame(&sink).has_value());  // EOF between frames
      CHECK(writer.finish() == "");
    }
  }
}

TEST_CASE("a declined payload stays in the channel's buffer") {
  const Expected call{MessageType::Call, bytes("readFile"), pattern(PayloadSink::kMinBytes * 2, 8)};
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link, small_buffer());
    // In lockstep cuts: the payload is still to come when its length is known.
    Dribbler writer(link, wire({call}), {.chunk = 4096});
    RecordingSink sink;
    const std::optional<FrameView> frame = reader.try_read_frame(&sink);
    CHECK(mismatch(frame, call) == "");
    REQUIRE(sink.asked.size() == 1);
    CHECK(sink.asked[0].type == MessageType::Call);
    CHECK(sink.memory.empty());
    CHECK(writer.finish() == "");
  }
}

TEST_CASE("a big payload already in the buffer is not offered to the sink") {
  const std::vector<Expected> frames = {
      {MessageType::Response, bytes("echo"), bytes("first")},
      {MessageType::Response, bytes("echo"), pattern(PayloadSink::kMinBytes * 2, 9)},
  };
  // A socket pair's buffer takes both frames before any read (a pipe's 64
  // KiB would not); one read takes both (the buffer starts bigger).
  Link link = make_link(Transport::SocketPair);
  FrameChannel reader = preloaded_channel(link, wire(frames), small_buffer(std::size_t{1} << 20));
  RecordingSink sink;
  CHECK(mismatch(reader.try_read_frame(&sink), frames[0]) == "");
  CHECK(mismatch(reader.try_read_frame(&sink), frames[1]) == "");
  CHECK(sink.asked.empty());
}

TEST_CASE("EOF inside a payload read into the sink is PeerClosed") {
  const std::size_t big = PayloadSink::kMinBytes * 2;
  Bytes all = wire({{MessageType::Response, bytes("echo"), pattern(big, 10)}});
  all.resize(all.size() - 100);  // cut short inside the payload
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link, small_buffer());
    Dribbler writer(link, all, {.chunk = 4096});
    RecordingSink sink;
    const auto error = thrown<PeerClosed>([&] { reader.try_read_frame(&sink); });
    REQUIRE(error.has_value());
    CHECK(error->where() == PeerClosed::Where::inside_field);
    CHECK(sink.asked.size() == 1);
    CHECK(writer.finish() == "");
  }
}

// A client's switch whose server never agrees: counts the client's asks.
class CountingSwitch final : public StreamSwitch {
 public:
  explicit CountingSwitch(int& asked) : asked_(asked) {}
  bool agree() override {
    ++asked_;
    return false;
  }
  Streams move(Streams current) override { return current; }
  std::string reason(bool) const override { return "stayed: asked"; }

 private:
  int& asked_;
};

TEST_CASE("a first reply read into the sink settles the stream switch, as one read from the buffer does") {
  // The client once skipped the switch when the first reply went to the
  // sink: the server moved to shared memory and the client stayed on the
  // pipe (docs/SHARED-MEMORY.md, "Handshake").
  const std::size_t big = PayloadSink::kMinBytes * 2;
  const std::vector<Expected> frames = {
      {MessageType::Response, bytes("echo"), pattern(big, 12)},
      {MessageType::Response, bytes("echo"), pattern(big, 13)},
  };
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link, small_buffer());
    int asked = 0;
    reader.switch_at_first_reply(std::make_unique<CountingSwitch>(asked), StreamSwitch::Side::client);
    Dribbler writer(link, wire(frames), {.chunk = 4096, .lockstep = true});
    RecordingSink sink;
    const std::optional<FrameView> first = reader.try_read_frame(&sink);
    CHECK(mismatch(first, frames[0]) == "");
    CHECK(points_into(first->payload, sink.memory));
    CHECK(asked == 1);
    CHECK(reader.stats().transport_reason == "stayed: asked");
    CHECK(mismatch(reader.try_read_frame(&sink), frames[1]) == "");
    CHECK(asked == 1);  // the switch is settled once, at the first reply
    CHECK(writer.finish() == "");
  }
}

// Counts prepare_step() calls and wants `limit` of them.
class PreparingSink final : public PayloadSink {
 public:
  explicit PreparingSink(int limit) : limit_(limit) {}
  std::span<std::byte> payload_memory(MessageType, std::size_t) override { return {}; }
  bool prepare_step() noexcept override { return ++steps < limit_; }
  bool has_preparation() const noexcept override { return steps < limit_; }
  int steps = 0;

 private:
  int limit_;
};

TEST_CASE("prepare_while_waiting steps the sink until it is done while nothing has arrived") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link);
    PreparingSink sink(5);
    reader.prepare_while_waiting(sink);
    CHECK(sink.steps == 5);
  }
}

TEST_CASE("prepare_while_waiting asks a sink with nothing to prepare for no step") {
  Link link = make_link(Transport::Pipe);
  FrameChannel reader = reading_channel(link);
  PreparingSink done(0);
  reader.prepare_while_waiting(done);
  CHECK(done.steps == 0);
}

TEST_CASE("prepare_while_waiting gives no step when bytes are waiting or already buffered, or at EOF") {
  const std::vector<Expected> frames = {
      {MessageType::Response, bytes("echo"), bytes("one")},
      {MessageType::Response, bytes("echo"), bytes("two")},
  };
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    {
      // Both frames in the pipe: the first read takes both into the buffer.
      Link link = make_link(transport);
      FrameChannel reader = preloaded_channel(link, wire(frames));
      PreparingSink waiting(100);
      reader.prepare_while_waiting(waiting);
      CHECK(waiting.steps == 0);
      CHECK(mismatch(reader.try_read_frame(), frames[0]) == "");
      // The second frame is buffered, not in the pipe.
      PreparingSink buffered(100);
      reader.prepare_while_waiting(buffered);
      CHECK(buffered.steps == 0);
      CHECK(mismatch(reader.try_read_frame(), frames[1]) == "");
    }
    {
      Link link = make_link(transport);
      FrameChannel reader = reading_channel(link);
      link.write_end.reset();  // EOF: poll reports it, and the read must see it now
      PreparingSink at_eof(100);
      reader.prepare_while_waiting(at_eof);
      CHECK(at_eof.steps == 0);
      CHECK_FALSE(reader.try_read_frame().has_value());
    }
  }
}

}  // namespace
}  // namespace spinrpc

// FdChannel on real pipes and socketpairs: frames dribbled in chunks arrive
// whole, EOF and malformed bytes become the documented errors, big frames
// and non-blocking fds work, and Holds keep frames valid while the buffer
// moves underneath.

#include <doctest/doctest.h>

#include <fcntl.h>       // ::fcntl
#include <sys/socket.h>  // ::setsockopt
#include <unistd.h>      // ::read, ::write

#include <algorithm>  // std::sort, std::unique
#include <chrono>     // std::chrono::microseconds
#include <csignal>   // std::signal, SIGPIPE
#include <cstring>   // std::strerror
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <string>    // std::string
#include <thread>    // std::thread
#include <vector>    // std::vector

#include "channel/fd_channel.h"
#include "channel/peer_closed.h"
#include "channel/pipe.h"
#include "channel/spin_policy.h"
#include "protocol/frame_decoder.h"
#include "protocol/frame_encoder.h"
#include "protocol/protocol_error.h"
#include "tests/channel/channel_test_util.h"

namespace spinrpc {
namespace {

using test::Bytes;
using test::bytes;
using test::Dribbler;
using test::FrameLayout;
using test::Link;
using test::make_link;
using test::msgpack_frame;
using test::pattern;
using test::preloaded_channel;
using test::reading_channel;
using test::same_bytes;
using test::Transport;
using test::TypeMarker;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Chunk sizes for the writer (STYLE.md rule 14); 0 means "all at once".
const std::vector<std::size_t> kChunks = {1, 4, 256, 0};
const Transport kTransports[] = {Transport::Pipe, Transport::SocketPair};

// The process must not die of SIGPIPE when a test writes to a closed reader
// (FdChannel::write_frame documents that the process ignores it).
const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

struct Expected {
  MessageType type;
  Bytes name;
  Bytes payload;
  TypeMarker marker = TypeMarker::PositiveFixint;
};

Bytes wire(const std::vector<Expected>& frames) {
  Bytes out;
  for (const Expected& e : frames) {
    const Bytes f = msgpack_frame(static_cast<std::uint8_t>(e.type), e.name, e.payload, e.marker);
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

// "" when `got` is the frame `want`, else what differs.
std::string mismatch(const std::optional<FrameView>& got, const Expected& want) {
  if (!got) return "no frame (EOF)";
  if (got->type != want.type) return "type " + std::string(to_string(got->type));
  if (!same_bytes(got->name, want.name)) {
    return "name of " + std::to_string(got->name.size()) + " bytes differs";
  }
  if (!same_bytes(got->payload, want.payload)) {
    return "payload of " + std::to_string(got->payload.size()) + " bytes differs";
  }
  return "";
}

template <class Exception, class F>
std::optional<Exception> thrown(F&& f) {
  try {
    f();
  } catch (const Exception& e) {
    return e;
  }
  return std::nullopt;
}

ChannelOptions small_buffer(std::size_t initial_bytes = 16) {
  ChannelOptions o;
  o.initial_buffer_bytes = initial_bytes;
  return o;
}

std::vector<Expected> mixed_frames() {
  return {
      {MessageType::Request, bytes("echo"), {}},
      {MessageType::Response, bytes("echo"), bytes("hello"), TypeMarker::Uint8},
      {MessageType::Call, pattern(300, 1), pattern(70000, 2), TypeMarker::Uint8},  // bin16, bin32
      {MessageType::Error, {}, pattern(256, 3)},
      {MessageType::CallResponse, bytes("readFile"), pattern(1000, 4)},
      {MessageType::CallError, bytes("x"), bytes("boom")},
  };
}

// --- Reading -----------------------------------------------------------------

TEST_CASE("FdChannel reads whole frames that a writer dribbles in chunks over a pipe and a socketpair") {
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
        FdChannel channel = reading_channel(link, options);
        for (const Expected& want : frames) CHECK(mismatch(channel.try_read_frame(), want) == "");
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK(writer.wait() == "");
      }
    }
  }
}

TEST_CASE("FdChannel returns several frames that arrived in one write one at a time") {
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
    FdChannel channel = preloaded_channel(link, all);
    for (const Expected& want : frames) CHECK(mismatch(channel.read_frame(), want) == "");
    CHECK_FALSE(channel.try_read_frame().has_value());
  }
}

TEST_CASE("FdChannel::try_read_frame returns nullopt on EOF between frames, and again when asked again") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    SUBCASE("EOF before any byte") {
      Link link = make_link(transport);
      link.write_end.reset();
      FdChannel channel = reading_channel(link);
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
        FdChannel channel = reading_channel(link, small_buffer());
        CHECK(mismatch(channel.try_read_frame(), frames[0]) == "");
        CHECK(mismatch(channel.try_read_frame(), frames[1]) == "");
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK_FALSE(channel.try_read_frame().has_value());
        CHECK(writer.wait() == "");
      }
    }
  }
}

TEST_CASE("FdChannel::read_frame throws PeerClosed, not inside a field, on EOF between frames") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    const Expected frame{MessageType::Request, bytes("echo"), bytes("x")};
    Link link = make_link(transport);
    Dribbler writer(link, wire({frame}), {1});
    FdChannel channel = reading_channel(link);
    CHECK(mismatch(channel.read_frame(), frame) == "");
    const auto error = thrown<PeerClosed>([&] { channel.read_frame(); });
    REQUIRE(error.has_value());
    CHECK(std::string(error->what()) == "unexpected EOF: the peer closed the connection between frames");
    CHECK_FALSE(error->inside_field());
    CHECK(writer.wait() == "");
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

TEST_CASE("FdChannel throws PeerClosed on EOF inside a frame, telling a cut field from a field boundary") {
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
          FdChannel channel = reading_channel(link, small_buffer());
          CHECK(mismatch(channel.try_read_frame(), before) == "");
          const auto error = thrown<PeerClosed>([&] { channel.try_read_frame(); });
          REQUIRE(error.has_value());
          CHECK(error->inside_field() == inside);
          // Inside a field, tsgo's words; at a field boundary, how much of
          // the message came (docs/PROTOCOL-NOTES.md, "Ends of input").
          CHECK(std::string(error->what()) ==
                (inside ? std::string("unexpected EOF")
                        : "unexpected EOF: the peer closed the connection after " + std::to_string(cut) +
                              (cut == 1 ? " byte" : " bytes") +
                              " of a message, at a field boundary; the message is incomplete"));
          CHECK((error->where() == (inside ? PeerClosed::Where::InsideField : PeerClosed::Where::FieldBoundary)));
          CHECK(writer.wait() == "");
        }
      }
    }
  }
}

TEST_CASE("FdChannel throws ProtocolError with tsgo's text for malformed bytes, also after a good frame") {
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
        FdChannel channel = reading_channel(link, small_buffer());
        if (after_good) CHECK(mismatch(channel.read_frame(), good) == "");
        CHECK_THROWS_WITH_AS(channel.read_frame(), c.message, ProtocolError);
        CHECK(writer.finish() == "");
      }
    }
  }
}

TEST_CASE("FdChannel refuses a frame over its limit once the length arrives, without waiting for the data") {
  SUBCASE("a custom limit of 100 bytes and a 101-byte frame") {
    ChannelOptions options;
    options.limits.max_message_bytes = 100;
    // [Request, "echo", 91 bytes] is 101 bytes; only its 10 header bytes are sent.
    const Bytes frame = msgpack_frame(1, bytes("echo"), pattern(91));
    REQUIRE(frame.size() == 101);
    Link link = make_link(Transport::Pipe);
    Dribbler writer(link, Bytes(frame.begin(), frame.begin() + 10), {1, true, true});
    FdChannel channel = reading_channel(link, options);
    CHECK_THROWS_WITH_AS(channel.read_frame(),
                         "message of 101 bytes exceeds the limit of 100 bytes (max message size)",
                         ProtocolError);
    CHECK(writer.finish() == "");
  }
  SUBCASE("the default limit and a bin32 length of 0xffffffff") {
    Link link = make_link(Transport::SocketPair);
    Dribbler writer(link, bytes({0x93, 0x01, 0xc4, 0x00, 0xc6, 0xff, 0xff, 0xff, 0xff}),
                    {4, true, true});
    FdChannel channel = reading_channel(link);
    CHECK_THROWS_WITH_AS(
        channel.read_frame(),
        "message of 4294967304 bytes exceeds the limit of 268435456 bytes (max message size)",
        ProtocolError);
    CHECK(writer.finish() == "");
  }
}

// --- Writing and big frames ----------------------------------------------------

// A channel writing into a link's write end. Every FdChannel reads too, so
// it needs a readable input: for a socket a dup of the same socket, as in
// real use; for a pipe the read end of a second pipe, as a server's stdin.
FdChannel writing_channel(UniqueFd out, Transport t, ChannelOptions options = {}) {
  UniqueFd in = t == Transport::SocketPair ? test::dup_cloexec(out.get()) : make_pipe().read_end;
  return FdChannel(std::move(in), std::move(out), options);
}

// Writes `frames` with write_frame from a thread, through a channel that the
// thread owns and destroys at the end (the reader's EOF). Before each frame
// marked in `drain_before`, waits until the reader has taken every byte so far.
std::thread write_frames(Link& link, const std::vector<Expected>& frames,
                         std::vector<bool> drain_before, std::string& error) {
  return std::thread([out = std::move(link.write_end), t = link.transport, &frames,
                      drain_before = std::move(drain_before), &error]() mutable {
    try {
      FdChannel channel = writing_channel(std::move(out), t);
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (i < drain_before.size() && drain_before[i]) {
          while (test::unread_bytes(channel.out_fd(), t) > 0) std::this_thread::yield();
        }
        channel.write_frame(frames[i].type, frames[i].name, frames[i].payload);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
}

TEST_CASE("FdChannel round trips a 1 MiB payload between two channels") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), pattern(kMiB, 31)},
      {MessageType::Response, bytes("echo"), pattern(kMiB, 32)},
      {MessageType::Request, bytes("echo"), bytes("after")},
  };
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FdChannel reader = reading_channel(link);
    std::string error;
    std::thread t = write_frames(link, frames, {}, error);
    for (const Expected& want : frames) CHECK(mismatch(reader.read_frame(), want) == "");
    CHECK_FALSE(reader.try_read_frame().has_value());
    t.join();
    CHECK(error == "");
  }
}

TEST_CASE("FdChannel round trips a payload over retained_buffer_bytes and keeps working after giving the buffer back") {
  const std::size_t big = (std::size_t{16} << 20) + 1;  // 16 MiB + 1
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), bytes("before")},
      {MessageType::Request, bytes("echo"), pattern(big, 41)},
      {MessageType::Request, bytes("echo"), bytes("small after the big one")},
      {MessageType::CallResponse, bytes("readFile"), pattern(300, 42)},
      {MessageType::Request, bytes("echo"), pattern(big, 43)},  // grows again
      {MessageType::Request, bytes("echo"), {}},
  };
  // Each frame after a big one is sent only once the reader has taken every
  // byte, so the big frame is alone in the buffer and the buffer is given
  // back when it is consumed (not merely when the stream ends).
  const std::vector<bool> drain_before = {false, false, true, false, false, true};
  for (Transport transport : kTransports) {
    for (std::size_t retained : {std::size_t{1} << 20, std::size_t{16} << 20}) {
      CAPTURE(to_string(transport));
      CAPTURE(retained);
      ChannelOptions options;
      options.retained_buffer_bytes = retained;  // 16 MiB (the default) is also below 16 MiB + 1
      Link link = make_link(transport);
      FdChannel reader = reading_channel(link, options);
      std::string error;
      std::thread t = write_frames(link, frames, drain_before, error);
      for (const Expected& want : frames) CHECK(mismatch(reader.read_frame(), want) == "");
      CHECK_FALSE(reader.try_read_frame().has_value());
      t.join();
      CHECK(error == "");
    }
  }
}

TEST_CASE("FdChannel::write_frame throws PeerClosed when the reader has closed its end") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    link.read_end.reset();
    FdChannel writer = writing_channel(std::move(link.write_end), transport);
    const auto error = thrown<PeerClosed>(
        [&] { writer.write_frame(MessageType::Response, as_bytes("echo"), as_bytes("lost")); });
    REQUIRE(error.has_value());
    CHECK(std::string(error->what()) == "cannot write to peer: it closed the connection");
    CHECK_FALSE(error->inside_field());
  }
}

TEST_CASE("FdChannel::write_frame delivers 4 MiB whole through a non-blocking socket while the reader drains slowly") {
  const Bytes payload = pattern(4 * kMiB, 51);
  Bytes expected;
  append_frame(expected, MessageType::Response, as_bytes("getTypeAtLocation"), payload);
  append_frame(expected, MessageType::Response, as_bytes("echo"), as_bytes("then this"));

  // The socket is made non-blocking by someone else (a parent sharing it):
  // with the channel's reader on another fd, or on the same socket and
  // spinning (which changes no flag itself).
  for (bool by_spin_policy : {false, true}) {
    CAPTURE(by_spin_policy);
    test::SocketPair sockets = test::make_socketpair();
    const int write_fd = sockets.b.get();
    // A small send buffer makes the kernel refuse most of the frame at
    // first, so write_frame must take the EAGAIN -> POLLOUT path many times.
    const int sndbuf = 4096;
    REQUIRE(::setsockopt(write_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) == 0);

    // The reader: raw read(2)s of at most 1000 bytes, yielding in between.
    Bytes received;
    std::string read_error;
    std::thread reader([fd = sockets.a.get(), &received, &read_error] {
      std::byte piece[1000];
      for (;;) {
        const ssize_t n = ::read(fd, piece, sizeof piece);
        if (n == 0) return;
        if (n < 0) {
          if (errno == EINTR) continue;
          read_error = std::strerror(errno);
          return;
        }
        received.insert(received.end(), piece, piece + n);
        std::this_thread::yield();
      }
    });
    {
      std::optional<FdChannel> writer;
      if (by_spin_policy) {
        ChannelOptions options;
        options.spin = SpinPolicy{std::chrono::microseconds{50}, false, "test"};
        writer.emplace(test::dup_cloexec(write_fd), std::move(sockets.b), options);
      } else {
        writer.emplace(make_pipe().read_end, std::move(sockets.b));
      }
      test::set_nonblocking(write_fd);
      // The precondition under test: the fd write_frame uses is non-blocking.
      CHECK((::fcntl(write_fd, F_GETFL) & O_NONBLOCK) != 0);
      writer->write_frame(MessageType::Response, as_bytes("getTypeAtLocation"), payload);
      writer->write_frame(MessageType::Response, as_bytes("echo"), as_bytes("then this"));
    }  // closes the socket: the reader's EOF
    reader.join();
    CHECK(read_error == "");
    CHECK(received.size() == expected.size());
    CHECK(received == expected);
  }
}

TEST_CASE("FdChannel reads from a descriptor someone made non-blocking by waiting for POLLIN") {
  const std::vector<Expected> frames = mixed_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      CAPTURE(to_string(transport));
      CAPTURE(chunk);
      Link link = make_link(transport);
      Dribbler writer(link, wire(frames), {chunk});
      const int read_fd = link.read_end.get();
      FdChannel channel = reading_channel(link, small_buffer());
      // After the channel exists, as another holder of the file description
      // would do it (a plain channel makes its fd blocking when it starts).
      test::set_nonblocking(read_fd);
      for (const Expected& want : frames) CHECK(mismatch(channel.read_frame(), want) == "");
      CHECK_FALSE(channel.try_read_frame().has_value());
      CHECK(writer.wait() == "");
    }
  }
}

TEST_CASE("FdChannel treats ECONNRESET on a socket read as the peer closing") {
  test::SocketPair sockets = test::make_socketpair();
  UniqueFd in = test::dup_cloexec(sockets.a.get());
  FdChannel channel(std::move(in), std::move(sockets.a));
  // The channel writes; the peer closes without reading it, which resets the
  // connection (Linux reports ECONNRESET to the next read).
  channel.write_frame(MessageType::Request, as_bytes("echo"), as_bytes("unread"));
  sockets.b.reset();
  CHECK_FALSE(channel.try_read_frame().has_value());
}

// --- Moving --------------------------------------------------------------------

TEST_CASE("FdChannel moved into a new object reads on where the old one stopped") {
  const std::vector<Expected> frames = {{MessageType::Request, bytes("echo"), bytes("one")},
                                        {MessageType::Request, bytes("echo"), bytes("two")},
                                        {MessageType::Request, bytes("echo"), bytes("three")}};
  Link link = make_link(Transport::Pipe);
  const Bytes all = wire(frames);
  FdChannel first = preloaded_channel(link, all);
  const int fd = first.in_fd();
  CHECK(mismatch(first.read_frame(), frames[0]) == "");
  FdChannel second(std::move(first));  // the second and third frame are already buffered
  CHECK(second.in_fd() == fd);
  CHECK(first.in_fd() == -1);
  CHECK(mismatch(second.read_frame(), frames[1]) == "");
  CHECK(mismatch(second.read_frame(), frames[2]) == "");
  CHECK_FALSE(second.try_read_frame().has_value());
}

TEST_CASE("FdChannel move assignment closes the target's fds, whose O_NONBLOCK flag was never changed") {
  // The target spins. Another holder of that file description (a parent
  // sharing our stdin) must find it as it was, while the channel lives and
  // once it is gone, through destruction (checked first) and move assignment.
  ChannelOptions spinning;
  spinning.spin = SpinPolicy{std::chrono::microseconds{50}, false, "test"};
  for (bool by_assignment : {false, true}) {
    CAPTURE(by_assignment);
    PipePair target_pipe = make_pipe();
    const UniqueFd other_holder = test::dup_cloexec(target_pipe.read_end.get());
    const int target_fd = target_pipe.read_end.get();
    std::optional<FdChannel> target;
    target.emplace(std::move(target_pipe.read_end), UniqueFd(), spinning);
    REQUIRE((::fcntl(other_holder.get(), F_GETFL) & O_NONBLOCK) == 0);

    PipePair source_pipe = make_pipe();
    const Bytes frame = wire({{MessageType::Request, bytes("echo"), bytes("moved")}});
    REQUIRE(::write(source_pipe.write_end.get(), frame.data(), frame.size()) ==
            static_cast<ssize_t>(frame.size()));
    if (by_assignment) {
      *target = FdChannel(std::move(source_pipe.read_end), UniqueFd());
      CHECK(mismatch(target->read_frame(), {MessageType::Request, bytes("echo"), bytes("moved")}) == "");
    } else {
      target.reset();
    }
    CHECK(::fcntl(target_fd, F_GETFD) == -1);  // the target's own fd is closed
    CHECK((::fcntl(other_holder.get(), F_GETFL) & O_NONBLOCK) == 0);
  }
}

// --- Hold ----------------------------------------------------------------------

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

TEST_CASE("FdChannel keeps a held frame valid while the buffer grows, and reads on after the Hold ends") {
  const std::vector<Expected> frames = hold_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      CAPTURE(to_string(transport));
      CAPTURE(chunk);
      Link link = make_link(transport);
      Dribbler writer(link, wire(frames), {chunk});
      FdChannel channel = reading_channel(link, small_buffer(16));
      const FrameView held = channel.read_frame();
      REQUIRE(mismatch(held, frames[0]) == "");
      {
        const FdChannel::Hold hold = channel.hold_frame();
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

TEST_CASE("FdChannel keeps frames under nested Holds valid until each Hold ends") {
  const std::vector<Expected> frames = hold_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      for (std::size_t initial : {std::size_t{16}, std::size_t{4096}}) {
        CAPTURE(to_string(transport));
        CAPTURE(chunk);
        CAPTURE(initial);
        Link link = make_link(transport);
        Dribbler writer(link, wire(frames), {chunk});
        FdChannel channel = reading_channel(link, small_buffer(initial));
        const FrameView a = channel.read_frame();
        REQUIRE(mismatch(a, frames[0]) == "");
        {
          const FdChannel::Hold outer = channel.hold_frame();
          const FrameView b = channel.read_frame();
          REQUIRE(mismatch(b, frames[1]) == "");
          {
            const FdChannel::Hold inner = channel.hold_frame();
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

TEST_CASE("FdChannel keeps held frames in place while the unheld bytes behind them slide down") {
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
  FdChannel channel = preloaded_channel(link, all, small_buffer(64));
  const FrameView a = channel.read_frame();
  REQUIRE(mismatch(a, frames[0]) == "");
  {
    const FdChannel::Hold hold_a = channel.hold_frame();
    const FrameView b = channel.read_frame();
    REQUIRE(mismatch(b, frames[1]) == "");
    {
      const FdChannel::Hold hold_b = channel.hold_frame();
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

TEST_CASE("FdChannel keeps the outer Hold's frame in place after an inner Hold ends") {
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
  FdChannel channel = preloaded_channel(link, all, small_buffer(64));
  const FrameView a = channel.read_frame();
  REQUIRE(mismatch(a, frames[0]) == "");
  {
    const FdChannel::Hold outer = channel.hold_frame();
    const FrameView b = channel.read_frame();
    REQUIRE(mismatch(b, frames[1]) == "");
    {
      const FdChannel::Hold inner = channel.hold_frame();
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

TEST_CASE("FdChannel Hold moved from releases nothing; the moved-to Hold keeps the frame") {
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
    FdChannel channel = reading_channel(link, small_buffer(256));
    const FrameView a = channel.read_frame();
    REQUIRE(mismatch(a, frames[0]) == "");
    std::optional<FdChannel::Hold> kept;
    {
      FdChannel::Hold first = channel.hold_frame();
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

TEST_CASE("FdChannel keeps a held frame bigger than retained_buffer_bytes while it reads on") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), pattern(2 * kMiB, 81)},
      {MessageType::CallResponse, bytes("readFile"), bytes("small")},
      {MessageType::CallResponse, bytes("readFile"), pattern(3 * kMiB, 82)},
      {MessageType::Request, bytes("echo"), bytes("end")},
  };
  ChannelOptions options;
  options.retained_buffer_bytes = kMiB;
  Link link = make_link(Transport::SocketPair);
  FdChannel reader = reading_channel(link, options);
  std::string error;
  std::thread t = write_frames(link, frames, {false, true, true, true}, error);
  const FrameView big = reader.read_frame();
  REQUIRE(mismatch(big, frames[0]) == "");
  {
    const FdChannel::Hold hold = reader.hold_frame();
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

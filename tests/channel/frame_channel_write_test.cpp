// FrameChannel writing: payloads of 1 MiB and beyond the retained buffer round
// trip between two channels, a closed reader is PeerClosed, a non-blocking
// socket is drained whole, a descriptor someone made non-blocking is waited
// on, ECONNRESET reads as the peer closing, and big parts lent to a pipe
// (BufferOptions::large_writes) arrive whole and in order; a buffer grown
// for big frames is kept while they last.
#include <doctest/doctest.h>

#include <fcntl.h>       // ::fcntl
#include <sys/resource.h>  // ::getrusage
#include <sys/socket.h>  // ::setsockopt
#include <unistd.h>      // ::read, ::write

#include <atomic>   // std::atomic
#include <chrono>   // std::chrono::microseconds
#include <cstdio>   // std::fopen, std::fscanf
#include <cstring>  // std::strerror
#include <algorithm>  // std::copy, std::fill
#include <cstddef>  // std::size_t
#include <string>   // std::string
#include <thread>   // std::thread
#include <utility>  // std::pair
#include <vector>   // std::vector

#include "channel/frame_channel.h"
#include "stream/fd_output_stream_posix.h"
#include "stream/peer_closed.h"
#include "descriptor/pipe.h"
#include "wait/spin_policy.h"
#include "protocol/frame_encoder.h"
#include "tests/channel/frame_channel_test_util.h"
#include "tests/support/fd_channel.h"

namespace spinrpc {
namespace {

using namespace test;  // tests/channel/frame_channel_test_util.h, channel_test_util.h

TEST_CASE("FrameChannel round trips a 1 MiB payload between two channels") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), pattern(kMiB, 31)},
      {MessageType::Response, bytes("echo"), pattern(kMiB, 32)},
      {MessageType::Request, bytes("echo"), bytes("after")},
  };
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link);
    std::string error;
    std::thread t = write_frames(link, frames, {}, error);
    for (const Expected& want : frames) CHECK(mismatch(reader.read_frame(), want) == "");
    CHECK_FALSE(reader.try_read_frame().has_value());
    t.join();
    CHECK(error == "");
  }
}

TEST_CASE("FrameChannel round trips a payload over retained_buffer_bytes and keeps working after giving the buffer back") {
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
      FrameChannel reader = reading_channel(link, options);
      std::string error;
      std::thread t = write_frames(link, frames, drain_before, error);
      for (const Expected& want : frames) CHECK(mismatch(reader.read_frame(), want) == "");
      CHECK_FALSE(reader.try_read_frame().has_value());
      t.join();
      CHECK(error == "");
    }
  }
}

TEST_CASE("FrameChannel keeps a buffer grown past retained_buffer_bytes while big frames follow, and gives it back after a small one") {
  const std::size_t retained = 4 * kMiB;
  const std::size_t big = retained + 1;
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), pattern(big, 61)},
      {MessageType::Request, bytes("echo"), pattern(big, 62)},  // into the same buffer
      {MessageType::Request, bytes("echo"), bytes("small")},   // still kept: the last one was big
      {MessageType::Request, bytes("echo"), bytes("small")},   // given back: the last one was small
      {MessageType::Request, bytes("echo"), pattern(big, 63)},  // grows again
  };
  // Each frame alone in the buffer, so each read starts on an empty one:
  // each is written only once the reader has read the one before (waiting
  // for the kernel's count of unread bytes to reach 0 let two frames meet
  // in one read, once in three fresh-clone CI runs).
  const std::vector<bool> drain_before = {false, true, true, true, true};
  const auto minor_faults = [] {
    rusage usage{};
    ::getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_minflt;
  };
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    ChannelOptions options;
    options.retained_buffer_bytes = retained;
    Link link = make_link(transport);
    FrameChannel reader = reading_channel(link, options);
    std::string error;
    std::atomic<std::size_t> frames_read{0};
    std::thread t = write_frames(link, frames, drain_before, error, &frames_read);
    CHECK(mismatch(reader.read_frame(), frames[0]) == "");
    ++frames_read;
    const std::size_t grown = reader.read_buffer_bytes();
    CHECK(grown > big);
    const long faults_before = minor_faults();
    CHECK(mismatch(reader.read_frame(), frames[1]) == "");
    ++frames_read;
    // A fresh buffer would fault in each of its ~1,024 pages as the payload
    // lands in it; the kept one is already there.
    CHECK(minor_faults() - faults_before < static_cast<long>(big / 4096 / 4));
    CHECK(reader.read_buffer_bytes() == grown);
    CHECK(mismatch(reader.read_frame(), frames[2]) == "");
    ++frames_read;
    CHECK(reader.read_buffer_bytes() == grown);
    CHECK(mismatch(reader.read_frame(), frames[3]) == "");
    ++frames_read;
    CHECK(reader.read_buffer_bytes() < retained);
    CHECK(mismatch(reader.read_frame(), frames[4]) == "");
    ++frames_read;
    CHECK(reader.read_buffer_bytes() > big);
    CHECK_FALSE(reader.try_read_frame().has_value());
    t.join();
    CHECK(error == "");
  }
}

TEST_CASE("FrameChannel::write_frame throws PeerClosed when the reader has closed its end") {
  for (Transport transport : kTransports) {
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    link.read_end.reset();
    FrameChannel writer = writing_channel(std::move(link.write_end), transport);
    const auto error = thrown<PeerClosed>(
        [&] { writer.write_frame(MessageType::Response, as_bytes("echo"), as_bytes("lost")); });
    REQUIRE(error.has_value());
    CHECK(std::string(error->what()) == "cannot write to peer: it closed the connection");
    CHECK_FALSE(error->inside_field());
  }
}

TEST_CASE("FrameChannel::write_frame delivers 4 MiB whole through a non-blocking socket while the reader drains slowly") {
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
      std::optional<FrameChannel> writer;
      if (by_spin_policy) {
        ChannelOptions options;
        options.spin = SpinPolicy{std::chrono::microseconds{50}, false, "test"};
        writer.emplace(test::fd_channel(test::dup_cloexec(write_fd), std::move(sockets.b), options));
      } else {
        writer.emplace(test::fd_channel(make_pipe().read_end, std::move(sockets.b)));
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

TEST_CASE("FrameChannel reads from a descriptor someone made non-blocking by waiting for POLLIN") {
  const std::vector<Expected> frames = mixed_frames();
  for (Transport transport : kTransports) {
    for (std::size_t chunk : {std::size_t{4}, std::size_t{256}, std::size_t{0}}) {
      CAPTURE(to_string(transport));
      CAPTURE(chunk);
      Link link = make_link(transport);
      Dribbler writer(link, wire(frames), {chunk});
      const int read_fd = link.read_end.get();
      FrameChannel channel = reading_channel(link, small_buffer());
      // After the channel exists, as another holder of the file description
      // would do it (a plain channel makes its fd blocking when it starts).
      test::set_nonblocking(read_fd);
      for (const Expected& want : frames) CHECK(mismatch(channel.read_frame(), want) == "");
      CHECK_FALSE(channel.try_read_frame().has_value());
      CHECK(writer.wait() == "");
    }
  }
}

// A request–reply reader reads each reply whole before it asks again, so
// the pipe is empty whenever the next reply is written and every big reply
// is lent from the one warm buffer. The pipe was once asked at the big part,
// with the reply's own header already in it: a reader that had not taken
// the header yet cost a second buffer, and the reply after that was copied.
TEST_CASE("FrameChannel with lend_copies lends every reply to a reader that reads each before asking again") {
  constexpr int kReplies = 20;
  Link requests = make_link(Transport::Pipe);
  Link replies = make_link(Transport::Pipe);
  ChannelOptions lending;
  lending.large_writes = BufferOptions::LargeWrites::lend_copies;
  FrameChannel server = test::fd_channel(std::move(requests.read_end), std::move(replies.write_end), lending);
  FrameChannel client = test::fd_channel(std::move(replies.read_end), std::move(requests.write_end));
  std::string error;
  std::thread t([&] {
    try {
      for (int i = 0; i < kReplies; ++i) {
        server.read_frame();
        server.write_frame(MessageType::Response, bytes("echo"), pattern(kMiB / 4, 70 + i));
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  for (int i = 0; i < kReplies; ++i) {
    CAPTURE(i);
    client.write_frame(MessageType::Request, bytes("echo"), bytes("next"));
    CHECK(mismatch(client.read_frame(), {MessageType::Response, bytes("echo"), pattern(kMiB / 4, 70 + i)}) == "");
  }
  t.join();
  CHECK(error == "");
  CHECK(server.stats().lent_parts == kReplies);
  CHECK(server.stats().unlent_parts == 0);
}

// LargeWrites::lend_copies leaves the caller's memory free at once: a writer
// that pipelines several big frames out of one buffer, changing it after
// each write while the reader has not read yet, must still deliver each
// frame as it was written (with LargeWrites::lend the pipe would hand the
// reader the buffer's later contents). Past LentCopies::kMaxLent unread
// buffers the writes are copied, which must not change the outcome either.
TEST_CASE("FrameChannel with lend_copies delivers what was written although the buffer changes at once") {
  constexpr int kFrames = 5;
  Link link = make_link(Transport::Pipe);
  ChannelOptions options;
  options.large_writes = BufferOptions::LargeWrites::lend_copies;
  PipePair unused = make_pipe();
  FrameChannel writer = test::fd_channel(std::move(unused.read_end), std::move(link.write_end), options);
  FrameChannel reader = reading_channel(link);
  Bytes buffer(kMiB / 2);
  std::string error;
  std::thread t([&] {
    try {
      for (int i = 0; i < kFrames; ++i) {
        const Bytes next = pattern(kMiB / 2, 60 + i);
        std::copy(next.begin(), next.end(), buffer.begin());  // the same memory, new bytes
        writer.write_frame(MessageType::Response, bytes("echo"), buffer);
      }
      // Scribbled over after the last write, before the reader has read it.
      std::fill(buffer.begin(), buffer.end(), std::byte{0});
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  // The writer writes ahead (the pipe grows to 1 MiB) before any read.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < kFrames; ++i) {
    CAPTURE(i);
    CHECK(mismatch(reader.read_frame(), {MessageType::Response, bytes("echo"), pattern(kMiB / 2, 60 + i)}) == "");
  }
  t.join();
  CHECK(error == "");
}

}  // namespace
}  // namespace spinrpc

namespace spinrpc {
namespace {

using namespace test;

// BufferOptions::large_writes lend and lend_copies: parts of kLendMinBytes
// or more go into a pipe by vmsplice, the rest by writev, all in order, and
// the pipe grows for them. The reader must get every frame whole, small ones
// between big ones included, and over a socket pair the option changes
// nothing.
TEST_CASE("FrameChannel lending big parts delivers big and small frames in order and grows a pipe") {
  const std::vector<Expected> frames = {
      {MessageType::Request, bytes("echo"), bytes("small first")},
      {MessageType::Request, bytes("echo"), pattern(kMiB, 51)},
      {MessageType::Response, bytes("echo"), pattern(FdOutputStream::kLendMinBytes, 52)},
      {MessageType::Request, bytes("echo"), pattern(FdOutputStream::kLendMinBytes - 1, 53)},
      {MessageType::CallResponse, bytes("readFile"), pattern(4 * kMiB + 3, 54)},
      {MessageType::Request, bytes("echo"), {}},
  };
  using enum BufferOptions::LargeWrites;
  const std::pair<BufferOptions::LargeWrites, Transport> cases[] = {
      {lend, Transport::Pipe}, {lend, Transport::SocketPair},
      {lend_copies, Transport::Pipe}, {lend_copies, Transport::SocketPair}};
  for (const auto& [mode, transport] : cases) {
    CAPTURE(static_cast<int>(mode));
    CAPTURE(to_string(transport));
    Link link = make_link(transport);
    const int write_fd = link.write_end.get();
    ChannelOptions options;
    options.large_writes = mode;
    // The writer's own input is never read: a pipe that stays empty.
    PipePair unused = make_pipe();
    FrameChannel writer = test::fd_channel(std::move(unused.read_end), std::move(link.write_end), options);
    FrameChannel reader = reading_channel(link);
    std::string error;
    std::thread t([&] {
      try {
        for (const Expected& f : frames) writer.write_frame(f.type, f.name, f.payload);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    for (const Expected& want : frames) CHECK(mismatch(reader.read_frame(), want) == "");
    t.join();
    CHECK(error == "");
    if (transport == Transport::Pipe) {
      // Grown to 1 MiB for the big parts, where the system allows it.
      long max_size = 0;
      if (FILE* f = std::fopen("/proc/sys/fs/pipe-max-size", "r")) {
        if (std::fscanf(f, "%ld", &max_size) != 1) max_size = 0;
        std::fclose(f);
      }
      if (max_size >= static_cast<long>(kMaxPipeBytes)) {
        CHECK(::fcntl(write_fd, F_GETPIPE_SZ) == static_cast<int>(kMaxPipeBytes));
      }
    }
  }
}

}  // namespace
}  // namespace spinrpc

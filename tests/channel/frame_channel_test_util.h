#pragma once
// What the FrameChannel suites share: frames as the tests expect them, their
// bytes on the wire (msgpack-c writes them), comparing a FrameView with one,
// the chunk sizes and transports every case runs over, and a writer thread.

#include <atomic>    // std::atomic
#include <chrono>    // std::chrono::steady_clock
#include <csignal>   // std::signal, SIGPIPE
#include <cstddef>   // std::size_t
#include <optional>  // std::optional
#include <string>    // std::string
#include <thread>    // std::thread
#include <vector>    // std::vector

#include "channel/frame_channel.h"
#include "descriptor/pipe.h"
#include "tests/channel/channel_test_util.h"

namespace spinrpc::test {

// Chunk sizes for the writer (docs/CONVENTIONS.md#tests); 0 means "all at once".
inline const std::vector<std::size_t> kChunks = {1, 4, 256, 0};
inline const Transport kTransports[] = {Transport::Pipe, Transport::SocketPair};

// The process must not die of SIGPIPE when a test writes to a closed reader
// (FrameChannel::write_frame documents that the process ignores it).
inline const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

struct Expected {
  MessageType type;
  Bytes name;
  Bytes payload;
  TypeMarker marker = TypeMarker::PositiveFixint;
};

inline Bytes wire(const std::vector<Expected>& frames) {
  Bytes out;
  for (const Expected& e : frames) {
    const Bytes f = msgpack_frame(static_cast<std::uint8_t>(e.type), e.name, e.payload, e.marker);
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

// "" when `got` is the frame `want`, else what differs.
inline std::string mismatch(const std::optional<FrameView>& got, const Expected& want) {
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

inline ChannelOptions small_buffer(std::size_t initial_bytes = 16) {
  ChannelOptions o;
  o.initial_buffer_bytes = initial_bytes;
  return o;
}

inline std::vector<Expected> mixed_frames() {
  return {
      {MessageType::Request, bytes("echo"), {}},
      {MessageType::Response, bytes("echo"), bytes("hello"), TypeMarker::Uint8},
      {MessageType::Call, pattern(300, 1), pattern(70000, 2), TypeMarker::Uint8},  // bin16, bin32
      {MessageType::Error, {}, pattern(256, 3)},
      {MessageType::CallResponse, bytes("readFile"), pattern(1000, 4)},
      {MessageType::CallError, bytes("x"), bytes("boom")},
  };
}

// A channel writing into a link's write end. Every FrameChannel reads too, so
// it needs a readable input: for a socket a dup of the same socket, as in
// real use; for a pipe the read end of a second pipe, as a server's stdin.
inline FrameChannel writing_channel(UniqueFd out, Transport t, ChannelOptions options = {}) {
  UniqueFd in = t == Transport::SocketPair ? dup_cloexec(out.get()) : make_pipe().read_end;
  return fd_channel(std::move(in), std::move(out), options);
}

// Writes `frames` with write_frame from a thread, through a channel that the
// thread owns and destroys at the end (the reader's EOF). Before each frame
// marked in `drain_before`, waits until the reader has taken every byte so
// far; or, given `frames_read` (the reader's count of frames it has read,
// which the test bumps after each read_frame), until the reader has read
// every frame before this one: then no byte of the frame can reach the
// reader's buffer before it is done with the previous one, whatever the
// kernel reports of unread bytes. Gives up after 20 s (an error).
inline std::thread write_frames(Link& link, const std::vector<Expected>& frames,
                         std::vector<bool> drain_before, std::string& error,
                         const std::atomic<std::size_t>* frames_read = nullptr) {
  return std::thread([out = std::move(link.write_end), t = link.transport, &frames,
                      drain_before = std::move(drain_before), &error, frames_read]() mutable {
    try {
      const int out_fd = out.get();  // the channel's, unread bytes asked of it
      FrameChannel channel = writing_channel(std::move(out), t);
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (i < drain_before.size() && drain_before[i]) {
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (frames_read != nullptr ? frames_read->load() < i : unread_bytes(out_fd, t) > 0) {
            if (std::chrono::steady_clock::now() > deadline) {
              error = "the reader did not take frame " + std::to_string(i - 1) + " within 20 s";
              return;
            }
            std::this_thread::yield();
          }
        }
        channel.write_frame(frames[i].type, frames[i].name, frames[i].payload);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
}

}  // namespace spinrpc::test

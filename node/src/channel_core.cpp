#include "node/src/channel_core.h"

#include <signal.h>  // ::kill, SIGKILL

#include <algorithm>  // std::max
#include <stdexcept>  // std::logic_error
#include <utility>    // std::move

#include "descriptor/stderr_lines.h"

namespace spinrpc::node {

std::span<char> ChannelCore::Scratch::reserve(std::size_t bytes) {
  if (bytes > capacity) {
    // Doubling keeps a slowly growing payload from reallocating each time.
    const std::size_t grown = std::max(bytes, std::min(capacity * 2, kRetainedScratchBytes));
    data.reset(new char[grown]);  // not make_unique: no zero fill of megabytes
    capacity = grown;
  }
  return {data.get(), capacity};
}

void ChannelCore::Scratch::trim() noexcept {
  if (capacity <= kRetainedScratchBytes) return;
  data.reset();
  capacity = 0;
}

namespace {

SyncRpcOptions retaining_big_buffers(SyncRpcOptions options) {
  options.channel.retained_buffer_bytes =
      std::max(options.channel.retained_buffer_bytes, ChannelCore::kRetainedScratchBytes);
  return options;
}

}  // namespace

ChannelCore::ChannelCore(const std::string& executable, const std::vector<std::string>& args,
                         SyncRpcOptions options, bool collect_timing)
    : channel_(executable, args, retaining_big_buffers(std::move(options))),
      collect_timing_(collect_timing) {}

ChannelCore::~ChannelCore() { end_now(); }

namespace {

void refuse_inside_request(bool in_request) {
  // The shim's own text for a request from inside a callback.
  if (in_request) {
    throw std::logic_error(
        "SyncRpcChannel::request from inside a callback: one request is open at a time");
  }
}

}  // namespace

std::span<char> ChannelCore::payload_buffer(std::size_t bytes) {
  refuse_inside_request(in_request_);
  return payload_scratch_.reserve(bytes);
}

std::span<char> ChannelCore::method_buffer(std::size_t bytes) {
  refuse_inside_request(in_request_);
  return method_scratch_.reserve(bytes);
}

ByteView ChannelCore::request(std::string_view method, ByteView payload, PayloadSink* sink) {
  if (closed_) throw ChannelClosed();
  if (collect_timing_) {
    last_bytes_sent_ = payload.size();
    last_bytes_received_ = 0;
  }
  // The payload has been written by the time a reply (or an error) comes
  // back, so a scratch buffer grown for it can go either way.
  in_request_ = true;
  struct TrimOnExit {
    ChannelCore& core;
    ~TrimOnExit() {
      core.in_request_ = false;
      core.payload_scratch_.trim();
      core.method_scratch_.trim();
    }
  } trim_on_exit{*this};
  const ByteView reply = channel_.request_bytes(method, payload, sink);
  if (collect_timing_) last_bytes_received_ = reply.size();
  return reply;
}

void ChannelCore::register_callback(std::string name, Callback callback) {
  channel_.register_callback(std::move(name), std::move(callback));
}

int ChannelCore::close() {
  if (closed_) return -1;
  const int status = channel_.close();  // throws std::logic_error inside a callback
  closed_ = true;
  return status;
}

void ChannelCore::end_now() noexcept {
  if (closed_) return;
  try {
    // An unreaped child exists (at worst as a zombie), so this cannot hit
    // another process; close() then reaps it at once.
    if (const int child = channel_.pid(); child > 0) ::kill(child, SIGKILL);
    if (in_request_) {
      // From inside a callback (process.exit() there): the channel is in
      // use below us and cannot be closed, but its child can be reaped, so
      // that none is left as a zombie where init does not reap (a
      // container whose pid 1 is the Node process).
      channel_.kill_child();
    } else {
      channel_.close();
    }
  } catch (const std::exception& e) {
    // Never waits: the host's stderr may be a full pipe nobody reads.
    write_stderr_without_waiting(std::string("spinrpc: cannot end a SyncRpcChannel: ") + e.what() + "\n");
  }
  closed_ = true;
}

}  // namespace spinrpc::node

#pragma once

#include <napi.h>

#include <cstddef>  // std::byte, std::size_t
#include <cstdint>  // std::uint64_t
#include <span>     // std::span

#include "channel/payload_sink.h"
#include "node/src/channel_core.h"
#include "node/src/page_populator.h"

namespace spinrpc::node {

/// The sink requestBinarySync gives the channel: a big Response payload is
/// read straight into the Buffer handed back to JavaScript, instead of into
/// the channel's buffer and then copied (docs/NODE.md, "Large payloads").
/// The Buffer comes from Node's allocator, as the TS 7 channel's does, and
/// its pages are populated before the read (PagePopulator): while the
/// server works on the request, when the replies come in one size (a
/// Buffer made ahead for the next one), else right before the read. One
/// per channel; begin() starts each request.
class ReplyBuffers final : public PayloadSink {
 public:
  /// Replies made ahead for: PayloadSink::kMinBytes up to this. A Buffer
  /// made ahead is kept until the next big reply. Bigger ones are not made
  /// ahead: made while the last reply's garbage is still uncollected, such a
  /// Buffer is fresh memory every time and its populate outlasts the
  /// server's turn; allocated when the reply comes, it mostly reuses a
  /// freed one (docs/NODE.md, "The reply's pages").
  static constexpr std::size_t kMaxAheadBytes = std::size_t{1} << 20;

  /// At most this much of a reply's Buffer is populated before the read;
  /// the rest is faulted in by the read itself, as it arrives. The length
  /// is only what the server announced, and a server that announces 4 GiB
  /// and dies must not make this process write 4 GiB of memory before the
  /// read sees the EOF. The bound is what the session's scratch buffers may
  /// keep anyway (ChannelCore::kRetainedScratchBytes).
  static constexpr std::size_t kMaxPopulatedBytes = ChannelCore::kRetainedScratchBytes;

  void begin(napi_env env) noexcept {
    env_ = env;
    value_ = nullptr;
    data_ = nullptr;
  }

  /// The Buffer for a big Response payload of `bytes` (a Call's payload
  /// goes to a callback as text: none), populated up to kMaxPopulatedBytes.
  std::span<std::byte> payload_memory(MessageType type, std::size_t bytes) override;

  // While the server works on the next request: populate the Buffer made
  // ahead for its reply, a step at a time.
  bool prepare_step() noexcept override { return populator_.step(); }
  bool has_preparation() const noexcept override { return !populator_.done(); }

  // The Buffer, when `reply` is the payload read into it; else null.
  napi_value holding(ByteView reply) const noexcept {
    return data_ != nullptr && reply.data() == data_ ? value_ : nullptr;
  }

  // A Buffer of `bytes` for the next reply, populated while its request
  // is worked on. Failing to make it only means the next reply gets a new
  // one, as without it.
  void make_ahead(std::size_t bytes) noexcept {
    napi_value value = nullptr;
    void* data = nullptr;
    if (napi_create_buffer(env_, bytes, &data, &value) != napi_ok ||
        napi_create_reference(env_, value, 1, &ahead_) != napi_ok) {
      ahead_ = nullptr;
      return;
    }
    ahead_memory_ = {static_cast<std::byte*>(data), bytes};
    populator_.reset(ahead_memory_);
    ++made_ahead_;
  }

  // Lets the Buffer made ahead go (used, or of another size).
  void drop_ahead() noexcept {
    if (ahead_ != nullptr) napi_delete_reference(env_, ahead_);
    ahead_ = nullptr;
    ahead_memory_ = {};
    populator_.reset({});
  }

  // Lets the last reply's Buffer go (a newer one is kept).
  void drop_last() noexcept {
    if (last_ != nullptr) napi_delete_reference(env_, last_);
    last_ = nullptr;
  }

  // Lets both go (the channel is closed or going).
  void release() noexcept {
    drop_ahead();
    drop_last();
  }

  // For stats(): Buffers made ahead, and those a reply was read into.
  std::uint64_t made_ahead() const noexcept { return made_ahead_; }
  std::uint64_t used_ahead() const noexcept { return used_ahead_; }

 private:
  napi_env env_ = nullptr;
  napi_value value_ = nullptr;  // this request's reply Buffer
  std::byte* data_ = nullptr;
  std::size_t last_bytes_ = 0;  // the last big reply's size
  napi_ref ahead_ = nullptr;    // a Buffer for the next reply, made ahead
  napi_ref last_ = nullptr;     // the last big reply's Buffer
  std::span<std::byte> ahead_memory_;
  PagePopulator populator_;     // over ahead_memory_ (empty without it)
  std::uint64_t made_ahead_ = 0;
  std::uint64_t used_ahead_ = 0;
};

}  // namespace spinrpc::node

#include "node/src/reply_buffers.h"

#include <algorithm>  // std::min
#include <stdexcept>  // std::runtime_error
#include <string>     // std::to_string

namespace spinrpc::node {

std::span<std::byte> ReplyBuffers::payload_memory(MessageType type, std::size_t bytes) {
  if (type != MessageType::Response) return {};  // a Call's payload goes to a callback as text
  if (ahead_ != nullptr && ahead_memory_.size() == bytes &&
      napi_get_reference_value(env_, ahead_, &value_) == napi_ok && value_ != nullptr) {
    populator_.finish();
    data_ = ahead_memory_.data();
    ++used_ahead_;
  } else {
    void* data = nullptr;
    if (napi_create_buffer(env_, bytes, &data, &value_) != napi_ok) {
      throw std::runtime_error("cannot allocate a Buffer of " + std::to_string(bytes) + " bytes for the reply");
    }
    data_ = static_cast<std::byte*>(data);
    PagePopulator now;
    now.reset({data_, std::min(bytes, kMaxPopulatedBytes)});
    now.finish();
  }
  drop_ahead();
  // The last big reply stays referenced until the next one is made, as
  // the TS 7 channel keeps its last payload (`_msgPayload`): otherwise
  // the garbage collector frees every reply at once, glibc gives the heap
  // top back to the kernel, and each new reply lands on fresh pages
  // (docs/NODE.md, "Large payloads").
  drop_last();
  if (napi_create_reference(env_, value_, 1, &last_) != napi_ok) last_ = nullptr;
  // Two big replies of one size in a row: the next is likely the same
  // (an echo after an echo, a page of fixed-size records after another).
  // Sizes that vary (source files) get no Buffer made ahead, which would
  // be garbage for the collector each time.
  if (bytes == last_bytes_ && bytes <= kMaxAheadBytes) make_ahead(bytes);
  last_bytes_ = bytes;
  return {data_, bytes};
}

}  // namespace spinrpc::node

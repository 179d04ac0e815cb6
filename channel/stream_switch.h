#pragma once

#include <string>  // std::string

#include "stream/streams.h"

namespace spinrpc {

/// A channel's move onto other streams, agreed with its peer at the end of
/// the first exchange (docs/SHARED-MEMORY.md, "Handshake"): the server
/// agrees just before its first Response or Error goes out, and moves right
/// after it; the client asks, after reading that reply, whether the server
/// agreed, and moves with it. Nothing else is in flight then: a sync client
/// sends its next Request only after the reply.
class StreamSwitch {
 public:
  /// Which end a channel is: the one that answers, or the one that asks.
  enum class Side { server, client };

  virtual ~StreamSwitch() = default;

  /// Server: whether to move, telling the peer so when it does. Client:
  /// whether the peer agreed.
  virtual bool agree() = 0;

  /// The streams to go on with, made from the ones in use.
  virtual Streams move(Streams current) = 0;

  /// Why the channel is on the transport it ends up on
  /// (ChannelStats::transport_reason).
  virtual std::string reason(bool moved) const = 0;
};

}  // namespace spinrpc

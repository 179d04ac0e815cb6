#pragma once

#include <napi.h>

#include <cstddef>      // std::size_t
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "client-shim/sync_rpc_channel.h"
#include "node/src/channel_core.h"

namespace spinrpc::node {

/// The largest frame the binding takes by default: a bin32 or str32
/// payload's most (4 GiB - 1) and the frame's header and name (4 KiB is
/// more than a method name needs), so that only maxMessageBytes refuses one.
inline constexpr std::size_t kMaxReplyBytes = (std::size_t{4} << 30) + (std::size_t{4} << 10);

/// What a request does after one of its callbacks failed (threw, returned
/// no string, or was unregistered when the server called it): the
/// `callbackFailure` option; each API dialect's own channel follows one
/// (node/dialects.json's callback_failure). Under every rule the server
/// gets CallError and the request reads its reply.
enum class CallbackFailureRule {
  request_returns,  ///< the request returns (the default)
  request_throws,     ///< "throw": the request throws "Error calling callback …"
  channel_poisoned,    ///< "poison": that, and every later request throws the same error
};

/// `value` as a string; else a TypeError "<what> must be a string, got …".
std::string string_argument(const Napi::Value& value, const char* what);

/// A spawn argument (the executable, an element of args): a string without
/// NUL bytes, refused as Node's spawn refuses it (ERR_INVALID_ARG_VALUE,
/// naming the argument `name`). Throws a TypeError.
std::string spawn_argument(const Napi::Value& value, const std::string& name, const char* what);

/// The constructor's third argument into `options`, `collect_timing` and
/// `rule`: TS 7's collectTiming boolean, or an object of our options
/// (docs/NODE.md, "The surface"). Throws a TypeError for a bad option.
void read_options(const Napi::Value& value, SyncRpcOptions& options, bool& collect_timing,
                  CallbackFailureRule& rule);

/// A JavaScript string's UTF-8 bytes, written into one of the core's
/// scratch buffers (`buffer`); a view of them. Throws a TypeError "<what>
/// must be a string, got …" for a non-string.
std::string_view utf8_into(napi_env env, napi_value value, ChannelCore& core,
                           std::span<char> (ChannelCore::*buffer)(std::size_t), const char* what);

}  // namespace spinrpc::node

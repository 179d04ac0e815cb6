#pragma once

#include <cstddef>        // std::size_t
#include <functional>     // std::function
#include <memory>         // std::unique_ptr
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // std::unordered_map
#include <utility>        // std::forward
#include <vector>         // std::vector

#include "channel/cross_thread_flag.h"
#include "dialect/api_dialect.h"
#include "protocol/frame.h"
#include "server/batch_requests.h"
#include "server/request_context.h"
#include "server/server_timing.h"

namespace spinrpc {

class FrameChannel;
class JsonRpcChannel;
namespace detail {
class Session;
}

/// Answers one Request: reads ctx.payload(), writes ctx.reply() (or calls
/// ctx.reply_view()), may ctx.call() the client. An exception becomes an
/// Error reply whose payload is its what(); the server then serves on.
using Handler = std::function<void(RequestContext&)>;

/// The state tsgo's --api command line sets (docs/PROTOCOL.md#command-line).
struct ServerOptions {
  /// initialize's currentDirectory, verbatim (tsgo does not normalise it).
  std::string cwd;
  /// The client's FS callbacks (--callbacks=a,b). The built-in methods
  /// need none; a handler that Calls back may check the list it built the
  /// Server with.
  std::vector<std::string> callbacks;
  /// --timing: record each request's processing time for getServerTiming.
  bool timing = false;
  /// initialize's case rule, useCaseSensitiveFileNames or caseSensitivity
  /// as the dialect shapes it; found by detect_case_sensitivity() or said by
  /// the client, as its case_rule says (dialect/api_dialect.h).
  bool use_case_sensitive_file_names = true;
  /// The API version whose replies the server gives (dialect/api_dialect.h):
  /// initialize's shape, batchRequests, the transport errors' prefix, Go's
  /// Unicode tables. Default: the oldest.
  ApiVersion api_version{};
  /// The largest message the server's channel takes and sends, in bytes
  /// (--max-message-bytes): a batchRequests page is cut to fit it.
  std::size_t max_message_bytes = Limits::kDefaultMaxMessageBytes;
};

/// The sync API server: reads Requests from a channel, dispatches them to
/// handlers, writes Responses. Built in: echo, ping, initialize,
/// getServerTiming and resetServerTiming, batchRequests in API 7.1, and
/// tsgo's unknown-method Error (docs/PROTOCOL.md#built-in-methods), in the
/// shapes of ServerOptions::api_version. One thread; one Request open at a
/// time. Constructing a Server sets the process's Go Unicode tables to its
/// version's (set_go_unicode_version).
class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  /// Registers (or replaces, echo and initialize included) the handler for
  /// `method`. Throws std::invalid_argument for an empty name and for
  /// getServerTiming/resetServerTiming, which the server answers itself
  /// before dispatch, as tsgo does.
  template <class F>
  void on(std::string_view method, F&& handler) {
    add_handler(method, Handler(std::forward<F>(handler)));
  }
  void add_handler(std::string_view method, Handler handler);

  /// Serves the channel until the client closes it between frames; returns
  /// then. Throws, ending the session, on what tsgo treats as fatal:
  /// ProtocolError with tsgo's full stderr line (a malformed frame, prefixed
  /// "api: invalid request: "; a CallResponse or CallError outside a call,
  /// or an empty method: "api: unexpected response message in sync
  /// connection"; a Response, Error or Call: "unexpected message type: N");
  /// PeerClosed on EOF inside a frame; std::system_error from the OS.
  void serve(FrameChannel& channel);

  /// True from the moment a Request has been read until its reply is
  /// written. Safe to call from any thread (a snapshot; CrossThreadFlag):
  /// spinrpc-server's signal thread asks whether a signal cuts a request
  /// short.
  bool answering() const noexcept { return answering_.get(); }
  /// Serves the same methods over tsgo's async protocol (JSON-RPC with
  /// Content-Length framing, docs/ASYNC.md) until the client closes the
  /// connection between messages. Handlers see params as JSON text in
  /// tsgo's output form and return JSON text, which is re-encoded the way
  /// tsgo encodes results (a result that is not one JSON value becomes an
  /// error reply); RequestContext::call sends a JSON-RPC request with the id
  /// "api1", "api2", …. Requests are answered one at a time, in the order
  /// they arrive; those that arrive while a call is pending wait for it.
  /// Throws ProtocolError with the one stderr line for a malformed header,
  /// a body that breaks the JSON rules, or EOF inside a message;
  /// std::system_error from the OS.
  void serve_async(JsonRpcChannel& channel);

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  // Answers one Request of either protocol: the timing methods,
  // batchRequests, the handlers and their failures, each said once.
  // `has_params`: whether the Request carried params at all (async mode).
  void dispatch(detail::Session& session, std::string_view method, ByteView params, bool has_params = true);
  // Runs the handler for ctx.method() and records its time as one request
  // for getServerTiming; false means error_text_ holds the Error payload.
  bool run(RequestContext& ctx);
  // run() without the record: a batch item, which tsgo does not count.
  bool run_untimed(RequestContext& ctx);
  // batchRequests: runs each item but a nested batchRequests through
  // `run_item` (with run_untimed), which appends its response entry; false
  // means error_text_ holds the Error payload. The batchRequests Request
  // is recorded as one, whatever it holds, as tsgo records it: a first
  // page, a continuation and a refused one alike (docs/PROTOCOL.md,
  // "batchRequests").
  using BatchItemRunner = std::function<void(const detail::BatchParams::Item&, std::string& entry)>;
  bool answer_batch(std::string_view params, const BatchItemRunner& run_item, std::string& reply);
  bool answer_batch_untimed(std::string_view params, const BatchItemRunner& run_item, std::string& reply);
  // One item's entry once run() has answered it (`ok`): a binary reply
  // goes base64 where the session carries bytes, a view of its `params`
  // as it is, any other in the session's JSON output form.
  void append_item_entry(detail::Session& session, RequestContext& item, bool ok, std::string_view params,
                         std::string& entry);

  // Room for the built-in replies from the start (getChannelStats' JSON is
  // ~250 bytes and grows as its counters gain digits), so no reply
  // reallocates at a capacity boundary mid-session.
  static constexpr std::size_t kReservedReplyBytes = 1024;

  ServerOptions options_;
  const ApiDialect* dialect_;     // options_.api_version's
  std::unordered_map<std::string, Handler, StringHash, std::equal_to<>> handlers_;
  ServerTiming timing_;
  std::string reply_;       // RequestContext::reply(), reused across requests
  std::string error_text_;  // reused for Error payloads
  CrossThreadFlag answering_;  // see answering()
  detail::BatchPages batch_pages_;  // batchRequests pages not fetched yet
  std::string item_reply_;          // a batch item's RequestContext::reply()
};

/// Whether the file system holding this executable is case-sensitive: tsgo
/// asks the same of its own path (stat the path with its letters' case
/// swapped). True when the path has no letters or cannot be read.
bool detect_case_sensitivity();

}  // namespace spinrpc

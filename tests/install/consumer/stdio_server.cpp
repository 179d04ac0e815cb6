// README's "Embedding" server, as written there: a method of its own that
// calls the client back, served on stdin and stdout through the stdio
// transport's Streams.
#include <spinrpc/channel/frame_channel.h>
#include <spinrpc/server/server.h>
#include <spinrpc/settings/settings.h>
#include <spinrpc/transport/stdio.h>

#include <string>
#include <utility>

int main() {
  spinrpc::Server server({.cwd = "/src", .callbacks = {"readFile"}});
  server.on("fileLength", [](spinrpc::RequestContext& ctx) {
    std::string_view text = ctx.call("readFile", ctx.payload_text());  // Call → CallResponse
    ctx.reply() = std::to_string(text.size());                          // Response payload
  });  // a handler that throws becomes an Error reply; the server serves on
  spinrpc::ChannelOptions options;
  options.spin = spinrpc::resolve_spin_policy();
  spinrpc::Streams streams = spinrpc::make_stdio_transport()->accept(options, options.spin.budget.count() > 0);
  spinrpc::FrameChannel channel(std::move(streams), options);
  server.serve(channel);  // returns when the client closes the connection
  return 0;
}

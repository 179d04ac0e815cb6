// spinrpc-server plus one method, "fileLength": it asks the client for the
// file through the readFile callback and answers with its length.
#include <spinrpc/app/server_main.h>
#include <spinrpc/server/request_context.h>

#include <string>
#include <vector>

int main(int argc, char** argv) {
  return spinrpc::run_server_main(
      "file-length-server", std::vector<std::string>(argv + 1, argv + argc),
      [](spinrpc::Server& server, const spinrpc::CommandLine&) {
        server.on("fileLength", [](spinrpc::RequestContext& ctx) {
          const std::string_view text = ctx.call("readFile", ctx.payload_text());
          ctx.reply() = std::to_string(text.size());
        });
      });
}

// The client side of the install check: every line that fails says what,
// and the exit status is 1.
#include <spinrpc/client-shim/sync_rpc_channel.h>

#include "echo_binding.h"

#include <iostream>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "install consumer: FAILED: " << what << '\n';
    ++failures;
  }
}

}  // namespace

int main() {
  try {
    spinrpc::SyncRpcChannel server(SPINRPC_SERVER, {"--api", "--cwd", "/src"});
    expect(server.request("echo", "hello, installed spinrpc") == "hello, installed spinrpc",
           "echo through " SPINRPC_SERVER);
    expect(server.request("initialize", "null") ==
               R"({"useCaseSensitiveFileNames":true,"currentDirectory":"/src"})",
           "initialize");
    expect(server.close() == 0, "spinrpc-server exits 0 on EOF");
    expect(echo_through(SPINRPC_SERVER, "from a shared library") == "from a shared library",
           "echo through the shared library");

    spinrpc::SyncRpcChannel embedded(FILE_LENGTH_SERVER, {"--api", "--callbacks=readFile"});
    std::string asked_for;
    embedded.register_callback("readFile", [&](std::string_view, std::string_view path) {
      asked_for = path;
      return std::string("twelve bytes");
    });
    expect(embedded.request("fileLength", "/src/a.ts") == "12", "fileLength through a Call");
    expect(asked_for == "/src/a.ts", "the Call's payload");
    expect(embedded.close() == 0, "file-length-server exits 0 on EOF");

    spinrpc::SyncRpcChannel readme_server(STDIO_SERVER, {});
    readme_server.register_callback("readFile", [](std::string_view, std::string_view) {
      return std::string("five!");
    });
    expect(readme_server.request("fileLength", "/src/b.ts") == "5", "README's embedded server over stdio");
    expect(readme_server.close() == 0, "README's embedded server exits 0 on EOF");
  } catch (const std::exception& e) {
    expect(false, std::string("exception: ") + e.what());
  }
  if (failures == 0) std::cout << "install consumer: ok\n";
  return failures == 0 ? 0 : 1;
}

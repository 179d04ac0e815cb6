// A client may write its next Request before it reads a Response (nothing in
// the sync protocol forbids it, and tsgo answers such a client correctly).
// The server must then not change bytes of a Response that is still in the
// pipe: this is why spinrpc-server never lends a handler's memory with
// vmsplice(2), only copies of it that it rewrites once the pipe is empty
// (SPINRPC_LEND_REPLIES=1; docs/NODE.md, "Large payloads"). Both ways run.
#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::write

#include <chrono>    // std::chrono::milliseconds
#include <cstddef>  // std::size_t
#include <string>   // std::string
#include <string_view>  // std::string_view
#include <thread>   // std::thread, std::this_thread
#include <vector>   // std::vector

#include <doctest/doctest.h>

#include "channel/byte_stream.h"
#include "settings/settings.h"  // kLendRepliesEntry
#include "descriptor/pipe.h"
#include "server_test_util.h"

namespace {

using spinrpc::MessageType;

TEST_CASE("spinrpc-server answers six pipelined 300 KiB echoes intact while the client reads late") {
  std::vector<std::string_view> env;
  SUBCASE("Responses copied into the pipe (the default)") {}
  SUBCASE("Responses lent (SPINRPC_LEND_REPLIES=1)") { env.push_back(spinrpc::kLendRepliesEntry); }
  constexpr int kRequests = 6;
  constexpr std::size_t kBytes = std::size_t{300} << 10;
  std::vector<std::byte> stream;
  std::string expected;
  for (int i = 0; i < kRequests; ++i) {
    const std::string payload(kBytes, static_cast<char>('A' + i));  // each reply tells which it is
    const auto request = spinrpc::test::frame_bytes(MessageType::Request, "echo", payload);
    stream.insert(stream.end(), request.begin(), request.end());
    const auto response = spinrpc::test::frame_bytes(MessageType::Response, "echo", payload);
    expected.append(reinterpret_cast<const char*>(response.data()), response.size());
  }

  spinrpc::test::TempFile err("stderr");
  spinrpc::PipePair to_server = spinrpc::make_pipe();
  spinrpc::PipePair from_server = spinrpc::make_pipe();
  spinrpc::ChildProcess server = spinrpc::test::spawn_with_stderr(
      spinrpc::test::bin_path("spinrpc-server"), {"--api"}, to_server.read_end.get(),
      from_server.write_end.get(), err, env);
  to_server.read_end.reset();
  from_server.write_end.reset();

  // All requests go in from another thread; this one reads nothing for a
  // while, so a server that ran ahead would have written later Responses
  // (and read later Requests) while earlier ones still sat in the pipe.
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < stream.size()) {
      const ssize_t n = ::write(to_server.write_end.get(), stream.data() + done, stream.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    to_server.write_end.reset();  // EOF after the last request
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // lets the server run ahead; asserts nothing
  const std::optional<std::string> replies = spinrpc::test::read_to_eof(from_server.read_end.get());
  writer.join();
  REQUIRE_MESSAGE(replies.has_value(), "spinrpc-server did not finish within the hang guard");
  CHECK(replies->size() == expected.size());
  CHECK_MESSAGE(*replies == expected, "a Response changed while it sat in the pipe");
  const std::optional<int> status = server.try_wait_for(spinrpc::test::kHangGuard);
  REQUIRE(status.has_value());
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 0);
  CHECK(err.read() == "");
}

}  // namespace

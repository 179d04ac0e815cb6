// No heap allocation per small request or reply in steady state, in the
// server (issue 3): Server::serve on one thread and a client FrameChannel on
// another, over real pipes, with a counting replacement of operator new.
// Its own executable: the replacement counts for the whole process.
#include <string>     // std::string
#include <thread>     // std::thread

#include <doctest/doctest.h>

#include "channel/frame_channel.h"
#include "descriptor/pipe.h"
#include "server/server.h"
#include "tests/support/count_allocations.h"
#include "tests/support/fd_channel.h"

namespace {

using namespace std::chrono_literals;
using spinrpc::FrameChannel;
using spinrpc::MessageType;

// One request and its reply, checked; returns nothing so nothing is kept.
void exchange(FrameChannel& client, std::string_view method, std::string_view payload, MessageType expected) {
  client.write_frame(MessageType::Request, spinrpc::as_bytes(method), spinrpc::as_bytes(payload));
  const spinrpc::FrameView reply = client.read_frame();
  REQUIRE(reply.type == expected);
  REQUIRE(reply.name_text() == method);
  if (method == "echo") REQUIRE(reply.payload_text() == payload);
}

TEST_CASE("Server allocates nothing per small request once warmed up, spinning or not") {
  for (const auto budget : {0us, 100us}) {
    CAPTURE(budget.count());
    auto requests = spinrpc::make_pipe();
    auto replies = spinrpc::make_pipe();
    spinrpc::ChannelOptions options;
    options.spin = spinrpc::SpinPolicy{budget, true, "test"};
    FrameChannel server_channel = spinrpc::test::fd_channel(std::move(requests.read_end), std::move(replies.write_end), options);
    FrameChannel client = spinrpc::test::fd_channel(std::move(replies.read_end), std::move(requests.write_end), options);

    spinrpc::Server server({.cwd = "/src", .callbacks = {}, .timing = true});
    std::thread serving([&] { server.serve(server_channel); });

    const auto round = [&] {
      exchange(client, "echo", "sixteen bytes!!!", MessageType::Response);
      exchange(client, "echo", "", MessageType::Response);
      exchange(client, "initialize", "null", MessageType::Response);
      exchange(client, "getServerTiming", "", MessageType::Response);
      exchange(client, "getChannelStats", "", MessageType::Response);
      exchange(client, "noSuchMethod", "{}", MessageType::Error);
    };
    for (int i = 0; i < 50; ++i) round();  // warm-up: buffers reach their size

    spinrpc::test::start_counting_allocations();
    for (int i = 0; i < 1000; ++i) round();
    spinrpc::test::stop_counting_allocations();
    CHECK(spinrpc::test::counted_allocations() == 0);

    client = spinrpc::test::fd_channel(spinrpc::make_pipe().read_end, spinrpc::UniqueFd());  // EOF to the server
    serving.join();
  }
}

}  // namespace

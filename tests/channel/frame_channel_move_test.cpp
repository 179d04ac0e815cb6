// FrameChannel moved: the new object reads on where the old one stopped, and
// move assignment leaves the target's old descriptors as it found them.
#include <doctest/doctest.h>

#include <fcntl.h>  // ::fcntl

#include <chrono>    // std::chrono::microseconds
#include <optional>  // std::optional
#include <vector>    // std::vector

#include "channel/frame_channel.h"
#include "wait/spin_policy.h"
#include "tests/channel/frame_channel_test_util.h"
#include "tests/support/fd_channel.h"

namespace spinrpc {
namespace {

using namespace test;  // tests/channel/frame_channel_test_util.h, channel_test_util.h

TEST_CASE("FrameChannel moved into a new object reads on where the old one stopped") {
  const std::vector<Expected> frames = {{MessageType::Request, bytes("echo"), bytes("one")},
                                        {MessageType::Request, bytes("echo"), bytes("two")},
                                        {MessageType::Request, bytes("echo"), bytes("three")}};
  Link link = make_link(Transport::Pipe);
  const Bytes all = wire(frames);
  FrameChannel first = preloaded_channel(link, all);
  const InputStream* const input = &first.input();
  CHECK(mismatch(first.read_frame(), frames[0]) == "");
  FrameChannel second(std::move(first));  // the second and third frame are already buffered
  CHECK(&second.input() == input);  // the same stream, its descriptor with it
  CHECK(mismatch(second.read_frame(), frames[1]) == "");
  CHECK(mismatch(second.read_frame(), frames[2]) == "");
  CHECK_FALSE(second.try_read_frame().has_value());
}

TEST_CASE("FrameChannel move assignment closes the target's fds, whose O_NONBLOCK flag was never changed") {
  // The target spins. Another holder of that file description (a parent
  // sharing our stdin) must find it as it was, while the channel lives and
  // once it is gone, through destruction (checked first) and move assignment.
  ChannelOptions spinning;
  spinning.spin = SpinPolicy{std::chrono::microseconds{50}, false, "test"};
  for (bool by_assignment : {false, true}) {
    CAPTURE(by_assignment);
    PipePair target_pipe = make_pipe();
    const UniqueFd other_holder = test::dup_cloexec(target_pipe.read_end.get());
    const int target_fd = target_pipe.read_end.get();
    std::optional<FrameChannel> target;
    target.emplace(test::fd_channel(std::move(target_pipe.read_end), UniqueFd(), spinning));
    REQUIRE((::fcntl(other_holder.get(), F_GETFL) & O_NONBLOCK) == 0);

    PipePair source_pipe = make_pipe();
    const Bytes frame = wire({{MessageType::Request, bytes("echo"), bytes("moved")}});
    REQUIRE(::write(source_pipe.write_end.get(), frame.data(), frame.size()) ==
            static_cast<ssize_t>(frame.size()));
    if (by_assignment) {
      *target = test::fd_channel(std::move(source_pipe.read_end), UniqueFd());
      CHECK(mismatch(target->read_frame(), {MessageType::Request, bytes("echo"), bytes("moved")}) == "");
    } else {
      target.reset();
    }
    CHECK(::fcntl(target_fd, F_GETFD) == -1);  // the target's own fd is closed
    CHECK((::fcntl(other_holder.get(), F_GETFL) & O_NONBLOCK) == 0);
  }
}

}  // namespace
}  // namespace spinrpc

// fd_streams() (stream/fd_streams_posix.h): what its streams say of
// themselves (StreamTraits), and the pipe rule FdInputStream applies when
// a message's size is announced. Real pipes and socket pairs.
#include <fcntl.h>       // ::fcntl, F_GETPIPE_SZ

#include <cstddef>  // std::size_t
#include <fstream>  // std::ifstream
#include <string>   // std::string
#include <utility>  // std::move

#include <doctest/doctest.h>

#include "descriptor/pipe.h"
#include "stream/buffer_options.h"
#include "stream/fd_streams_posix.h"

namespace spinrpc {
namespace {

TEST_CASE("fd_streams' input says its tries are system calls on a descriptor and offers the peer's pid") {
  for (const bool spinning : {false, true}) {
    CAPTURE(spinning);
    PipePair pipe = make_pipe();
    Streams streams = fd_streams(std::move(pipe.read_end), UniqueFd(), BufferOptions{}, spinning);
    const StreamTraits& traits = streams.in->traits();
    CHECK(traits.tries == StreamTraits::Tries::system_call);
    CHECK(std::string(traits.name) == "descriptor");
    CHECK(traits.peer != nullptr);
    // Without grow_read_pipe the stream has no room to make: no size hint.
    CHECK(traits.size_hint == nullptr);
  }
}

TEST_CASE("fd_streams' input takes message sizes only when it may grow its pipe (BufferOptions::grow_read_pipe)") {
  PipePair pipe = make_pipe();
  BufferOptions options;
  options.grow_read_pipe = true;
  Streams streams = fd_streams(std::move(pipe.read_end), UniqueFd(), options, false);
  CHECK(streams.in->traits().size_hint != nullptr);
}

TEST_CASE("FdInputStream grows its pipe for a message only when more than a pipeful of it is still to come") {
  long max_size = 0;
  if (std::ifstream f("/proc/sys/fs/pipe-max-size"); !(f >> max_size)) max_size = 0;
  PipePair pipe = make_pipe();
  const int write_fd = pipe.write_end.get();
  BufferOptions options;
  options.grow_read_pipe = true;
  Streams streams = fd_streams(std::move(pipe.read_end), UniqueFd(), options, false);
  MessageSizeHint* hint = streams.in->traits().size_hint;
  REQUIRE(hint != nullptr);
  const int before = ::fcntl(write_fd, F_GETPIPE_SZ);
  REQUIRE(before == static_cast<int>(kDefaultPipeBytes));

  // 200 KiB in all, 150 KiB of it buffered: 50 KiB to come fits the pipe.
  hint->message_arriving(std::size_t{200} << 10, std::size_t{150} << 10);
  CHECK(::fcntl(write_fd, F_GETPIPE_SZ) == before);

  // 200 KiB, none of it buffered: the writer would wait for us mid-message.
  hint->message_arriving(std::size_t{200} << 10, 0);
  if (max_size >= static_cast<long>(std::size_t{256} << 10)) {
    CHECK(::fcntl(write_fd, F_GETPIPE_SZ) == static_cast<int>(std::size_t{256} << 10));
  }
}

}  // namespace
}  // namespace spinrpc

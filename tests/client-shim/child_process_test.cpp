// ChildProcess::spawn's add_env: an entry reaches the child unless the
// environment already names the variable (what the user set wins). The
// shim passes SPINRPC_LEND_REPLIES=1 this way (channel/byte_stream.h).
#include <doctest/doctest.h>

#include <sys/wait.h>  // WIFEXITED, WEXITSTATUS
#include <unistd.h>    // ::read

#include <cstdlib>      // ::setenv, ::unsetenv
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "channel/pipe.h"
#include "client-shim/child_process.h"

namespace spinrpc {
namespace {

// What the child prints of the variable SPINRPC_TEST_ADDED.
std::string seen_by_child(std::span<const std::string_view> add_env) {
  PipePair in = make_pipe();
  PipePair out = make_pipe();
  ChildProcess child = ChildProcess::spawn(
      "sh", {"-c", "printf '%s' \"${SPINRPC_TEST_ADDED-unset}\""}, in.read_end.get(),
      out.write_end.get(), add_env);
  out.write_end.reset();
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(out.read_end.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  const int status = child.wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return text;
}

TEST_CASE("ChildProcess::spawn adds an environment entry unless the variable is set already") {
  constexpr std::string_view kAdded[] = {"SPINRPC_TEST_ADDED=1"};
  ::unsetenv("SPINRPC_TEST_ADDED");
  CHECK(seen_by_child({}) == "unset");
  CHECK(seen_by_child(kAdded) == "1");
  ::setenv("SPINRPC_TEST_ADDED", "0", 1);
  CHECK(seen_by_child(kAdded) == "0");  // the user's value wins
  ::unsetenv("SPINRPC_TEST_ADDED");
}

}  // namespace
}  // namespace spinrpc

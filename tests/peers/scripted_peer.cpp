// scripted_peer: the scripted methods (scripted_methods.h) on stdin/stdout.
// Arguments are ignored; any failure is one line "scripted_peer: <what>" on
// stderr and exit 1, so tests can tell each failure apart.
#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

#include <csignal>    // std::signal, SIGPIPE
#include <exception>  // std::exception
#include <iostream>   // std::cerr

#include "channel/frame_channel.h"
#include "server/server.h"
#include "tests/peers/scripted_methods.h"
#include "tests/support/fd_channel.h"

int main() {
  // A client that goes away must be a PeerClosed here, not a SIGPIPE death.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    spinrpc::Server server(spinrpc::ServerOptions{});
    add_scripted_methods(server);
    spinrpc::FrameChannel channel = spinrpc::test::fd_channel(spinrpc::UniqueFd(STDIN_FILENO), spinrpc::UniqueFd(STDOUT_FILENO));
    server.serve(channel);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "scripted_peer: " << e.what() << '\n';
    return 1;
  }
}

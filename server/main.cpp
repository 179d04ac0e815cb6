// spinrpc-server: tsgo --api's transport, answered by spinrpc::Server.
#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

#include <csignal>       // std::signal
#include <cstdio>        // std::fputs
#include <iostream>      // std::cerr
#include <system_error>  // std::system_error

#include "channel/fd_channel.h"
#include "channel/peer_closed.h"
#include "protocol/protocol_error.h"
#include "server/bench_methods.h"
#include "server/channel_stats_json.h"
#include "server/command_line.h"
#include "server/server.h"

namespace {

int run(const spinrpc::CommandLine& line) {
  spinrpc::ServerOptions options = line.server;
  options.use_case_sensitive_file_names = spinrpc::detect_case_sensitivity();
  spinrpc::Server server(std::move(options));
  if (line.bench_methods) spinrpc::register_bench_methods(server);

  spinrpc::ChannelOptions channel_options;
  channel_options.limits.max_message_bytes = line.max_message_bytes;
  channel_options.spin = spinrpc::resolve_spin_policy(line.spin);
  spinrpc::FdChannel channel(spinrpc::UniqueFd(STDIN_FILENO), spinrpc::UniqueFd(STDOUT_FILENO),
                             channel_options);
  // --stats: printed however the session ends.
  struct StatsAtExit {
    const spinrpc::FdChannel& channel;
    bool enabled;
    ~StatsAtExit() {
      if (enabled) std::cerr << "spinrpc-server: channel stats " << spinrpc::to_json(channel.stats()) << '\n';
    }
  } stats_at_exit{channel, line.print_stats};
  try {
    server.serve(channel);
    return 0;
  } catch (const spinrpc::ProtocolError& e) {
    std::cerr << e.what() << '\n';
    return 1;
  } catch (const spinrpc::PeerClosed& e) {
    // tsgo's rule: EOF inside a field is "unexpected EOF"; EOF at a field
    // boundary, or a client that stopped reading, ends quietly.
    if (!e.inside_field()) return 0;
    std::cerr << e.what() << '\n';
    return 1;
  } catch (const std::system_error& e) {
    std::cerr << "spinrpc-server: " << e.what() << '\n';
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A client that closes its end must be a PeerClosed, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  spinrpc::CommandLine line;
  try {
    line = spinrpc::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    for (const std::string& warning : line.warnings) std::cerr << "spinrpc-server: " << warning << '\n';
    if (line.help) {
      // tsgo's flag set treats --help after --api as a usage error: usage on
      // stderr, exit 2. On its own, --help is a request: stdout, exit 0.
      if (line.api) {
        std::fputs(spinrpc::usage_text(), stderr);
        return 2;
      }
      std::fputs(spinrpc::usage_text(), stdout);
      return 0;
    }
    if (!line.api) throw spinrpc::UsageError("--api is required: spinrpc-server implements tsgo's API mode only");
    if (line.pipe) throw spinrpc::UsageError("--pipe is not supported yet (the transports issue adds it)");
    if (line.async) throw spinrpc::UsageError("--async is not supported yet");
  } catch (const spinrpc::UsageError& e) {
    std::cerr << "spinrpc-server: " << e.what() << "\n\n" << spinrpc::usage_text();
    return 2;
  }
  return run(line);
}

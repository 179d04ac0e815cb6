#include "app/server_main.h"

#include <csignal>       // std::signal, SIGPIPE
#include <cstdio>        // std::fputs
#include <iostream>      // std::cerr
#include <system_error>  // std::system_error

#include "app/shutdown_on_signal.h"
#include "channel/fd_channel.h"
#include "channel/json_rpc_channel.h"
#include "channel/peer_closed.h"
#include "channel/spin_config.h"
#include "protocol/protocol_error.h"
#include "server/channel_stats_json.h"
#include "transport/created_files.h"
#include "transport/fifo.h"
#include "transport/stdio.h"
#include "transport/unix_socket.h"

namespace spinrpc {
namespace {

void check_usable(const CommandLine& line, const std::string& program) {
  if (!line.api) throw UsageError("--api is required: " + program + " implements tsgo's API mode only");
  if (line.fifo_in.has_value() != line.fifo_out.has_value()) {
    throw UsageError("--fifo-in and --fifo-out go together");
  }
  if (line.pipe && line.fifo_in) throw UsageError("--pipe and --fifo-in/--fifo-out exclude each other");
}

std::unique_ptr<Transport> make_transport(const CommandLine& line, CreatedFiles& files) {
  if (line.pipe) return make_unix_socket_transport(*line.pipe, files);
  if (line.fifo_in) return make_fifo_transport(*line.fifo_in, *line.fifo_out, files);
  return make_stdio_transport();
}

// Prints the channel's counters when the session ends, however it ends
// short of a signal (--stats).
class StatsAtExit {
 public:
  StatsAtExit(const ChannelStats& stats, const std::string& program, bool enabled)
      : stats_(stats), program_(program), enabled_(enabled) {}
  ~StatsAtExit() {
    if (enabled_) std::cerr << program_ << ": channel stats " << to_json(stats_) << '\n';
  }

 private:
  const ChannelStats& stats_;
  const std::string& program_;
  bool enabled_;
};

int serve(const CommandLine& line, const std::string& program, const AddMethods& add_methods) {
  CreatedFiles files;
  const ShutdownOnSignal shutdown(files, program);

  ServerOptions options = line.server;
  options.use_case_sensitive_file_names = detect_case_sensitivity();
  Server server(std::move(options));
  if (add_methods) add_methods(server, line);

  ChannelOptions channel_options;
  channel_options.limits.max_message_bytes = line.max_message_bytes;
  // Big Responses over a pipe are lent, not copied (BufferOptions): the
  // server writes them from its reused reply buffer or the held request,
  // and changes neither before the client's next message.
  channel_options.lend_large_writes = true;
  channel_options.spin = resolve_spin_policy(line.spin);
  try {
    const std::unique_ptr<Transport> transport = make_transport(line, files);
    Connection connection = transport->accept();
    FdChannel channel(std::move(connection.in), std::move(connection.out), std::move(channel_options));
    try {
      if (line.async) {
        // The same buffered, spin-aware stream under tsgo's JSON-RPC framing.
        Limits limits;
        limits.max_message_bytes = line.max_message_bytes;
        JsonRpcChannel json(std::move(channel).release_stream(), limits);
        const StatsAtExit stats(json.stats(), program, line.print_stats);
        server.serve_async(json);
        return 0;
      }
      const StatsAtExit stats(channel.stats(), program, line.print_stats);
      server.serve(channel);
      return 0;
    } catch (const ProtocolError& e) {
      std::cerr << e.what() << '\n';
      return 1;
    } catch (const PeerClosed& e) {
      // tsgo's rule: EOF inside a field is "unexpected EOF"; EOF at a field
      // boundary, or a client that stopped reading, ends quietly.
      if (!e.inside_field()) return 0;
      std::cerr << e.what() << '\n';
      return 1;
    }
  } catch (const std::system_error& e) {
    std::cerr << program << ": " << e.what() << '\n';
    return 1;
  }
}

}  // namespace

int run_server_main(const std::string& program, const std::vector<std::string>& args,
                    const AddMethods& add_methods) {
  // A client that closes its end must be a PeerClosed, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  CommandLine line;
  try {
    line = parse_command_line(args);
    for (const std::string& warning : line.warnings) std::cerr << program << ": " << warning << '\n';
    if (line.version && !line.help) {
      // tsgo answers --version outside API mode only; in API mode its flag
      // set does not know the flag: one line and the usage, exit 2.
      if (line.api) throw UsageError("flag provided but not defined: -" + *line.version);
      std::cout << version_text(program) << '\n';
      return 0;
    }
    if (line.help) {
      // tsgo's flag set treats --help after --api as a usage error: usage on
      // stderr, exit 2. On its own, --help is a request: stdout, exit 0.
      std::fputs(usage_text(), line.api ? stderr : stdout);
      return line.api ? 2 : 0;
    }
    check_usable(line, program);
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n\n" << usage_text();
    return 2;
  }
  return serve(line, program, add_methods);
}

}  // namespace spinrpc

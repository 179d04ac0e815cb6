#include "app/server_main.h"

#include <csignal>       // std::signal, SIGPIPE
#include <signal.h>      // ::sigaction, sigemptyset
#include <cstdlib>       // ::unsetenv
#include <memory>        // std::shared_ptr
#include <new>     // std::bad_alloc
#include <string>        // std::string
#include <string_view>   // std::string_view
#include <system_error>  // std::system_error
#include <fcntl.h>       // ::fcntl, ::open
#include <sys/stat.h>    // ::fstat
#include <unistd.h>      // ::write, ::close, ::getppid

#include "descriptor/stderr_lines.h"
#include "app/shutdown_on_signal.h"
#include "descriptor/descriptor_table.h"
#include "descriptor/syscall.h"
#include "channel/frame_channel.h"
#include "channel/json_rpc_channel.h"
#include "channel/shm_switch.h"
#include "stream/shm_ring_linux.h"
#include "stream/peer_closed.h"
#include "settings/settings.h"
#include "trace/trace_registry.h"
#include "protocol/protocol_error.h"
#include "server/channel_stats_json.h"
#include "transport/created_files.h"
#include "transport/fifo_posix.h"
#include "transport/stdio.h"
#include "transport/unix_socket_posix.h"

namespace spinrpc {
namespace {

std::unique_ptr<Transport> make_transport(const CommandLine& line, CreatedFiles& files, const std::string& program) {
  if (line.pipe) {
    const bool in_directory = api_dialect(line.server.api_version).pipe == PipeLayout::private_directory;
    return make_unix_socket_transport(
        *line.pipe, in_directory ? SocketPlace::in_private_directory : SocketPlace::at_path, files, program);
  }
  if (line.fifo_in) return make_fifo_transport(*line.fifo_in, *line.fifo_out, files);
  return make_stdio_transport();
}

// The server's trace ring, when --trace or SPINRPC_TRACE asks for one
// (docs/TRACE.md). Its file gets the pid unless the name has %p: a client
// that traces passes its pattern on. Written at exit within
// trace::kServerWriteBudget, the client's close grace being what it is.
// --async is JSON-RPC, whose requests the trace does not follow: refused
// in one line.
std::shared_ptr<trace::Ring> open_trace(const CommandLine& line, const std::string& program) {
  std::vector<std::string> warnings;
  const std::optional<TraceSetting> setting = resolve_trace_setting(line.trace, process_environment, warnings);
  print_setting_warnings(program, warnings);
  if (!setting) return nullptr;
  if (line.async) {
    print_setting_warnings(program, std::vector<std::string>{"no trace with --async: the trace follows the sync "
                                                             "protocol's requests (docs/TRACE.md)"});
    return nullptr;
  }
  trace::set_exit_budget(trace::kServerWriteBudget);
  return trace::open_ring(trace::expand_path(setting->pattern), setting->max_requests, program);
}

// The shared memory a client that spawned us offers (SPINRPC_SHM=fd:N,
// parent:PID,inode:DEV:INO; docs/SHARED-MEMORY.md, "Handshake"), mapped and
// checked, or null with `reason` saying why not. The variable is removed
// from our environment either way: the offer is for this process, not for
// any it starts. An offer to a child of another process (we were started
// by a wrapper the client spawned, which passed fd N and the variable on)
// is ignored without a word and fd N left alone: the bytes must go through
// the process in between. The offered descriptor is closed once it proved
// to be the client's memfd, and left as found otherwise.
std::shared_ptr<SharedRing> take_shm_offer(const CommandLine& line, const std::string& program, std::string& reason) {
  const char* value = process_environment(kShmVariable.name);
  if (value == nullptr) {
    reason = "pipes: no shared memory offered (a client that did not spawn this server, or not spinrpc's)";
    return nullptr;
  }
  const std::optional<ShmSetting> setting = parse_shm_setting(value);
  ::unsetenv(kShmVariable.name);
  if (!setting) {
    print_setting_warnings(program, std::vector<std::string>{std::string(kShmVariable.name) +
                                                             " is not off, auto or a client's offer; ignored"});
    reason = "pipes: SPINRPC_SHM is not off, auto or a client's offer";
    return nullptr;
  }
  if (!setting->offer) {
    reason = setting->off ? "pipes: SPINRPC_SHM=off" : "pipes: no shared memory offered";
    return nullptr;
  }
  const ShmOffer& offer = *setting->offer;
  const std::string fd_name = "fd " + std::to_string(offer.fd);
  if (::getppid() != offer.parent_pid) {
    reason = "pipes: the shared memory offered is for a child of pid " + std::to_string(offer.parent_pid) +
             ", and this server's parent is pid " + std::to_string(::getppid());
    return nullptr;
  }
  // fd N must still be the memfd the client made: a program in between
  // that closed it before exec'ing us leaves the number to whatever this
  // server opened first.
  struct stat st {};
  if (retry_on_eintr([&] { return ::fstat(offer.fd, &st); }) != 0 ||
      static_cast<unsigned long long>(st.st_dev) != offer.device ||
      static_cast<unsigned long long>(st.st_ino) != offer.inode) {
    const std::string what = fd_name + " is not the memory the client offered: the descriptor was closed before "
                                       "this server started";
    print_setting_warnings(program, std::vector<std::string>{"shared memory offer refused: " + what});
    reason = "pipes: the shared memory offered was refused: " + what;
    return nullptr;
  }
  if (line.shm == false) reason = "pipes: --shm=off";
  else if (line.async) reason = "pipes: --async stays on its streams";
  else if (line.pipe || line.fifo_in) reason = "pipes: only a server on its stdio takes shared memory";
  if (!reason.empty()) {
    // Refused: the client's memfd is closed all the same (its memory is
    // freed with the client's mapping).
    ::close(offer.fd);
    return nullptr;
  }
  try {
    auto ring = std::make_shared<SharedRing>(SharedRing::open(offer.fd));
    ::close(offer.fd);
    return ring;
  } catch (const std::system_error& e) {
    print_setting_warnings(program, std::vector<std::string>{std::string("shared memory offer refused: ") + e.what()});
    reason = std::string("pipes: the shared memory offered was refused: ") + e.what();
    return nullptr;
  }
}

// Prints the channel's counters when the session ends, however it ends
// short of a signal (--stats).
template <class Channel>
class StatsAtExit {
 public:
  StatsAtExit(const Channel& channel, const std::string& program, bool enabled)
      : channel_(channel), program_(program), enabled_(enabled) {}
  ~StatsAtExit() {
    // Read at exit: stats() fills the placement fields in when asked.
    if (enabled_) write_stderr_before_exit(program_ + ": channel stats " + to_json(channel_.stats()) + '\n');
  }

 private:
  const Channel& channel_;
  const std::string& program_;
  bool enabled_;
};

// Tells the signal thread what a signal would cut short while the session
// runs, and forgets the channel before it goes away. Channel: FrameChannel, or
// JsonRpcChannel with --async (both say mid_frame()).
template <class Channel>
class CutShortWhileServing {
 public:
  CutShortWhileServing(ShutdownOnSignal& shutdown, const Server& server, const Channel& channel)
      : shutdown_(shutdown) {
    shutdown_.set_cut_short([&server, &channel]() -> const char* {
      if (server.answering()) return "answering a request";
      if (channel.mid_frame()) return "a message was arriving";
      return nullptr;
    });
  }
  ~CutShortWhileServing() { shutdown_.set_cut_short({}); }
  CutShortWhileServing(const CutShortWhileServing&) = delete;
  CutShortWhileServing& operator=(const CutShortWhileServing&) = delete;

 private:
  ShutdownOnSignal& shutdown_;
};

int fail(const std::string& line) {
  write_stderr_before_exit(line + '\n');
  return 1;
}

// The session's ending as an exit status and at most one stderr line. The
// client leaving between messages is the normal end: 0, quiet. Any other
// way it leaves loses something it sent: a message cut at a field boundary
// (tsgo: exit 0, silent), a request still being answered, a reply it did not
// read (tsgo: SIGPIPE on stdio, a panic over --pipe). One line says which,
// exit 1 (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
int peer_closed_status(const PeerClosed& e, const std::string& program) {
  switch (e.where()) {
    case PeerClosed::Where::between_frames:
      return 0;
    case PeerClosed::Where::inside_field:
      return fail(e.what());  // tsgo's "unexpected EOF"
    case PeerClosed::Where::field_boundary:
      return fail(e.what());
    case PeerClosed::Where::during_call:
      return fail(program + ": " + e.what() + "; the request is not answered");
    case PeerClosed::Where::writing:
      return fail(program + ": the client closed the connection before reading a reply");
  }
  return 1;
}

int serve(const CommandLine& line, const std::string& program, const AddMethods& add_methods,
          ServeAsync serve_async, const sigset_t& saved_mask) {
  if (line.async && serve_async == nullptr) {
    return fail(program + ": --async is not built into this executable");
  }
  CreatedFiles files;
  ShutdownOnSignal shutdown(files, program, saved_mask);

  ServerOptions options = line.server;
  // The dialect's case rule: the server finds it itself, or is told it
  // (default true).
  options.use_case_sensitive_file_names = api_dialect(options.api_version).case_rule == CaseRule::detect
                                              ? detect_case_sensitivity()
                                              : line.use_case_sensitive_file_names.value_or(true);
  options.max_message_bytes = line.max_message_bytes;
  Server server(std::move(options));
  if (add_methods) add_methods(server, line);

  ServerSettings settings = resolve_server_settings(line.spin);
  ChannelOptions channel_options;
  channel_options.limits.max_message_bytes = line.max_message_bytes;
  // Big Responses are lent to a stdout pipe only when the client says it
  // copies them out with read(2) (a splicing reader would carry the pages
  // on), and lent from buffers of the channel's own, never from the
  // handler's memory: a client may send its next request before it reads a
  // reply (docs/NODE.md, "Large payloads").
  if (settings.lend_replies) channel_options.large_writes = BufferOptions::LargeWrites::lend_copies;
  // --async: a client may write all its requests before it reads a reply;
  // tsgo reads on regardless (docs/ASYNC.md, "Replies and handlers").
  channel_options.read_while_writing = line.async;
  channel_options.spin = std::move(settings.spin);
  try {
    channel_options.trace = open_trace(line, program);
    const std::unique_ptr<Transport> transport = make_transport(line, files, program);
    const bool spinning = channel_options.spin.budget.count() > 0;
    std::string transport_reason;
    std::shared_ptr<SharedRing> ring = take_shm_offer(line, program, transport_reason);
    // Serves one connection on `channel` through `serve_it`. From here this
    // thread reads and writes the connection; the signal watcher (and a
    // socket's rejecter) need none of what it opens or closes from now on.
    // A table of its own keeps each read(2) and write(2) free of a
    // reference count on the file, a cost on every spun round trip
    // (descriptor/descriptor_table.h). What the others hold is released
    // when they end, as the process exits.
    const auto serve_connection = [&](auto& channel, const auto& serve_it) -> int {
      own_descriptor_table();
      try {
        const StatsAtExit stats(channel, program, line.print_stats);
        const CutShortWhileServing cut_short(shutdown, server, channel);
        serve_it(channel);
        return 0;
      } catch (const ProtocolError& e) {
        return fail(e.what());
      } catch (const PeerClosed& e) {
        return peer_closed_status(e, program);
      }
    };
    Streams streams = transport->accept(channel_options, spinning);
    if (line.async) {
      // The same buffered, spin-aware stream under tsgo's JSON-RPC framing.
      ByteStream stream(std::move(streams), channel_options, std::move(channel_options.spin));
      stream.set_trace(channel_options.trace.get());
      stream.set_transport_reason(std::move(transport_reason));
      Limits limits;
      limits.max_message_bytes = line.max_message_bytes;
      JsonRpcChannel json(std::move(stream), limits);
      return serve_connection(json, [&](JsonRpcChannel& c) { serve_async(server, c); });
    }
    FrameChannel channel(std::move(streams), std::move(channel_options));
    if (ring) {
      channel.switch_at_first_reply(shm_switch(std::move(ring), StreamSwitch::Side::server), StreamSwitch::Side::server);
    } else {
      channel.set_transport_reason(std::move(transport_reason));
    }
    return serve_connection(channel, [&](FrameChannel& c) { server.serve(c); });
  } catch (const std::system_error& e) {
    return fail(program + ": " + e.what());
  } catch (const std::bad_alloc&) {
    // Memory short elsewhere than a read buffer (which says which message):
    // one line and status 1, as for any OS error, not SIGABRT.
    return fail(program + ": out of memory");
  }
}

// Opens /dev/null on whichever of fds 0, 1 and 2 is closed, as Go's runtime
// does for tsgo at start-up: otherwise the first socket or FIFO the server
// opens would take the number and receive its stderr lines or its replies.
void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // open(2) returns the lowest free number: this one, since the lower
    // ones are open by now.
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) ::close(opened);
  }
}

void do_nothing(int) {}

// tsgo's Go runtime catches the signals it does not act on (SIGUSR1,
// SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ) and serves on, where a C
// process dies of them by default (a stray `kill -USR1` would end the
// session). Only a disposition found at SIG_DFL is changed: an
// embedder's handler and an inherited SIG_IGN stay. A handler, not
// SIG_IGN, so that whatever we exec starts with the defaults again; with
// SA_RESTART, and every read and write here retries EINTR anyway. SIGXFSZ
// ignored turns a write past RLIMIT_FSIZE into EFBIG, one line and exit 1.
void survive_stray_signals() {
  struct sigaction act {};
  act.sa_handler = do_nothing;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESTART;
  for (const int sig : {SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ}) {
    struct sigaction old {};
    if (::sigaction(sig, &act, &old) != 0) continue;
    if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO) != 0) ::sigaction(sig, &old, nullptr);
  }
}

// --help and --version on stdout: a blocking write is right there (a pipe
// into `head` or a pager is read), and EPIPE is the reader's choice.
void write_stdout(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = retry_on_eintr([&] { return ::write(1, text.data(), text.size()); });
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

int run_server_main(const std::string& program, const std::vector<std::string>& args,
                    const AddMethods& add_methods, ServeAsync serve_async) {
  // First: a SIGINT or SIGTERM from now on waits for the watcher
  // (ShutdownOnSignal) instead of being lost or killing us half set up.
  const sigset_t saved_mask = ShutdownOnSignal::block_signals();
  ensure_standard_fds();
  // A client that closes its end must be a PeerClosed, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  survive_stray_signals();
  CommandLine line;
  try {
    line = parse_command_line(args, process_environment(kApiVersionVariable.name));
    print_setting_warnings(program, line.warnings);
    if (line.version && !line.help) {
      // tsgo answers --version outside API mode only; in API mode its flag
      // set does not know the flag: one line and the usage, exit 2.
      if (line.api) throw UsageError("flag provided but not defined: -" + *line.version);
      write_stdout(version_text(program) + '\n');
      return 0;
    }
    if (line.help) {
      // tsgo's flag set treats --help after --api as a usage error: usage on
      // stderr, exit 2. On its own, --help is a request: stdout, exit 0.
      if (line.api) {
        write_stderr_before_exit(usage_text(program));
      } else {
        write_stdout(usage_text(program));
      }
      return line.api ? 2 : 0;
    }
    check_serving_flags(line, program);
  } catch (const UsageError& e) {
    write_stderr_before_exit(program + ": " + e.what() + "\n\n" + usage_text(program));
    return 2;
  }
  return serve(line, program, add_methods, serve_async, saved_mask);
}

}  // namespace spinrpc

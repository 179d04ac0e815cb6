#include "app/command_line.h"

#include <sys/stat.h>  // ::stat
#include <unistd.h>    // ::getcwd

#include <cerrno>   // errno
#include <cstring>  // std::strerror

#include <algorithm>    // std::find
#include <charconv>     // std::from_chars
#include <optional>     // std::optional
#include <utility>      // std::move
#include <string_view>  // std::string_view

#include "dialect/ts_path.h"
#include "protocol/frame.h"

namespace spinrpc {
namespace {

bool parse_bool(std::string_view flag, std::string_view value) {
  // strconv.ParseBool's spellings.
  for (std::string_view t : {"1", "t", "T", "true", "TRUE", "True"}) {
    if (value == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "false", "FALSE", "False"}) {
    if (value == f) return false;
  }
  throw UsageError("invalid boolean value \"" + std::string(value) + "\" for -" + std::string(flag) + ": parse error");
}

std::size_t parse_size(std::string_view flag, std::string_view value) {
  std::size_t result = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (error != std::errc{} || end != value.data() + value.size() || result == 0) {
    throw UsageError("invalid value \"" + std::string(value) + "\" for -" + std::string(flag) +
                     ": expected a positive number of bytes");
  }
  return result;
}

std::vector<std::string> split_callbacks(std::string_view list) {
  std::vector<std::string> items;
  // An empty list enables none; an empty item in a list is unknown (tsgo
  // panics on both an unknown and an empty item: docs/ASYNC.md).
  if (list.empty()) return items;
  for (;;) {
    const std::size_t comma = list.find(',');
    items.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

// Go's os.Getwd, which tsgo's default --cwd is: $PWD verbatim when it is
// absolute and names the working directory (symlinks and trailing slash
// kept), else getcwd(3); std::nullopt with errno set when getcwd(3) fails.
std::optional<std::string> working_directory() {
  struct stat dot {}, pwd_stat {};
  if (const char* pwd = process_environment(kWorkingDirectoryVariable.name); pwd != nullptr && pwd[0] == '/' &&
      ::stat(".", &dot) == 0 && ::stat(pwd, &pwd_stat) == 0 && dot.st_dev == pwd_stat.st_dev &&
      dot.st_ino == pwd_stat.st_ino) {
    return pwd;
  }
  std::string path(4096, '\0');
  if (::getcwd(path.data(), path.size()) == nullptr) return std::nullopt;
  path.resize(std::char_traits<char>::length(path.c_str()));
  return path;
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args, const char* api_version_env) {
  CommandLine line{};
  line.max_message_bytes = Limits::kDefaultMaxMessageBytes;
  bool cwd_set = false;
  // The newest version a flag on the command line implies (its client
  // introduced the flag), and --ts-api's.
  std::optional<ApiVersion> implied;
  std::optional<ApiVersion> api_version_flag;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') break;  // first non-flag: the rest is ignored
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    // Go's flag package: "---x", "-=x", "--=x" are malformed.
    if (arg.empty() || arg[0] == '-' || arg[0] == '=') throw UsageError("bad flag syntax: " + args[i]);
    const std::size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const std::optional<std::string_view> inline_value =
        eq == std::string_view::npos ? std::nullopt : std::optional(arg.substr(eq + 1));
    // A flag with a value takes `=value` or the next argument.
    const auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw UsageError("flag needs an argument: -" + std::string(name));
      return args[++i];
    };
    const auto boolean = [&] { return inline_value ? parse_bool(name, *inline_value) : true; };

    // tsgo looks for --api in first place only; its API flag set, which
    // parses the rest, has no such flag (docs/ASYNC.md).
    if (name == "api" && i == 0) line.api = boolean();
    else if (name == "help" || name == "h") line.help = true;
    else if (name == "version" || name == "v") line.version = std::string(name);
    else if (name == "timing") line.server.timing = boolean();
    else if (name == "async") line.async = boolean();
    else if (name == "cwd") {
      line.server.cwd = value();
      cwd_set = true;
    } else if (name == "callbacks") line.server.callbacks = split_callbacks(value());
    else if (const std::optional<ApiVersion> introduced = api_version_of_flag(name)) {
      // A boolean flag of a newer client's (node/dialects.json, "flags"):
      // accepted, and it implies that version; the ones a reply reads are kept.
      const bool on = boolean();
      if (name == "useCaseSensitiveFileNames") line.use_case_sensitive_file_names = on;
      if (name == "runExternalCode") line.run_external_code = on;
      if (!implied || *implied < *introduced) implied = introduced;
    } else if (name == "ts-api") {
      const std::string_view text = value();
      api_version_flag = parse_api_version(text);
      if (!api_version_flag) {
        throw UsageError("invalid value \"" + std::string(text) + "\" for -ts-api: expected " +
                         api_version_names(" or "));
      }
    }
    else if (name == "pipe") {
      // An empty path is tsgo's default: no socket, stdin/stdout.
      const std::string_view path = value();
      if (path.empty()) line.pipe.reset();
      else line.pipe = std::string(path);
    }
    else if (name == "fifo-in") line.fifo_in = std::string(value());
    else if (name == "fifo-out") line.fifo_out = std::string(value());
    else if (name == "max-message-bytes") line.max_message_bytes = parse_size(name, value());
    else if (name == "stats") line.print_stats = boolean();
    else if (name == "spin-us") {
      const std::string_view text = value();
      if (const auto us = parse_spin_us(text)) line.spin.spin_us = *us;
      else line.warnings.push_back(ignored_spin_setting(SpinSetting::budget_us, "--spin-us", text));
    } else if (name == "adaptive") {
      const std::string_view text = inline_value ? *inline_value : "1";
      if (const auto adaptive = parse_spin_adaptive(text)) line.spin.adaptive = *adaptive;
      else line.warnings.push_back(ignored_spin_setting(SpinSetting::adaptive, "--adaptive", text));
    } else if (name == "placement") {
      const std::string_view text = value();
      if (const auto placement = parse_placement(text)) line.spin.placement = *placement;
      else line.warnings.push_back(ignored_spin_setting(SpinSetting::placement, "--placement", text));
    }
    else if (name == "shm") {
      const std::string_view text = value();
      const std::optional<ShmSetting> setting = parse_shm_setting(text);
      if (!setting || setting->offer) {
        throw UsageError("invalid value \"" + std::string(text) + "\" for -shm: expected off or auto");
      }
      line.shm = !setting->off;
    }
    else if (name == "trace") line.trace = std::string(value());
    else throw UsageError("flag provided but not defined: -" + std::string(name));
  }
  line.server.api_version = choose_api_version(api_version_flag, {kApiVersionVariable.name, api_version_env},
                                               implied, line.warnings);
  const ApiDialect& dialect = api_dialect(line.server.api_version);
  for (const std::string& item : line.server.callbacks) {
    if (!accepts_callback_item(dialect, item)) throw UsageError("unknown callback name: " + item);
  }
  if (cwd_set && line.server.cwd.empty()) throw UsageError("-cwd must not be empty");
  if (!cwd_set || dialect.normalizes_cwd) {
    std::optional<std::string> here = working_directory();
    if (!cwd_set) {
      if (here) line.server.cwd = *here;
      else line.cwd_error = std::strerror(errno);
    }
    if (dialect.normalizes_cwd && !line.server.cwd.empty()) {
      line.server.cwd = normalized_absolute_path(line.server.cwd, here.value_or(""));
    }
  }
  return line;
}

void check_serving_flags(const CommandLine& line, const std::string& program) {
  if (!line.api) throw UsageError("--api is required: " + program + " implements tsgo's API mode only");
  if (line.fifo_in.has_value() != line.fifo_out.has_value()) {
    throw UsageError("--fifo-in and --fifo-out go together");
  }
  if (line.fifo_in) {
    if (line.fifo_in->empty() || line.fifo_out->empty()) throw UsageError("--fifo-in and --fifo-out need a path");
    if (*line.fifo_in == *line.fifo_out) {
      throw UsageError("--fifo-in and --fifo-out name the same FIFO (" + *line.fifo_in +
                       "): the server would read its own replies");
    }
  }
  if (line.pipe && line.fifo_in) throw UsageError("--pipe and --fifo-in/--fifo-out exclude each other");
  if (!line.cwd_error.empty()) {
    throw UsageError("cannot find the working directory for initialize (" + line.cwd_error + "): give --cwd DIR");
  }
}

std::string version_text(const std::string& program) {
  // SPINRPC_VERSION is set by app/CMakeLists.txt from project().
  std::string text = program + " " SPINRPC_VERSION " (TypeScript 7 API";
  const char* separator = " ";
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    text += separator;
    text += dialect.name;
    text += ": ";
    text += dialect.typescript_releases;
    separator = "; ";
  }
  return text + ")";
}

namespace {

// The column the usage text's explanations start at.
constexpr std::string_view kHelpColumn = "                        ";

// "  --flag" padded to the help column, or followed by two spaces when longer.
std::string flag_column(const std::string& flag) {
  std::string text = "  " + flag;
  text += text.size() + 1 < kHelpColumn.size() ? std::string(kHelpColumn.size() - text.size(), ' ') : "  ";
  return text;
}

// The names of the versions where `field` is true: "7.1".
std::string versions_where(bool ApiDialect::*field) {
  std::string text;
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    if (!(dialect.*field)) continue;
    if (!text.empty()) text += ", ";
    text += dialect.name;
  }
  return text;
}

bool lists(const std::vector<std::string_view>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// --callbacks per version: the oldest's names, then what each newer one
// adds (its new names, and NAME:SENTINEL items when it has new ones).
std::string callbacks_help() {
  std::string text;
  const std::vector<std::string_view>* previous = nullptr;
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    std::string names;
    bool sentinels = false;
    for (const std::string_view item : dialect.callback_items) {
      if (previous != nullptr && lists(*previous, item)) continue;
      if (item.find(':') != std::string_view::npos) {
        sentinels = true;
        continue;
      }
      if (!names.empty()) names += ",";
      names += item;
    }
    text += std::string(kHelpColumn) + std::string(dialect.name) + ": ";
    if (previous == nullptr) text += names;
    else if (names.empty() && !sentinels) text += "the same";
    else {
      text += "also " + names;
      if (sentinels) text += names.empty() ? "NAME:SENTINEL items" : " and NAME:SENTINEL items";
    }
    text += "\n";
    previous = &dialect.callback_items;
  }
  return text;
}

// --pipe per version.
std::string pipe_help() {
  std::string text;
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    text += std::string(kHelpColumn) + std::string(dialect.name) + ": " +
            (dialect.pipe == PipeLayout::socket_at_path ? "at PATH (a stale socket there is replaced)\n"
                                                         : "PATH is a new directory (0700) holding PATH/socket\n");
  }
  return text;
}

// The boolean flags newer versions' clients introduced, each with its version.
std::string dialect_flags_help() {
  std::string text;
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    for (const DialectFlag& flag : dialect.flags) {
      text += flag_column("--" + std::string(flag.name) + "[=BOOL]") + "(" + std::string(dialect.name) + ") " +
              std::string(flag.help) + "\n";
    }
  }
  return text;
}

// --ts-api's default: the flags that imply each version.
std::string implied_help() {
  std::string text;
  for (const ApiVersion version : api_versions()) {
    const ApiDialect& dialect = api_dialect(version);
    if (dialect.flags.empty()) continue;
    text += std::string(kHelpColumn) + std::string(dialect.name) + ":";
    for (const DialectFlag& flag : dialect.flags) text += " --" + std::string(flag.name);
    text += ",\n";
  }
  return text;
}

}  // namespace

std::string usage_text(const std::string& program) {
  const std::string oldest(api_dialect(ApiVersion{}).name);
  return "usage: " + program + R"( --api [flags]

Serves the TypeScript 7 API (tsgo --api) over stdin/stdout: MessagePack
frames (or JSON-RPC with --async), the same replies as the real server of
API )" + api_version_names(" or ") + R"( for echo, ping, initialize,
getServerTiming, resetServerTiming and batchRequests ()" + versions_where(&ApiDialect::batch_requests) + R"().
Exits 0 when the client closes the connection between messages; 1 with one
line on stderr on a malformed or cut-short message, a reply the client did
not read, or an OS error; 2 on a bad command line; 130/143 after
SIGINT/SIGTERM (created files removed; quiet unless a request was cut short).

tsgo's flags:
  --api                 API mode (required)
  --cwd DIR             initialize's currentDirectory (default: the working directory)
  --callbacks=LIST      the client's FS callbacks, per API version:
)" + callbacks_help() + R"(  --timing              collect per-request processing time for getServerTiming
  --pipe PATH           serve one client on a Unix domain socket, private to
                        this user (0600; other users' connections refused),
                        removed at exit:
)" + pipe_help() + dialect_flags_help() +
         R"(  --async               JSON-RPC 2.0 with Content-Length framing instead of
                        MessagePack (the async client's protocol; docs/ASYNC.md)

spinrpc's flags:
)" + flag_column("--ts-api=" + api_version_names("|")) + R"(the API version to answer in (default: SPINRPC_TS_API,
                        else the newest version a client's flag implies:
)" + implied_help() + std::string(kHelpColumn) + "else " + oldest + R"(; docs/PROTOCOL.md, "API versions")
  --fifo-in PATH        read requests from the FIFO at PATH
  --fifo-out PATH       write replies to the FIFO at PATH (both given together;
                        a missing FIFO is created 0600 and removed at exit, one
                        that existed is left alone)
  --spin-us N           spin budget in µs before a read blocks; 0 = off
                        (default: TSGO_SYNC_SPIN_US, else 100; 0 with < 2 CPUs)
  --adaptive=0|1        suspend spinning after 3 waits over 1 ms, resume after
                        3 under (default: TSGO_SYNC_SPIN_ADAPTIVE, else 1)
  --placement=auto|off  where the spin budget may also go: auto keeps the other
                        CPUs busy for up to the budget after each reply when
                        that measurably gets a client blocked in read woken on
                        this CPU (docs/PLACEMENT.md); occupy always does; off
                        never. With spinning suspended because other work
                        takes the CPUs, auto and occupy also move the server
                        now and then to its client's CPU (default:
                        SPINRPC_PLACEMENT, else auto; nothing with budget 0)
  --shm=off|auto        take the shared memory a spawning spinrpc client offers
                        (auto, the default: SPINRPC_SHM, else auto) or stay on
                        the pipes (off); never with --async, --pipe or FIFOs
                        (docs/SHARED-MEMORY.md)
  --trace FILE          write a Chrome trace-event JSON trace of every request
                        to FILE at exit, for Perfetto; %p becomes the pid, and
                        without %p the pid is added (default: SPINRPC_TRACE;
                        SPINRPC_TRACE_MAX requests kept, 131072; docs/TRACE.md)
  --stats               print the channel's spin counters to stderr at exit
  --max-message-bytes N refuse frames larger than N bytes (default 268435456)
  --help                print this text and exit 0 (after --api: to stderr,
                        exit 2, as tsgo does)
  --version             print spinrpc's version and the API versions it
                        answers, exit 0 (with --api: exit 2, as tsgo)

Environment: TSGO_SYNC_SPIN_US, TSGO_SYNC_SPIN_ADAPTIVE and SPINRPC_PLACEMENT
as above; SPINRPC_LEND_REPLIES=1 lends big Responses to a stdout pipe
(vmsplice, growing the pipe to 1 MiB) instead of copying them into it:
only for a client that reads them with read(2), as spinrpc's shim and
Node binding do (they set it for the server they start);
SPINRPC_PEER_SPINS=1 says the client spins while it waits (the shim and
the binding set it when their budget is over 0), so the server steps off
a CPU it finds that client sharing. SPINRPC_SHM=fd:N,parent:PID,… is a
spinrpc client's offer of shared memory (a sealed memfd as fd N) to the
child it spawned, which no other process takes; SPINRPC_SHM=off refuses
it.

Besides tsgo's methods, getChannelStats answers the spin counters and the
placement decision as JSON.
)";
}

}  // namespace spinrpc

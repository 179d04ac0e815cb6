#pragma once

#include <cstddef>    // std::size_t
#include <optional>   // std::optional
#include <stdexcept>  // std::invalid_argument
#include <string>     // std::string
#include <vector>     // std::vector

#include "settings/settings.h"
#include "dialect/api_dialect.h"
#include "server/server.h"

namespace spinrpc {

/// A command line spinrpc-server cannot run with; what() is one line. The
/// executable prints it and the usage to stderr and exits 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// spinrpc-server's command line: tsgo's --api surface
/// (docs/PROTOCOL.md#command-line) plus spinrpc's own flags.
struct CommandLine {
  /// --cwd (default: the working directory; in 7.1 normalized and made
  /// absolute, as its server does), --callbacks, --timing, the API version.
  ServerOptions server;
  /// --useCaseSensitiveFileNames[=BOOL] (7.1's client always passes it):
  /// initialize's caseSensitivity; unset, 7.1 answers 1 as its server does.
  std::optional<bool> use_case_sensitive_file_names;
  bool run_external_code = false;  ///< --runExternalCode (7.1): accepted; no method here runs plugins
  bool api = false;               ///< --api seen (required)
  bool help = false;              ///< --help / -h
  /// --version / -v as spelled ("version", "v"): without --api, prints
  /// version_text() and exits 0 (tsgo's --version); with --api it is an
  /// undefined flag, as in tsgo's API mode.
  std::optional<std::string> version;
  std::optional<std::string> pipe;  ///< --pipe PATH: a Unix domain socket
  std::optional<std::string> fifo_in;   ///< --fifo-in PATH: requests arrive on this FIFO
  std::optional<std::string> fifo_out;  ///< --fifo-out PATH: replies leave on this FIFO
  bool async = false;             ///< --async
  std::size_t max_message_bytes;  ///< --max-message-bytes N (default Limits::kDefaultMaxMessageBytes)
  SpinOverrides spin;             ///< --spin-us N, --adaptive=0|1, --placement=auto|off|occupy (beat TSGO_SYNC_SPIN_*, SPINRPC_PLACEMENT)
  bool print_stats = false;       ///< --stats: channel stats to stderr at exit
  /// --shm=off|auto: take a spawning client's shared-memory offer (auto, the
  /// default) or not (beats SPINRPC_SHM; docs/SHARED-MEMORY.md).
  std::optional<bool> shm;
  /// --trace FILE: write a trace of every request to FILE (beats
  /// SPINRPC_TRACE; "%p" becomes the pid; docs/TRACE.md). Empty: no trace.
  std::optional<std::string> trace;
  /// One line each for values ignored rather than refused: an invalid spin
  /// setting (ignored_spin_setting, settings/settings.h; docs/SPIN.md#settings).
  std::vector<std::string> warnings;
  /// Without --cwd, why the working directory could not be found (getcwd's
  /// error: it was removed, or is out of reach); check_serving_flags()
  /// refuses to serve then, as tsgo's os.Getwd panics. Empty otherwise.
  std::string cwd_error;
};

/// Parses arguments the way Go's flag package does, as tsgo does: one or two
/// leading dashes, `--flag=value` or `--flag value`, booleans as `--flag` or
/// `--flag=true|false`. Parsing stops at `--` or the first non-flag argument;
/// the rest are ignored, as tsgo ignores them. A malformed --spin-us or
/// --adaptive value adds a warning and is ignored. The API version
/// (server.api_version) is chosen once all flags are read: --ts-api, else
/// `api_version_env` (SPINRPC_TS_API's value, or null), else the newest
/// version one of whose client's flags is there, else the oldest
/// (choose_api_version, dialect/api_dialect.h; node/dialects.json's "flags"). Throws UsageError for an unknown flag, a missing
/// or malformed value, a --callbacks item the chosen version does not take
/// ("unknown callback name: X", as tsgo words its panic), an unknown
/// --ts-api or an empty --cwd.
CommandLine parse_command_line(const std::vector<std::string>& args, const char* api_version_env = nullptr);

/// The checks a command line passes before serving, after --help and
/// --version have had their turn: --api given; --fifo-in and --fifo-out
/// both or neither, each a non-empty path and not the same one (the server
/// would read its own replies); not with --pipe; a working directory found
/// when --cwd is not given. Throws UsageError.
void check_serving_flags(const CommandLine& line, const std::string& program);

/// "<program> <our version> (TypeScript 7 API 7.0: …; 7.1: …)": our version
/// is project()'s in CMakeLists.txt; then each API version it answers and
/// the npm releases it matches (node/dialects.json's "checked"), those the
/// interop suite pins and compares with.
std::string version_text(const std::string& program);

/// The usage text (--help, and after a UsageError), naming `program` (the
/// executable's name, as version_text does: spinrpc-server, or an
/// embedder's such as spinrpc-bench-server).
std::string usage_text(const std::string& program);

}  // namespace spinrpc

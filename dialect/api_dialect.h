#pragma once

#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "protocol/go_format.h"

// What differs between the TypeScript 7 API versions spinrpc-server answers
// for, in one place (docs/PROTOCOL.md, "API versions"). A version is chosen
// once, at start-up, from the command line the client passes
// (choose_api_version); everything that differs reads it from here.

namespace spinrpc {

/// The API versions spinrpc-server answers: 7.0 (typescript@7.0.x and
/// @typescript/native-preview@7.0.0-dev.20260707.2) and 7.1
/// (typescript@7.1.0-beta and the 7.1 nightlies).
enum class ApiVersion { v7_0, v7_1 };

/// How initialize names the file system's case rule.
enum class InitializeShape {
  use_case_sensitive_file_names,  ///< 7.0: {"useCaseSensitiveFileNames":true|false,"currentDirectory":…}
  case_sensitivity,               ///< 7.1: {"caseSensitivity":0|1,"currentDirectory":…}
};

/// Where --pipe PATH puts its Unix socket.
enum class PipeLayout {
  socket_at_path,       ///< 7.0: the socket is PATH
  private_directory,    ///< 7.1: PATH is a new directory (0700), the socket PATH/socket
};

/// One API version's differences.
struct ApiDialect {
  ApiVersion version;
  std::string_view name;                ///< "7.0", "7.1": what SPINRPC_TS_API and --ts-api take
  std::string_view typescript_releases; ///< the npm releases the interop suite checks it against, for --version
  /// The prefix of the transport's own errors (a CallResponse or CallError
  /// outside a call): "api: " in 7.0, "ipc: " in 7.1. Request errors keep
  /// "api: " in both.
  std::string_view transport_error_prefix;
  InitializeShape initialize;
  PipeLayout pipe;
  /// The tables Go's %q follows: each version's server is built with its
  /// own Go toolchain (7.0.x: Go 1.26, Unicode 15; 7.1: Go 1.27, Unicode 17).
  GoUnicodeVersion unicode;
  /// Whether initialize's currentDirectory is --cwd normalized and made
  /// absolute (7.1: normalized_absolute_path, dialect/ts_path.h) or --cwd
  /// verbatim (7.0).
  bool normalizes_cwd;
  /// batchRequests is a built-in method (7.1); in 7.0 it is an unknown method.
  bool batch_requests;
  /// --callbacks items this version accepts: plain names, and in 7.1 also
  /// NAME:SENTINEL items that tell the server what to do without a Call.
  std::vector<std::string_view> callback_items;
};

/// The dialect of `version`.
const ApiDialect& api_dialect(ApiVersion version) noexcept;

/// "7.0" / "7.1" → the version; anything else → std::nullopt.
std::optional<ApiVersion> parse_api_version(std::string_view text) noexcept;

/// Every version, oldest first (for --version and --help).
const std::vector<ApiVersion>& api_versions() noexcept;

/// An environment variable's name and its value (null: unset).
struct EnvironmentValue {
  std::string_view name;
  const char* value = nullptr;
};

/// Picks the version to answer in, once: `flag` (--ts-api) if given, else
/// `environment` (SPINRPC_TS_API, kApiVersionVariable in settings/settings.h)
/// if it names a version,
/// else 7.1 when the client passed a flag only 7.1's client passes
/// (--useCaseSensitiveFileNames, --runExternalCode), else 7.0. A client
/// that passes none of 7.1's flags is never answered in 7.1's shapes.
/// An environment value that names no version adds one line to `warnings`
/// ("NAME=value names no API version …") and is ignored.
ApiVersion choose_api_version(std::optional<ApiVersion> flag, EnvironmentValue environment, bool saw_7_1_flag,
                              std::vector<std::string>& warnings);

/// Whether `item` (one comma-separated entry of --callbacks) is accepted by
/// `dialect`.
bool accepts_callback_item(const ApiDialect& dialect, std::string_view item) noexcept;

}  // namespace spinrpc

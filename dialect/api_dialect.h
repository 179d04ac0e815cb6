#pragma once

#include <cstdint>      // std::uint8_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "protocol/go_format.h"

// What differs between the TypeScript 7 API versions spinrpc-server answers
// for, in one place (docs/PROTOCOL.md, "API versions"). The versions are a
// table, node/dialects.json, which the build turns into the one
// api_dialect.cpp serves (dialect/generate_dialects.cmake) and the Node
// binding reads as it is; no code here names a version. A version is chosen
// once, at start-up, from the command line the client passes
// (choose_api_version); everything that differs reads it from here.

namespace spinrpc {

/// An API version: its place in the table of dialects (node/dialects.json),
/// oldest first. ApiVersion{} is the oldest; parse_api_version names the
/// others ("7.1").
enum class ApiVersion : std::uint8_t {};

/// How initialize names the file system's case rule.
enum class InitializeShape {
  use_case_sensitive_file_names,  ///< {"useCaseSensitiveFileNames":true|false,"currentDirectory":…}
  case_sensitivity,               ///< {"caseSensitivity":0|1,"currentDirectory":…}
};

/// Where initialize's case rule comes from.
enum class CaseRule {
  detect,  ///< the server looks at the file system (detect_case_sensitivity)
  flag,    ///< --useCaseSensitiveFileNames[=BOOL] says it; unset, true
};

/// Where --pipe PATH puts its Unix socket.
enum class PipeLayout {
  socket_at_path,       ///< the socket is PATH
  private_directory,    ///< PATH is a new directory (0700), the socket PATH/socket
};

/// A boolean flag a version's client introduced.
struct DialectFlag {
  std::string_view name;  ///< as on the command line, without dashes: "runExternalCode"
  std::string_view help;  ///< what --help says it does
};

/// One API version's differences: one entry of node/dialects.json, whose
/// "about" says what each field is.
struct ApiDialect {
  ApiVersion version;
  std::string_view name;                ///< "7.0", "7.1": what SPINRPC_TS_API and --ts-api take
  std::string_view typescript_releases; ///< the npm releases the interop suite checks it against, for --version
  /// The prefix of the transport's own errors (a CallResponse or CallError
  /// outside a call), e.g. "api: " or "ipc: ". Request errors keep "api: ".
  std::string_view transport_error_prefix;
  InitializeShape initialize;
  CaseRule case_rule;
  PipeLayout pipe;
  /// The tables Go's %q follows: each version's server is built with its
  /// own Go toolchain.
  GoUnicodeVersion unicode;
  /// Whether initialize's currentDirectory is --cwd normalized and made
  /// absolute (normalized_absolute_path, dialect/ts_path.h) or --cwd
  /// verbatim.
  bool normalizes_cwd;
  /// batchRequests is a built-in method; otherwise it is an unknown method.
  bool batch_requests;
  /// --callbacks items this version accepts: plain names, and NAME:SENTINEL
  /// items that tell the server what to do without a Call.
  std::vector<std::string_view> callback_items;
  /// The boolean flags this version's client introduced (no older client
  /// passes them): seeing one on the command line implies this version.
  std::vector<DialectFlag> flags;
};

/// The dialect of `version`, a value api_versions() holds.
const ApiDialect& api_dialect(ApiVersion version) noexcept;

/// A version's name ("7.1") → the version; anything else → std::nullopt.
std::optional<ApiVersion> parse_api_version(std::string_view text) noexcept;

/// Every version, oldest first (for --version and --help).
const std::vector<ApiVersion>& api_versions() noexcept;

/// Every version's name, oldest first, joined by `separator`: "7.0|7.1",
/// "7.0 or 7.1".
std::string api_version_names(std::string_view separator);

/// The newest version that introduced the boolean flag `name` (one of its
/// `flags`), or std::nullopt for a flag no version introduced.
std::optional<ApiVersion> api_version_of_flag(std::string_view name) noexcept;

/// An environment variable's name and its value (null: unset).
struct EnvironmentValue {
  std::string_view name;
  const char* value = nullptr;
};

/// Picks the version to answer in, once: `flag` (--ts-api) if given, else
/// `environment` (SPINRPC_TS_API, kApiVersionVariable in settings/settings.h)
/// if it names a version,
/// else `implied` (the newest version a flag on the command line implies:
/// api_version_of_flag), else the oldest. A client that passes none of a
/// newer version's flags is never answered in that version's shapes.
/// An environment value that names no version adds one line to `warnings`
/// ("NAME=value names no API version (" + api_version_names(" or ") +
/// "); ignored") and is ignored.
ApiVersion choose_api_version(std::optional<ApiVersion> flag, EnvironmentValue environment,
                              std::optional<ApiVersion> implied, std::vector<std::string>& warnings);

/// Whether `item` (one comma-separated entry of --callbacks) is accepted by
/// `dialect`.
bool accepts_callback_item(const ApiDialect& dialect, std::string_view item) noexcept;

}  // namespace spinrpc

#include "dialect/api_dialect.h"

#include <algorithm>  // std::find

namespace spinrpc {
namespace {

const ApiDialect kApi70{
    ApiVersion::v7_0,
    "7.0",
    "typescript 7.0.2, @typescript/native-preview 7.0.0-dev.20260707.2",
    "api: ",
    InitializeShape::use_case_sensitive_file_names,
    PipeLayout::socket_at_path,
    GoUnicodeVersion::unicode_15,
    false,
    false,
    {"readFile", "fileExists", "directoryExists", "getAccessibleEntries", "realpath"},
};

// 7.1's items: each name, and NAME:SENTINEL for every sentinel but useOS
// (the client sends nothing for useOS; the server refuses the item), as its
// dist/api/fsCallbacks.js lists them and its server accepts them.
const ApiDialect kApi71{
    ApiVersion::v7_1,
    "7.1",
    "typescript 7.1.0-beta, 7.1.0-dev.20261105.1",
    "ipc: ",
    InitializeShape::case_sensitivity,
    PipeLayout::private_directory,
    GoUnicodeVersion::unicode_17,
    true,
    true,
    {"readFile", "fileExists", "directoryExists", "getAccessibleEntries", "realpath", "stat", "writeFile",
     "removeFile", "readFile:error", "fileExists:error", "directoryExists:error",
     "getAccessibleEntries:error", "realpath:identity", "realpath:error", "stat:fakeStat", "stat:error",
     "writeFile:noop", "writeFile:error", "removeFile:noop", "removeFile:error"},
};

}  // namespace

const ApiDialect& api_dialect(ApiVersion version) noexcept {
  return version == ApiVersion::v7_1 ? kApi71 : kApi70;
}

std::optional<ApiVersion> parse_api_version(std::string_view text) noexcept {
  for (const ApiVersion version : api_versions()) {
    if (api_dialect(version).name == text) return version;
  }
  return std::nullopt;
}

const std::vector<ApiVersion>& api_versions() noexcept {
  static const std::vector<ApiVersion> versions{ApiVersion::v7_0, ApiVersion::v7_1};
  return versions;
}

ApiVersion choose_api_version(std::optional<ApiVersion> flag, EnvironmentValue environment, bool saw_7_1_flag,
                              std::vector<std::string>& warnings) {
  if (flag) return *flag;
  if (environment.value != nullptr && *environment.value != '\0') {
    if (const auto version = parse_api_version(environment.value)) return *version;
    warnings.push_back(std::string(environment.name) + "=" + environment.value +
                       " names no API version (7.0 or 7.1); ignored");
  }
  return saw_7_1_flag ? ApiVersion::v7_1 : ApiVersion::v7_0;
}

bool accepts_callback_item(const ApiDialect& dialect, std::string_view item) noexcept {
  return std::find(dialect.callback_items.begin(), dialect.callback_items.end(), item) !=
         dialect.callback_items.end();
}

}  // namespace spinrpc

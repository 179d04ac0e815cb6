#include "dialect/api_dialect.h"

#include <algorithm>  // std::find
#include <cstddef>    // std::size_t
#include <iterator>   // std::size
#include <span>       // std::span

namespace spinrpc {
namespace {

// Every dialect, oldest first: node/dialects.json as generate_dialects.cmake
// writes it. Made on first use, so that another file's static initializers
// may ask for a version.
std::span<const ApiDialect> dialects() noexcept {
  static const ApiDialect table[] = {
#include "dialect/dialects.inc"
  };
  static_assert(std::size(table) > 0, "node/dialects.json lists no dialect");
  return table;
}

}  // namespace

const ApiDialect& api_dialect(ApiVersion version) noexcept {
  return dialects()[static_cast<std::size_t>(version)];
}

std::optional<ApiVersion> parse_api_version(std::string_view text) noexcept {
  for (const ApiDialect& dialect : dialects()) {
    if (dialect.name == text) return dialect.version;
  }
  return std::nullopt;
}

const std::vector<ApiVersion>& api_versions() noexcept {
  static const std::vector<ApiVersion> versions = [] {
    std::vector<ApiVersion> all;
    for (const ApiDialect& dialect : dialects()) all.push_back(dialect.version);
    return all;
  }();
  return versions;
}

std::string api_version_names(std::string_view separator) {
  std::string text;
  for (const ApiDialect& dialect : dialects()) {
    if (!text.empty()) text += separator;
    text += dialect.name;
  }
  return text;
}

std::optional<ApiVersion> api_version_of_flag(std::string_view name) noexcept {
  std::optional<ApiVersion> newest;
  for (const ApiDialect& dialect : dialects()) {
    for (const DialectFlag& flag : dialect.flags) {
      if (flag.name == name) newest = dialect.version;
    }
  }
  return newest;
}

ApiVersion choose_api_version(std::optional<ApiVersion> flag, EnvironmentValue environment,
                              std::optional<ApiVersion> implied, std::vector<std::string>& warnings) {
  if (flag) return *flag;
  if (environment.value != nullptr && *environment.value != '\0') {
    if (const auto version = parse_api_version(environment.value)) return *version;
    warnings.push_back(std::string(environment.name) + "=" + environment.value + " names no API version (" +
                       api_version_names(" or ") + "); ignored");
  }
  return implied.value_or(ApiVersion{});
}

bool accepts_callback_item(const ApiDialect& dialect, std::string_view item) noexcept {
  return std::find(dialect.callback_items.begin(), dialect.callback_items.end(), item) !=
         dialect.callback_items.end();
}

}  // namespace spinrpc

#include "dialect/ts_path.h"

#include <vector>  // std::vector

namespace spinrpc {
namespace {

bool is_volume_character(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The end of a file URL's volume ("c:" or "c%3a"/"c%3A" after the
// authority's slash), or npos.
std::size_t file_url_volume_end(std::string_view path, std::size_t at) noexcept {
  if (at < path.size() && path[at] == ':') return at + 1;
  if (path.substr(at, 3) == "%3a" || path.substr(at, 3) == "%3A") return at + 3;
  return std::string_view::npos;
}

// getEncodedRootLength, on a path whose separators are already `/`.
std::size_t root_length(std::string_view path) noexcept {
  if (path.empty()) return 0;
  if (path[0] == '/') {
    if (path.size() < 2 || path[1] != '/') return 1;  // POSIX
    const std::size_t next = path.find('/', 2);       // UNC: //server/
    return next == std::string_view::npos ? path.size() : next + 1;
  }
  if (is_volume_character(path[0]) && path.size() >= 2 && path[1] == ':') {
    if (path.size() >= 3 && path[2] == '/') return 3;  // DOS: c:/
    if (path.size() == 2) return 2;                    // DOS: c:
  }
  const std::size_t scheme_end = path.find("://");
  if (scheme_end == std::string_view::npos) return 0;
  const std::size_t authority_start = scheme_end + 3;
  const std::size_t authority_end = path.find('/', authority_start);
  if (authority_end == std::string_view::npos) return path.size();  // scheme://server
  const std::string_view scheme = path.substr(0, scheme_end);
  const std::string_view authority = path.substr(authority_start, authority_end - authority_start);
  if (scheme == "file" && (authority.empty() || authority == "localhost") && authority_end + 1 < path.size() &&
      is_volume_character(path[authority_end + 1])) {
    const std::size_t volume_end = file_url_volume_end(path, authority_end + 2);
    if (volume_end != std::string_view::npos) {
      if (volume_end < path.size() && path[volume_end] == '/') return volume_end + 1;  // file:///c:/
      if (volume_end == path.size()) return volume_end;                                // file:///c:
    }
  }
  return authority_end + 1;  // file://server/, http://server/
}

std::string with_slashes(std::string_view path) {
  std::string out(path);
  for (char& c : out) {
    if (c == '\\') c = '/';
  }
  return out;
}

}  // namespace

std::string normalized_absolute_path(std::string_view path, std::string_view current_directory) {
  std::string combined = with_slashes(path);
  if (root_length(combined) == 0 && !current_directory.empty()) {
    std::string base = with_slashes(current_directory);
    if (combined.empty()) {
      combined = std::move(base);
    } else {
      if (base.back() != '/') base += '/';
      combined = base + combined;
    }
  }
  const std::size_t root_size = root_length(combined);
  std::string root = combined.substr(0, root_size);
  std::vector<std::string_view> parts;
  const std::string_view rest = std::string_view(combined).substr(root_size);
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t slash = std::min(rest.find('/', start), rest.size());
    const std::string_view part = rest.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
        continue;
      }
      if (parts.empty() && !root.empty()) continue;
    }
    parts.push_back(part);
  }
  if (!root.empty() && root.back() != '/') root += '/';
  std::string out = std::move(root);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

}  // namespace spinrpc

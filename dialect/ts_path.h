#pragma once

#include <string>       // std::string
#include <string_view>  // std::string_view

namespace spinrpc {

/// TypeScript's getNormalizedAbsolutePath (src/compiler/path.ts, which
/// typescript-go's tspath follows), as API 7.1's server applies it to --cwd
/// before initialize returns it: `\` becomes `/`; a path with no root
/// (POSIX `/`, UNC `//server/`, DOS `c:/`, a URL's `scheme://authority/`)
/// is joined to `current_directory`; empty and `.` components are dropped,
/// `..` removes the one before it (and is dropped at a root); no trailing
/// `/` but the root's. Pure text: nothing is looked up on disk.
std::string normalized_absolute_path(std::string_view path, std::string_view current_directory);

}  // namespace spinrpc

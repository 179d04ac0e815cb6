#pragma once

#include <string>  // std::string
#include <vector>  // std::vector

namespace spinrpc {

/// The static spinrpc-server's --async: it links no JSON-RPC decoder (no
/// simdjson, whose only Debian build is a shared library that would bring
/// libstdc++.so back to every start), so a command line with --async is run
/// by a dynamic sibling built from the same main (docs/NODE.md, "Spawn to
/// first reply").

/// True when `args` (argv without argv[0]) parses and asks for --async.
/// A command line that does not parse is answered here, with the same usage
/// error the sibling would give.
bool asks_for_async(const std::vector<std::string>& args);

/// Replaces this process by the executable `name` in the folder of this
/// one (/proc/self/exe), with the same argv and environment; nothing is
/// done before (no descriptor opened, no signal disposition changed, no
/// output), so what the user sees is the sibling's alone. Returns only if
/// that fails: after one line on stderr naming the path and the reason,
/// with exit status 1.
int exec_beside_self(const char* name, char** argv, const std::string& program);

}  // namespace spinrpc

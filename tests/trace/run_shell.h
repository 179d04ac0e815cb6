#pragma once
// Commands run through sh for the trace tests, their stderr kept.

#include <cstdlib>     // std::system
#include <filesystem>  // std::filesystem::remove
#include <fstream>     // std::ifstream
#include <sstream>     // std::stringstream
#include <string>      // std::string
#include <utility>     // std::pair

#include "tests/trace/scratch_dir.h"

namespace spinrpc::test {

/// The whole text of the file at `path` ("" if it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs `command` with sh; returns its exit status and its stderr (kept in
/// a file of `dir` for the while).
inline std::pair<int, std::string> run_shell(const std::string& command, const ScratchDir& dir) {
  const std::string err = dir / "stderr.txt";
  const int status = std::system((command + " 2>'" + err + "'").c_str());
  std::string text = read_text(err);
  std::filesystem::remove(err);
  return {status, text};
}

/// `s` in single quotes, for sh (the tests' paths hold none).
inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace spinrpc::test

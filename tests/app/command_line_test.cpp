// parse_command_line: tsgo's --api flags parsed as Go's flag package parses
// them, spinrpc's own flags, and the one-line errors for the usage message.
// The default --cwd is compared with what the real tsgo reports.
#include <unistd.h>  // ::getpid

#include <cerrno>      // ENOENT
#include <cstring>     // std::strerror
#include <filesystem>  // std::filesystem::current_path, temp_directory_path
#include <string>  // std::string
#include <vector>  // std::vector

#include <doctest/doctest.h>

#include "client-shim/sync_rpc_channel.h"
#include "protocol/frame.h"  // Limits
#include "app/command_line.h"
#include "settings/settings.h"  // ignored_spin_setting
#include "tests/support/paths.h"  // tsgo_path

namespace {

using spinrpc::CommandLine;
using spinrpc::UsageError;
using spinrpc::parse_command_line;

CommandLine parse(std::vector<std::string> args) { return parse_command_line(args); }

TEST_CASE("parse_command_line reads tsgo's flags in every spelling Go's flag package accepts") {
  const CommandLine line = parse({"-api", "--cwd=/src", "-callbacks", "readFile,realpath", "--timing=true",
                                  "--pipe", "/tmp/api.sock"});
  CHECK(line.api);
  CHECK(line.server.cwd == "/src");
  CHECK(line.server.callbacks == std::vector<std::string>{"readFile", "realpath"});
  CHECK(line.server.timing);
  CHECK(line.pipe == "/tmp/api.sock");
  CHECK_FALSE(line.async);
  CHECK_FALSE(line.help);
  CHECK(line.max_message_bytes == spinrpc::Limits::kDefaultMaxMessageBytes);
  CHECK(line.warnings.empty());
}

TEST_CASE("parse_command_line takes strconv.ParseBool's spellings for a boolean flag") {
  for (const char* yes : {"1", "t", "T", "true", "TRUE", "True"}) {
    CAPTURE(yes);
    CHECK(parse({"--api", std::string("--timing=") + yes}).server.timing);
  }
  for (const char* no : {"0", "f", "F", "false", "FALSE", "False"}) {
    CAPTURE(no);
    CHECK_FALSE(parse({"--api", std::string("--timing=") + no}).server.timing);
  }
  CHECK_THROWS_WITH_AS(parse({"--api", "--timing=yes"}), "invalid boolean value \"yes\" for -timing: parse error",
                       UsageError);
}

TEST_CASE("parse_command_line lets the last --cwd win and keeps it verbatim") {
  CHECK(parse({"--api", "--cwd", "/a", "--cwd", "a/../b/"}).server.cwd == "a/../b/");
}

TEST_CASE("parse_command_line stops at the first non-flag or --, as tsgo, ignoring the rest") {
  CHECK(parse({"--api", "file.ts", "--no-such-flag"}).api);
  const CommandLine line = parse({"--api", "--", "--timing"});
  CHECK_FALSE(line.server.timing);
}

TEST_CASE("parse_command_line refuses a bad command line with one line for the usage message") {
  CHECK_THROWS_WITH_AS(parse({"--api", "--no-such-flag"}), "flag provided but not defined: -no-such-flag",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse({"--api", "--cwd"}), "flag needs an argument: -cwd", UsageError);
  CHECK_THROWS_WITH_AS(parse({"--api", "--cwd", ""}), "-cwd must not be empty", UsageError);
  CHECK_THROWS_WITH_AS(parse({"--api", "--callbacks=readFile,writeFile"}),
                       "unknown callback name: writeFile", UsageError);
  for (const char* bad : {"0", "-1", "12k", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse({"--api", "--max-message-bytes", bad}),
                         ("invalid value \"" + std::string(bad) +
                          "\" for -max-message-bytes: expected a positive number of bytes")
                             .c_str(),
                         UsageError);
  }
}

TEST_CASE("parse_command_line: an empty --callbacks enables none; an empty item is unknown (tsgo panics)") {
  CHECK(parse({"--api", "--callbacks="}).server.callbacks.empty());
  for (const char* list : {"--callbacks=,fileExists", "--callbacks=readFile,,realpath", "--callbacks=readFile,"}) {
    CAPTURE(list);
    CHECK_THROWS_WITH_AS(parse({"--api", list}), "unknown callback name: ", UsageError);
  }
}

TEST_CASE("parse_command_line: --api counts in first place only; Go's bad flag syntax") {
  CHECK_THROWS_WITH_AS(parse({"--api", "--api"}), "flag provided but not defined: -api", UsageError);
  CHECK_THROWS_WITH_AS(parse({"--api", "---cwd", "x"}), "bad flag syntax: ---cwd", UsageError);
  CHECK_THROWS_WITH_AS(parse({"--api", "-=x"}), "bad flag syntax: -=x", UsageError);
}

TEST_CASE("parse_command_line reads spinrpc's transport, limit and help flags") {
  const CommandLine line = parse({"--api", "--fifo-in", "/tmp/in", "--fifo-out=/tmp/out",
                                  "--max-message-bytes", "1000", "--stats"});
  CHECK(line.fifo_in == "/tmp/in");
  CHECK(line.fifo_out == "/tmp/out");
  CHECK(line.max_message_bytes == 1000);
  CHECK(line.print_stats);
  CHECK(parse({"--help"}).help);
  CHECK(parse({"-h"}).help);
  CHECK(parse({"--api", "--async"}).async);
}

TEST_CASE("an empty --pipe is tsgo's default: stdin/stdout, also after a path") {
  CHECK_FALSE(parse({"--api", "--pipe", ""}).pipe.has_value());
  CHECK_FALSE(parse({"--api", "--pipe=/tmp/a.sock", "--pipe="}).pipe.has_value());
  CHECK_NOTHROW(spinrpc::check_serving_flags(parse({"--api", "--pipe="}), "spinrpc-server"));
}

TEST_CASE("without --cwd in a removed working directory, the server refuses to serve (tsgo panics)") {
  const std::filesystem::path here = std::filesystem::current_path();
  const std::filesystem::path gone = std::filesystem::temp_directory_path() / ("spinrpc-cwd-" + std::to_string(::getpid()));
  std::filesystem::create_directory(gone);
  std::filesystem::current_path(gone);
  std::filesystem::remove(gone);
  const CommandLine without = parse({"--api"});
  const CommandLine with = parse({"--api", "--cwd", "/src"});
  std::filesystem::current_path(here);
  CHECK(without.cwd_error == std::strerror(ENOENT));
  CHECK_THROWS_WITH_AS(spinrpc::check_serving_flags(without, "spinrpc-server"),
                       "cannot find the working directory for initialize (No such file or directory): give --cwd DIR",
                       UsageError);
  CHECK(with.cwd_error.empty());
  CHECK_NOTHROW(spinrpc::check_serving_flags(with, "spinrpc-server"));
}

TEST_CASE("check_serving_flags refuses FIFO flags that cannot serve, each with its own line") {
  const auto refusal = [](std::vector<std::string> args) -> std::string {
    try {
      spinrpc::check_serving_flags(parse(std::move(args)), "spinrpc-server");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refusal({"--api", "--fifo-in", "/tmp/in", "--fifo-out", "/tmp/out"}) == "accepted");
  CHECK(refusal({"--fifo-in", "/tmp/in", "--fifo-out", "/tmp/out"}) ==
        "--api is required: spinrpc-server implements tsgo's API mode only");
  CHECK(refusal({"--api", "--fifo-in", "/tmp/in"}) == "--fifo-in and --fifo-out go together");
  CHECK(refusal({"--api", "--fifo-in", "", "--fifo-out", "/tmp/out"}) == "--fifo-in and --fifo-out need a path");
  CHECK(refusal({"--api", "--fifo-in", "/tmp/x", "--fifo-out", "/tmp/x"}) ==
        "--fifo-in and --fifo-out name the same FIFO (/tmp/x): the server would read its own replies");
  CHECK(refusal({"--api", "--pipe", "/tmp/s", "--fifo-in", "/tmp/in", "--fifo-out", "/tmp/out"}) ==
        "--pipe and --fifo-in/--fifo-out exclude each other");
}

TEST_CASE("parse_command_line takes the spin flags, and warns about a bad value instead of refusing it") {
  CommandLine line = parse({"--api", "--spin-us", "50", "--adaptive=0"});
  CHECK(line.spin.spin_us == 50);
  CHECK(line.spin.adaptive == false);
  CHECK(line.warnings.empty());
  CHECK(parse({"--api", "--adaptive"}).spin.adaptive == true);

  line = parse({"--api", "--spin-us", "-1", "--adaptive=maybe"});
  CHECK_FALSE(line.spin.spin_us.has_value());
  CHECK_FALSE(line.spin.adaptive.has_value());
  // The same words as for the environment and the shim options: one parser.
  CHECK(line.warnings ==
        std::vector<std::string>{
            spinrpc::ignored_spin_setting(spinrpc::SpinSetting::budget_us, "--spin-us", "-1"),
            spinrpc::ignored_spin_setting(spinrpc::SpinSetting::adaptive, "--adaptive", "maybe")});
  CHECK(line.warnings[0].find("-1") != std::string::npos);
}

TEST_CASE("parse_command_line records --version as spelled, for the usage error it is after --api") {
  CHECK(parse({"--version"}).version == "version");
  CHECK(parse({"-v"}).version == "v");
  const CommandLine line = parse({"--api", "--version"});
  CHECK(line.api);
  CHECK(line.version == "version");
}

TEST_CASE("parse_command_line's default --cwd is the directory the real tsgo reports") {
  // Same environment and working directory for both: Go's os.Getwd keeps
  // $PWD when it names the working directory.
  const std::string ours = parse({"--api"}).server.cwd;
  spinrpc::SyncRpcChannel tsgo(spinrpc::test::tsgo_path(), {"--api"});
  std::string expected = R"({"useCaseSensitiveFileNames":true,"currentDirectory":")" + ours + "\"}";
  CHECK(tsgo.request("initialize", "null") == expected);
  CHECK(tsgo.close() == 0);
}

TEST_CASE("usage_text names the executable it is given, as version_text does") {
  // spinrpc-bench-server embeds run_server_main: its --help said
  // "usage: spinrpc-server" while its --version said its own name.
  CHECK(spinrpc::usage_text("spinrpc-bench-server").starts_with("usage: spinrpc-bench-server --api [flags]\n"));
  CHECK(spinrpc::usage_text("spinrpc-server").starts_with("usage: spinrpc-server --api [flags]\n"));
}

}  // namespace

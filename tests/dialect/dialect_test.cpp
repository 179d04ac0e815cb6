// The API version a command line gets, and what each version accepts
// (dialect/api_dialect.h); TypeScript's getNormalizedAbsolutePath as 7.1
// applies it to --cwd (dialect/ts_path.h).
#include <optional>  // std::nullopt
#include <string>  // std::string
#include <vector>  // std::vector

#include <doctest/doctest.h>

#include "app/command_line.h"
#include "dialect/api_dialect.h"
#include "dialect/ts_path.h"

namespace {

using spinrpc::ApiVersion;
using spinrpc::parse_command_line;

// The two versions these cases are about, by name (node/dialects.json).
const ApiVersion v7_0 = spinrpc::parse_api_version("7.0").value();
const ApiVersion v7_1 = spinrpc::parse_api_version("7.1").value();

ApiVersion version_of(const std::vector<std::string>& args, const char* env = nullptr) {
  return parse_command_line(args, env).server.api_version;
}

TEST_CASE("a command line without 7.1's flags is answered as 7.0; with either of them as 7.1") {
  CHECK(version_of({"--api"}) == v7_0);
  CHECK(version_of({"--api", "--cwd", "/x", "--callbacks=readFile", "--timing"}) == v7_0);
  CHECK(version_of({"--api", "--useCaseSensitiveFileNames=false"}) == v7_1);
  CHECK(version_of({"--api", "--useCaseSensitiveFileNames"}) == v7_1);
  CHECK(version_of({"--api", "--runExternalCode"}) == v7_1);
}

TEST_CASE("--ts-api beats SPINRPC_TS_API, which beats what the flags say; a bad value is refused or warned about") {
  CHECK(version_of({"--api", "--ts-api=7.1"}) == v7_1);
  CHECK(version_of({"--api", "--useCaseSensitiveFileNames", "--ts-api", "7.0"}) == v7_0);
  CHECK(version_of({"--api"}, "7.1") == v7_1);
  CHECK(version_of({"--api", "--useCaseSensitiveFileNames"}, "7.0") == v7_0);
  CHECK(version_of({"--api", "--ts-api=7.0"}, "7.1") == v7_0);
  CHECK_THROWS_WITH_AS(parse_command_line({"--api", "--ts-api=7.2"}), "invalid value \"7.2\" for -ts-api: expected 7.0 or 7.1",
                       spinrpc::UsageError);
  const auto line = parse_command_line({"--api", "--useCaseSensitiveFileNames"}, "8");
  CHECK(line.server.api_version == v7_1);
  REQUIRE(line.warnings.size() == 1);
  CHECK(line.warnings[0] == "SPINRPC_TS_API=8 names no API version (7.0 or 7.1); ignored");
}

TEST_CASE("the versions are node/dialects.json's, oldest first; each name parses back, each new flag implies its version") {
  CHECK(spinrpc::api_version_names("|") == "7.0|7.1");
  for (const ApiVersion version : spinrpc::api_versions()) {
    const spinrpc::ApiDialect& dialect = spinrpc::api_dialect(version);
    CAPTURE(dialect.name);
    CHECK(spinrpc::parse_api_version(dialect.name) == version);
    for (const spinrpc::DialectFlag& flag : dialect.flags) CHECK(spinrpc::api_version_of_flag(flag.name) == version);
  }
  CHECK(spinrpc::api_version_of_flag("timing") == std::nullopt);
  CHECK(ApiVersion{} == v7_0);
}

TEST_CASE("--help and --version say what the table says") {
  const std::string usage = spinrpc::usage_text("spinrpc-server");
  CHECK(usage.find("  --ts-api=7.0|7.1      the API version to answer in") != std::string::npos);
  CHECK(usage.find("  --runExternalCode[=BOOL]  (7.1) accepted; no built-in method runs plugins\n") != std::string::npos);
  CHECK(usage.find("7.1: also stat,writeFile,removeFile and NAME:SENTINEL items\n") != std::string::npos);
  CHECK(usage.find("7.1: PATH is a new directory (0700) holding PATH/socket\n") != std::string::npos);
  CHECK(spinrpc::version_text("spinrpc-server").ends_with(
      "(TypeScript 7 API 7.0: @typescript/native-preview 7.0.0-dev.20260707.2, typescript 7.0.2; "
      "7.1: typescript 7.1.0-beta, 7.1.0-dev.20261105.1)"));
}

TEST_CASE("--callbacks: each version takes its own items, and refuses the others in tsgo's words") {
  CHECK(parse_command_line({"--api", "--useCaseSensitiveFileNames", "--callbacks=stat,realpath:identity,writeFile:noop"})
            .server.callbacks == std::vector<std::string>{"stat", "realpath:identity", "writeFile:noop"});
  CHECK_THROWS_WITH_AS(parse_command_line({"--api", "--callbacks=stat"}), "unknown callback name: stat", spinrpc::UsageError);
  CHECK_THROWS_WITH_AS(parse_command_line({"--api", "--callbacks=realpath:identity"}),
                       "unknown callback name: realpath:identity", spinrpc::UsageError);
  // useOS is what the client sends nothing for; 7.1's server refuses it.
  CHECK_THROWS_WITH_AS(parse_command_line({"--api", "--useCaseSensitiveFileNames", "--callbacks=readFile:useOS"}),
                       "unknown callback name: readFile:useOS", spinrpc::UsageError);
  CHECK_THROWS_WITH_AS(parse_command_line({"--api", "--useCaseSensitiveFileNames", "--callbacks=readFile:identity"}),
                       "unknown callback name: readFile:identity", spinrpc::UsageError);
}

TEST_CASE("7.1 normalizes --cwd as TypeScript's getNormalizedAbsolutePath; 7.0 keeps it verbatim") {
  CHECK(parse_command_line({"--api", "--cwd", "/a/b/../c/./"}).server.cwd == "/a/b/../c/./");
  CHECK(parse_command_line({"--api", "--useCaseSensitiveFileNames", "--cwd", "/a/b/../c/./"}).server.cwd == "/a/c");
}

TEST_CASE("normalized_absolute_path: roots, separators, dots, and relative paths joined to the directory") {
  using spinrpc::normalized_absolute_path;
  struct Case {
    const char* path;
    const char* expected;
  };
  // Each checked against typescript@7.1.0-dev.20261105.1's server (initialize
  // with --cwd PATH, run from /tmp/ts) and TypeScript's own path.ts rules.
  for (const Case c : {Case{"/tmp/", "/tmp"}, {"/", "/"}, {".", "/tmp/ts"}, {"..", "/tmp"},
                       {"rel/dir/..", "/tmp/ts/rel"}, {"a/./b/../c", "/tmp/ts/a/c"}, {"//x//y//", "//x/y"},
                       {"/a/b/../../..", "/"}, {"/a\\b\\c", "/a/b/c"}, {"C:\\x\\y", "C:/x/y"}, {"c:/Foo/", "c:/Foo"},
                       {"/x/y/.", "/x/y"}, {"/x/y/..", "/x"}, {" ", "/tmp/ts/ "}, {"/a/b/../c/./d/", "/a/c/d"},
                       {"~/x", "/tmp/ts/~/x"}, {"/a//b", "/a/b"}, {"file:///x", "file:///x"},
                       {"\\\\server\\share\\x", "//server/share/x"}, {"c:", "c:/"}, {"file:///c:/x/../y", "file:///c:/y"},
                       {"http://host", "http://host/"}, {"../../../..", "/"}}) {
    CAPTURE(c.path);
    CHECK(normalized_absolute_path(c.path, "/tmp/ts") == c.expected);
  }
}

}  // namespace

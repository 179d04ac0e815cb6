// spinrpc-json-bench: the async decode path's throughput on one 1 MiB
// JSON-RPC echo body, against simdjson walking the same body in full (the
// floor: every value touched). Rounds alternate the variants, their order
// rotating; each round reports MB/s per variant, of this thread's CPU time
// (the machine may be shared: wall time would measure the neighbours).
//
//   spinrpc-json-bench [--rounds R] [--rotate K] [--mib N] [--min-seconds S (CPU)] [--json FILE]
//
// --rotate K starts the variant order K places on (scripts/bench.sh runs one
// round per process and passes the round number).
//
// Variants:
//   decode            JsonRpcDecoder::decode (protocol/json_rpc.h): tsgo's
//                     strict rules and the output form, the server's path
//   ondemand walk     simdjson On-Demand visiting every value, in this
//                     file's compile-time kernel (SIMDJSON_BUILTIN_IMPLEMENTATION)
//   dom walk          simdjson's DOM parse (runtime-dispatched kernel, in
//                     libsimdjson) plus a walk over every element
// The same source is built twice (bench/CMakeLists.txt): spinrpc-json-bench
// as the product is built (no ISA flags: simdjson's On-Demand uses its
// "fallback" kernel), and spinrpc-json-bench-native with the machine's ISA
// (On-Demand in "haswell" or better), so scripts/bench.sh can alternate them.
// docs/ASYNC.md, "Parsing", says what that difference decided.
#include <time.h>  // clock_gettime, CLOCK_THREAD_CPUTIME_ID

#include <cstddef>      // std::size_t
#include <cstdio>       // std::printf, std::fopen
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <simdjson.h>

#include "bench/harness/flag_parser.h"
#include "protocol/json_rpc.h"

namespace {

namespace od = simdjson::ondemand;

// A body like the real client's JSON.stringify output: objects, strings
// with escapes and non-ASCII, numbers, literals, nested arrays.
std::string make_body(std::size_t bytes) {
  std::string params = "[";
  for (std::size_t i = 0; params.size() < bytes; ++i) {
    if (i) params += ',';
    params += R"({"i":)" + std::to_string(i) + R"(,"name":"node )" + std::to_string(i) +
              R"( wörld \"q\" \n","f":)" + std::to_string(i) + R"(.25e-3,"b":true,"n":null,"a":[1,2,[3,{"k":"v"}]]})";
  }
  params += ']';
  return R"({"jsonrpc":"2.0","id":1,"method":"echo","params":)" + params + "}";
}

std::size_t walk(od::value v);
std::size_t walk_fields(od::object o) {
  std::size_t n = 0;
  for (auto field : o) {
    (void)field.unescaped_key().value();
    n += walk(field.value().value());
  }
  return n;
}
std::size_t walk(od::value v) {
  switch (v.type().value()) {
    case od::json_type::object: {
      od::object object = v.get_object().value();
      return 1 + walk_fields(object);
    }
    case od::json_type::array: {
      od::array array = v.get_array().value();
      std::size_t n = 1;
      for (auto item : array) n += walk(item.value());
      return n;
    }
    case od::json_type::string: return (void)v.get_string().value(), 1;
    case od::json_type::number: return (void)v.raw_json_token(), 1;
    case od::json_type::boolean: return (void)v.get_bool().value(), 1;
    case od::json_type::null: return (void)v.is_null(), 1;
  }
  return 0;
}

std::size_t walk(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value();
      std::size_t n = 1;
      for (auto field : object) n += walk(field.value);
      return n;
    }
    case simdjson::dom::element_type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value();
      std::size_t n = 1;
      for (auto item : array) n += walk(item);
      return n;
    }
    default: return 1;
  }
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Variant {
  const char* name;
  std::size_t (*run)(const simdjson::padded_string& body);
};

spinrpc::JsonRpcDecoder& decoder() {
  static spinrpc::JsonRpcDecoder d;
  return d;
}
od::parser& ondemand_parser() {
  static od::parser p;
  return p;
}
simdjson::dom::parser& dom_parser() {
  static simdjson::dom::parser p;
  return p;
}

const Variant kVariants[] = {
    {"decode", [](const simdjson::padded_string& body) {
       const auto& m = decoder().decode(spinrpc::as_bytes(std::string_view(body)));
       return m.params.size();
     }},
    {"ondemand walk", [](const simdjson::padded_string& body) {
       od::document doc = ondemand_parser().iterate(body).value();
       od::object object = doc.get_object().value();
       return walk_fields(object);
     }},
    {"dom walk", [](const simdjson::padded_string& body) { return walk(dom_parser().parse(body).value()); }},
};

}  // namespace

int main(int argc, char** argv) {
  using spinrpc::bench::whole_number;
  constexpr char kUsage[] = "usage: spinrpc-json-bench [--rounds R] [--rotate K] [--mib N] [--min-seconds S] [--json FILE]\n";
  int rounds = 5;
  int rotate = 0;
  double mib = 1;
  double min_seconds = 0.3;
  std::string json_path;
  spinrpc::bench::FlagParser cli;
  cli.option("--rounds", [&](std::string_view v) { rounds = static_cast<int>(whole_number("--rounds", v, 1)); });
  cli.option("--rotate", [&](std::string_view v) { rotate = static_cast<int>(whole_number("--rotate", v)); });
  cli.option("--mib", [&](std::string_view v) { mib = spinrpc::bench::positive_number("--mib", v); });
  cli.option("--min-seconds", [&](std::string_view v) { min_seconds = spinrpc::bench::positive_number("--min-seconds", v); });
  cli.option("--json", [&](std::string_view v) { json_path = v; });
  try {
    if (!cli.parse(argc, argv)) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "spinrpc-json-bench: %s\n%s", e.what(), kUsage);
    return 2;
  }
  const std::string text = make_body(static_cast<std::size_t>(mib * 1048576));
  const simdjson::padded_string body(text);
  const std::string ondemand_kernel = SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION);
  const std::string dom_kernel = simdjson::get_active_implementation()->name();

  std::string json = "{\"tool\":\"spinrpc-json-bench\",\"body_bytes\":" + std::to_string(body.size()) +
                     ",\"ondemand_kernel\":\"" + ondemand_kernel + "\",\"dom_kernel\":\"" + dom_kernel + "\",\"rounds\":[";
  std::printf("body %zu bytes; On-Demand kernel %s (compile time), DOM kernel %s (runtime dispatch)\n", body.size(),
              ondemand_kernel.c_str(), dom_kernel.c_str());
  constexpr std::size_t kCount = sizeof kVariants / sizeof kVariants[0];
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < kCount; ++k) {
      const Variant& v = kVariants[(k + static_cast<std::size_t>(r + rotate)) % kCount];
      std::size_t sink = v.run(body);  // warm: parser capacity, caches
      std::size_t iterations = 0;
      const double t0 = thread_cpu_seconds();
      double seconds = 0;
      do {
        sink += v.run(body);
        ++iterations;
        seconds = thread_cpu_seconds() - t0;
      } while (seconds < min_seconds);
      const double mbps = static_cast<double>(body.size()) * static_cast<double>(iterations) / seconds / 1e6;
      std::printf("round %d  %-14s %8.1f MB/s  (%zu iterations, sink %zu)\n", r, v.name, mbps, iterations, sink % 10);
      json += std::string(r || k ? "," : "") + "{\"round\":" + std::to_string(r + rotate) + ",\"variant\":\"" + v.name +
              "\",\"mbps\":" + std::to_string(mbps) + "}";
    }
  }
  json += "]}\n";
  if (!json_path.empty()) {
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::perror(json_path.c_str());
      return 1;
    }
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }
  return 0;
}

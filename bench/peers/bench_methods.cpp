#include "bench/peers/bench_methods.h"

#include <chrono>     // std::chrono::steady_clock
#include <memory>     // std::make_shared
#include <stdexcept>  // std::invalid_argument
#include <string>     // std::string

#include <simdjson.h>

#include "server/server.h"

namespace spinrpc::bench {
namespace {

struct BenchWork {
  std::uint64_t busy_us = 0;
  std::uint64_t reply_bytes = 0;
};

// Holds a copy of the payload with simdjson's padding: the channel's
// buffer has no guaranteed slack after a payload. Reused across requests.
class ParamsParser {
 public:
  BenchWork parse(std::string_view json) {
    padded_.assign(json);
    padded_.reserve(json.size() + simdjson::SIMDJSON_PADDING);
    simdjson::ondemand::document doc;
    if (parser_.iterate(padded_.data(), padded_.size(), padded_.capacity()).get(doc)) {
      throw std::invalid_argument("benchWork: params are not JSON");
    }
    BenchWork work;
    simdjson::ondemand::object object;
    if (doc.get_object().get(object)) throw std::invalid_argument("benchWork: params must be an object");
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) throw std::invalid_argument("benchWork: bad key");
      std::uint64_t value = 0;
      if (key == "busyUs" || key == "replyBytes") {
        if (field.value().get_uint64().get(value)) {
          throw std::invalid_argument("benchWork: " + std::string(key) + " must be a non-negative integer");
        }
        (key == "busyUs" ? work.busy_us : work.reply_bytes) = value;
      }
    }
    if (work.busy_us > kMaxBenchBusyUs) throw std::invalid_argument("benchWork: busyUs over 10000000");
    if (work.reply_bytes > kMaxBenchReplyBytes) throw std::invalid_argument("benchWork: replyBytes over 64 MiB");
    return work;
  }

 private:
  simdjson::ondemand::parser parser_;
  std::string padded_;
};

void busy_wait(std::chrono::microseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

void register_bench_methods(Server& server) {
  // std::function needs a copyable target; simdjson's parser is move-only.
  server.on("benchWork", [parser = std::make_shared<ParamsParser>()](RequestContext& ctx) {
    const BenchWork work = ctx.payload().empty() ? BenchWork{} : parser->parse(ctx.payload_text());
    busy_wait(std::chrono::microseconds(work.busy_us));
    ctx.reply().assign(work.reply_bytes, 'x');
  });
}

}  // namespace spinrpc::bench

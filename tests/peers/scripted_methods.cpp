// The scripted peers' methods (scripted_methods.h).
#include "tests/peers/scripted_methods.h"

#include <unistd.h>  // ::pause, ::write, STDOUT_FILENO

#include <cstdlib>      // std::_Exit
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <nlohmann/json.hpp>

#include "protocol/remote_error.h"
#include "server/server.h"

namespace {

constexpr std::size_t kBigReplyBytes = std::size_t{1} << 20;

}  // namespace

void add_scripted_methods(spinrpc::Server& server) {
  server.on("callback", [](spinrpc::RequestContext& ctx) {
    const std::string_view payload = ctx.payload_text();
    const std::size_t space = payload.find(' ');
    const std::string_view name = payload.substr(0, space);
    const std::string_view args =
        space == std::string_view::npos ? std::string_view() : payload.substr(space + 1);
    ctx.reply() = ctx.call(name, args);
  });
  server.on("callbackTwice", [](spinrpc::RequestContext& ctx) {
    // call()'s result is valid only until the next call(): copy it first.
    ctx.reply() = ctx.call(ctx.payload_text(), std::string_view("1"));
    ctx.reply() += ',';
    ctx.reply() += ctx.call(ctx.payload_text(), std::string_view("2"));
  });
  server.on("callbackError", [](spinrpc::RequestContext& ctx) {
    try {
      const std::string_view result = ctx.call(ctx.payload_text(), std::string_view());
      throw std::runtime_error("callbackError: the callback returned \"" + std::string(result) +
                               "\" instead of failing");
    } catch (const spinrpc::RemoteError& e) {
      ctx.reply() = e.what();
    }
  });
  server.on("throwingHandler", [](spinrpc::RequestContext&) {
    throw std::runtime_error("handler failed on purpose");
  });
  server.on("throwWith", [](spinrpc::RequestContext& ctx) -> void {
    throw std::runtime_error(std::string(ctx.payload_text()));
  });
  server.on("bigReply", [](spinrpc::RequestContext& ctx) {
    std::string& reply = ctx.reply();
    reply.resize(kBigReplyBytes);
    for (std::size_t i = 0; i < reply.size(); ++i) reply[i] = static_cast<char>(i % 251);
  });
  server.on("neverAnswer", [](spinrpc::RequestContext&) {
    for (;;) ::pause();  // until a signal ends the process
  });
  server.on("callFs", [](spinrpc::RequestContext& ctx) {
    const nlohmann::json params = nlohmann::json::parse(ctx.payload_text());
    std::string& reply = ctx.reply();
    reply = "[";
    for (const nlohmann::json& call : params.at("calls")) {
      const std::string name = call.at(0).get<std::string>();
      const std::string_view result = ctx.call(name, std::string_view(call.at(1).dump()));
      if (reply.size() > 1) reply += ',';
      reply += result;
    }
    reply += ']';
  });
  server.on("exitNow", [](spinrpc::RequestContext&) { std::_Exit(3); });
  server.on("announceHuge", [](spinrpc::RequestContext& ctx) {
    // Straight to fd 1, past the channel: only the stdio peer has this method
    // mean anything. Header: Response, the method's name, bin32 0xfffffff0.
    std::string frame = "\x93\x04";
    const std::string_view method = ctx.method();
    frame += '\xc4';
    frame += static_cast<char>(method.size());
    frame += method;
    frame += std::string_view("\xc6\xff\xff\xff\xf0" "abc", 8);
    if (::write(STDOUT_FILENO, frame.data(), frame.size()) != static_cast<ssize_t>(frame.size())) std::_Exit(4);
    std::_Exit(0);
  });
}



// scripted_peer: a spinrpc::Server whose methods drive the client shim's
// Call handling and failure paths, the part libsyncrpc's socket_child plays
// for its channel. Arguments are ignored. Methods, besides the built-ins:
//   callback        payload "NAME" or "NAME ARGS": Call NAME(ARGS), reply with its result
//   callbackTwice   payload "NAME": Call NAME("1") and NAME("2"), reply "<first>,<second>"
//   callbackError   payload "NAME": Call NAME(""), which must fail; reply with the failure's text
//   throwingHandler throws std::runtime_error("handler failed on purpose") -> Error
//   bigReply        replies 1 MiB: byte i is i % 251
//   exitNow         std::_Exit(3) before replying
#include <unistd.h>  // STDIN_FILENO, STDOUT_FILENO

#include <csignal>      // std::signal, SIGPIPE
#include <cstdlib>      // std::_Exit
#include <iostream>     // std::cerr
#include <stdexcept>    // std::runtime_error
#include <string>       // std::string
#include <string_view>  // std::string_view

#include "channel/fd_channel.h"
#include "channel/peer_closed.h"
#include "protocol/remote_error.h"
#include "server/server.h"

namespace {

constexpr std::size_t kBigReplyBytes = std::size_t{1} << 20;

void add_methods(spinrpc::Server& server) {
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
  server.on("bigReply", [](spinrpc::RequestContext& ctx) {
    std::string& reply = ctx.reply();
    reply.resize(kBigReplyBytes);
    for (std::size_t i = 0; i < reply.size(); ++i) reply[i] = static_cast<char>(i % 251);
  });
  server.on("exitNow", [](spinrpc::RequestContext&) { std::_Exit(3); });
}

}  // namespace

int main() {
  // A client that goes away must be a PeerClosed here, not a SIGPIPE death.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    spinrpc::Server server(spinrpc::ServerOptions{});
    add_methods(server);
    spinrpc::FdChannel channel(spinrpc::UniqueFd(STDIN_FILENO), spinrpc::UniqueFd(STDOUT_FILENO));
    server.serve(channel);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "scripted_peer: " << e.what() << '\n';
    return 1;
  }
}

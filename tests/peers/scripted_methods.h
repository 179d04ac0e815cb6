// The scripted peers' methods: they drive the client shim's Call handling
// and failure paths, the part libsyncrpc's socket_child plays for its
// channel. Methods, besides the built-ins:
//   callback        payload "NAME" or "NAME ARGS": Call NAME(ARGS), reply with its result
//   callbackTwice   payload "NAME": Call NAME("1") and NAME("2"), reply "<first>,<second>"
//   callbackError   payload "NAME": Call NAME(""), which must fail; reply with the failure's text
//   throwingHandler throws std::runtime_error("handler failed on purpose") -> Error
//   throwWith       throws std::runtime_error(payload) -> Error whose message is the payload
//   bigReply        replies 1 MiB: byte i is i % 251
//   neverAnswer     never replies (pause(2) until a signal ends the process)
//   exitNow         std::_Exit(3) before replying
//   announceHuge    writes to stdout a Response header announcing a payload of
//                   0xfffffff0 bytes, then 3 bytes of it, and std::_Exit(0)
//                   (a server that lies about, or dies in, a big reply)
//   callFs          JSON params {"calls":[["NAME",ARG],...]}: Call each NAME
//                   with the JSON value ARG, in order; reply with the JSON
//                   array of their results (for --async, docs/ASYNC.md)
#pragma once

namespace spinrpc {
class Server;
}

/// Registers the methods listed above on `server`.
void add_scripted_methods(spinrpc::Server& server);

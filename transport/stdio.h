#pragma once

#include <memory>  // std::unique_ptr

#include "transport/transport.h"

namespace spinrpc {

/// stdin and stdout, as `tsgo --api` without --pipe. (The connecting side
/// is a spawned child's pipes: client-shim/child_process.h.)
std::unique_ptr<Transport> make_stdio_transport();

}  // namespace spinrpc

#pragma once

#include <cerrno>        // errno
#include <algorithm>     // std::find
#include <chrono>        // std::chrono
#include <initializer_list>  // std::initializer_list
#include <string>        // std::string
#include <system_error>  // std::system_error
#include <thread>        // std::this_thread::sleep_for

#include "descriptor/unique_fd.h"

namespace spinrpc::detail {

/// How long a connecting side waits between tries while the server is not
/// there yet.
inline constexpr std::chrono::milliseconds kConnectRetryPause{5};

/// Retries `attempt` (returning an fd, or an empty UniqueFd with errno set)
/// while errno is one of `retry` ("not there yet", "busy"), until `timeout`.
/// Throws std::system_error naming `path` for any other errno, and on
/// timeout ("cannot connect to PATH within N ms").
template <class Attempt>
UniqueFd retry_connect(Attempt&& attempt, std::initializer_list<int> retry, const std::string& path,
                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    UniqueFd fd = attempt();
    if (fd) return fd;
    const int err = errno;
    if (std::find(retry.begin(), retry.end(), err) == retry.end()) {
      throw std::system_error(err, std::generic_category(), "cannot connect to " + path);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::system_error(err, std::generic_category(),
                              "cannot connect to " + path + " within " +
                                  std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(kConnectRetryPause);
  }
}

}  // namespace spinrpc::detail

#include "transport/created_files.h"

#include <unistd.h>  // ::unlink

#include <algorithm>  // std::find

namespace spinrpc {

void CreatedFiles::add(const std::string& path) {
  const std::lock_guard lock(mutex_);
  paths_.push_back(path);
}

void CreatedFiles::remove(const std::string& path) noexcept {
  const std::lock_guard lock(mutex_);
  const auto it = std::find(paths_.begin(), paths_.end(), path);
  if (it == paths_.end()) return;
  ::unlink(it->c_str());
  paths_.erase(it);
}

void CreatedFiles::remove_all(bool hold_lock) noexcept {
  mutex_.lock();
  for (const std::string& path : paths_) ::unlink(path.c_str());
  paths_.clear();
  if (!hold_lock) mutex_.unlock();
}

}  // namespace spinrpc

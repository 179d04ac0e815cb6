#include "transport/created_files.h"

#include <sys/stat.h>  // ::lstat
#include <unistd.h>    // ::unlink

#include <algorithm>  // std::find_if

namespace spinrpc {

void CreatedFiles::add(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  const std::lock_guard lock(mutex_);
  files_.push_back(Created{path, st.st_dev, st.st_ino});
}

void CreatedFiles::unlink_if_ours(const Created& file) noexcept {
  struct stat st {};
  if (::lstat(file.path.c_str(), &st) != 0) return;  // gone already
  if (st.st_dev != file.device || st.st_ino != file.inode) return;  // someone else's now
  // A directory (7.1's --pipe) goes once what was created in it has gone.
  if (S_ISDIR(st.st_mode)) {
    ::rmdir(file.path.c_str());
  } else {
    ::unlink(file.path.c_str());
  }
}

void CreatedFiles::remove(const std::string& path) noexcept {
  const std::lock_guard lock(mutex_);
  const auto it = std::find_if(files_.begin(), files_.end(), [&](const Created& f) { return f.path == path; });
  if (it == files_.end()) return;
  unlink_if_ours(*it);
  files_.erase(it);
}

void CreatedFiles::remove_all(bool hold_lock) noexcept {
  mutex_.lock();
  // Newest first: a file before the directory created to hold it.
  for (auto it = files_.rbegin(); it != files_.rend(); ++it) unlink_if_ours(*it);
  files_.clear();
  if (!hold_lock) mutex_.unlock();
}

}  // namespace spinrpc

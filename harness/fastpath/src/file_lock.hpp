// An exclusive lock on a file shared by processes (flock), held for the object's lifetime: the
// fast path's compile cache lets one process build an entry while the others wait for it.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

namespace dicebench::fastpath {

class ExclusiveFileLock {
 public:
  // Blocks until the lock is held; if the lock file cannot be opened, goes on unlocked (the
  // callers re-check the cache after locking and write entries atomically either way).
  explicit ExclusiveFileLock(const std::string& path) : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~ExclusiveFileLock() {
    if (fd_ >= 0) {
      flock(fd_, LOCK_UN);
      close(fd_);
    }
  }
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

 private:
  int fd_;
};

}  // namespace dicebench::fastpath

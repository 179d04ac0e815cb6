#include "stream/shm_ring_linux.h"

#include <fcntl.h>     // ::fcntl, F_ADD_SEALS, F_GET_SEALS, F_SEAL_*
#include <sys/mman.h>  // ::memfd_create, ::mmap, ::munmap
#include <sys/stat.h>  // ::fstat
#include <unistd.h>    // ::ftruncate

#include <bit>        // std::has_single_bit
#include <cstring>    // std::memcpy
#include <new>        // placement new
#include <stdexcept>  // std::invalid_argument
#include <utility>    // std::move, std::exchange

#include "descriptor/syscall.h"

namespace spinrpc {
namespace {

constexpr unsigned kRequiredSeals = F_SEAL_SHRINK | F_SEAL_GROW;

std::size_t map_bytes_for(std::size_t ring_bytes) { return kRingPageBytes + 2 * ring_bytes; }

void* map_shared(int fd, std::size_t bytes) {
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw_syscall_error(errno, "map the shared-memory ring of", fd);
  return map;
}

}  // namespace

SharedRing SharedRing::create(std::size_t ring_bytes) {
  if (!std::has_single_bit(ring_bytes) || ring_bytes < kMinRingBytes || ring_bytes > kMaxRingBytes) {
    throw std::invalid_argument("shared-memory ring size " + std::to_string(ring_bytes) +
                                " is not a power of two from 4096 to 2^30 bytes");
  }
  const int raw = ::memfd_create("spinrpc-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (raw < 0) throw std::system_error(errno, std::generic_category(), "cannot create the shared-memory ring's memfd");
  const int moved = move_above_stdio(raw);
  if (moved < 0) throw std::system_error(errno, std::generic_category(), "cannot keep the shared-memory ring's memfd");
  UniqueFd fd(moved);
  const std::size_t bytes = map_bytes_for(ring_bytes);
  check_syscall([&] { return ::ftruncate(fd.get(), static_cast<off_t>(bytes)); }, "size the memfd", fd.get());
  check_syscall([&] { return ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL); },
                "seal the memfd", fd.get());
  void* map = map_shared(fd.get(), bytes);
  // A fresh memfd reads as zeros: every index and flag starts at 0.
  auto* page = new (map) RingPage{};
  page->header.magic = kRingMagic;
  page->header.version = kRingVersion;
  page->header.ring_bytes = static_cast<std::uint32_t>(ring_bytes);
  return SharedRing(std::move(fd), map, bytes, static_cast<std::uint32_t>(ring_bytes));
}

SharedRing SharedRing::open(int fd) {
  struct stat st {};
  check_syscall([&] { return ::fstat(fd, &st); }, "stat the offered shared memory", fd);
  if (!S_ISREG(st.st_mode)) throw RingCorrupt("the offered shared memory (fd " + std::to_string(fd) + ") is not a memfd");
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (static_cast<unsigned>(seals) & kRequiredSeals) != kRequiredSeals) {
    // Unsealed, the client could shrink it under our mapping: a SIGBUS.
    throw RingCorrupt("the offered shared memory (fd " + std::to_string(fd) +
                      ") is not sealed against shrinking and growing");
  }
  // The length, read again now that the seals hold it: the one read above
  // was taken before them, and a client could have changed it in between
  // (a mapping longer than the file: a SIGBUS on its last pages).
  check_syscall([&] { return ::fstat(fd, &st); }, "stat the offered shared memory", fd);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < kRingPageBytes) throw RingCorrupt("the offered shared memory is smaller than its header page");
  // The header, read once into our own memory, then checked.
  void* header_map = map_shared(fd, kRingPageBytes);
  RingHeader header_copy;
  std::memcpy(static_cast<void*>(&header_copy), header_map, sizeof(RingHeader));
  ::munmap(header_map, kRingPageBytes);
  const std::uint32_t ring_bytes = header_copy.ring_bytes;
  if (header_copy.magic != kRingMagic || header_copy.version != kRingVersion) {
    throw RingCorrupt("the offered shared memory is not a spinrpc ring of version " + std::to_string(kRingVersion));
  }
  if (!std::has_single_bit(ring_bytes) || ring_bytes < kMinRingBytes || ring_bytes > kMaxRingBytes ||
      map_bytes_for(ring_bytes) != size) {
    throw RingCorrupt("the offered shared memory's ring size (" + std::to_string(ring_bytes) +
                      " bytes) does not match its length (" + std::to_string(size) + " bytes)");
  }
  void* map = map_shared(fd, size);
  return SharedRing(UniqueFd(), map, size, ring_bytes);
}

SharedRing::SharedRing(SharedRing&& other) noexcept
    : fd_(std::move(other.fd_)),
      map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      ring_bytes_(other.ring_bytes_) {}

SharedRing& SharedRing::operator=(SharedRing&& other) noexcept {
  if (this != &other) {
    if (map_ != nullptr) ::munmap(map_, map_bytes_);
    fd_ = std::move(other.fd_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    ring_bytes_ = other.ring_bytes_;
  }
  return *this;
}

SharedRing::~SharedRing() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

void SharedRing::accept() noexcept { page().header.accepted.store(kRingAccepted, std::memory_order_release); }

bool SharedRing::accepted() const noexcept {
  return page().header.accepted.load(std::memory_order_acquire) == kRingAccepted;
}

SharedRing::Direction SharedRing::direction(bool to_server) const noexcept {
  std::byte* rings = static_cast<std::byte*>(map_) + kRingPageBytes;
  return Direction{to_server ? &page().to_server : &page().to_client, to_server ? rings : rings + ring_bytes_,
                   ring_bytes_};
}

SharedRing::Direction SharedRing::inbound(Side side) const noexcept { return direction(side == Side::server); }

SharedRing::Direction SharedRing::outbound(Side side) const noexcept { return direction(side == Side::client); }

}  // namespace spinrpc

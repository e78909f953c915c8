#include "a2ad/core/random.hpp"

#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>

namespace a2ad::core {
namespace {

constexpr size_t kBlock = 512;

struct Pool {
  unsigned char bytes[kBlock];
  size_t used = kBlock;  // empty: the first use fills it
};

}  // namespace

void RandomBytes(unsigned char* out, size_t n) {
  if (n >= kBlock / 4) {  // large draws (keys, secrets) go straight to the DRBG
    if (RAND_bytes(out, static_cast<int>(n)) != 1) std::abort();
    return;
  }
  thread_local Pool pool;
  if (kBlock - pool.used < n) {
    if (RAND_bytes(pool.bytes, static_cast<int>(kBlock)) != 1) std::abort();
    pool.used = 0;
  }
  std::memcpy(out, pool.bytes + pool.used, n);
  // Handed-out bytes are wiped so the buffer never holds a copy of an id it already issued.
  std::memset(pool.bytes + pool.used, 0, n);
  pool.used += n;
}

}  // namespace a2ad::core

#pragma once
// Random bytes from OpenSSL's CSPRNG, drawn in blocks: each thread keeps a small buffer that
// one RAND_bytes call refills, so making an id costs a copy instead of a call into the DRBG
// (which looks up its context and reads the process id on every call: per request, that
// showed in the send path's profile as one getpid per id).
//
// Thread safety: RandomBytes may be called from any thread at once (the buffer is per
// thread). A process that forks and does not exec must not use it in the child (the child
// would repeat the parent's buffered bytes); a2ad forks only to exec.
#include <cstddef>

namespace a2ad::core {

/// Fills out[0, n) with bytes from the CSPRNG. Aborts if it cannot produce bytes: an id made
/// from anything else could be guessed.
void RandomBytes(unsigned char* out, size_t n);

}  // namespace a2ad::core

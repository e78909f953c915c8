#pragma once
// Identifier generation (STYLE.md #5: injected randomness). Task ids, context ids, event
// ids and message ids are UUIDv7 strings: time-ordered, so B-tree inserts stay local.
//
// Thread safety: Next() of both generators here may be called from any thread at once
// (core::RandomBytes; an atomic counter); FormatUuid is pure. MakeUuidV7Generator keeps
// `clock` by reference: it must outlive the generator.
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/core/clock.hpp"

namespace a2ad::core {

class IdGenerator {
 public:
  virtual ~IdGenerator() = default;
  /// A new unique id. Thread-safe.
  virtual std::string Next() = 0;
};

/// RFC 9562 UUIDv7 from `clock` and 74 bits of OpenSSL's CSPRNG (core::RandomBytes): not guessable
/// from other ids. Aborts if the CSPRNG cannot produce bytes.
std::unique_ptr<IdGenerator> MakeUuidV7Generator(const Clock& clock);

/// The canonical 8-4-4-4-12 lowercase form of 16 bytes (version and variant bits as given).
std::string FormatUuid(const unsigned char (&bytes)[16]);

/// Deterministic ids "<prefix>-0001", "<prefix>-0002", ... for tests.
std::unique_ptr<IdGenerator> MakeSequentialIdGenerator(std::string prefix);

}  // namespace a2ad::core

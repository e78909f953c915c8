#pragma once
// SHA-256 (FIPS 180-4) by OpenSSL, for every digest a2ad takes: content digests of accepted
// messages, API key secrets, name-based ids, ETags, fingerprints, JWK thumbprints.
//
// OpenSSL's one-shot SHA256() looks the algorithm up in the provider registry on every call
// (about 6,000 instructions for a short input); here it is fetched once per process and each
// thread reuses one digest context (about 3,000).
//
// Thread safety: callable from any thread at once (the context is per thread). Aborts if
// OpenSSL cannot digest at all (no SHA-256 provider, or no memory for a context): a wrong
// digest would be worse.
#include <array>
#include <string>
#include <string_view>

namespace a2ad::core {

using Sha256Digest = std::array<unsigned char, 32>;

/// The SHA-256 digest of `data`.
Sha256Digest Sha256Of(std::string_view data);

/// The same as a string of 32 bytes.
std::string Sha256(std::string_view data);

/// A digest's bytes as a string_view (for the encoders in encoding.hpp).
inline std::string_view DigestBytes(const Sha256Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace a2ad::core

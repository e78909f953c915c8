#include "a2ad/core/sha256.hpp"

#include <openssl/evp.h>

#include <cstdlib>
#include <memory>

#include "a2ad/core/log.hpp"

namespace a2ad::core {
namespace {

[[noreturn]] void Fail(const char* what) {
  LogError(std::string("sha-256: ") + what);
  std::abort();
}

const EVP_MD* Algorithm() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (md == nullptr) Fail("OpenSSL has no SHA-256");
  return md;
}

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

EVP_MD_CTX* ThreadContext() {
  thread_local const std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx) Fail("no digest context");
  return ctx.get();
}

}  // namespace

Sha256Digest Sha256Of(std::string_view data) {
  EVP_MD_CTX* ctx = ThreadContext();
  Sha256Digest out{};
  unsigned int n = 0;
  if (EVP_DigestInit_ex2(ctx, Algorithm(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, out.data(), &n) != 1 || n != out.size())
    Fail("digest failed");
  return out;
}

std::string Sha256(std::string_view data) { return std::string(DigestBytes(Sha256Of(data))); }

}  // namespace a2ad::core

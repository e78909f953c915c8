#include "a2ad/core/ids.hpp"

#include <atomic>
#include <cstdio>

#include "a2ad/core/random.hpp"

namespace a2ad::core {

std::string FormatUuid(const unsigned char (&b)[16]) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Where each byte's two digits go in 8-4-4-4-12 (every id a task, context, message and
  // event gets is formatted here: one allocation and no per-character capacity checks).
  static constexpr unsigned char kAt[16] = {0,  2,  4,  6,  9,  11, 14, 16,
                                            19, 21, 24, 26, 28, 30, 32, 34};
  std::string out(36, '-');
  for (int i = 0; i < 16; ++i) {
    out[kAt[i]] = kHex[b[i] >> 4];
    out[kAt[i] + 1] = kHex[b[i] & 15];
  }
  return out;
}

namespace {

class UuidV7Generator final : public IdGenerator {
 public:
  explicit UuidV7Generator(const Clock& clock) : clock_(clock) {}
  std::string Next() override {
    uint64_t ms = static_cast<uint64_t>(clock_.NowMs());
    unsigned char b[16];
    for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (40 - 8 * i));
    // 74 random bits from OpenSSL's CSPRNG: ids name tasks and runs that a caller must not be
    // able to guess from ids it has seen (a seeded mt19937 can be reconstructed from output).
    RandomBytes(b + 6, 10);
    b[6] = static_cast<unsigned char>(0x70 | (b[6] & 0x0F));  // version 7
    b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3F));  // variant 10
    return FormatUuid(b);
  }

 private:
  const Clock& clock_;
};

class SequentialIdGenerator final : public IdGenerator {
 public:
  explicit SequentialIdGenerator(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string Next() override {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04llu", static_cast<unsigned long long>(++n_));
    return prefix_ + "-" + buf;
  }

 private:
  std::string prefix_;
  std::atomic<uint64_t> n_{0};
};

}  // namespace

std::unique_ptr<IdGenerator> MakeUuidV7Generator(const Clock& clock) {
  return std::make_unique<UuidV7Generator>(clock);
}
std::unique_ptr<IdGenerator> MakeSequentialIdGenerator(std::string prefix) {
  return std::make_unique<SequentialIdGenerator>(std::move(prefix));
}

}  // namespace a2ad::core

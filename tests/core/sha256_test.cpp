// core/sha256.hpp: FIPS 180-4 vectors, inputs longer than a block, and one context per thread.
#include "a2ad/core/sha256.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/core/encoding.hpp"

namespace a2ad::core {
namespace {

std::string Hex(std::string_view data) { return HexEncode(DigestBytes(Sha256Of(data))); }

TEST(Sha256, MatchesTheStandardsVectors) {
  EXPECT_EQ(Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256("abc"), std::string(DigestBytes(Sha256Of("abc"))));
}

// The context a thread reuses starts each digest afresh: no state carries over from the one
// before, whatever its length.
TEST(Sha256, EachDigestStartsAfreshOnEveryThread) {
  const std::string expected = Hex("abc");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        (void)Sha256Of(std::string(static_cast<size_t>(i * (t + 1)), 'x'));
        if (Hex("abc") != expected) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace a2ad::core

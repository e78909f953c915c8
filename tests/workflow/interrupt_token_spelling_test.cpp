// Interrupt tokens (workflow/interrupt_token.hpp): a bearer credential has one spelling.
#include "a2ad/workflow/interrupt_token.hpp"

#include <gtest/gtest.h>

#include <string>

namespace a2ad::workflow {
namespace {

// Found by tests/fuzz/interrupt_token_fuzz (corpus: regress-padded-mac): the MAC part was
// decoded with Base64UrlDecode, which drops trailing '=', so "<token>=" (and "<token>==",
// ...) verified too.
TEST(InterruptTokens, OnlyTheMintedSpellingVerifies) {
  const InterruptTokens tokens("a secret of more than thirty-two bytes");
  const TokenClaims claims{"run-1", "gate", "gate-0", 1767225600000, "resolve"};
  const std::string token = tokens.Mint(claims);
  ASSERT_TRUE(tokens.Verify(token));
  for (const std::string& other :
       {token + "=", token + "==", token + "====",
        token.substr(0, token.find('.')) + "=" + token.substr(token.find('.'))}) {
    auto v = tokens.Verify(other);
    ASSERT_FALSE(v) << other;
    EXPECT_EQ(v.error().code, core::ErrorCode::kInvalidParams);
  }
}

}  // namespace
}  // namespace a2ad::workflow

// Signed interrupt tokens (interrupt_token.cpp): round trip, forgeries, and the token the
// engine mints for an open interrupt.
#include "a2ad/workflow/interrupt_token.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

#include "a2ad/core/encoding.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// ---- interrupt tokens --------------------------------------------------------------------------

TEST(InterruptTokens, MintVerifyRoundTrip) {
  InterruptTokens tokens("secret-a");
  TokenClaims claims{"run-9", "gate", "gate-0", kStart + 60000, "inspect"};
  const std::string token = tokens.Mint(claims);
  auto v = tokens.Verify(token);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().run_id, "run-9");
  EXPECT_EQ(v.value().node_id, "gate");
  EXPECT_EQ(v.value().interrupt_id, "gate-0");
  EXPECT_EQ(v.value().expires_at_ms, kStart + 60000);
  EXPECT_EQ(v.value().intent, "inspect");
}

TEST(InterruptTokens, TamperedTokenIsRefused) {
  InterruptTokens tokens("secret-a");
  const std::string token = tokens.Mint({"run-9", "gate", "gate-0", kStart, "resolve"});
  const size_t dot = token.find('.');
  ASSERT_NE(dot, std::string::npos);
  // Forge other claims under the original MAC.
  const std::string forged_claims = core::Base64UrlEncode(
      R"({"runId":"run-X","nodeId":"gate","interruptId":"gate-0","expiresAt":1,"intent":"resolve","kid":"k1"})");
  auto forged = tokens.Verify(forged_claims + token.substr(dot));
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.error().code, ErrorCode::kInvalidParams);
  // Flip one character of the MAC.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tokens.Verify(flipped).ok());
  for (const std::string& junk : {std::string(), std::string("abc"), token.substr(0, dot),
                                  token.substr(0, dot + 1), token + "x"})
    EXPECT_FALSE(tokens.Verify(junk).ok()) << "'" << junk << "'";
}

TEST(InterruptTokens, AnotherSecretIsRefused) {
  const std::string token = InterruptTokens("secret-a").Mint({"r", "n", "i", kStart, "resolve"});
  auto v = InterruptTokens("secret-b").Verify(token);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams);
  EXPECT_TRUE(InterruptTokens("secret-a").Verify(token).ok());
}

TEST(InterruptTokens, TheEngineMintsATokenForTheOpenInterrupt) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  const std::string token = StrOf(ObjAt(h.rec.task.metadata, "openwop"), "interruptToken");
  ASSERT_FALSE(token.empty());
  auto v = InterruptTokens("test-secret").Verify(token);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().run_id, kRunId);
  EXPECT_EQ(v.value().node_id, "gate");
  EXPECT_EQ(v.value().interrupt_id, StrOf(ObjAt(h.Run(), "interrupt"), "interruptId"));
  EXPECT_GT(v.value().expires_at_ms, h.now);
  // Answered: the token leaves the task's metadata.
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "accept"})")).ok());
  EXPECT_FALSE(h.rec.task.metadata.contains("openwop") &&
               ObjAt(h.rec.task.metadata, "openwop").contains("interruptToken"));
}
}  // namespace
}  // namespace a2ad::workflow

#include "a2ad/storage/page_cursor.hpp"

#include <gtest/gtest.h>

namespace a2ad::storage {
namespace {

TEST(PageCursorTest, RoundTripsThroughTheToken) {
  for (const PageCursor& c : {PageCursor{0, "t"}, PageCursor{1767225600123, "0190-abc"},
                              PageCursor{-42, "id:with:colons"}, PageCursor{7, "ünï/+="}}) {
    const std::string token = EncodePageToken(c);
    EXPECT_EQ(
        token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
        std::string::npos)
        << token;
    auto decoded = DecodePageToken(token);
    ASSERT_TRUE(decoded.ok()) << token << ": " << decoded.error().message;
    EXPECT_EQ(*decoded, c);
  }
}

TEST(PageCursorTest, RejectsMalformedTokensNamingPageToken) {
  // Comments give the decoded text of the well-formed base64url ones.
  for (const char* token :
       {"!!!!", "a", "NTp0=", "NTp0+", "bm9jb2xvbg" /*nocolon*/, "eDp0YXNr" /*x:task*/,
        "MTIzOg" /*123:*/, "OnRhc2s" /*:task*/, "MDEyMzp0" /*0123:t*/, "IDU6dA" /* 5:t*/,
        "OTk5OTk5OTk5OTk5OTk5OTk5OTk6dA" /*20 nines:t*/,
        "NTp0YR" /*5:ta, non-canonical trailing bits*/}) {
    auto decoded = DecodePageToken(token);
    ASSERT_FALSE(decoded.ok()) << token;
    EXPECT_EQ(decoded.error().code, core::ErrorCode::kInvalidParams) << token;
    EXPECT_NE(decoded.error().message.find("pageToken"), std::string::npos) << token;
  }
  EXPECT_TRUE(DecodePageToken("NTp0").ok());    // "5:t"
  EXPECT_TRUE(DecodePageToken("LTU6dA").ok());  // "-5:t"
}

TEST(PageCursorTest, IsAfterCursorFollowsListOrder) {
  const PageCursor c{100, "m"};
  EXPECT_TRUE(IsAfterCursor(c, 99, "z"));    // older
  EXPECT_TRUE(IsAfterCursor(c, 100, "a"));   // same time, smaller id
  EXPECT_FALSE(IsAfterCursor(c, 100, "m"));  // the cursor itself
  EXPECT_FALSE(IsAfterCursor(c, 100, "n"));
  EXPECT_FALSE(IsAfterCursor(c, 101, "a"));  // newer
}

}  // namespace
}  // namespace a2ad::storage

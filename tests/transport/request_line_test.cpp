// The path of a request whose head could not be read (transport/http/request_line.hpp): what
// shapes the error answer of a malformed, oversized or trickled head.
#include "a2ad/transport/http/request_line.hpp"

#include <gtest/gtest.h>

namespace a2ad::transport {
namespace {

TEST(RequestLine, ThePathOfAWellFormedLineWithoutItsQuery) {
  EXPECT_EQ(PathOfTarget("/v1/runs?x=1"), "/v1/runs");
  EXPECT_EQ(PathOfRequestLine("GET /v1/runs?x=1 HTTP/1.1\r\nHost: a\r\n", 100), "/v1/runs");
  EXPECT_EQ(PathOfRequestLine("POST /a2a/rest/message:send HTTP/1.0\r\n", 100),
            "/a2a/rest/message:send");
}

TEST(RequestLine, NothingForALineThatIsIncompleteTooLongOrMalformed) {
  EXPECT_EQ(PathOfRequestLine("GET /v1/runs HTTP/1.1", 100), "");        // no CRLF yet
  EXPECT_EQ(PathOfRequestLine("GET /v1/runs HTTP/1.1\r\n", 10), "");     // past the limit
  EXPECT_EQ(PathOfRequestLine(" /v1/runs HTTP/1.1\r\n", 100), "");       // no method
  EXPECT_EQ(PathOfRequestLine("G(T /v1/runs HTTP/1.1\r\n", 100), "");    // not a token
  EXPECT_EQ(PathOfRequestLine("GET /v1/runs HTTP/11\r\n", 100), "");     // not HTTP/d.d
  EXPECT_EQ(PathOfRequestLine("GET /v1/\x01runs HTTP/1.1\r\n", 100), "");  // a control byte
  EXPECT_EQ(PathOfRequestLine("GET  HTTP/1.1\r\n", 100), "");            // no target
}

}  // namespace
}  // namespace a2ad::transport

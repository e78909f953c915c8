// The A2A 1.0 HTTP+JSON binding (a2a_rest.hpp, /a2a/rest) as declarative fixtures (STYLE.md
// #7): fixtures/rest_v10.json is a sequence of HTTP exchanges, run by
// tests/support/rest_conformance.hpp against the servers its cases name. Every route's success
// shape is a case, and every error the binding can answer (each error-table row reachable over
// REST, error_coverage_test.cpp checks that): the status, the headers that matter and the exact
// google.rpc.Status body {"error": {"code": <HTTP status>, "status": "<gRPC code>", "message",
// "details": [ErrorInfo{reason, domain, metadata}, BadRequest?]}}. Set A2AD_UPDATE_GOLDEN=1 to
// rewrite the "expect" members from the current output (then read the diff before committing).
#include <gtest/gtest.h>

#include "rest_conformance.hpp"

namespace a2ad::transport {
namespace {

TEST(RestV10Conformance, MatchesGolden) {
  testing::RunRestGolden("tests/transport/fixtures/rest_v10.json", protocol::WireVersion::kV10);
}

}  // namespace
}  // namespace a2ad::transport

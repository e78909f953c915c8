// Every row of the error table (protocol/error_table.hpp: one per core::ErrorCode) has at least
// one golden case on each REST binding and each gRPC service, unless the binding cannot answer
// it: then the code is on that binding's allow-list below, with the reason. The goldens are
// the fixtures their drivers pin (rest_v10_conformance_test, rest_v03_conformance_test,
// grpc_conformance_test); this test only reads them, and checks on the way that each error
// case agrees with the table (HTTP status, google.rpc.Status `status`, gRPC code, the 0.3
// error-class prefix). A new ErrorCode fails here until it has a case or a reason.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "a2ad/core/error.hpp"
#include "a2ad/protocol/error_table.hpp"
#include "conformance.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;
using core::ErrorCode;
using Allowed = std::map<ErrorCode, std::string>;

std::vector<ErrorCode> AllCodes() {
  std::vector<ErrorCode> out;
  for (int i = 0; core::ErrorCodeName(static_cast<ErrorCode>(i)) != "UNKNOWN"; ++i)
    out.push_back(static_cast<ErrorCode>(i));
  return out;
}

std::optional<ErrorCode> CodeNamed(std::string_view reason) {
  for (ErrorCode c : AllCodes())
    if (core::ErrorCodeName(c) == reason) return c;
  return std::nullopt;
}

json::array Cases(const std::string& fixture) {
  const auto path = std::filesystem::path(A2AD_SOURCE_DIR) / "tests/transport/fixtures" / fixture;
  return json::parse(testing::ReadFile(path)).at("cases").as_array();
}

// Codes no binding of a2ad can answer (reached by no request against a healthy server).
const Allowed kNowhere = {
    {ErrorCode::kInternal,
     "a bug or an unexpected storage failure: no request provokes it against a healthy store "
     "(its client-facing form, a message with an error id, is error_body_test's)"},
    {ErrorCode::kInvalidAgentResponse,
     "never raised: a2ad's agents are in-process skills whose output the task service records "
     "itself; there is no remote agent answer to be invalid"},
    {ErrorCode::kExtendedCardNotConfigured,
     "only between the listeners opening and the card being final at startup "
     "(a2a_operations.hpp ExtendedCard), not a deterministic exchange"},
    {ErrorCode::kRateLimited,
     "needs a server started with --rate-limit, which the golden servers are not; "
     "tests/integration/card_and_limits_e2e_test.cpp pins the 429 of every binding"},
    {ErrorCode::kConflict,
     "a task id taken by another tenant, or a store race lost: an anonymous server has one "
     "tenant, and a race is not a deterministic exchange"},
    {ErrorCode::kDataCorrupt,
     "needs a damaged stored record (SQLite); the fixtures run on the memory store "
     "(tests/integration/quarantine_test.cpp covers it)"},
};

Allowed With(Allowed base, const Allowed& more) {
  base.insert(more.begin(), more.end());
  return base;
}

// On gRPC the framing is gRPC's own: what HTTP+JSON refuses in a2ad, gRPC refuses (or cannot
// receive) before a2ad sees the call, with a status of the library's and no ErrorInfo.
const Allowed kGrpcUnreachable = With(
    kNowhere,
    {
        {ErrorCode::kParseError, "requests are protobuf messages decoded by gRPC: no JSON"},
        {ErrorCode::kInvalidRequest,
         "no request envelope of a2ad's: gRPC itself refuses a message it cannot decode"},
        {ErrorCode::kMethodNotFound,
         "every RPC of both protos is served; an unknown one is answered by gRPC itself "
         "(UNIMPLEMENTED without ErrorInfo)"},
        {ErrorCode::kContentTypeNotSupported, "gRPC fixes the content type (application/grpc)"},
        {ErrorCode::kPayloadTooLarge,
         "gRPC enforces its own receive limit (RESOURCE_EXHAUSTED from the library)"},
    });

// The pause extension's errors (ext/pause/): the golden servers do not register it (their
// skills are built-ins that cannot pause); the real binary answers them on every JSON binding
// in tests/integration/pause_e2e_test.cpp (PauseE2e.ErrorsOnEveryBinding) and on gRPC in
// pause_grpc_e2e_test.cpp.
// The OPT extension's (ext/opt/): the golden-answer servers serve no objectives; the real
// binary answers them on JSON-RPC in opt_e2e_test.cpp (OptE2e.EveryMethodsErrors), on REST in
// opt_exec_e2e_test.cpp (OptExec.TheRestRoutesServeTheMethods) and on gRPC in
// opt_grpc_e2e_test.cpp.
const Allowed kPauseOnRest = With(
    kNowhere, {
                  {ErrorCode::kTaskNotPausable, "pause extension: pause_e2e_test.cpp pins it"},
                  {ErrorCode::kResumeHandleMismatch, "pause extension: pause_e2e_test.cpp pins it"},
                  {ErrorCode::kOptNotFound, "OPT extension: opt_exec_e2e_test.cpp pins it"},
                  {ErrorCode::kOptInvalidStatus, "OPT extension: opt_exec_e2e_test.cpp pins it"},
              });
const Allowed kPauseOnGrpc =
    With(kGrpcUnreachable,
         {
             {ErrorCode::kTaskNotPausable, "pause extension: pause_grpc_e2e_test.cpp pins it"},
             {ErrorCode::kResumeHandleMismatch, "pause extension: pause_grpc_e2e_test.cpp pins it"},
             {ErrorCode::kOptNotFound, "OPT extension: opt_grpc_e2e_test.cpp pins it"},
             {ErrorCode::kOptInvalidStatus, "OPT extension: opt_grpc_e2e_test.cpp pins it"},
         });

void ExpectCovered(const std::string& binding, const std::set<ErrorCode>& covered,
                   const Allowed& allowed) {
  for (ErrorCode c : AllCodes()) {
    const std::string name(core::ErrorCodeName(c));
    if (allowed.contains(c))
      EXPECT_FALSE(covered.contains(c))
          << binding << ": " << name << " has a golden case; take it off the allow-list";
    else
      EXPECT_TRUE(covered.contains(c)) << binding << ": no golden case answers " << name;
  }
}

TEST(ErrorCoverage, RestV10) {
  std::set<ErrorCode> covered;
  for (const auto& c : Cases("rest_v10.json")) {
    const auto& expect = c.at("expect").as_object();
    const json::value* body = expect.if_contains("body");
    if (!body || !body->is_object() || !body->as_object().contains("error")) continue;
    const auto& error = body->at("error").as_object();
    const std::string name(c.at("name").as_string());
    const auto reason = CodeNamed(error.at("details").at(0).at("reason").as_string());
    ASSERT_TRUE(reason) << name;
    covered.insert(*reason);
    const ErrorMapping& m = MapError(*reason);
    const int status = static_cast<int>(expect.at("status").as_int64());
    EXPECT_EQ(error.at("code"), status) << name;
    if (status == 405) {  // a route with another method: MethodNotFound's details, 405
      EXPECT_EQ(*reason, ErrorCode::kMethodNotFound) << name;
      continue;
    }
    EXPECT_EQ(status, m.http_status) << name;
    EXPECT_EQ(error.at("status").as_string(), m.grpc_status) << name;
  }
  ExpectCovered("A2A 1.0 HTTP+JSON", covered, kPauseOnRest);
}

TEST(ErrorCoverage, RestV03) {
  std::set<ErrorCode> covered;
  for (const auto& c : Cases("rest_v03.json")) {
    const auto& expect = c.at("expect").as_object();
    const json::value* body = expect.if_contains("body");
    if (!body || !body->is_object() || !body->as_object().contains("code")) continue;
    const std::string name(c.at("name").as_string());
    const int status = static_cast<int>(expect.at("status").as_int64());
    const int64_t code = body->at("code").as_int64();
    if (status == 405) {  // a route with another method: MethodNotFound's code, 405
      EXPECT_EQ(code, -32601) << name;
      covered.insert(ErrorCode::kMethodNotFound);
      continue;
    }
    // The 0.3 body names no reason: the row is the one with this JSON-RPC code and status.
    std::vector<ErrorCode> rows;
    for (ErrorCode e : AllCodes())
      if (MapError(e).jsonrpc_code == code && MapError(e).http_status == status) rows.push_back(e);
    ASSERT_EQ(rows.size(), 1u) << name << ": code " << code << " with HTTP " << status;
    covered.insert(rows[0]);
  }
  ExpectCovered("A2A 0.3 HTTP+JSON", covered, kPauseOnRest);
}

void GrpcCoverage(std::string_view service) {
  std::set<ErrorCode> covered;
  for (const auto& c : Cases("grpc_errors.json")) {
    if (c.at("service").as_string() != service) continue;
    const auto& expect = c.at("expect").as_object();
    if (expect.at("code") == "OK") continue;
    const std::string name(c.at("name").as_string());
    const auto reason = CodeNamed(expect.at("errorInfo").at("reason").as_string());
    ASSERT_TRUE(reason) << name;
    covered.insert(*reason);
    EXPECT_EQ(expect.at("code").as_string(), MapError(*reason).grpc_status) << name;
    if (service == "a2a.v1") {
      EXPECT_TRUE(
          expect.at("message").as_string().starts_with(std::string(V03ErrorName(*reason)) + ": "))
          << name;
    }
  }
  ExpectCovered(std::string(service), covered, kPauseOnGrpc);
}

TEST(ErrorCoverage, GrpcV10) { GrpcCoverage("lf.a2a.v1"); }
TEST(ErrorCoverage, GrpcV03) { GrpcCoverage("a2a.v1"); }

}  // namespace
}  // namespace a2ad::protocol

// transport/error_body.hpp: the one writer of error bodies per surface, and what a client
// may see of an internal failure.
#include "a2ad/transport/error_body.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/protocol/error_table.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

TEST(ErrorBody, InternalDetailsNeverReachTheClient) {
  Error internal(ErrorCode::kInternal,
                 "sqlite '/srv/a2ad/data/a2ad.db': attempt to write a readonly database",
                 {{"sql", "UPDATE tasks SET ..."}});
  Error shown = ClientFacing(internal);
  EXPECT_EQ(shown.code, ErrorCode::kInternal);
  EXPECT_EQ(shown.message.find("/srv"), std::string::npos) << shown.message;
  EXPECT_EQ(shown.message.find("sqlite"), std::string::npos) << shown.message;
  ASSERT_EQ(shown.details.size(), 1u);
  EXPECT_EQ(shown.details[0].first, "errorId");
  EXPECT_NE(shown.message.find(shown.details[0].second), std::string::npos);
  // Two failures get two ids.
  EXPECT_NE(ClientFacing(internal).details[0].second, shown.details[0].second);

  auto rpc = json::parse(JsonRpcErrorResponse(1, internal, protocol::WireVersion::kV03).body);
  EXPECT_EQ(rpc.at("error").at("code"), -32603);
  EXPECT_EQ(json::serialize(rpc).find("readonly"), std::string::npos);
  auto rest = RestErrorResponse(internal);
  EXPECT_EQ(rest.status, 500);
  EXPECT_EQ(rest.body.find("readonly"), std::string::npos);
  EXPECT_EQ(json::parse(rest.body).at("error"), "internal_error");
}

TEST(ErrorBody, AnUnreadableRecordNamesTheTaskAndTheDoctor) {
  Error corrupt(ErrorCode::kDataCorrupt,
                "sqlite '/var/lib/a2ad/a2ad.db': snapshot of task t1 is not JSON: syntax error",
                {{"taskId", "t1"}});
  auto rest = RestErrorResponse(corrupt);
  EXPECT_EQ(rest.status, 500);
  auto body = json::parse(rest.body).as_object();
  EXPECT_EQ(body.at("error"), "record_unreadable");
  EXPECT_EQ(body.at("details").at("taskId"), "t1");
  EXPECT_TRUE(body.at("details").as_object().contains("errorId"));
  const std::string message(body.at("message").as_string());
  EXPECT_NE(message.find("task t1"), std::string::npos);
  EXPECT_NE(message.find("a2ad doctor"), std::string::npos);
  EXPECT_EQ(message.find("/var/lib"), std::string::npos);
  auto v10 = json::parse(JsonRpcErrorResponse("x", corrupt, protocol::WireVersion::kV10).body);
  EXPECT_EQ(v10.at("error").at("code"), -32603);
  EXPECT_EQ(v10.at("error").at("data").at(0).at("reason"), "RECORD_UNREADABLE");
}

TEST(ErrorBody, CallerErrorsPassThrough) {
  Error bad(ErrorCode::kInvalidParams, "message.parts[0].text: expected a string",
            {{"field", "message.parts[0].text"}});
  EXPECT_EQ(ClientFacing(bad).message, bad.message);
  auto rest = json::parse(RestErrorResponse(bad).body).as_object();
  EXPECT_EQ(rest.at("error"), "validation_error");
  EXPECT_EQ(rest.at("details").at("field"), "message.parts[0].text");
}

// The closed envelope: exactly error, message and (optionally) details, and a named code
// (a `reason` detail) decides the code and status but is not repeated in the details.
TEST(ErrorBody, RestEnvelopeIsClosedAndTheReasonPicksCodeAndStatus) {
  Error e(ErrorCode::kConflict, "the interrupt was already resolved",
          {{"reason", "interrupt_already_resolved"}, {"nodeId", "approve"}});
  auto r = RestErrorResponse(e);
  EXPECT_EQ(r.status, 409);
  auto body = json::parse(r.body).as_object();
  EXPECT_EQ(body.size(), 3u);
  EXPECT_EQ(body.at("error"), "interrupt_already_resolved");
  EXPECT_EQ(body.at("details").as_object().size(), 1u);
  EXPECT_EQ(body.at("details").at("nodeId"), "approve");
  auto plain =
      json::parse(RestErrorResponse(404, "subscription_not_found", "no such webhook").body);
  EXPECT_EQ(plain.as_object().size(), 2u);
}

// Every ErrorCode maps to a REST code the table knows (so its status is the table's).
TEST(ErrorTable, EveryCodeHasARestCodeWithAStatus) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::kDataCorrupt); ++c) {
    const auto& m = protocol::MapError(static_cast<ErrorCode>(c));
    EXPECT_TRUE(protocol::RestStatusOf(m.rest_code).has_value()) << m.rest_code;
    EXPECT_FALSE(m.grpc_status.empty());
  }
  EXPECT_EQ(protocol::MapError(ErrorCode::kDataCorrupt).grpc_status, "DATA_LOSS");
}

}  // namespace
}  // namespace a2ad::transport

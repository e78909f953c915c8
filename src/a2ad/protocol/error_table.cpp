#include "a2ad/protocol/error_table.hpp"

namespace a2ad::protocol {

// HTTP and gRPC columns: the A2A 1.0 specification's binding tables (§10.6, §11.6), as the
// official TCK checks them: TaskNotCancelable 409, ContentTypeNotSupported 415,
// InvalidAgentResponse 502; PushNotificationNotSupported, UnsupportedOperation and
// VersionNotSupported are UNIMPLEMENTED on gRPC. The A2A 0.3 REST and gRPC bindings, which
// have no table of their own (WIRE.md §8.4, §9), use the same columns: the gRPC one is the
// 0.3 JavaScript SDK's (its client maps NOT_FOUND, FAILED_PRECONDITION on cancel and
// UNIMPLEMENTED on push back to A2A errors), and 0.3 REST clients read the body's code or
// only whether the status is 2xx.
const ErrorMapping& MapError(core::ErrorCode code) {
  using core::ErrorCode;
  static const ErrorMapping kParse{-32700, 400, "INVALID_ARGUMENT", "Invalid JSON payload",
                                   "validation_error"};
  static const ErrorMapping kInvalidRequest{-32600, 400, "INVALID_ARGUMENT",
                                            "Request payload validation error", "validation_error"};
  static const ErrorMapping kMethod{-32601, 404, "NOT_FOUND", "Method not found", "not_found"};
  static const ErrorMapping kParams{-32602, 400, "INVALID_ARGUMENT", "Invalid parameters",
                                    "validation_error"};
  static const ErrorMapping kInternal{-32603, 500, "INTERNAL", "Internal error", "internal_error"};
  static const ErrorMapping kNotFound{-32001, 404, "NOT_FOUND", "Task not found", "not_found"};
  static const ErrorMapping kNotCancelable{-32002, 409, "FAILED_PRECONDITION",
                                           "Task cannot be canceled", "run_terminal"};
  static const ErrorMapping kPush{-32003, 400, "UNIMPLEMENTED",
                                  "Push Notification is not supported", "capability_required"};
  static const ErrorMapping kUnsupported{-32004, 400, "UNIMPLEMENTED",
                                         "This operation is not supported", "run_terminal"};
  static const ErrorMapping kContentType{-32005, 415, "INVALID_ARGUMENT",
                                         "Incompatible content types", "unsupported_media_type"};
  static const ErrorMapping kAgentResponse{-32006, 502, "INTERNAL", "Invalid agent response",
                                           "internal_error"};
  static const ErrorMapping kCard{-32007, 400, "FAILED_PRECONDITION",
                                  "Extended Agent Card not configured", "not_found"};
  static const ErrorMapping kExtension{-32008, 400, "FAILED_PRECONDITION",
                                       "Extension support required", "capability_required"};
  static const ErrorMapping kVersion{-32009, 400, "UNIMPLEMENTED", "Version not supported",
                                     "version_not_supported"};
  // A2A 1.1 (specification §3.3.2 of the dev-1.1 branch): 409 Conflict, gRPC ABORTED.
  static const ErrorMapping kGeneration{-32010, 409, "ABORTED", "Task generation mismatch",
                                        "conflict"};
  static const ErrorMapping kTooLarge{-32600, 413, "RESOURCE_EXHAUSTED", "Request body too large",
                                      "payload_too_large"};
  static const ErrorMapping kConflict{-32603, 409, "ABORTED", "Concurrent modification",
                                      "conflict"};
  static const ErrorMapping kUnavailable{-32603, 503, "UNAVAILABLE", "Service unavailable",
                                         "unavailable"};
  static const ErrorMapping kCorrupt{-32603, 500, "DATA_LOSS", "Stored record is unreadable",
                                     "record_unreadable"};
  // Authentication (issue 14): A2A names HTTP 401/403 and gRPC UNAUTHENTICATED /
  // PERMISSION_DENIED (WIRE.md §12) but no JSON-RPC code; these two are a2ad's, in the
  // server-defined range -32000..-32099, above A2A 1.1's -32010 and the pause extension's
  // -32011/-32012 (its seed RFC fixes those two).
  static const ErrorMapping kUnauthenticated{-32014, 401, "UNAUTHENTICATED",
                                             "Authentication required", "unauthenticated"};
  static const ErrorMapping kPermissionDenied{-32015, 403, "PERMISSION_DENIED", "Permission denied",
                                              "forbidden"};
  // Rate limits (issue 14): 429 with Retry-After; gRPC RESOURCE_EXHAUSTED; OpenWOP's
  // rate_limited (DIGEST §2.3).
  static const ErrorMapping kRateLimited{-32013, 429, "RESOURCE_EXHAUSTED", "Rate limit exceeded",
                                         "rate_limited"};
  // The pause extension (ext/pause, its seed RFC's table): a task whose state allows no pause
  // or resume, and a resume whose handle is not the open pause's. 409 / FAILED_PRECONDITION
  // like TaskNotCancelable.
  static const ErrorMapping kNotPausable{-32011, 409, "FAILED_PRECONDITION",
                                         "Task cannot be paused or resumed in its state",
                                         "conflict"};
  static const ErrorMapping kHandle{-32012, 409, "FAILED_PRECONDITION",
                                    "Resume handle does not match the task's pause", "conflict"};
  // The OPT extension (ext/opt, docs/OPT.md): the reference implementation's NOT_FOUND
  // (-32000); its INVALID_STATE is -32001, A2A's TaskNotFound, so a status change that cannot
  // be made is a2ad's -32016.
  static const ErrorMapping kOptNotFound{-32000, 404, "NOT_FOUND",
                                         "Objective, plan or plan task not found", "not_found"};
  static const ErrorMapping kOptStatus{-32016, 409, "FAILED_PRECONDITION",
                                       "Invalid status transition", "conflict"};
  switch (code) {
    case ErrorCode::kOptNotFound:
      return kOptNotFound;
    case ErrorCode::kOptInvalidStatus:
      return kOptStatus;
    case ErrorCode::kTaskNotPausable:
      return kNotPausable;
    case ErrorCode::kResumeHandleMismatch:
      return kHandle;
    case ErrorCode::kRateLimited:
      return kRateLimited;
    case ErrorCode::kUnauthenticated:
      return kUnauthenticated;
    case ErrorCode::kPermissionDenied:
      return kPermissionDenied;
    case ErrorCode::kParseError:
      return kParse;
    case ErrorCode::kInvalidRequest:
      return kInvalidRequest;
    case ErrorCode::kMethodNotFound:
      return kMethod;
    case ErrorCode::kInvalidParams:
      return kParams;
    case ErrorCode::kInternal:
      return kInternal;
    case ErrorCode::kTaskNotFound:
      return kNotFound;
    case ErrorCode::kTaskNotCancelable:
      return kNotCancelable;
    case ErrorCode::kPushNotificationNotSupported:
      return kPush;
    case ErrorCode::kUnsupportedOperation:
      return kUnsupported;
    case ErrorCode::kContentTypeNotSupported:
      return kContentType;
    case ErrorCode::kInvalidAgentResponse:
      return kAgentResponse;
    case ErrorCode::kExtendedCardNotConfigured:
      return kCard;
    case ErrorCode::kExtensionSupportRequired:
      return kExtension;
    case ErrorCode::kVersionNotSupported:
      return kVersion;
    case ErrorCode::kGenerationMismatch:
      return kGeneration;
    case ErrorCode::kPayloadTooLarge:
      return kTooLarge;
    case ErrorCode::kConflict:
      return kConflict;
    case ErrorCode::kUnavailable:
      return kUnavailable;
    case ErrorCode::kDataCorrupt:
      return kCorrupt;
  }
  return kInternal;
}

std::string_view V03ErrorName(core::ErrorCode code) {
  switch (MapError(code).jsonrpc_code) {
    case -32700:
      return "JSONParseError";
    case -32600:
      return "InvalidRequestError";
    case -32601:
      return "MethodNotFoundError";
    case -32602:
      return "InvalidParamsError";
    case -32001:
      return "TaskNotFoundError";
    case -32002:
      return "TaskNotCancelableError";
    case -32003:
      return "PushNotificationNotSupportedError";
    case -32004:
      return "UnsupportedOperationError";
    case -32005:
      return "ContentTypeNotSupportedError";
    case -32006:
      return "InvalidAgentResponseError";
    case -32007:
      return "AuthenticatedExtendedCardNotConfiguredError";
    case -32008:
      return "ExtensionSupportRequiredError";
    case -32009:
      return "VersionNotSupportedError";
    case -32010:
      return "TaskGenerationMismatchError";  // A2A 1.1's name; 0.3 has no such error
    case -32011:
      return "TaskNotPausableError";  // the pause extension's
    case -32012:
      return "ResumeHandleMismatchError";
    case -32013:
      return "RateLimitedError";
    case -32014:
      return "UnauthenticatedError";  // a2ad's (0.3 has no authentication errors)
    case -32015:
      return "PermissionDeniedError";
    case -32000:
      return "NotFoundError";  // the OPT extension's
    case -32016:
      return "InvalidStatusTransitionError";
    default:
      return "InternalError";
  }
}

namespace {
struct RestRow {
  std::string_view code;
  int status;
};
// Every OpenWOP error code a2ad answers with (DIGEST §2.3 and the codes its sections name).
constexpr RestRow kRestCodes[] = {
    {"validation_error", 400},
    {"webhook_url_rejected", 400},
    {"unsupported_stream_mode", 400},
    {"unauthenticated", 401},
    {"forbidden", 403},
    {"not_found", 404},
    {"interrupt_not_found", 404},
    {"subscription_not_found", 404},
    {"task_not_found", 404},
    {"method_not_allowed", 405},
    {"request_timeout", 408},
    {"conflict", 409},
    {"interrupt_already_resolved", 409},
    {"idempotency_key_mismatch", 409},
    {"run_terminal", 409},
    {"interrupt_expired", 410},
    {"interrupt_gone", 410},
    {"payload_too_large", 413},
    {"unsupported_media_type", 415},
    {"correlation_mismatch", 422},
    {"interrupt_cancelled", 422},
    {"capability_required", 422},
    {"version_not_supported", 400},
    {"request_header_too_large", 431},
    {"rate_limited", 429},
    {"internal_error", 500},
    {"record_unreadable", 500},
    {"unavailable", 503},
    {"service_unavailable", 503},
};
}  // namespace

std::optional<int> RestStatusOf(std::string_view rest_code) {
  for (const auto& row : kRestCodes)
    if (row.code == rest_code) return row.status;
  return std::nullopt;
}

RestError MapRestError(const core::Error& e) {
  for (const auto& [k, v] : e.details)
    if (k == "reason")
      if (auto status = RestStatusOf(v)) return RestError{v, *status};
  const ErrorMapping& m = MapError(e.code);
  return RestError{m.rest_code, *RestStatusOf(m.rest_code)};
}

}  // namespace a2ad::protocol

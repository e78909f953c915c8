#pragma once
// Protocol-neutral error vocabulary. Domain code returns Result<T> carrying an ErrorCode;
// protocol/error_table.hpp maps each code once to its JSON-RPC code, HTTP status and gRPC
// status (STYLE.md #3). Expected failures are values; exceptions are for bugs.
//
// Thread safety: plain values; ErrorCodeName is pure.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace a2ad::core {

enum class ErrorCode {
  kParseError,         // body is not JSON
  kInvalidRequest,     // JSON, but not a valid request envelope
  kMethodNotFound,     // unknown method or route
  kInvalidParams,      // a field is missing, has the wrong type or an invalid value
  kInternal,           // a bug or an unexpected storage failure
  kTaskNotFound,       // no such task (or not visible to the caller)
  kTaskNotCancelable,  // task is in a terminal state
  kPushNotificationNotSupported,
  kUnsupportedOperation,  // e.g. a message to a terminal task
  kContentTypeNotSupported,
  kInvalidAgentResponse,
  kExtendedCardNotConfigured,
  kExtensionSupportRequired,
  kVersionNotSupported,
  kGenerationMismatch,  // A2A 1.1 ifGenerationMatch: the task's generation is another
  kPayloadTooLarge,     // transport: request body past the configured limit
  kConflict,            // optimistic concurrency: the stored state moved under us
  kUnavailable,         // shutting down / store closed
  kDataCorrupt,  // a stored record cannot be read: it is skipped (quarantined), see `a2ad doctor`
  kUnauthenticated,       // no credential, or one that is unknown, revoked or expired (401)
  kPermissionDenied,      // authenticated, but the credential lacks the operation's scope (403)
  kRateLimited,           // the caller's request rate is past its limit (429, Retry-After)
  kTaskNotPausable,       // pause extension: the task's state allows no pause / resume (-32011)
  kResumeHandleMismatch,  // pause extension: the resume handle is not the open pause's (-32012)
  kOptNotFound,           // OPT extension: no objective, plan or plan task of that id (-32000)
  kOptInvalidStatus,      // OPT extension: a change of something finished, or of a derived status
};

/// One detail of an error: a key/value pair that ends up in ErrorInfo.metadata
/// (JSON-RPC `data`, REST `details`). Values are strings per google.rpc.ErrorInfo.
using ErrorDetail = std::pair<std::string, std::string>;

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::vector<ErrorDetail> details;

  Error() = default;
  Error(ErrorCode c, std::string msg, std::vector<ErrorDetail> d = {})
      : code(c), message(std::move(msg)), details(std::move(d)) {}

  /// The value of the first detail named `key`; "" when there is none.
  std::string_view Detail(std::string_view key) const {
    for (const auto& [k, v] : details)
      if (k == key) return v;
    return {};
  }
};

/// Short, stable name of a code, e.g. "TASK_NOT_FOUND" (used in logs and ErrorInfo.reason).
std::string_view ErrorCodeName(ErrorCode code);

}  // namespace a2ad::core

#include "a2ad/core/error.hpp"

namespace a2ad::core {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kParseError:
      return "PARSE_ERROR";
    case ErrorCode::kInvalidRequest:
      return "INVALID_REQUEST";
    case ErrorCode::kMethodNotFound:
      return "METHOD_NOT_FOUND";
    case ErrorCode::kInvalidParams:
      return "INVALID_PARAMS";
    case ErrorCode::kInternal:
      return "INTERNAL_ERROR";
    case ErrorCode::kTaskNotFound:
      return "TASK_NOT_FOUND";
    case ErrorCode::kTaskNotCancelable:
      return "TASK_NOT_CANCELABLE";
    case ErrorCode::kPushNotificationNotSupported:
      return "PUSH_NOTIFICATION_NOT_SUPPORTED";
    case ErrorCode::kUnsupportedOperation:
      return "UNSUPPORTED_OPERATION";
    case ErrorCode::kContentTypeNotSupported:
      return "CONTENT_TYPE_NOT_SUPPORTED";
    case ErrorCode::kInvalidAgentResponse:
      return "INVALID_AGENT_RESPONSE";
    case ErrorCode::kExtendedCardNotConfigured:
      return "EXTENDED_AGENT_CARD_NOT_CONFIGURED";
    case ErrorCode::kExtensionSupportRequired:
      return "EXTENSION_SUPPORT_REQUIRED";
    case ErrorCode::kVersionNotSupported:
      return "VERSION_NOT_SUPPORTED";
    case ErrorCode::kGenerationMismatch:
      return "TASK_GENERATION_MISMATCH";
    case ErrorCode::kPayloadTooLarge:
      return "PAYLOAD_TOO_LARGE";
    case ErrorCode::kConflict:
      return "CONFLICT";
    case ErrorCode::kUnavailable:
      return "UNAVAILABLE";
    case ErrorCode::kDataCorrupt:
      return "RECORD_UNREADABLE";
    case ErrorCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case ErrorCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case ErrorCode::kRateLimited:
      return "RATE_LIMITED";
    case ErrorCode::kTaskNotPausable:
      return "TASK_NOT_PAUSABLE";
    case ErrorCode::kResumeHandleMismatch:
      return "RESUME_HANDLE_MISMATCH";
    case ErrorCode::kOptNotFound:
      return "OPT_NOT_FOUND";
    case ErrorCode::kOptInvalidStatus:
      return "OPT_INVALID_STATUS_TRANSITION";
  }
  return "UNKNOWN";
}

}  // namespace a2ad::core

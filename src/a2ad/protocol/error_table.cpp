#include "a2ad/protocol/error_table.hpp"

namespace a2ad::protocol {

const ErrorMapping& MapError(core::ErrorCode code) {
  using core::ErrorCode;
  static const ErrorMapping kParse{-32700, 400, "INVALID_ARGUMENT", "Invalid JSON payload"};
  static const ErrorMapping kInvalidRequest{-32600, 400, "INVALID_ARGUMENT",
                                            "Request payload validation error"};
  static const ErrorMapping kMethod{-32601, 404, "NOT_FOUND", "Method not found"};
  static const ErrorMapping kParams{-32602, 400, "INVALID_ARGUMENT", "Invalid parameters"};
  static const ErrorMapping kInternal{-32603, 500, "INTERNAL", "Internal error"};
  static const ErrorMapping kNotFound{-32001, 404, "NOT_FOUND", "Task not found"};
  static const ErrorMapping kNotCancelable{-32002, 400, "FAILED_PRECONDITION",
                                           "Task cannot be canceled"};
  static const ErrorMapping kPush{-32003, 400, "FAILED_PRECONDITION",
                                  "Push Notification is not supported"};
  static const ErrorMapping kUnsupported{-32004, 400, "FAILED_PRECONDITION",
                                         "This operation is not supported"};
  static const ErrorMapping kContentType{-32005, 400, "INVALID_ARGUMENT",
                                         "Incompatible content types"};
  static const ErrorMapping kAgentResponse{-32006, 500, "INTERNAL", "Invalid agent response"};
  static const ErrorMapping kCard{-32007, 400, "FAILED_PRECONDITION",
                                  "Extended Agent Card not configured"};
  static const ErrorMapping kExtension{-32008, 400, "FAILED_PRECONDITION",
                                       "Extension support required"};
  static const ErrorMapping kVersion{-32009, 400, "FAILED_PRECONDITION", "Version not supported"};
  static const ErrorMapping kTooLarge{-32600, 413, "RESOURCE_EXHAUSTED", "Request body too large"};
  static const ErrorMapping kConflict{-32603, 409, "ABORTED", "Concurrent modification"};
  static const ErrorMapping kUnavailable{-32603, 503, "UNAVAILABLE", "Service unavailable"};
  switch (code) {
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
    case ErrorCode::kPayloadTooLarge:
      return kTooLarge;
    case ErrorCode::kConflict:
      return kConflict;
    case ErrorCode::kUnavailable:
      return kUnavailable;
  }
  return kInternal;
}

}  // namespace a2ad::protocol

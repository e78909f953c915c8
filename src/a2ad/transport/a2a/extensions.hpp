#pragma once
// A2A extensions this server supports (WIRE.md §15): each one is a URI with its agent-card
// entry (`capabilities.extensions[]`: uri, description, required, params), the operations it
// adds to the A2A operation table (a2a_operations.hpp; e.g. "objectives/create"), and how it
// rewrites a result for its callers. app/ builds one ExtensionRegistry before serving and hands
// it to the card and the bindings; the tables an extension keeps in the store are migrated by
// its module (ext/extension_module.hpp).
//
// Activation (WIRE.md §14-15): a client lists the URIs it wants in `A2A-Extensions` (v1.0) or
// `X-A2A-Extensions` (v0.3; both are read, either version), comma-separated, possibly over
// several header lines. Activate() parses that once per request into the CallContext:
// requested = every URI sent (trimmed, deduplicated, in order), activated = those this server
// supports (unsupported ones are ignored, as the spec asks). The binding echoes the activated
// set in the response header named for the call's version. An extension marked `required`
// that the caller did not activate refuses the call with ExtensionSupportRequired (-32008).
//
// Thread safety: Register before serving; afterwards immutable, every const method safe from
// any thread.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

struct Extension {
  std::string uri;  // absolute, versioned (a new URI for a breaking change)
  std::string description;
  bool required = false;
  boost::json::object params;         // the card entry's params ({} = none)
  std::vector<Operation> operations;  // their `extension` is set to `uri` on Register
  /// Rewrites a result or stream event (JSON of the call's shape) for a caller that activated
  /// the extension (e.g. a state only its callers can parse); unset: none.
  std::function<void(boost::json::value&, protocol::Wire)> view;
};

inline constexpr const char* kExtensionsHeader = "A2A-Extensions";
inline constexpr const char* kExtensionsHeaderV03 = "X-A2A-Extensions";

class ExtensionRegistry {
 public:
  /// Adds `ext`. An empty or repeated URI is a programming error: std::logic_error.
  void Register(Extension ext);

  /// The card's `capabilities.extensions` array; empty when none is registered.
  boost::json::array CardEntries() const;
  /// Every registered extension's operations, for the operation table.
  void AddOperations(OperationTable& table) const;

  /// Reads the extension headers of `request` into ctx.requested_extensions and
  /// ctx.activated_extensions (see above).
  void Activate(const HttpRequest& request, protocol::CallContext& ctx) const;
  /// kExtensionSupportRequired naming the first required extension ctx did not activate;
  /// nullopt when there is none.
  std::optional<core::Error> CheckRequired(const protocol::CallContext& ctx) const;
  /// The response header echoing ctx's activated extensions (name for ctx.version, value
  /// "a, b"); nullopt when none is active.
  static std::optional<std::pair<std::string, std::string>> EchoHeader(
      const protocol::CallContext& ctx);

  /// The rewrite of results and stream events (JSON text of ctx's shape) by the views of ctx's
  /// activated extensions; an empty function when none applies (the usual case: no cost).
  std::function<void(std::string&)> ViewFor(const protocol::CallContext& ctx) const;

  const std::vector<Extension>& extensions() const { return extensions_; }

 private:
  std::vector<Extension> extensions_;
};

}  // namespace a2ad::transport

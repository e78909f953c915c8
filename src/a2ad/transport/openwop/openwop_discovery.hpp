#pragma once
// The two documents OpenWOP discovery serves (openwop_api.hpp): GET /.well-known/openwop
// (DIGEST §1, its a2a block RFC 0100/0152) and GET /v1/openapi.json (openapi.json, compiled
// in). Both are built once, when the API is made.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/openwop/openwop_api.hpp"

namespace a2ad::transport {

/// The discovery document: root layout, honest flags, the loaded conformance fixtures.
boost::json::object Discovery(const OpenwopApiOptions& o,
                              const std::vector<tasks::SkillInfo>& skills);
/// The view of `discovery` a caller that presented a credential gets (RFC 0011, "Scoped
/// capability views"; advertised as discovery.authScoped same-endpoint): the families whose
/// operations need a scope `caller` has none of are left out; nothing is added, so a narrower
/// credential never sees more than a broader one.
boost::json::object ScopedDiscovery(boost::json::object discovery,
                                    const protocol::CallContext& caller);
/// The OpenAPI 3.1 description with this server's version and base URL.
std::string OpenApi(const OpenwopApiOptions& o);

}  // namespace a2ad::transport

#include "a2ad/app/oidc_setup.hpp"

#include "a2ad/core/log.hpp"
#include "a2ad/net/url_guard.hpp"

namespace a2ad::app {

core::Result<std::unique_ptr<transport::OidcVerifier>> OpenOidc(
    const Config& config, const net::HttpClient& client, const core::Clock& clock,
    boost::asio::any_io_executor executor) {
  auto bad = [](std::string why) {
    return core::Error(core::ErrorCode::kInvalidParams, std::move(why));
  };
  if (!config.OidcEnabled()) {
    if (!config.oidc_audience.empty() || !config.oidc_jwks_url.empty() ||
        !config.oidc_default_tenant.empty())
      return bad("--oidc-audience, --oidc-jwks-url and --oidc-default-tenant need --oidc-issuer");
    return std::unique_ptr<transport::OidcVerifier>();
  }
  if (config.oidc_audience.empty())
    return bad(
        "--oidc-audience is required with --oidc-issuer: the `aud` this server's tokens "
        "name (without it, a token the issuer made for any other service would be "
        "accepted)");
  const net::EgressPolicy& policy = client.guard().policy();
  for (const auto& [flag, url] :
       {std::pair<const char*, const std::string&>{"--oidc-issuer", config.oidc_issuer},
        {"--oidc-jwks-url", config.oidc_jwks_url}}) {
    if (url.empty()) continue;
    if (auto parsed = net::ParseUrl(url, policy); !parsed)
      return bad(std::string(flag) + ": " + parsed.error().message +
                 (policy.allow_http ? "" : " (plain http needs --egress-allow-http)"));
  }
  transport::OidcOptions options;
  options.issuer = config.oidc_issuer;
  options.audience = config.oidc_audience;
  options.jwks_url = config.oidc_jwks_url;
  options.tenant_claim = config.oidc_tenant_claim;
  options.scope_claim = config.oidc_scope_claim;
  options.principal_claim = config.oidc_principal_claim;
  options.default_tenant = config.oidc_default_tenant;
  options.leeway_s = config.oidc_leeway_s;
  auto verifier = transport::OidcVerifier::Create(options, client, clock, std::move(executor));
  if (!verifier) return bad("--oidc-*: " + verifier.error().message);
  core::LogInfo(
      "authentication: bearer JWTs of the OIDC issuer " + options.issuer + " for audience " +
      options.audience + " (keys from " +
      (options.jwks_url.empty() ? transport::OidcDiscoveryUrl(options.issuer) : options.jwks_url) +
      "), and API keys");
  (*verifier)->Start();
  return verifier;
}

}  // namespace a2ad::app

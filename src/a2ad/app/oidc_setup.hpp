#pragma once
// The OIDC issuer a server accepts bearer JWTs of (issue 14; transport/auth/oidc_verifier.hpp),
// from the --oidc-* flags: their checks at start (errors name the flag), the verifier over the
// server's one egress client, and its first key fetch in the background.
//
// Thread safety: call from the composition root (RunServer) before serving.
#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "a2ad/app/config.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/transport/auth/oidc_verifier.hpp"

namespace a2ad::app {

/// The verifier the configuration asks for, its first fetch started; nullptr without
/// --oidc-issuer. kInvalidParams naming the flag at fault (the caller exits 2): an issuer
/// without --oidc-audience, an issuer or --oidc-jwks-url that is not an absolute URL the
/// egress policy allows (https, or http with --egress-allow-http), an empty claim name, a
/// default tenant longer than 128 characters, or an --oidc-* flag given without an issuer.
core::Result<std::unique_ptr<transport::OidcVerifier>> OpenOidc(
    const Config& config, const net::HttpClient& client, const core::Clock& clock,
    boost::asio::any_io_executor executor);

}  // namespace a2ad::app

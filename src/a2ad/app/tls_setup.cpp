#include "a2ad/app/tls_setup.hpp"

#include "a2ad/core/log.hpp"

namespace a2ad::app {
using core::Error;
using core::ErrorCode;

core::Result<std::unique_ptr<ServingTls>> OpenServingTls(const Config& config) {
  auto invalid = [](std::string m) { return Error(ErrorCode::kInvalidParams, std::move(m)); };
  if (config.tls_cert.empty() != config.tls_key.empty())
    return invalid("TLS needs both --tls-cert and --tls-key");
  if (!config.Tls()) {
    if (!config.tls_client_ca.empty() || !config.tls_client_map.empty())
      return invalid("--tls-client-ca and --tls-client-map need --tls-cert and --tls-key");
    return std::unique_ptr<ServingTls>();
  }
  if (config.tls_client_ca.empty() != config.tls_client_map.empty())
    return invalid(
        "mutual TLS needs both --tls-client-ca (which certificates are verified) and "
        "--tls-client-map (who a verified certificate is)");
  auto out = std::make_unique<ServingTls>();
  auto pem = transport::LoadServerTls({config.tls_cert, config.tls_key, config.tls_client_ca});
  if (!pem) return std::move(pem).error();
  out->pem = std::move(pem).value();
  auto context = transport::MakeServerTlsContext(out->pem);
  if (!context) return std::move(context).error();
  out->context = std::move(context).value();
  if (config.MutualTls()) {
    auto map = transport::ClientCertMap::Load(config.tls_client_map);
    if (!map) return std::move(map).error();
    out->client_map = std::make_unique<transport::ClientCertMap>(std::move(map).value());
    core::LogInfo("mutual TLS: client certificates verified against '" + config.tls_client_ca +
                  "', " + std::to_string(out->client_map->size()) + " subject(s) mapped");
  }
  return out;
}

}  // namespace a2ad::app

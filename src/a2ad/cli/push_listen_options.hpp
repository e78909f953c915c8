#pragma once
// The `push listen` subcommand, the same in both executables (`a2ad push listen` and
// `a2a push listen`): options into push_listen::Config, run by push_listen::Run.
#include <CLI/CLI.hpp>

#include "a2ad/push_listen/push_listen.hpp"

namespace a2ad::cli {

inline CLI::App* AddPushListen(CLI::App& push, push_listen::Config& cfg) {
  CLI::App* listen = push.add_subcommand(
      "listen",
      "receive pushes, verify their JWT (JWKS, iss, aud, iat/exp, jti replay) and "
      "token, and print each as a JSON line");
  listen->add_option("--listen", cfg.listen, "address to receive on (port 0 = any)")
      ->capture_default_str();
  listen
      ->add_option("--jwks-url", cfg.jwks_url,
                   "the server's JWKS, e.g. http://127.0.0.1:8080/.well-known/jwks.json (fetched "
                   "from that host only, http allowed; tried 5 times at start)")
      ->required();
  listen->add_option("--token", cfg.token, "expected X-A2A-Notification-Token");
  listen->add_option("--issuer", cfg.issuer, "expected JWT iss (the server's base URL)");
  listen->add_option("--audience", cfg.audience,
                     "expected JWT aud (default: the URL this receiver prints)");
  listen->add_option("--max-age-s", cfg.max_age_s, "oldest iat accepted")->capture_default_str();
  return listen;
}

}  // namespace a2ad::cli

#pragma once
// `push listen` (`a2ad push listen`, `a2a push listen`): a webhook receiver for development
// that verifies the pushes an a2ad server sends and prints them (push_listen.cpp says how).
// A module of its own, so that the `a2a` client links it without the server.
//
// Thread safety: Run owns the calling thread until SIGINT/SIGTERM.
#include <cstdint>
#include <string>

namespace a2ad::push_listen {

struct Config {
  std::string program = "a2a";  // how it introduces itself: "a2a" or "a2ad" push listen
  std::string listen = "127.0.0.1:0";
  std::string jwks_url;  // http(s)://.../.well-known/jwks.json of the a2ad server
  std::string token;     // expected X-A2A-Notification-Token ("" = not checked)
  std::string issuer;    // expected iss ("" = not checked)
  std::string audience;  // expected aud ("" = the URL this receiver prints)
  int64_t max_age_s = 300;
};

/// Prints "<program> push listen: receiving on <url>" when ready, then one JSON line per
/// verified push on stdout; refused pushes get 401 and a line on stderr. Returns the exit
/// code.
int Run(const Config& config);

}  // namespace a2ad::push_listen

// a2ad_test_pki DIR: writes the certificates a test needs that cannot make them itself in
// C++ (the README example, the Node interop tests), made with the OpenSSL library
// (test_pki.hpp):
//   ca.pem                          the CA of the server certificate
//   server.pem, server-key.pem      a server certificate for localhost and 127.0.0.1
//   clients-ca.pem                  the CA of client certificates
//   client.pem, client-key.pem      a client certificate, subject CN=billing-agent,O=Acme
//   rogue-client.pem, rogue-client-key.pem   the same subject from another CA
#include <cstdio>
#include <exception>
#include <filesystem>

#include "test_pki.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: a2ad_test_pki DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  using a2ad::testing::WriteTextFile;
  try {
    const fs::path dir = argv[1];
    fs::create_directories(dir);
    a2ad::testing::TestPki server_ca("a2ad test server CA");
    a2ad::testing::TestPki client_ca("a2ad test client CA");
    a2ad::testing::TestPki rogue_ca("a2ad rogue CA");
    const auto server = server_ca.IssueServer();
    const auto client = client_ca.IssueClient("billing-agent", "Acme");
    const auto rogue = rogue_ca.IssueClient("billing-agent", "Acme");
    WriteTextFile(dir / "ca.pem", server_ca.ca_pem());
    WriteTextFile(dir / "server.pem", server.cert_pem);
    WriteTextFile(dir / "server-key.pem", server.key_pem);
    WriteTextFile(dir / "clients-ca.pem", client_ca.ca_pem());
    WriteTextFile(dir / "client.pem", client.cert_pem);
    WriteTextFile(dir / "client-key.pem", client.key_pem);
    WriteTextFile(dir / "rogue-client.pem", rogue.cert_pem);
    WriteTextFile(dir / "rogue-client-key.pem", rogue.key_pem);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a2ad_test_pki: %s\n", e.what());
    return 1;
  }
  return 0;
}

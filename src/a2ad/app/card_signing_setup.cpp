#include "a2ad/app/card_signing_setup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "a2ad/core/log.hpp"

namespace a2ad::app {
namespace fs = std::filesystem;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

// The text of `path`, or nullopt (errno kept) when it cannot be read.
std::optional<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

void WarnIfShared(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    core::LogWarn("card signing key " + path +
                  " is readable by group or others; it is a private key (chmod 600)");
}

Result<core::Es256PrivateKey> ReadKey(const std::string& path, ErrorCode code,
                                      const std::string& what) {
  auto text = ReadText(path);
  if (!text) return Error(code, what + ": cannot read " + path + ": " + std::strerror(errno));
  auto key = core::Es256PrivateKey::FromPem(*text);
  if (!key) return Error(code, what + ": " + path + ": " + key.error().message);
  WarnIfShared(path);
  return key;
}

// Writes `pem` to a fresh temporary file (0600, synced) and links it to `path`. false with a
// message when that fails; `lost` when `path` appeared meanwhile (another process made it).
bool PlaceKey(const std::string& path, const std::string& pem, bool& lost, std::string& why) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t off = 0;
  bool ok = true;
  while (ok && off < pem.size()) {
    const ssize_t n = ::write(fd, pem.data() + off, pem.size() - off);
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  if (!ok) why = "cannot write " + tmp + ": " + std::strerror(errno);
  ::close(fd);
  if (ok && ::link(tmp.c_str(), path.c_str()) != 0) {
    lost = errno == EEXIST;
    if (!lost) why = "cannot create " + path + ": " + std::strerror(errno);
    ok = false;
  }
  ::unlink(tmp.c_str());
  return ok;
}

}  // namespace

Result<std::optional<core::Es256PrivateKey>> OpenCardSigningKey(const Config& config,
                                                                storage::ServerKeys* server_keys) {
  if (!config.card_signing) return std::optional<core::Es256PrivateKey>();
  if (!config.card_signing_key.empty()) {
    auto key = ReadKey(config.card_signing_key, ErrorCode::kInvalidParams, "--card-signing-key");
    if (!key) return std::move(key).error();
    return std::optional(std::move(key).value());
  }
  if (server_keys) {
    std::string made;
    auto pem = server_keys->Secret(kCardSigningKeySecret, [&]() -> Result<std::string> {
      auto key = core::Es256PrivateKey::Generate();
      if (!key) return std::move(key).error();
      made = key->ToPem();
      return made;
    });
    if (!pem) {
      core::Error e = std::move(pem).error();
      e.message = "the card signing key in the database: " + e.message;
      return e;
    }
    auto key = core::Es256PrivateKey::FromPem(*pem);
    if (!key)
      return Error(ErrorCode::kInternal,
                   "the card signing key in the database does not read: " + key.error().message);
    if (*pem == made) core::LogInfo("made a card signing key (in the database)");
    return std::optional(std::move(key).value());
  }
  const std::string path = (fs::path(config.data_dir) / kCardSigningKeyFile).string();
  const std::string what = "the card signing key (remove the file to make a new one)";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    auto made = core::Es256PrivateKey::Generate();
    if (!made) return std::move(made).error();
    bool lost = false;
    std::string why;
    if (PlaceKey(path, made->ToPem(), lost, why)) {
      core::LogInfo("made a card signing key: " + path);
      return std::optional(std::move(made).value());
    }
    if (!lost) return Error(ErrorCode::kInternal, "card signing key: " + why);
    // Another process made it first: use theirs, below.
  }
  auto key = ReadKey(path, ErrorCode::kInternal, what);
  if (!key) return std::move(key).error();
  return std::optional(std::move(key).value());
}

}  // namespace a2ad::app

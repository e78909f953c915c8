#include "a2ad/push/key_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/object.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::push {
namespace json = boost::json;
namespace fs = std::filesystem;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Result<void> WriteFile0600(const fs::path& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(ErrorCode::kInternal, "cannot write " + path.string());
  ::fchmod(fd, 0600);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n <= 0) {
      ::close(fd);
      return Error(ErrorCode::kInternal, "cannot write " + path.string());
    }
    off += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  return core::Ok{};
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kInternal, "cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t DirMtimeNs(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

Result<void> WriteMeta(const fs::path& dir, const storage::RingKey& k) {
  json::object meta{
      {"kid", k.kid}, {"createdAtMs", k.created_at_ms}, {"retiredAtMs", k.retired_at_ms}};
  return WriteFile0600(dir / (k.kid + ".json"), protocol::SerializeJson(meta));
}

class KeyDirectory final : public storage::KeyRing {
 public:
  explicit KeyDirectory(std::string dir) : dir_(std::move(dir)) {}

  std::string Where() const override { return dir_; }

  Result<int64_t> Version() override { return DirMtimeNs(dir_); }

  Result<storage::RingSnapshot> Load() override {
    storage::RingSnapshot out;
    out.version = DirMtimeNs(dir_);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      if (entry.path().extension() != ".json") continue;
      auto meta_text = ReadFile(entry.path());
      if (!meta_text) return std::move(meta_text).error();
      auto parsed = protocol::ParseJson(*meta_text);
      const json::value meta = parsed ? std::move(parsed).value() : json::value();
      if (!meta.is_object() || !meta.as_object().contains("kid"))
        return Error(ErrorCode::kInternal, "malformed key file " + entry.path().string());
      storage::RingKey key;
      key.kid = std::string(meta.at("kid").as_string());
      key.created_at_ms = meta.at("createdAtMs").to_number<int64_t>();
      key.retired_at_ms = meta.at("retiredAtMs").to_number<int64_t>();
      fs::path pem = entry.path();
      pem.replace_extension(".pem");
      auto pem_text = ReadFile(pem);
      if (!pem_text) return std::move(pem_text).error();
      key.private_pem = std::move(pem_text).value();
      out.keys.push_back(std::move(key));
    }
    if (ec) return Error(ErrorCode::kInternal, "cannot list key directory " + dir_);
    std::sort(out.keys.begin(), out.keys.end(), [](const auto& a, const auto& b) {
      return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms : a.kid < b.kid;
    });
    return out;
  }

  Result<bool> Rotate(const storage::RingKey& fresh, bool only_if_none_active,
                      int64_t purge_before_ms) override {
    auto before = Load();
    if (!before) return std::move(before).error();
    const auto active = [](const storage::RingKey& k) { return k.retired_at_ms == 0; };
    if (only_if_none_active && std::any_of(before->keys.begin(), before->keys.end(), active))
      return false;
    const fs::path dir(dir_);
    if (auto w = WriteFile0600(dir / (fresh.kid + ".pem"), fresh.private_pem); !w)
      return std::move(w).error();
    storage::RingKey made = fresh;
    made.retired_at_ms = 0;
    // Metadata last: a key without its .json is never loaded.
    if (auto w = WriteMeta(dir, made); !w) return std::move(w).error();
    for (storage::RingKey k : before->keys) {
      if (!active(k)) continue;
      k.retired_at_ms = fresh.created_at_ms;
      if (auto w = WriteMeta(dir, k); !w) return std::move(w).error();
    }
    if (auto purged = Purge(purge_before_ms); !purged) return std::move(purged).error();
    return true;
  }

  Result<size_t> Purge(int64_t before_ms) override {
    auto keys = Load();
    if (!keys) return std::move(keys).error();
    size_t gone = 0;
    for (const auto& k : keys->keys) {
      if (k.retired_at_ms == 0 || k.retired_at_ms >= before_ms) continue;
      std::error_code ec;
      fs::remove(fs::path(dir_) / (k.kid + ".json"), ec);
      fs::remove(fs::path(dir_) / (k.kid + ".pem"), ec);
      ++gone;
    }
    return gone;
  }

 private:
  const std::string dir_;
};

}  // namespace

Result<std::unique_ptr<storage::KeyRing>> OpenKeyDirectory(std::string dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kInternal, "cannot create key directory " + dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return std::unique_ptr<storage::KeyRing>(std::make_unique<KeyDirectory>(std::move(dir)));
}

}  // namespace a2ad::push

#include <algorithm>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <cstdio>
#include <thread>

#include "a2ad/app/backends.hpp"
#include "a2ad/app/extension_modules.hpp"
#include "a2ad/app/server_parts.hpp"
#include "a2ad/app/server_secrets.hpp"
#include "a2ad/core/log.hpp"

#ifndef A2AD_VERSION
#define A2AD_VERSION "0.0.0"
#endif

namespace a2ad::app {
namespace asio = boost::asio;

int RunMigrate(const Config& config) {
  if (!EnsureDir(config.data_dir)) return 1;
  // The extensions' own tables too (what `serve` applies when it opens the store).
  return MigrateBackend(config, MakeExtensionModules(config).Migrations());
}

int RunKeysRotate(const Config& config) {
  if (!EnsureDir(config.data_dir)) return 1;
  core::SystemClock clock;
  // The keys are the database's when it keeps them (server_secrets.hpp); SQLite's are files,
  // rotated without opening a2ad.db.
  std::unique_ptr<storage::Backend> backend;
  if (!config.database_url.empty()) {
    auto opened = OpenBackend(config, BackendOptions{});
    if (!opened) {
      core::LogError("cannot open the database: " + opened.error().message);
      return opened.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
    }
    backend = std::move(opened).value();
  }
  int status = 0;
  {
    auto keys = OpenPushKeys(config, backend ? backend->Keys() : nullptr, clock, false);
    auto kid = keys ? (*keys)->Rotate() : core::Result<std::string>(keys.error());
    if (!kid) {
      core::LogError(kid.error().message);
      status = 1;
    } else {
      std::printf("a2ad: new push signing key %s in %s; retired keys stay in the JWKS for %lld s\n",
                  kid->c_str(), (*keys)->where().c_str(),
                  static_cast<long long>(config.push_token_ttl_s));
    }
  }
  if (backend) backend->Close();
  return status;
}

// The components of `a2ad serve`, in the order they are made and started (server_parts.hpp).
constexpr std::pair<const char*, Step> kComponents[] = {
    {"telemetry", TelemetryStep}, {"store", StoreStep},   {"auth", AuthStep},
    {"push", PushStep},           {"tasks", TasksStep},   {"http", HttpStep},
    {"workflows", WorkflowsStep}, {"surfaces", SurfacesStep}, {"grpc", GrpcStep},
    {"cards", CardsStep},         {"work", WorkStep},     {"replicas", ReplicasStep},
    {"serving", ServingStep},
};

int RunServer(const Config& config) { return RunServer(config, MakeExtensionModules(config)); }

int RunServer(const Config& config, ext::ExtensionModules modules) {
  Server s(config, std::move(modules));
  std::vector<Component> made;
  auto close_all = [&made] {
    for (auto it = made.rbegin(); it != made.rend(); ++it)
      if (it->close) it->close();
  };
  for (const auto& [name, step] : kComponents) {
    made.push_back(Component{name, {}, {}, {}, {}});
    if (const int code = step(s, made.back())) {
      close_all();
      return code;
    }
  }
  for (auto& c : made)
    if (c.start)
      if (auto started = c.start(); !started) {
        core::LogError(started.error().message);
        close_all();
        return 1;
      }

  // Ordered shutdown: the components stop in reverse order (stop accepting, take no new
  // work), the loop runs until all are drained or the grace runs out, then they close in
  // reverse order (the store last, draining its writer).
  asio::io_context& io = *s.io;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer drain(io);
  auto deadline = std::chrono::steady_clock::time_point::max();
  std::function<void()> poll = [&] {
    const bool drained = std::all_of(made.begin(), made.end(),
                                     [](const Component& c) { return !c.drained || c.drained(); });
    if (drained || std::chrono::steady_clock::now() >= deadline) {
      io.stop();
      return;
    }
    drain.expires_after(std::chrono::milliseconds(20));
    drain.async_wait([&](boost::system::error_code) { poll(); });
  };
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (ec) return;
    core::LogInfo(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                  "; shutting down");
    deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(config.shutdown_grace_ms);
    for (auto it = made.rbegin(); it != made.rend(); ++it)
      if (it->stop) it->stop();
    poll();
  });

  std::vector<std::thread> pool;
  for (size_t i = 1; i < s.threads; ++i)
    pool.emplace_back([&io, i] {
      core::SetThreadName("a2ad-io-" + std::to_string(i));
      io.run();
    });
  core::SetThreadName("a2ad-io-0");
  io.run();
  for (auto& t : pool) t.join();
  close_all();
  core::LogInfo("stopped");
  return 0;
}

}  // namespace a2ad::app

#include "a2ad/core/log.hpp"

#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace a2ad::core {
namespace {
spdlog::logger& Logger() {
  static auto logger = [] {
    auto l = spdlog::stderr_color_mt("a2ad");
    l->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    return l;
  }();
  return *logger;
}
}  // namespace

bool ParseLogLevel(std::string_view t, LogLevel& out) {
  if (t == "trace")
    out = LogLevel::kTrace;
  else if (t == "debug")
    out = LogLevel::kDebug;
  else if (t == "info")
    out = LogLevel::kInfo;
  else if (t == "warn")
    out = LogLevel::kWarn;
  else if (t == "error")
    out = LogLevel::kError;
  else if (t == "off")
    out = LogLevel::kOff;
  else
    return false;
  return true;
}

void SetLogLevel(LogLevel level) {
  static constexpr spdlog::level::level_enum kMap[] = {spdlog::level::trace, spdlog::level::debug,
                                                       spdlog::level::info,  spdlog::level::warn,
                                                       spdlog::level::err,   spdlog::level::off};
  Logger().set_level(kMap[static_cast<int>(level)]);
}

void LogDebug(std::string_view m) { Logger().debug("{}", m); }
void LogInfo(std::string_view m) { Logger().info("{}", m); }
void LogWarn(std::string_view m) { Logger().warn("{}", m); }
void LogError(std::string_view m) { Logger().error("{}", m); }

}  // namespace a2ad::core

namespace a2ad::core {

void SetThreadName(std::string_view name) {
  char buf[16] = {};
  name.copy(buf, sizeof buf - 1);
  pthread_setname_np(pthread_self(), buf);
}

}  // namespace a2ad::core

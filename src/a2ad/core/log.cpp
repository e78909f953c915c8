#include "a2ad/core/log.hpp"

#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace a2ad::core {
namespace {

std::atomic<LogFormat> format{LogFormat::kText};

spdlog::logger& Logger() {
  static auto logger = [] {
    auto l = spdlog::stderr_color_mt("a2ad");
    l->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    return l;
  }();
  return *logger;
}

spdlog::level::level_enum Level(LogLevel l) {
  static constexpr spdlog::level::level_enum kMap[] = {spdlog::level::trace, spdlog::level::debug,
                                                       spdlog::level::info,  spdlog::level::warn,
                                                       spdlog::level::err,   spdlog::level::off};
  return kMap[static_cast<int>(l)];
}

const char* LevelName(LogLevel l) {
  static constexpr const char* kNames[] = {"trace", "debug", "info", "warning", "error", "off"};
  return kNames[static_cast<int>(l)];
}

// JSON string contents of `s` (quotes, backslashes and control characters escaped).
void AppendEscaped(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

// A text value: bare when it has no space, quote, '=' or control character; else quoted.
void AppendTextValue(std::string& out, std::string_view s) {
  bool bare = !s.empty();
  for (unsigned char c : s)
    if (c <= ' ' || c == '"' || c == '=' || c == '\\') bare = false;
  if (bare) {
    out += s;
    return;
  }
  out += '"';
  AppendEscaped(out, s);
  out += '"';
}

void AppendValue(std::string& out, const LogField& f, bool json) {
  if (const auto* s = std::get_if<std::string_view>(&f.value)) {
    if (json) {
      out += '"';
      AppendEscaped(out, *s);
      out += '"';
    } else {
      AppendTextValue(out, *s);
    }
  } else if (const auto* i = std::get_if<int64_t>(&f.value)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&f.value)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", *d);
    out += buf;
  } else {
    out += std::get<bool>(f.value) ? "true" : "false";
  }
}

bool Skipped(const LogField& f) {
  const auto* s = std::get_if<std::string_view>(&f.value);
  return s && s->empty();
}

std::string NowIso() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return buf;
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

void SetLogLevel(LogLevel level) { Logger().set_level(Level(level)); }

bool ParseLogFormat(std::string_view t, LogFormat& out) {
  if (t == "text")
    out = LogFormat::kText;
  else if (t == "json")
    out = LogFormat::kJson;
  else
    return false;
  return true;
}

void SetLogFormat(LogFormat f) {
  format = f;
  // JSON lines carry their own time and level.
  if (f == LogFormat::kJson)
    Logger().set_pattern("%v");
  else
    Logger().set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
}

bool LogEnabled(LogLevel level) { return Logger().should_log(Level(level)); }

void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  std::string line;
  line.reserve(msg.size() + 32 * fields.size() + 64);
  if (format == LogFormat::kJson) {
    line += "{\"time\":\"";
    line += NowIso();
    line += "\",\"level\":\"";
    line += LevelName(level);
    line += "\",\"msg\":\"";
    AppendEscaped(line, msg);
    line += '"';
    for (const LogField& f : fields) {
      if (Skipped(f)) continue;
      line += ",\"";
      AppendEscaped(line, f.key);
      line += "\":";
      AppendValue(line, f, true);
    }
    line += '}';
  } else {
    line += msg;
    for (const LogField& f : fields) {
      if (Skipped(f)) continue;
      line += ' ';
      line += f.key;
      line += '=';
      AppendValue(line, f, false);
    }
  }
  Logger().log(Level(level), "{}", line);
}

void LogDebug(std::string_view m) { Log(LogLevel::kDebug, m, {}); }
void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m, {}); }
void LogWarn(std::string_view m) { Log(LogLevel::kWarn, m, {}); }
void LogError(std::string_view m) { Log(LogLevel::kError, m, {}); }

}  // namespace a2ad::core

namespace a2ad::core {

void SetThreadName(std::string_view name) {
  char buf[16] = {};
  name.copy(buf, sizeof buf - 1);
  pthread_setname_np(pthread_self(), buf);
}

}  // namespace a2ad::core

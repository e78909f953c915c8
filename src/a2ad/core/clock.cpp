#include "a2ad/core/clock.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace a2ad::core {

int64_t SystemClock::NowMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {
// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm, public domain idea).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
}  // namespace

std::string FormatTimestamp(int64_t epoch_ms) {
  // Civil date from days since 1970-01-01 (the inverse of DaysFromCivil above), formatted by
  // hand: this runs several times per commit, and gmtime_r + snprintf cost ~10x more.
  int64_t secs = epoch_ms >= 0 ? epoch_ms / 1000 : (epoch_ms - 999) / 1000;
  const int ms = static_cast<int>(epoch_ms - secs * 1000);
  int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
  const int64_t sod = secs - days * 86400;
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  if (y < 0 || y > 9999) {  // outside what four digits hold: the slow, general path
    std::time_t t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
  }
  std::string out(24, '0');
  auto put = [&out](size_t pos, int64_t v, int width) {
    for (int i = width - 1; i >= 0; --i, v /= 10)
      out[pos + static_cast<size_t>(i)] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  out[4] = '-';
  put(5, m, 2);
  out[7] = '-';
  put(8, d, 2);
  out[10] = 'T';
  put(11, sod / 3600, 2);
  out[13] = ':';
  put(14, sod / 60 % 60, 2);
  out[16] = ':';
  put(17, sod % 60, 2);
  out[19] = '.';
  put(20, ms, 3);
  out[23] = 'Z';
  return out;
}

bool ParseTimestamp(std::string_view s, int64_t& epoch_ms) {
  auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
  };
  int y, mo, d, h, mi, se;
  if (!digits(0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' ||
      !digits(8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(11, 2, h) ||
      s[13] != ':' || !digits(14, 2, mi) || s[16] != ':' || !digits(17, 2, se))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  size_t pos = 19;
  int frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 3) frac_ms = frac_ms * 10 + (s[pos] - '0');
      ++n;
      ++pos;
    }
    if (n == 0) return false;
    for (int i = n; i < 3; ++i) frac_ms *= 10;
  }
  int64_t offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(pos + 4, 2, om))
      return false;
    offset_min = (int64_t{oh} * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  }  // no zone: treat as UTC (SDK examples omit it)
  if (pos != s.size()) return false;
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  epoch_ms = ((days * 86400 + int64_t{h} * 3600 + int64_t{mi} * 60 + se) - offset_min * 60) * 1000 +
             frac_ms;
  return true;
}

}  // namespace a2ad::core

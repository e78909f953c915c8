#include "a2ad/client/sse_reader.hpp"

namespace a2ad::client {

bool SseReader::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (spent_) return false;
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {  // the LF of a CRLF
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      Line(line_, out);
      line_.clear();
      continue;
    }
    line_.push_back(c);
    if (line_.size() + data_.size() > max_) {
      spent_ = true;
      return false;
    }
  }
  return true;
}

void SseReader::Line(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {  // dispatch
    if (has_data_) {
      if (!data_.empty() && data_.back() == '\n') data_.pop_back();
      out.push_back(SseEvent{last_id_, event_, std::move(data_)});
    }
    data_.clear();
    event_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (a keep-alive)
  std::string_view field = line, value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    data_.append(value);
    data_.push_back('\n');
    has_data_ = true;
  } else if (field == "event") {
    event_ = value;
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_ = value;
  }
}

}  // namespace a2ad::client

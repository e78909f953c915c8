#include "sse_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <stdexcept>

#include "http_client.hpp"

namespace a2ad::testing {

boost::json::value SseEvent::Json() const { return StrictJson(data, "SSE data field"); }

SseClient::SseClient(const std::string& host, uint16_t port, const std::string& path,
                     const std::string& body,
                     std::vector<std::pair<std::string, std::string>> headers,
                     const std::string& method)
    : host_(host) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("connect failed");
  Write(path, body, headers, method);
  ReadHead();
}

void SseClient::Again(const std::string& path, const std::string& body,
                      std::vector<std::pair<std::string, std::string>> headers,
                      const std::string& method) {
  if (fd_ < 0 || !chunked_ || !ended_)
    throw std::runtime_error("the previous response is not over on an open connection");
  Write(path, body, headers, method);
  NextResponse();
}

void SseClient::NextResponse() {
  if (fd_ < 0 || !chunked_ || !ended_)
    throw std::runtime_error("the previous response is not over on an open connection");
  buf_ = std::exchange(raw_, {});  // what followed the last chunk: the next response
  ended_ = timed_out_ = chunked_ = false;
  body_left_.reset();
  status_ = 0;
  content_type_.clear();
  ReadHead();
}

void SseClient::Write(const std::string& path, const std::string& body,
                      const std::vector<std::pair<std::string, std::string>>& headers,
                      const std::string& method) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + host_ +
                    "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  if (::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    throw std::runtime_error("send failed");
}

void SseClient::ReadHead() {
  while (buf_.find("\r\n\r\n") == std::string::npos)
    if (!Fill(std::chrono::seconds(10))) throw std::runtime_error("no response head");
  size_t end = buf_.find("\r\n\r\n");
  std::string head = buf_.substr(0, end);
  buf_.erase(0, end + 4);
  status_ = std::stoi(head.substr(9, 3));
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string::npos) {
    pos += 2;
    size_t colon = head.find(':', pos);
    size_t eol = head.find("\r\n", pos);
    if (colon == std::string::npos) break;
    std::string name = head.substr(pos, colon - pos);
    std::string value =
        head.substr(colon + 2, (eol == std::string::npos ? head.size() : eol) - colon - 2);
    if (strcasecmp(name.c_str(), "content-type") == 0) content_type_ = value;
    if (strcasecmp(name.c_str(), "transfer-encoding") == 0 && value == "chunked") chunked_ = true;
    if (strcasecmp(name.c_str(), "content-length") == 0) body_left_ = std::stoul(value);
  }
  if (chunked_) {
    body_left_.reset();
    raw_ = std::exchange(buf_, {});
    Decode();
  } else if (body_left_) {
    *body_left_ -= std::min(*body_left_, buf_.size());
    if (*body_left_ == 0) ended_ = true;
  }
}

bool SseClient::Decode() {
  bool any = false;
  for (;;) {
    const size_t eol = raw_.find("\r\n");
    if (eol == std::string::npos) return any;
    const size_t size = std::stoul(raw_.substr(0, eol), nullptr, 16);
    if (size == 0) {
      if (raw_.size() < eol + 4) return any;  // the last chunk's closing CRLF
      raw_.erase(0, eol + 4);
      ended_ = true;
      return any;
    }
    if (raw_.size() < eol + 2 + size + 2) return any;
    buf_.append(raw_, eol + 2, size);
    raw_.erase(0, eol + 2 + size + 2);
    any = true;
  }
}

SseClient::~SseClient() { Close(); }

void SseClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool SseClient::Fill(std::chrono::milliseconds timeout) {
  for (;;) {
    if (fd_ < 0 || ended_) return false;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (r == 0) {
      timed_out_ = true;
      return false;
    }
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      ended_ = true;
      return false;
    }
    if (!chunked_) {
      buf_.append(tmp, static_cast<size_t>(n));
      if (body_left_) {
        *body_left_ -= std::min(*body_left_, static_cast<size_t>(n));
        if (*body_left_ == 0) ended_ = true;  // the whole body is here: the answer is over
      }
      return true;
    }
    raw_.append(tmp, static_cast<size_t>(n));
    if (Decode()) return true;
  }
}

std::string SseClient::ReadAll() {
  while (Fill(std::chrono::seconds(10))) {
  }
  return std::exchange(buf_, {});
}

std::optional<SseEvent> SseClient::Next(std::chrono::milliseconds timeout) {
  timed_out_ = false;
  for (;;) {
    size_t end = buf_.find("\n\n");
    if (end != std::string::npos) {
      std::string block = buf_.substr(0, end);
      buf_.erase(0, end + 2);
      SseEvent ev;
      bool any_field = false;
      size_t pos = 0;
      while (pos <= block.size()) {
        size_t eol = block.find('\n', pos);
        if (eol == std::string::npos) eol = block.size();
        std::string line = block.substr(pos, eol - pos);
        pos = eol + 1;
        if (line.empty()) continue;
        if (line[0] == ':') continue;
        any_field = true;
        size_t colon = line.find(':');
        std::string field = line.substr(0, colon);
        std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
        if (!value.empty() && value[0] == ' ') value.erase(0, 1);
        if (field == "id")
          ev.id = value;
        else if (field == "event")
          ev.event = value;
        else if (field == "data")
          ev.data += value;
      }
      if (!any_field) ev.comment = true;
      // Every SSE data field a test receives is checked like every JSON response.
      if (!ev.data.empty() && (ev.data[0] == '{' || ev.data[0] == '[')) (void)ev.Json();
      return ev;
    }
    if (!Fill(timeout)) return std::nullopt;
  }
}

std::vector<SseEvent> SseClient::ReadToEnd(std::chrono::milliseconds per_event) {
  std::vector<SseEvent> out;
  while (auto ev = Next(per_event)) {
    if (!ev->comment) out.push_back(std::move(*ev));
  }
  return out;
}

}  // namespace a2ad::testing

// The HTTP server's writes (http_server.cpp WriteAll, WriteMessage; ConnStream::TryWrite):
// what the socket takes at once is written directly and the rest asynchronously. These
// tests make the rest happen: answers and stream writes far larger than a small socket
// buffer, read slowly, must arrive whole and in order, and the connection must serve the
// next request after them.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/transport/http/http_server.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr size_t kBigBody = 8 * 1024 * 1024;
constexpr size_t kStreamWrites = 24;
constexpr size_t kStreamWriteSize = 256 * 1024;

// Bytes no two offsets of which repeat with a short period, so a skipped, doubled or
// reordered piece is seen.
std::string Pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  uint32_t x = 2463534242u ^ seed;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>('a' + x % 26);
  }
  return s;
}

class HttpWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.emplace(
        io_,
        [this](HttpRequest req) -> asio::awaitable<HttpResponse> {
          HttpResponse r;
          r.content_type = "text/plain";
          if (req.Path() == "/big") {
            r.body = Pattern(kBigBody, 1);
          } else if (req.Path() == "/stream") {
            r.stream = [](SseSink& sink) -> asio::awaitable<void> {
              for (size_t i = 0; i < kStreamWrites; ++i)
                if (!co_await sink.Write(Pattern(kStreamWriteSize, 100 + static_cast<unsigned>(i))))
                  co_return;
            };
          } else {
            r.body = "small";
          }
          co_return r;
        },
        HttpServerOptions{});
    auto port = server_->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = port.value();
    server_->Start();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    server_->Stop();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  // A client with a small receive buffer that reads slowly, so the server's socket fills.
  struct SlowClient {
    asio::io_context io;
    tcp::socket sock{io};
    std::string in;
    explicit SlowClient(uint16_t port) {
      sock.open(tcp::v4());
      sock.set_option(asio::socket_base::receive_buffer_size(4096));
      sock.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    }
    void Send(const std::string& bytes) { asio::write(sock, asio::buffer(bytes)); }
    // Reads until `in` holds at least `n` bytes, pausing between reads (the pause is the
    // point: the server must wait for this reader).
    void ReadAtLeast(size_t n) {
      char buf[16 * 1024];
      size_t since_pause = 0;
      while (in.size() < n) {
        const size_t got = sock.read_some(asio::buffer(buf));
        in.append(buf, got);
        if ((since_pause += got) >= 256 * 1024) {
          since_pause = 0;
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
    }
    // Sends another request on this connection and expects its whole answer.
    void ExpectNextRequestServed() {
      in.clear();
      Send("GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
      const size_t head_end = ReadHead();
      ReadAtLeast(head_end + 5);
      EXPECT_EQ(in.substr(head_end), "small");
    }
    // Reads one chunked-or-sized response head; returns the offset after it.
    size_t ReadHead() {
      for (;;) {
        if (auto end = in.find("\r\n\r\n"); end != std::string::npos) return end + 4;
        ReadAtLeast(in.size() + 1);
      }
    }
  };

  asio::io_context io_;
  std::optional<HttpServer> server_;
  uint16_t port_ = 0;
  std::vector<std::thread> threads_;
};

TEST_F(HttpWriteTest, AnAnswerLargerThanTheSocketTakesArrivesWholeAndTheConnectionGoesOn) {
  SlowClient c(port_);
  c.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  const size_t head_end = c.ReadHead();
  const std::string head = c.in.substr(0, head_end);
  ASSERT_NE(head.find("200 OK"), std::string::npos) << head;
  ASSERT_NE(head.find("Content-Length: " + std::to_string(kBigBody)), std::string::npos) << head;
  c.ReadAtLeast(head_end + kBigBody);
  ASSERT_EQ(c.in.size(), head_end + kBigBody);  // nothing after the body yet
  EXPECT_TRUE(c.in.compare(head_end, kBigBody, Pattern(kBigBody, 1)) == 0)
      << "the body differs from what was written";

  // The same connection serves the next request.
  c.ExpectNextRequestServed();
}

TEST_F(HttpWriteTest, StreamWritesLargerThanTheSocketTakesArriveWholeInOrder) {
  SlowClient c(port_);
  c.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  size_t at = c.ReadHead();
  ASSERT_NE(c.in.substr(0, at).find("Transfer-Encoding: chunked"), std::string::npos) << c.in;
  std::string expected;
  for (size_t i = 0; i < kStreamWrites; ++i)
    expected += Pattern(kStreamWriteSize, 100 + static_cast<unsigned>(i));
  // Each write is one chunk; then the last chunk.
  std::string body;
  for (;;) {
    size_t eol;
    while ((eol = c.in.find("\r\n", at)) == std::string::npos) c.ReadAtLeast(c.in.size() + 1);
    const size_t size = std::stoul(c.in.substr(at, eol - at), nullptr, 16);
    c.ReadAtLeast(eol + 2 + size + 2);
    ASSERT_EQ(c.in.substr(eol + 2 + size, 2), "\r\n");
    if (size == 0) {
      at = eol + 4;
      break;
    }
    EXPECT_EQ(size, kStreamWriteSize);
    body.append(c.in, eol + 2, size);
    at = eol + 2 + size + 2;
  }
  EXPECT_EQ(body.size(), expected.size());
  EXPECT_TRUE(body == expected) << "the stream's bytes differ from what was written";
  EXPECT_EQ(c.in.size(), at);

  // The stream ended with its last chunk: the connection serves the next request.
  c.ExpectNextRequestServed();
}

TEST_F(HttpWriteTest, ManyClientsReadingSlowlyAllGetTheirWholeAnswer) {
  // Several connections whose writes all go partly asynchronous at once, on two threads.
  std::vector<std::thread> clients;
  std::vector<int> ok(6, 0);
  for (size_t k = 0; k < ok.size(); ++k)
    clients.emplace_back([this, k, &ok] {
      SlowClient c(port_);
      c.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
      const size_t head_end = c.ReadHead();
      c.ReadAtLeast(head_end + kBigBody);
      ok[k] = c.in.size() == head_end + kBigBody &&
              c.in.compare(head_end, kBigBody, Pattern(kBigBody, 1)) == 0;
    });
  for (auto& t : clients) t.join();
  for (size_t k = 0; k < ok.size(); ++k) EXPECT_TRUE(ok[k]) << "client " << k;
}

}  // namespace
}  // namespace a2ad::transport

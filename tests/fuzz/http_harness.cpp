#include "http_harness.hpp"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/openwop/openwop_api.hpp"
#include "a2ad/transport/router.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/workflow_executor.hpp"
#include "a2ad/workflow/interrupt_token.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace asio = boost::asio;
using transport::HttpRequest;
using transport::HttpResponse;

namespace {

constexpr std::string_view kSeparator = "\n----\n";
constexpr int64_t kStartMs = 1767261600000;  // 2026-01-01T10:00:00.000Z, as the fixtures
constexpr size_t kMaxStreamWrites = 64;      // then the "client" stops reading

bool IsHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'))
      return false;
  return true;
}

HttpRequest ParseRecord(std::string_view rec, bool request_line) {
  HttpRequest r;
  auto next_line = [&rec]() {
    const size_t nl = rec.find('\n');
    std::string_view line = rec.substr(0, nl);
    rec = nl == std::string_view::npos ? std::string_view() : rec.substr(nl + 1);
    return line;
  };
  if (request_line) {
    std::string_view line = next_line();
    const size_t sp = line.find(' ');
    r.method = std::string(line.substr(0, sp));
    r.target = sp == std::string_view::npos ? std::string() : std::string(line.substr(sp + 1));
  } else {
    r.method = "POST";
    r.target = "/v1/a2a";
  }
  while (!rec.empty()) {
    const size_t nl = rec.find('\n');
    std::string_view line = rec.substr(0, nl);
    if (line.empty()) {  // the empty line ending the headers
      next_line();
      break;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsHeaderName(line.substr(0, colon))) break;
    std::string_view value = line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    r.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    next_line();
  }
  r.body = std::string(rec);
  return r;
}

// A2AD_FUZZ_TRACE=1: every request and answer on stderr (to read what an input does).
bool Tracing() {
  static const bool on = [] {
    const char* v = std::getenv("A2AD_FUZZ_TRACE");
    return v && std::string_view(v) == "1";
  }();
  return on;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// What every World shares, made once: the workflows, the push signing keys (a directory of
// their own, removed at exit).
struct Shared {
  std::vector<std::shared_ptr<const workflow::Workflow>> workflows;
  std::unique_ptr<push::KeyStore> keys;
  std::string key_dir;
  core::ManualClock key_clock{kStartMs};
  workflow::InterruptTokens tokens{"a2ad fuzz interrupt token secret, 32+ bytes long"};

  Shared() {
    const std::filesystem::path flows = std::filesystem::path(A2AD_SOURCE_DIR) / "workflows";
    auto loaded = workflow::LoadWorkflowDirs({flows, flows / "conformance"});
    FUZZ_CHECK(loaded.refusals.empty() && !loaded.workflows.empty(),
               "the workflows of " A2AD_SOURCE_DIR "/workflows do not all load");
    for (auto& w : loaded.workflows)
      workflows.push_back(std::make_shared<const workflow::Workflow>(std::move(w)));
    char dir[] = "/tmp/a2ad-fuzz-keys-XXXXXX";
    FUZZ_CHECK(::mkdtemp(dir) != nullptr, "mkdtemp failed");
    key_dir = dir;
    auto opened = push::KeyStore::Open(key_dir, key_clock, 3600 * 1000);
    FUZZ_CHECK(opened.ok(), opened.error().message);
    keys = std::move(opened).value();
  }
  ~Shared() {
    std::error_code ec;
    std::filesystem::remove_all(key_dir, ec);
  }
};

Shared& GetShared() {
  static Shared shared;
  return shared;
}

// Collects a stream's writes; refuses more than kMaxStreamWrites (a client that stopped
// reading) and remembers how to tell the stream its client is gone.
class CollectingSink final : public transport::SseSink {
 public:
  asio::awaitable<bool> Write(std::string bytes) override {
    if (writes_ >= kMaxStreamWrites) co_return false;
    ++writes_;
    text += bytes;
    co_return true;
  }
  void OnClientGone(std::function<void()> f) override { gone_.push_back(std::move(f)); }
  void OnServerStopping(std::function<void()>) override {}
  void Disconnect() {
    auto gone = std::move(gone_);
    for (auto& f : gone) f();
  }
  std::string text;

 private:
  size_t writes_ = 0;
  std::vector<std::function<void()>> gone_;
};

}  // namespace

std::vector<HttpRequest> SplitRequests(std::string_view input, bool request_line,
                                       size_t max_requests) {
  std::vector<HttpRequest> out;
  while (out.size() < max_requests) {
    const size_t sep = input.find(kSeparator);
    out.push_back(ParseRecord(input.substr(0, sep), request_line));
    if (sep == std::string_view::npos) break;
    input.remove_prefix(sep + kSeparator.size());
  }
  return out;
}

std::string JoinRequests(const std::vector<HttpRequest>& requests, bool request_line) {
  std::string out;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (i) out += kSeparator;
    const HttpRequest& r = requests[i];
    if (request_line) out += r.method + " " + r.target + "\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\n";
    if (!r.headers.empty() || (!r.body.empty() && r.body.find(':') != std::string::npos))
      out += "\n";
    out += r.body;
  }
  return out;
}

std::string PercentEncodeAll(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

struct World::Parts {
  Shared& shared = GetShared();
  core::ManualClock clock{kStartMs};
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;  // the task store and the push store
  asio::io_context io;
  // Push: only example.com resolves (to a public address); nothing is ever sent.
  net::StaticResolver resolver{{{"example.com", {"93.184.216.34"}}}};
  std::unique_ptr<net::UrlGuard> guard;
  std::unique_ptr<push::PushService> push;
  std::unique_ptr<tasks::TaskService> service;
  std::unique_ptr<transport::OpenwopApi> openwop;
  std::unique_ptr<transport::Router> router;
};

World::World(WorldOptions options) : parts_(std::make_unique<Parts>()) {
  Parts& p = *parts_;
  tasks::TaskServiceOptions svc;
  svc.read_threads = 0;  // reads inline: Poll() must see every answer before it returns
  if (options.push) {
    auto guard = net::UrlGuard::Create({}, p.resolver);
    FUZZ_CHECK(guard.ok(), guard.error().message);
    p.guard = std::make_unique<net::UrlGuard>(std::move(guard).value());
    p.push = std::make_unique<push::PushService>(p.store, p.store, *p.guard, p.clock, *p.ids);
    push::PushService* ps = p.push.get();
    svc.vet_push_config = [ps](protocol::PushNotificationConfig& c, const std::string& task_id) {
      return ps->Vet(c, task_id);
    };
    svc.on_commit = [ps](const storage::TaskRecord* previous, storage::TaskCommit& commit) {
      ps->OnCommit(previous, commit);
    };
  }
  p.service = std::make_unique<tasks::TaskService>(p.store, p.clock, *p.ids, p.io.get_executor(),
                                                   std::move(svc));
  p.service->RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                           std::make_shared<tasks::EchoExecutor>());
  if (options.openwop) {
    workflow::EngineOptions engine;
    engine.public_url = "http://a2ad.test";
    for (const auto& w : p.shared.workflows)
      p.service->RegisterSkill(
          {w->id, w->name, w->description, w->tags, w->examples, w->version, w->definition},
          std::make_shared<workflow::WorkflowExecutor>(w, *p.service, p.shared.tokens, p.clock,
                                                       engine));
    transport::OpenwopApiOptions ow;
    ow.base_url = "http://a2ad.test";
    ow.version = "0.0.0-fuzz";
    ow.push_notifications = options.push;
    ow.webhooks = options.push;
    ow.sample_seams = options.push;
    const workflow::InterruptTokens* tokens = &p.shared.tokens;
    p.openwop = std::make_unique<transport::OpenwopApi>(
        *p.service, p.clock,
        [tokens](std::string_view t) -> core::Result<transport::InterruptTokenInfo> {
          auto c = tokens->Verify(t);
          if (!c) return std::move(c).error();
          return transport::InterruptTokenInfo{c->run_id, c->node_id, c->interrupt_id, c->intent,
                                               c->expires_at_ms};
        },
        std::move(ow));
  }
  transport::AgentCardConfig card;
  card.version = "0.0.0-fuzz";
  card.base_url = "http://a2ad.test";
  card.push_notifications = options.push;
  transport::StreamOptions stream;
  stream.queue_limit = 16;
  p.router = std::make_unique<transport::Router>(
      *p.service, transport::BuildAgentCard(card, p.service->skills()), stream, "/v1/a2a",
      p.openwop.get());
  if (options.push) {
    p.router->EnablePush(*p.push, *p.shared.keys, p.store);
    // The seams' bodies are parsed here too; the claim probe (real threads and timers) is
    // left out: its route answers 404 once its body is read.
    p.router->EnableSampleSeams(std::make_unique<transport::SampleSeams>(p.push.get(), nullptr));
  }
}

World::~World() {
  // Nothing may be left waiting (a frame waiting on a signal would never be freed): cancel
  // every unfinished task, which settles every wait, then let it all run out.
  Parts& p = *parts_;
  // Every caller here is anonymous (tenant ""), so the anonymous context sees every task.
  const auto ctx =
      protocol::CallContext::Anonymous(protocol::Binding::kJsonRpc, protocol::WireVersion::kV10);
  std::vector<std::string> ids;
  asio::co_spawn(
      p.io,
      [&]() -> asio::awaitable<void> {
        storage::TaskQuery q;
        q.page_size = 100;
        for (;;) {
          auto page = co_await p.service->ListRecords(ctx, q);
          FUZZ_CHECK(page.ok(), page.error().message);
          for (const auto& rec : page->records)
            if (!protocol::IsTerminal(rec.task.status.state)) ids.push_back(rec.task.id);
          if (page->next_page_token.empty()) break;
          q.page_token = page->next_page_token;
        }
        for (const auto& id : ids)
          (void)co_await p.service->CancelRun(ctx, id, "fuzz world teardown");
      },
      asio::detached);
  Poll();
  FUZZ_CHECK(p.service->running_executions() == 0,
             std::to_string(p.service->running_executions()) +
                 " executions still running after every task was cancelled");
}

void World::Poll() {
  for (;;) {
    parts_->io.restart();
    if (parts_->io.poll() == 0) break;
  }
}

Exchange World::Call(HttpRequest request) {
  if (!last_token_.empty()) {
    ReplaceAll(request.target, "@TOKEN@", last_token_);
    ReplaceAll(request.body, "@TOKEN@", last_token_);
  }
  const bool trace = Tracing();
  if (trace)
    std::fprintf(stderr, ">>> %s %s\n%s\n", request.method.c_str(), request.target.c_str(),
                 request.body.c_str());
  auto ex = std::make_shared<Exchange>();
  asio::co_spawn(parts_->io, parts_->router->Handle(std::move(request)),
                 [ex](std::exception_ptr ep, HttpResponse r) {
                   if (ep) {
                     std::string what = "an exception escaped the handler";
                     try {
                       std::rethrow_exception(ep);
                     } catch (const std::exception& e) {
                       what += std::string(": ") + e.what();
                     } catch (...) {
                     }
                     FUZZ_CHECK(!ep, what);
                   }
                   ex->response = std::move(r);
                   ex->answered = true;
                 });
  Poll();
  parts_->clock.Advance(1000);
  if (ex->answered && ex->response.stream) DrainStream(*ex);
  if (trace) {
    if (!ex->answered)
      std::fprintf(stderr, "<<< (no answer yet)\n");
    else
      std::fprintf(stderr, "<<< %d %s\n%s\n", ex->response.status,
                   ex->response.content_type.c_str(), ex->response.body.c_str());
    for (const auto& e : ex->sse) std::fprintf(stderr, "<<< sse: %s\n", e.c_str());
  }
  const std::string& body = ex->response.body;
  if (const size_t at = body.find("\"interruptToken\":\""); at != std::string::npos) {
    const size_t start = at + 18;
    const size_t end = body.find('"', start);
    if (end != std::string::npos) last_token_ = body.substr(start, end - start);
  }
  return *ex;
}

void World::DrainStream(Exchange& ex) {
  CollectingSink sink;
  bool done = false;
  asio::co_spawn(parts_->io, ex.response.stream(sink), [&done](std::exception_ptr ep) {
    FUZZ_CHECK(!ep, "an exception escaped a stream");
    done = true;
  });
  Poll();
  if (!done) {  // waiting for events that will not come: the client leaves
    sink.Disconnect();
    Poll();
  }
  FUZZ_CHECK(done, "a stream did not end when its client disconnected");
  size_t pos = 0;
  while (pos < sink.text.size()) {
    size_t end = sink.text.find("\n\n", pos);
    if (end == std::string::npos) end = sink.text.size();
    ex.sse.push_back(sink.text.substr(pos, end - pos));
    pos = end + 2;
  }
}

}  // namespace a2ad::fuzz

// An extension as one registration (ext/extension_module.hpp): a module written here and added
// to the server's list of modules registers, through that one registration, a migration (its
// table exists once the store is open), a workflow node kind (a workflow using it loads and
// runs), an A2A operation and card entry (the card lists the extension, the operation answers
// over JSON-RPC) and a route. The server is the real one (app::RunServer with the default
// modules and this one), in a child process: node kinds are registered once per process.
#include "a2ad/ext/extension_module.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/app/extension_modules.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/sql.hpp"
#include "a2ad/workflow/run_steps.hpp"
#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad::ext {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kExampleUri = "https://example.test/ext/notes/v1";

// "example.greet": completes with {"greeting": "hello from a module"}.
class Greet final : public workflow::NodeKind {
 public:
  std::vector<tasks::EventDraft> Start(const workflow::NodeStep& step,
                                       const json::object&) const override {
    std::vector<tasks::EventDraft> out;
    out.push_back(
        workflow::Ev(protocol::kEvNodeStarted, step.node.id, workflow::StartedPayload(step.node)));
    workflow::CompleteNode(out, step.run_id, step.node,
                           json::object{{"greeting", "hello from a module"}});
    return out;
  }
};

// The module: a table with one row (its migration), the kind above, the operation
// "example/note" answering the row its services read from the table, and GET /example/hello.
class NotesModule final : public ExtensionModule {
 public:
  std::string_view Name() const override { return "notes"; }

  std::vector<storage::ComponentMigrations> Migrations() const override {
    storage::ComponentMigrations c;
    c.component = "example_notes";
    c.sqlite = {{1,
                 "CREATE TABLE example_notes (note TEXT NOT NULL) STRICT;"
                 "INSERT INTO example_notes VALUES ('written by the migration');"}};
    return {c};
  }

  std::vector<NodeKindEntry> NodeKinds() const override {
    std::vector<NodeKindEntry> kinds;
    kinds.push_back({"example.greet", std::make_unique<Greet>()});
    return kinds;
  }

  core::Result<void> OpenServices(const ServiceContext& ctx) override {
    return ctx.backend.Read([this](storage::sql::Tx& tx) -> core::Result<void> {
      auto rows = tx.Exec("SELECT note FROM example_notes");
      if (!rows) return std::move(rows).error();
      if (rows->size() != 1) return core::Error(core::ErrorCode::kInternal, "not one note");
      note_ = std::string(rows->Text(0, 0));
      return core::Ok{};
    });
  }

  core::Result<Surfaces> MakeSurfaces(const SurfaceContext&) override {
    transport::Extension e;
    e.uri = kExampleUri;
    e.description = "Notes, from a module of the test.";
    e.params = json::object{{"notes", 1}};
    transport::Operation op;
    op.name = "example/note";
    op.any_version = true;
    op.scope = transport::kScopeTasksRead;
    op.params = transport::ParamsRule::kObjectOrAbsent;
    op.handler = [note = note_](const transport::OperationCall&)
        -> boost::asio::awaitable<core::Result<transport::OperationResult>> {
      transport::OperationResult r;
      r.result_json = "{\"note\":\"" + note + "\"}";
      co_return r;
    };
    e.operations.push_back(std::move(op));
    Surfaces out;
    out.extensions.push_back(std::move(e));
    transport::Route hello;
    hello.name = "example hello";
    hello.access = transport::Route::Access::kPublic;
    hello.matches = [](const transport::HttpRequest& r) { return r.target == "/example/hello"; };
    hello.answer = [](transport::HttpRequest&) -> boost::asio::awaitable<transport::HttpResponse> {
      transport::HttpResponse res;
      res.status = 200;
      res.content_type = "text/plain";
      res.body = "hello";
      co_return res;
    };
    out.routes.push_back(std::move(hello));
    return out;
  }

 private:
  std::string note_;
};

// A workflow of one example.greet node.
constexpr const char* kGreetWorkflow = R"({
  "id": "greet", "name": "greet", "version": "1.0.0", "description": "a module's node kind",
  "metadata": {"tags": ["test"]}, "triggers": [], "variables": [],
  "settings": {"timeout": 0},
  "nodes": [{"id": "g", "typeId": "example.greet", "name": "greet",
             "position": {"x": 0, "y": 0}, "config": {}, "inputs": {}}],
  "edges": []
})";

// app::RunServer with the default modules and NotesModule, in a child process; the port from its
// ready line.
struct ChildServer {
  pid_t pid = -1;
  uint16_t port = 0;

  explicit ChildServer(const fs::path& dir) {
    fs::create_directories(dir / "workflows");
    std::ofstream(dir / "workflows" / "greet.json") << kGreetWorkflow;
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(stdout);
    pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      app::Config config;
      config.listen = "127.0.0.1:0";
      config.data_dir = (dir / "data").string();
      config.workflows_dir = (dir / "workflows").string();
      config.log_level = "warn";
      ExtensionModules modules = app::MakeExtensionModules(config);
      modules.Add(std::make_unique<NotesModule>());
      _exit(app::RunServer(config, std::move(modules)));
    }
    close(fds[1]);
    std::string out;
    char buf[256];
    ssize_t n = 0;
    while (out.find('\n') == std::string::npos && (n = read(fds[0], buf, sizeof buf)) > 0)
      out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    const auto colon = out.rfind(':', out.find("/.well-known"));
    if (colon == std::string::npos) throw std::runtime_error("no ready line: " + out);
    port = static_cast<uint16_t>(std::stoi(out.substr(colon + 1)));
  }
  ~ChildServer() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

class ExtensionModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("extension_module");
    server_ = std::make_unique<ChildServer>(dir_);
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_->port);
  }
  fs::path dir_;
  std::unique_ptr<ChildServer> server_;
  std::unique_ptr<testing::HttpClient> client_;
};

TEST_F(ExtensionModuleTest, OneRegistrationAddsItsCardEntryOperationMigrationNodeKindAndRoute) {
  // The card entry, after the default modules' (pause, then OPT: the list's order).
  auto card = client_->Request("GET", "/.well-known/agent-card.json").Json().as_object();
  const auto& entries = card.at("capabilities").at("extensions").as_array();
  ASSERT_EQ(entries.size(), 3u) << json::serialize(entries);
  EXPECT_EQ(entries[0].at("uri"), "https://a2ad.dev/ext/pause/v1");
  EXPECT_EQ(entries[1].at("uri"), "https://github.com/zeroasterisk/a2a-opt/v1");
  EXPECT_EQ(entries[2].at("uri"), kExampleUri);
  EXPECT_EQ(entries[2].at("params"), (json::object{{"notes", 1}}));

  // The operation, over the table its migration made and filled.
  auto answer = client_->Request(
      "POST", "/v1/a2a", R"({"jsonrpc":"2.0","id":1,"method":"example/note","params":{}})",
      Headers{{"Content-Type", "application/json"}, {"A2A-Extensions", kExampleUri}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.Json().at("result").at("note"), "written by the migration") << answer.body;

  // The node kind: the workflow using it loaded (a skill of the card) and runs to its end.
  bool listed = false;
  for (const auto& skill : card.at("skills").as_array()) listed |= skill.at("id") == "greet";
  EXPECT_TRUE(listed) << json::serialize(card.at("skills"));
  json::object message{{"messageId", "m-1"},
                       {"role", "user"},
                       {"parts", json::array{json::object{{"kind", "text"}, {"text", "hi"}}}},
                       {"metadata", json::object{{"skillId", "greet"}}}};
  auto sent = client_->Rpc("message/send", json::object{{"message", message}});
  const json::value* state = nullptr;
  if (const auto* result = sent.as_object().if_contains("result"))
    state = result->as_object().at("status").as_object().if_contains("state");
  ASSERT_NE(state, nullptr) << json::serialize(sent);
  EXPECT_EQ(*state, "completed") << json::serialize(sent);

  // The route.
  auto hello = client_->Request("GET", "/example/hello");
  EXPECT_EQ(hello.status, 200);
  EXPECT_EQ(hello.body, "hello");
}

}  // namespace
}  // namespace a2ad::ext

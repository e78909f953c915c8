// Loading workflow definitions (definition.cpp, and each node kind's Validate): refusals name
// their field; a directory loads what it can and names each refused file.
#include "a2ad/workflow/definition.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// ---- definition refusals -----------------------------------------------------------------------

core::Error Refusal(const json::object& doc) {
  auto w = ParseWorkflow(doc);
  if (w.ok()) {
    ADD_FAILURE() << "accepted: " << json::serialize(doc);
    return core::Error();
  }
  return w.error();
}

TEST(Definition, MissingNodesIsRefusedNamingTheField) {
  json::object doc = Doc(json::array{NodeDoc("n", "core.noop")});
  doc.erase("nodes");
  auto e = Refusal(doc);
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(e, "field"), "nodes");
  EXPECT_EQ(e.message.rfind("nodes", 0), 0u) << e.message;
  auto empty = Refusal(Doc(json::array{}));
  EXPECT_EQ(Detail(empty, "field"), "nodes");
}

TEST(Definition, UnknownTypeIdIsCapabilityRequired) {
  auto e = Refusal(Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "vendor.llm")}));
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(e, "reason"), "capability_required");
  EXPECT_EQ(Detail(e, "offendingTypeId"), "vendor.llm");
  EXPECT_EQ(Detail(e, "nodeId"), "b");
  EXPECT_EQ(Detail(e, "field"), "nodes[1].typeId");
  EXPECT_NE(e.message.find("nodes[1].typeId"), std::string::npos) << e.message;
}

TEST(Definition, CycleIsRefused) {
  auto e = Refusal(Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "core.noop")},
                       json::array{EdgeDoc("e1", "a", "b"), EdgeDoc("e2", "b", "a")}));
  EXPECT_EQ(Detail(e, "field"), "edges");
  EXPECT_NE(e.message.find("cycle"), std::string::npos) << e.message;
}

TEST(Definition, BadConditionTypeIsRefused) {
  json::object edge = EdgeDoc("e1", "a", "b");
  edge["condition"] = json::object{{"type", "expression"}, {"left", "x"}};
  auto e = Refusal(
      Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "core.noop")}, json::array{edge}));
  EXPECT_EQ(Detail(e, "field"), "edges[0].condition.type");
  EXPECT_NE(e.message.find("edges[0].condition.type"), std::string::npos) << e.message;
}

TEST(Definition, QuorumApprovalsLoadAndTheirUnservableFormsAreRefused) {
  // conformance-interrupt-quorum's gate loads.
  EXPECT_TRUE(
      ParseWorkflow(Doc(json::array{NodeDoc("gate", "core.approvalGate",
                                            json::object{{"requiredApprovals", 3},
                                                         {"rejectionPolicy", "majority"},
                                                         {"approversList", json::array()}})}))
          .ok());
  struct Row {
    json::object config;
    std::string field;
  };
  const std::vector<Row> rows = {
      {json::object{{"requiredApprovals", 0}}, "nodes[0].config.requiredApprovals"},
      {json::object{{"requiredApprovals", 2},
                    {"actions", json::array{"accept", "reject", "refine"}}},
       "nodes[0].config.actions"},
      {json::object{{"requiredApprovals", 3}, {"approversList", json::array{"k1", "k2"}}},
       "nodes[0].config.approversList"},
      {json::object{{"overrideBypassesQuorum", true}}, "nodes[0].config.overrideBypassesQuorum"},
      {json::object{{"rejectionPolicy", "all"}}, "nodes[0].config.rejectionPolicy"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.field);
    auto e = Refusal(Doc(json::array{NodeDoc("gate", "core.approvalGate", row.config)}));
    EXPECT_EQ(Detail(e, "field"), row.field);
    EXPECT_EQ(Detail(e, "nodeId"), "gate");
    EXPECT_NE(e.message.find(row.field), std::string::npos) << e.message;
  }
  // The same rules for an approval raised by core.interrupt.
  auto e = Refusal(Doc(json::array{
      NodeDoc("gate", "core.interrupt",
              json::object{{"kind", "approval"},
                           {"data", json::object{{"approverGroupRefs", json::array{1}}}}})}));
  EXPECT_EQ(Detail(e, "field"), "nodes[0].config.data.approverGroupRefs[0]");
}

TEST(Definition, OtherRefusalsNameTheirField) {
  struct Row {
    json::object doc;
    std::string field;
  };
  json::object no_id = Doc(json::array{NodeDoc("n", "core.noop")});
  no_id.erase("id");
  json::object bad_id = Doc(json::array{NodeDoc("n", "core.noop")});
  bad_id["id"] = "Has Spaces";
  std::vector<Row> rows = {
      {no_id, "id"},
      {bad_id, "id"},
      {Doc(json::array{NodeDoc("n", "core.noop"), NodeDoc("n", "core.noop")}), "nodes[1].id"},
      {Doc(json::array{NodeDoc("n", "core.noop")}, json::array{EdgeDoc("e", "n", "ghost")}),
       "edges[0].targetNodeId"},
      {Doc(json::array{NodeDoc("g", "core.approvalGate",
                               json::object{{"actions", json::array{"accept", "launch"}}})}),
       "nodes[0].config.actions"},
      {Doc(json::array{NodeDoc("q", "core.clarificationGate")}), "nodes[0].config.questions"},
      {Doc(json::array{NodeDoc("i", "core.interrupt", json::object{{"kind", "auth"}})}),
       "nodes[0].config.kind"},
      {Doc(json::array{NodeDoc("s", "core.subWorkflow")}), "nodes[0].config.workflowId"},
      {Doc(json::array{NodeDoc("n", "core.noop", {},
                               json::object{{"p", json::object{{"type", "expression"}}}})}),
       "nodes[0].inputs.p.type"},
      {Doc(json::array{NodeDoc("n", "core.noop")}, {}, {}, json::object{{"timeout", -1}}),
       "settings.timeout"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.field);
    auto e = Refusal(row.doc);
    EXPECT_EQ(Detail(e, "field"), row.field);
    EXPECT_EQ(e.message.rfind(row.field, 0), 0u) << e.message;
  }
}

std::filesystem::path RepoWorkflows() {
  return std::filesystem::path(A2AD_SOURCE_DIR) / "workflows";
}

TEST(Definition, EveryBundledWorkflowLoads) {
  size_t files = 0;
  for (const auto& dir : {RepoWorkflows(), RepoWorkflows() / "conformance"})
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".json") ++files;
  ASSERT_GT(files, 0u) << RepoWorkflows();
  LoadedWorkflows loaded = LoadWorkflowDirs({RepoWorkflows(), RepoWorkflows() / "conformance"});
  EXPECT_TRUE(loaded.refusals.empty()) << [&] {
    std::string all;
    for (const auto& r : loaded.refusals) all += r + "\n";
    return all;
  }();
  EXPECT_EQ(loaded.workflows.size(), files);
  std::set<std::string> ids;
  for (const auto& w : loaded.workflows) ids.insert(w.id);
  EXPECT_TRUE(ids.count("conformance-approval"));
  EXPECT_TRUE(ids.count("conformance-subworkflow-parent"));
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("a2ad-wf-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }

 private:
  std::filesystem::path path_;
};

TEST(Definition, ABadFileDoesNotStopTheGoodOnes) {
  TempDir dir;
  json::object good = Doc(json::array{NodeDoc("n", "core.noop")});
  good["id"] = "good";
  json::object bad = Doc(json::array{NodeDoc("n", "vendor.unknown")});
  bad["id"] = "bad";
  dir.Write("a-bad.json", json::serialize(bad));
  dir.Write("b-good.json", json::serialize(good));
  dir.Write("notes.txt", "not a workflow");
  LoadedWorkflows loaded = LoadWorkflowDir(dir.path());
  ASSERT_EQ(loaded.workflows.size(), 1u);
  EXPECT_EQ(loaded.workflows[0].id, "good");
  ASSERT_EQ(loaded.refusals.size(), 1u);
  EXPECT_NE(loaded.refusals[0].find("a-bad.json"), std::string::npos) << loaded.refusals[0];
  EXPECT_NE(loaded.refusals[0].find("nodes[0].typeId"), std::string::npos) << loaded.refusals[0];
}

TEST(Definition, DirectoryRefusalsNameTheFile) {
  TempDir dir;
  json::object a = Doc(json::array{NodeDoc("n", "core.noop")});
  a["id"] = "same";
  json::object parent = Doc(json::array{
      NodeDoc("call", "core.subWorkflow", json::object{{"workflowId", "missing-child"}})});
  parent["id"] = "parent";
  dir.Write("1.json", json::serialize(a));
  dir.Write("2.json", json::serialize(a));
  dir.Write("3.json", "{not json");
  dir.Write("4.json", json::serialize(parent));
  LoadedWorkflows loaded = LoadWorkflowDir(dir.path());
  ASSERT_EQ(loaded.workflows.size(), 1u);
  EXPECT_EQ(loaded.workflows[0].id, "same");
  ASSERT_EQ(loaded.refusals.size(), 3u);
  std::string all;
  for (const auto& r : loaded.refusals) all += r + "\n";
  EXPECT_NE(all.find("2.json: id:"), std::string::npos) << all;
  EXPECT_NE(all.find("3.json: not JSON"), std::string::npos) << all;
  EXPECT_NE(all.find("4.json: nodes:"), std::string::npos) << all;
  EXPECT_NE(all.find("missing-child"), std::string::npos) << all;
}
}  // namespace
}  // namespace a2ad::workflow

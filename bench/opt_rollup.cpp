// The cost of one plan task transition in the OPT store (bench/RESULTS-opt.md): an objective of
// N plan tasks (plans of up to 100) in a real SQLite file (WAL, synchronous=normal, the server's
// settings), each task moved pending -> working -> completed by OptStore::Update one at a
// time: every move loads the objective, rolls it up, writes what changed and its events in one
// transaction (the same path a linked task's commit takes). Prints the mean and p50/p99
// microseconds per transition for each N, and one `RESULT {json}` line each.
//
//   cmake --build --preset release -j2 --target a2ad_bench_opt_rollup
//   build/release/bench/a2ad_bench_opt_rollup [N ...]      (default: 10 100 1000)
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/storage/sqlite/sqlite_backend.hpp"

namespace {
namespace asio = boost::asio;
using namespace a2ad;
using ext::opt::Objective;
using ext::opt::OptStore;

template <class T>
T Run(asio::io_context& io, asio::awaitable<T> a) {
  auto f = asio::co_spawn(io, std::move(a), asio::use_future);
  io.restart();
  io.run();
  return f.get();
}

void Measure(int n) {
  const auto dir = std::filesystem::temp_directory_path() / ("a2ad-opt-rollup-" + std::to_string(n));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  storage::SqliteOptions opts;
  opts.components.push_back(OptStore::Migrations());
  auto db = storage::SqliteBackend::Open(dir.string(), opts);
  if (!db) {
    std::fprintf(stderr, "open: %s\n", db.error().message.c_str());
    return;
  }
  ext::opt::Limits limits;
  limits.max_tasks_per_plan = 100;
  limits.max_plans_per_objective = 1000;
  OptStore store(**db, limits);
  asio::io_context io;
  Objective o;
  o.id = "obj-bench";
  o.tenant = "default";
  o.owner = "bench";
  o.name = "bench";
  auto created = Run(io, store.Create(o));
  if (!created) {
    std::fprintf(stderr, "create: %s\n", created.error().message.c_str());
    return;
  }
  std::vector<std::string> ids;
  for (int p = 0; p * 100 < n; ++p) {
    ext::opt::PlanSpec spec;
    spec.name = "plan " + std::to_string(p);
    std::vector<std::string> task_ids;
    for (int i = 0; i < 100 && p * 100 + i < n; ++i) {
      ext::opt::TaskSpec t;
      t.name = "task " + std::to_string(p * 100 + i);
      if (i > 0) t.dependencies = {"task-" + std::to_string(i - 1)};
      spec.tasks.push_back(std::move(t));
      task_ids.push_back("task-b" + std::to_string(p * 100 + i));
    }
    ids.insert(ids.end(), task_ids.begin(), task_ids.end());
    const std::string plan_id = "plan-b" + std::to_string(p);
    auto added = Run(io, store.Update("default", OptStore::By::kObjective, o.id,
                                      [&](Objective& ob) {
                                        return ext::opt::AddPlan(ob, spec, plan_id, task_ids,
                                                                 limits, 1);
                                      },
                                      1));
    if (!added) {
      std::fprintf(stderr, "plan: %s\n", added.error().message.c_str());
      return;
    }
  }
  std::vector<double> us;
  us.reserve(ids.size() * 2);
  int64_t now = 2;
  for (const auto& id : ids)
    for (auto to : {ext::opt::TaskStatus::kWorking, ext::opt::TaskStatus::kCompleted}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto moved = Run(io, store.Update("default", OptStore::By::kTask, id,
                                        [&](Objective& ob) {
                                          return ext::opt::SetTaskStatus(ob, id, to, now);
                                        },
                                        now));
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                       .count());
      ++now;
      if (!moved) {
        std::fprintf(stderr, "move: %s\n", moved.error().message.c_str());
        return;
      }
    }
  double sum = 0;
  for (double v : us) sum += v;
  std::sort(us.begin(), us.end());
  const double mean = sum / static_cast<double>(us.size());
  const double p50 = us[us.size() / 2];
  const double p99 = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  std::printf("| %d | %zu | %.0f | %.0f | %.0f |\n", n, us.size(), mean, p50, p99);
  std::printf("RESULT {\"bench\":\"opt_rollup\",\"tasks\":%d,\"transitions\":%zu,\"mean_us\":%.1f,"
              "\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
              n, us.size(), mean, p50, p99);
  (*db)->Close();
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoi(argv[i]));
  if (sizes.empty()) sizes = {10, 100, 1000};
  std::printf("| plan tasks | transitions | mean µs | p50 µs | p99 µs |\n|---|---|---|---|---|\n");
  for (int n : sizes) Measure(n);
  return 0;
}

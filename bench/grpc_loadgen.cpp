// Closed-loop gRPC load generator for the gRPC scenarios in bench/RESULTS.md: the twin of
// bench/loadgen.cpp (HTTP) for lf.a2a.v1.A2AService, with the stubs of a2ad_proto.
//
// C call slots each run one RPC at a time, and start the next when it is done, as the HTTP
// generator's C keep-alive connections do; by default every slot has its own channel with a
// local subchannel pool, i.e. its own HTTP/2 connection (--channels N shares N connections
// among the slots instead). Calls use grpc++'s callback API (its own threads). Warm-up
// first, then a measured window of fixed length; every call completed inside the window is
// one latency sample. Output and probes are those of the HTTP generator (load_common.hpp).
//
//   a2ad_bench_grpcload --target 127.0.0.1:PORT --rpc send|get|stream --connections 16
//       [--channels N] [--warmup-s 1] [--duration-s 5] [--server-pid PID] [--seed 1000]
//       [--metadata 'a2a-version: 1.0']... [--label TEXT]
//
// send: SendMessage of a text message (unique message id), which must answer a task in
// TASK_STATE_COMPLETED. get: GetTask round-robin over the tasks --seed SendMessage calls
// created first (not measured), which must answer a completed task. stream:
// SendStreamingMessage; the call is complete (its latency sample taken) when the event that
// puts the task in TASK_STATE_COMPLETED arrives; the slot still reads the stream to its end
// (status OK) before its next call. Anything else counts in `unexpected` (or `errors` for a
// failed status). Loopback only.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "load_common.hpp"

namespace v1 = lf::a2a::v1;
using Clock = std::chrono::steady_clock;

namespace {

enum class Rpc { kSend, kGet, kStream };
enum Phase : int { kWarmup, kMeasure, kDone };

struct Options {
  std::string target;
  Rpc rpc = Rpc::kSend;
  int connections = 1;
  int channels = 0;  // 0: one per connection
  double warmup_s = 1;
  double duration_s = 5;
  int server_pid = 0;
  int seed = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string label;
};

constexpr const char* kText = "hello from the load generator";

struct Shared {
  const Options* opt = nullptr;
  std::vector<std::unique_ptr<v1::A2AService::Stub>> stubs;
  std::atomic<int> phase{kWarmup};
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> next_id{0};
  std::vector<std::string> ids;  // seeded task ids; written only while seeding
  std::mutex mu;                 // guards ids while seeding, running, first_error
  std::condition_variable cv;
  int running = 0;
  std::string first_error;

  void NoteError(const std::string& what) {
    std::lock_guard lock(mu);
    if (first_error.empty()) first_error = what;
  }
};

bool IsCompleted(const v1::Task& t) { return t.status().state() == v1::TASK_STATE_COMPLETED; }

// One closed loop of calls. Its calls run one at a time, so its fields need no lock: each
// call's completion happens-before the next call's start.
class Slot {
 public:
  Slot(Shared& s, v1::A2AService::Stub* stub, Rpc rpc, int count, bool collect)
      : s_(s), stub_(stub), rpc_(rpc), counted_(count >= 0), remaining_(count), collect_(collect) {}

  void Start() {
    {
      std::lock_guard lock(s_.mu);
      ++s_.running;
    }
    Next();
  }

  // A call is over: `ok` when it answered as expected; `t1` when its answer (or the stream's
  // final event) arrived.
  void Complete(Clock::time_point t0, Clock::time_point t1, bool failed, bool ok,
                std::string task_id) {
    if (failed)
      ++errors;
    else if (!ok)
      ++unexpected;
    if (collect_ && ok && !task_id.empty()) {
      std::lock_guard lock(s_.mu);
      s_.ids.push_back(std::move(task_id));
    }
    if (!counted_ && !failed) {  // a sample: an answer that arrived inside the window
      if (s_.phase.load() == kMeasure) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
        latencies_us.push_back(static_cast<uint32_t>(std::max<int64_t>(us, 0)));
      }
    }
    Next();
  }

  std::vector<uint32_t> latencies_us;
  uint64_t errors = 0, unexpected = 0;

 private:
  void Next();
  void Prepare(grpc::ClientContext& ctx) const {
    for (const auto& [k, v] : s_.opt->metadata) ctx.AddMetadata(k, v);
  }
  void FillSend(v1::SendMessageRequest& req) {
    char id[40];
    std::snprintf(id, sizeof id, "m-%016llu",
                  static_cast<unsigned long long>(s_.seq.fetch_add(1) + 1));
    auto* m = req.mutable_message();
    m->set_message_id(id);
    m->set_role(v1::ROLE_USER);
    m->add_parts()->set_text(kText);
  }

  friend class SendCall;
  friend class GetCall;
  friend class StreamCall;
  Shared& s_;
  v1::A2AService::Stub* stub_;
  Rpc rpc_;
  bool counted_;  // count mode (seeding): `remaining_` calls; else until the phase is kDone
  int remaining_;
  bool collect_;
};

class SendCall : public grpc::ClientUnaryReactor {
 public:
  explicit SendCall(Slot& slot) : slot_(slot) {
    slot.Prepare(ctx_);
    slot.FillSend(req_);
    t0_ = Clock::now();
    slot.stub_->async()->SendMessage(&ctx_, &req_, &resp_, this);
    StartCall();
  }
  void OnDone(const grpc::Status& st) override {
    const auto t1 = Clock::now();
    Slot& slot = slot_;
    const bool ok = st.ok() && resp_.has_task() && IsCompleted(resp_.task());
    if (!st.ok()) slot.s_.NoteError("SendMessage: " + st.error_message());
    if (st.ok() && !ok) slot.s_.NoteError("SendMessage answered " + resp_.ShortDebugString());
    std::string id = ok ? resp_.task().id() : std::string();
    const auto t0 = t0_;
    delete this;
    slot.Complete(t0, t1, !st.ok(), ok, std::move(id));
  }

 private:
  Slot& slot_;
  grpc::ClientContext ctx_;
  v1::SendMessageRequest req_;
  v1::SendMessageResponse resp_;
  Clock::time_point t0_;
};

class GetCall : public grpc::ClientUnaryReactor {
 public:
  explicit GetCall(Slot& slot) : slot_(slot) {
    slot.Prepare(ctx_);
    const auto& ids = slot.s_.ids;
    req_.set_id(ids[slot.s_.next_id.fetch_add(1) % ids.size()]);
    t0_ = Clock::now();
    slot.stub_->async()->GetTask(&ctx_, &req_, &resp_, this);
    StartCall();
  }
  void OnDone(const grpc::Status& st) override {
    const auto t1 = Clock::now();
    Slot& slot = slot_;
    const bool ok = st.ok() && resp_.id() == req_.id() && IsCompleted(resp_);
    if (!st.ok()) slot.s_.NoteError("GetTask: " + st.error_message());
    if (st.ok() && !ok) slot.s_.NoteError("GetTask answered " + resp_.ShortDebugString());
    const auto t0 = t0_;
    delete this;
    slot.Complete(t0, t1, !st.ok(), ok, {});
  }

 private:
  Slot& slot_;
  grpc::ClientContext ctx_;
  v1::GetTaskRequest req_;
  v1::Task resp_;
  Clock::time_point t0_;
};

class StreamCall : public grpc::ClientReadReactor<v1::StreamResponse> {
 public:
  explicit StreamCall(Slot& slot) : slot_(slot) {
    slot.Prepare(ctx_);
    slot.FillSend(req_);
    t0_ = Clock::now();
    slot.stub_->async()->SendStreamingMessage(&ctx_, &req_, this);
    StartRead(&event_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended: OnDone follows
    ++events_;
    bool completed = false;
    if (event_.has_status_update())
      completed = event_.status_update().status().state() == v1::TASK_STATE_COMPLETED;
    else if (event_.has_task())
      completed = IsCompleted(event_.task());
    if (completed && !final_) {
      final_ = true;
      t_final_ = Clock::now();
    }
    event_.Clear();
    StartRead(&event_);
  }
  void OnDone(const grpc::Status& st) override {
    Slot& slot = slot_;
    const bool ok = st.ok() && final_;
    if (!st.ok()) slot.s_.NoteError("SendStreamingMessage: " + st.error_message());
    if (st.ok() && !ok)
      slot.s_.NoteError("SendStreamingMessage ended after " + std::to_string(events_) +
                        " events without TASK_STATE_COMPLETED");
    const auto t0 = t0_;
    const auto t1 = final_ ? t_final_ : Clock::now();
    delete this;
    slot.Complete(t0, t1, !st.ok(), ok, {});
  }

 private:
  Slot& slot_;
  grpc::ClientContext ctx_;
  v1::SendMessageRequest req_;
  v1::StreamResponse event_;
  Clock::time_point t0_, t_final_;
  bool final_ = false;
  int events_ = 0;
};

void Slot::Next() {
  const bool more = counted_ ? remaining_-- > 0 : s_.phase.load() != kDone;
  if (!more) {
    std::lock_guard lock(s_.mu);
    --s_.running;
    s_.cv.notify_all();
    return;
  }
  switch (rpc_) {
    case Rpc::kSend:
      new SendCall(*this);
      break;
    case Rpc::kGet:
      new GetCall(*this);
      break;
    case Rpc::kStream:
      new StreamCall(*this);
      break;
  }
}

void WaitIdle(Shared& s) {
  std::unique_lock lock(s.mu);
  s.cv.wait(lock, [&] { return s.running == 0; });
}

void SleepFor(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void Usage() {
  std::fprintf(stderr,
               "usage: a2ad_bench_grpcload --target 127.0.0.1:PORT --rpc send|get|stream\n"
               "  [--connections C] [--channels N] [--warmup-s S] [--duration-s S]\n"
               "  [--server-pid PID] [--seed N] [--metadata 'key: value']... [--label TEXT]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage();
      return argv[++i];
    };
    if (a == "--target") {
      opt.target = next();
    } else if (a == "--rpc") {
      const auto r = next();
      if (r == "send")
        opt.rpc = Rpc::kSend;
      else if (r == "get")
        opt.rpc = Rpc::kGet;
      else if (r == "stream")
        opt.rpc = Rpc::kStream;
      else
        Usage();
    } else if (a == "--connections") {
      opt.connections = std::stoi(next());
    } else if (a == "--channels") {
      opt.channels = std::stoi(next());
    } else if (a == "--warmup-s") {
      opt.warmup_s = std::stod(next());
    } else if (a == "--duration-s") {
      opt.duration_s = std::stod(next());
    } else if (a == "--server-pid") {
      opt.server_pid = std::stoi(next());
    } else if (a == "--seed") {
      opt.seed = std::stoi(next());
    } else if (a == "--metadata") {
      auto m = next();
      auto colon = m.find(':');
      if (colon == std::string::npos) Usage();
      auto value = m.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      opt.metadata.emplace_back(m.substr(0, colon), value);
    } else if (a == "--label") {
      opt.label = next();
    } else {
      Usage();
    }
  }
  if (opt.target.empty() || opt.connections < 1 || opt.channels < 0) Usage();
  if (opt.target.rfind("127.0.0.1:", 0) != 0 && opt.target.rfind("[::1]:", 0) != 0) {
    std::fprintf(stderr, "loopback only: --target must be 127.0.0.1:PORT or [::1]:PORT\n");
    return 2;
  }
  if (opt.rpc == Rpc::kGet && opt.seed < 1) {
    std::fprintf(stderr, "--rpc get needs --seed N\n");
    return 2;
  }
  bench::RaiseFileLimit();

  Shared s;
  s.opt = &opt;
  const int channels = opt.channels > 0 ? opt.channels : opt.connections;
  for (int c = 0; c < channels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    auto channel = grpc::CreateCustomChannel(opt.target, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      std::fprintf(stderr, "cannot connect to %s\n", opt.target.c_str());
      return 1;
    }
    s.stubs.push_back(v1::A2AService::NewStub(channel));
  }

  // Seeding: the tasks GetTask reads (not measured), over at most 16 slots.
  std::vector<std::unique_ptr<Slot>> slots;
  if (opt.rpc == Rpc::kGet) {
    const int seeders = std::min(opt.seed, 16);
    for (int c = 0; c < seeders; ++c) {
      const int n = opt.seed / seeders + (c < opt.seed % seeders ? 1 : 0);
      slots.push_back(
          std::make_unique<Slot>(s, s.stubs[c % s.stubs.size()].get(), Rpc::kSend, n, true));
    }
    for (auto& slot : slots) slot->Start();
    WaitIdle(s);
    slots.clear();
    if (s.ids.empty()) {
      std::fprintf(stderr, "seeding created no tasks (%s)\n", s.first_error.c_str());
      return 1;
    }
    s.first_error.clear();
  }

  for (int c = 0; c < opt.connections; ++c)
    slots.push_back(
        std::make_unique<Slot>(s, s.stubs[c % s.stubs.size()].get(), opt.rpc, -1, false));
  for (auto& slot : slots) slot->latencies_us.reserve(1 << 16);
  for (auto& slot : slots) slot->Start();

  bench::Outcome out;
  SleepFor(opt.warmup_s);
  s.phase = kMeasure;
  const auto m0 = Clock::now();
  out.start = bench::Probe::Take(opt.server_pid);
  SleepFor(opt.duration_s);
  s.phase = kDone;
  const auto m1 = Clock::now();
  out.end = bench::Probe::Take(opt.server_pid);
  WaitIdle(s);

  if (!s.first_error.empty()) std::fprintf(stderr, "first error: %s\n", s.first_error.c_str());
  out.label = opt.label;
  out.connections = opt.connections;
  out.window_s = std::chrono::duration<double>(m1 - m0).count();
  out.server_pid = opt.server_pid;
  out.seeded = s.ids.size();
  for (auto& slot : slots) {
    out.latencies_us.insert(out.latencies_us.end(), slot->latencies_us.begin(),
                            slot->latencies_us.end());
    out.errors += slot->errors;
    out.unexpected += slot->unexpected;
  }
  bench::PrintResult(out);
  return 0;
}

#include "a2ad/tasks/subscription.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/protocol/encode.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;

const std::string& StreamItem::Json(protocol::Wire wire, protocol::Final final) const {
  if (!raw_json.empty()) return raw_json;
  // One slot per form: the v0.3 wires have `final`, v1.0 has not.
  const size_t slot = wire == protocol::Wire::kV10
                          ? 0
                          : 1 + 2 * (static_cast<size_t>(wire) - 1) + static_cast<size_t>(final);
  const auto bit = static_cast<uint8_t>(1u << slot);
  if (json_ready_.load(std::memory_order_acquire) & bit) return json_[slot];
  std::lock_guard lock(json_mu_);
  if (!(json_ready_.load(std::memory_order_relaxed) & bit)) {
    std::string text;
    protocol::AppendStreamEvent(text, event, wire, final);
    json_[slot] = std::move(text);
    json_ready_.fetch_or(bit, std::memory_order_release);
  }
  return json_[slot];
}

std::function<void()> Subscription::TakeWaiterLocked() { return std::exchange(waiter_, nullptr); }

void Subscription::Push(StreamItemPtr item) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    if (queue_.size() >= capacity_) {
      overflowed_ = true;
      closed_ = true;
      queue_.clear();
    } else {
      queue_.push_back(std::move(item));
    }
    wake = TakeWaiterLocked();
  }
  if (wake) wake();
}

void Subscription::Close() {
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    wake = TakeWaiterLocked();
  }
  if (wake) wake();
}

StreamItemPtr Subscription::TryNext() {
  std::lock_guard lock(mu_);
  if (queue_.empty()) return nullptr;
  StreamItemPtr item = std::move(queue_.front());
  queue_.pop_front();
  last_activity_ = Clock::now();
  return item;
}

bool Subscription::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool Subscription::overflowed() const {
  std::lock_guard lock(mu_);
  return overflowed_;
}

void Subscription::ArmHeartbeat(std::chrono::milliseconds heartbeat) {
  if (timer_armed_) return;
  Clock::time_point due;
  {
    std::lock_guard lock(mu_);
    due = last_activity_ + heartbeat;
  }
  timer_armed_ = true;
  timer_->expires_at(due);
  std::weak_ptr<Subscription> weak = weak_from_this();
  timer_->async_wait([weak, heartbeat](boost::system::error_code ec) {
    auto self = weak.lock();
    if (!self) return;
    self->timer_armed_ = false;
    if (ec) return;
    std::function<void()> wake;
    bool rearm = false;
    {
      std::lock_guard lock(self->mu_);
      if (self->closed_) return;
      if (Clock::now() - self->last_activity_ >= heartbeat) {
        self->heartbeat_due_ = true;
        wake = self->TakeWaiterLocked();
      } else {
        rearm = true;  // there was activity: the next keep-alive is due later
      }
    }
    if (wake) wake();
    if (rearm) self->ArmHeartbeat(heartbeat);
  });
}

asio::awaitable<StreamItemPtr> Subscription::Next(std::chrono::milliseconds heartbeat) {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        StreamItemPtr item = std::move(queue_.front());
        queue_.pop_front();
        last_activity_ = Clock::now();
        co_return item;
      }
      if (closed_) co_return nullptr;
      if (heartbeat_due_) {
        heartbeat_due_ = false;
        last_activity_ = Clock::now();
        co_return nullptr;
      }
    }
    if (!timer_) timer_.emplace(co_await asio::this_coro::executor);
    ArmHeartbeat(heartbeat);
    co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(
        [this](auto handler) {
          auto ex = asio::get_associated_executor(handler);
          auto held = std::make_shared<decltype(handler)>(std::move(handler));
          std::function<void()> resume = [ex, held] {
            asio::post(ex, [held]() mutable { std::move (*held)(); });
          };
          std::unique_lock lock(mu_);
          if (!queue_.empty() || closed_ || heartbeat_due_) {
            lock.unlock();
            resume();
          } else {
            waiter_ = std::move(resume);
          }
        },
        asio::use_awaitable);
  }
}

}  // namespace a2ad::tasks

#include "a2ad/tasks/subscription.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;

const std::string& StreamItem::Json(int kind) const {
  std::call_once(once_[kind], [&] {
    if (kind == 0) {
      json_[0] = boost::json::serialize(protocol::v10::StreamEventToJson(event));
    } else if (kind == 1) {
      json_[1] = boost::json::serialize(protocol::v03::StreamEventToJson(event));
    } else {
      protocol::StreamEvent copy = event;
      copy.status_update.final = false;
      json_[2] = boost::json::serialize(protocol::v03::StreamEventToJson(copy));
    }
  });
  return json_[kind];
}

void Subscription::WakeLocked() {
  if (waiting_ && timer_) {
    // The timer belongs to the consumer's executor: cancel it there.
    asio::post(timer_->get_executor(), [t = timer_] { t->cancel(); });
    waiting_ = false;
  }
}

void Subscription::Push(StreamItemPtr item) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  if (queue_.size() >= capacity_) {
    overflowed_ = true;
    closed_ = true;
    queue_.clear();
  } else {
    queue_.push_back(std::move(item));
  }
  WakeLocked();
}

void Subscription::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  WakeLocked();
}

bool Subscription::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool Subscription::overflowed() const {
  std::lock_guard lock(mu_);
  return overflowed_;
}

asio::awaitable<StreamItemPtr> Subscription::Next(std::chrono::milliseconds timeout) {
  auto ex = co_await asio::this_coro::executor;
  std::shared_ptr<asio::steady_timer> timer;
  {
    std::lock_guard lock(mu_);
    if (!queue_.empty()) {
      StreamItemPtr item = std::move(queue_.front());
      queue_.pop_front();
      co_return item;
    }
    if (closed_) co_return nullptr;
    if (!timer_) timer_ = std::make_shared<asio::steady_timer>(ex);
    timer_->expires_after(timeout);
    waiting_ = true;
    timer = timer_;
  }
  co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  std::lock_guard lock(mu_);
  waiting_ = false;
  if (queue_.empty()) co_return nullptr;
  StreamItemPtr item = std::move(queue_.front());
  queue_.pop_front();
  co_return item;
}

}  // namespace a2ad::tasks

#include "shared_state/redis_client.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <thread>
#include <unordered_map>

namespace td::shared_state {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

RedisReply convert(const redisReply* r) {
  if (!r) return RedisReply::error("connection lost");
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::string;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_NIL:
      out.type = RedisReply::Type::nil;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out = RedisReply::error("unexpected reply type");
  }
  return out;
}

// The hiredis context's socket, watched by Asio (hiredis' ev hooks). Lives
// until its context's cleanup and any wait still pending on it.
struct Watch : std::enable_shared_from_this<Watch> {
  Watch(asio::io_context& io, int fd, redisAsyncContext* ac) : sd(io, fd), ac(ac) {}
  asio::posix::stream_descriptor sd;
  redisAsyncContext* ac;
  bool want_read = false, want_write = false, read_armed = false, write_armed = false, closed = false;
  std::shared_ptr<Watch> self;  // held from attach to cleanup

  void arm_read() {
    if (closed || !want_read || read_armed) return;
    read_armed = true;
    sd.async_wait(asio::posix::stream_descriptor::wait_read, [w = shared_from_this()](boost::system::error_code ec) {
      w->read_armed = false;
      if (ec || w->closed || !w->want_read) return;
      redisAsyncHandleRead(w->ac);  // may free the context: cleanup sets `closed`
      w->arm_read();
    });
  }
  void arm_write() {
    if (closed || !want_write || write_armed) return;
    write_armed = true;
    sd.async_wait(asio::posix::stream_descriptor::wait_write, [w = shared_from_this()](boost::system::error_code ec) {
      w->write_armed = false;
      if (ec || w->closed || !w->want_write) return;
      redisAsyncHandleWrite(w->ac);
      w->arm_write();
    });
  }
  static Watch* of(void* p) { return static_cast<Watch*>(p); }
  static void add_read(void* p) { of(p)->want_read = true, of(p)->arm_read(); }
  static void del_read(void* p) { of(p)->want_read = false; }
  static void add_write(void* p) { of(p)->want_write = true, of(p)->arm_write(); }
  static void del_write(void* p) { of(p)->want_write = false; }
  static void cleanup(void* p) {
    Watch* w = of(p);
    w->closed = true;
    w->want_read = w->want_write = false;
    boost::system::error_code ignored;
    w->sd.cancel(ignored);
    w->sd.release();  // hiredis closes its own socket
    w->self.reset();  // the pending waits, if any, hold it until they run
  }
};

}  // namespace

struct RedisClient::Impl : std::enable_shared_from_this<Impl> {
  Impl(RedisClient& owner, config::QuotaStore ep, std::vector<std::string> scripts, Hooks hooks)
      : owner(owner), endpoint(std::move(ep)), scripts(std::move(scripts)), hooks(std::move(hooks)) {}

  RedisClient& owner;
  config::QuotaStore endpoint;
  std::vector<std::string> scripts, shas;
  Hooks hooks;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::thread thread;
  redisAsyncContext* ac = nullptr;
  bool connected = false;  // the socket is up (setup may still run)
  asio::steady_timer reconnect_timer{io}, deadline_timer{io};
  std::chrono::milliseconds backoff = kFirstBackoff;
  bool stopping = false;
  std::uint64_t next_id = 1;
  struct Pending {
    ReplyFn done;
    Clock::time_point deadline;
  };
  std::unordered_map<std::uint64_t, Pending> pending;
  std::deque<std::uint64_t> order;  // replies come in the order commands went

  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(endpoint.timeout_ms); }

  void connect() {
    if (stopping) return;
    redisAsyncContext* c = endpoint.socket.empty() ? redisAsyncConnect(endpoint.host.c_str(), endpoint.port)
                                                   : redisAsyncConnectUnix(endpoint.socket.c_str());
    if (!c || c->err) {
      std::string why = c ? c->errstr : "out of memory";
      if (c) redisAsyncFree(c);
      return lost("cannot connect: " + why);
    }
    c->data = this;
    auto w = std::make_shared<Watch>(io, c->c.fd, c);
    w->self = w;
    c->ev.data = w.get();
    c->ev.addRead = &Watch::add_read;
    c->ev.delRead = &Watch::del_read;
    c->ev.addWrite = &Watch::add_write;
    c->ev.delWrite = &Watch::del_write;
    c->ev.cleanup = &Watch::cleanup;
    redisAsyncSetConnectCallback(c, &Impl::on_connect);
    redisAsyncSetDisconnectCallback(c, &Impl::on_disconnect);
    ac = c;
    // The connection and its setup must not take longer than a second (or
    // the time-out, if longer): a silent address fails like a refused one.
    arm_deadline(Clock::now() + std::max<std::chrono::milliseconds>(timeout(), std::chrono::seconds(1)));
    w->add_write(w.get());  // the non-blocking connect completes as writable
  }

  static void on_connect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<Impl*>(c->data);
    if (status != REDIS_OK) {
      // hiredis frees the context after this callback.
      self->ac = nullptr;
      return self->lost(std::string("cannot connect: ") + (c->errstr ? c->errstr : "error"));
    }
    self->connected = true;
    self->setup();
  }

  static void on_disconnect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<Impl*>(c->data);
    if (self->ac != c) return;  // we dropped it ourselves
    self->ac = nullptr;
    self->lost(std::string("connection closed") + (status == REDIS_OK ? "" : std::string(": ") + c->errstr));
  }

  // AUTH, SELECT, then the scripts, before anyone else's command. A failed
  // step drops the connection; while a drop frees the context, hiredis fails
  // the steps still pending, which must not drop (and report "down") again.
  void setup() {
    auto step = std::make_shared<std::size_t>(0);
    if (!endpoint.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!endpoint.user.empty()) auth.push_back(endpoint.user);
      auth.push_back(endpoint.password);
      send(std::move(auth), [this](const RedisReply& r) {
        if (r.failed() && ac) drop("AUTH: " + r.str);
      });
    }
    if (endpoint.db)
      send({"SELECT", std::to_string(endpoint.db)}, [this](const RedisReply& r) {
        if (r.failed() && ac) drop("SELECT: " + r.str);
      });
    shas.assign(scripts.size(), std::string());
    auto left = std::make_shared<std::size_t>(scripts.size());
    auto finish = [this] {
      backoff = kFirstBackoff;
      owner.ready_.store(true, std::memory_order_release);
      if (hooks.ready) hooks.ready();
    };
    // Ready only once the server has answered AUTH and SELECT (replies come
    // in order): with no script to load, a PING's answer says so.
    if (scripts.empty())
      return send({"PING"}, [this, finish](const RedisReply& r) {
        if (!r.failed()) return finish();
        if (ac) drop("PING: " + r.str);  // else AUTH or SELECT dropped it already
      });
    for (std::size_t i = 0; i < scripts.size(); ++i)
      send({"SCRIPT", "LOAD", scripts[i]}, [this, i, left, finish](const RedisReply& r) {
        if (r.failed() || r.type != RedisReply::Type::string) {
          if (ac) drop("SCRIPT LOAD: " + r.str);  // no context: a drop is failing what it left pending
          return;
        }
        shas[i] = r.str;
        if (--*left == 0) finish();
      });
  }

  // On the client's thread: one command on the wire, its reply to `done`.
  void send(std::vector<std::string> argv, ReplyFn done) {
    if (!ac || !connected) return done(RedisReply::error("not connected"));
    const std::uint64_t id = next_id++;
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    for (const auto& a : argv) ptrs.push_back(a.data()), lens.push_back(a.size());
    const auto deadline = Clock::now() + timeout();
    pending.emplace(id, Pending{std::move(done), deadline});
    order.push_back(id);
    if (redisAsyncCommandArgv(ac, &Impl::on_reply, reinterpret_cast<void*>(id), int(argv.size()), ptrs.data(),
                              lens.data()) != REDIS_OK) {
      auto it = pending.find(id);
      ReplyFn f = std::move(it->second.done);
      pending.erase(it);
      std::erase(order, id);
      return f(RedisReply::error("cannot send"));
    }
    if (order.size() == 1) arm_deadline(deadline);
  }

  static void on_reply(redisAsyncContext* c, void* r, void* privdata) {
    auto* self = static_cast<Impl*>(c->data);
    self->complete(reinterpret_cast<std::uint64_t>(privdata), convert(static_cast<redisReply*>(r)));
  }

  void complete(std::uint64_t id, const RedisReply& reply) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    ReplyFn f = std::move(it->second.done);
    pending.erase(it);
    if (!order.empty() && order.front() == id)
      order.pop_front();
    else
      std::erase(order, id);
    if (!order.empty() && connected && owner.ready()) arm_deadline(pending.at(order.front()).deadline);
    f(reply);
  }

  void arm_deadline(Clock::time_point at) {
    deadline_timer.expires_at(at);
    deadline_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      if (!self->ac) return;
      if (!self->connected)
        return self->drop("no connection within " + std::to_string(std::max<long>(self->timeout().count(), 1000)) +
                          " ms");
      if (self->order.empty()) return;
      auto it = self->pending.find(self->order.front());
      if (it == self->pending.end()) return;
      if (Clock::now() >= it->second.deadline)
        self->drop("no answer within " + std::to_string(self->timeout().count()) + " ms");
      else
        self->arm_deadline(it->second.deadline);
    });
  }

  // Ends the connection: every pending command fails (hiredis calls them
  // back with no reply while it frees the context), then a reconnect.
  void drop(const std::string& why) {
    redisAsyncContext* c = std::exchange(ac, nullptr);
    if (c) {
      connected = false;
      owner.ready_.store(false, std::memory_order_release);
      redisAsyncFree(c);
    }
    lost(why);
  }

  void lost(const std::string& why) {
    connected = false;
    const bool was_ready = owner.ready_.exchange(false, std::memory_order_acq_rel);
    (void)was_ready;
    // Whatever hiredis did not call back (a context never connected) fails here.
    auto left = std::move(pending);
    pending.clear();
    order.clear();
    for (auto& [id, p] : left) p.done(RedisReply::error(why));
    if (hooks.down) hooks.down(why);
    if (stopping) return;
    reconnect_timer.expires_after(backoff);
    backoff = std::min(backoff * 2, kMaxBackoff);
    reconnect_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->ac) self->connect();
    });
  }
};

RedisClient::RedisClient(config::QuotaStore endpoint, std::vector<std::string> scripts, Hooks hooks)
    : impl_(std::make_shared<Impl>(*this, std::move(endpoint), std::move(scripts), std::move(hooks))) {}

RedisClient::~RedisClient() { stop(); }

void RedisClient::start() {
  if (impl_->thread.joinable()) return;
  impl_->thread = std::thread([impl = impl_] {
    asio::post(impl->io, [impl] { impl->connect(); });
    impl->io.run();
  });
}

void RedisClient::stop() {
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [impl = impl_] {
    impl->stopping = true;
    impl->reconnect_timer.cancel();
    impl->deadline_timer.cancel();
    if (redisAsyncContext* c = std::exchange(impl->ac, nullptr)) redisAsyncFree(c);
    impl->connected = false;
    auto left = std::move(impl->pending);
    impl->pending.clear();
    for (auto& [id, p] : left) p.done(RedisReply::error("stopping"));
    impl->work.reset();
    impl->io.stop();
  });
  impl_->thread.join();
  // The handlers the stop left queued (cancelled timers and waits) hold the
  // Impl: run them now, so the Impl and its io_context are freed together.
  impl_->io.restart();
  impl_->io.poll();
  ready_.store(false);
}

void RedisClient::command(std::vector<std::string> argv, ReplyFn done) {
  asio::post(impl_->io, [impl = impl_, argv = std::move(argv), done = std::move(done)]() mutable {
    if (!impl->owner.ready()) return done(RedisReply::error("not connected"));
    impl->send(std::move(argv), std::move(done));
  });
}

void RedisClient::evalsha(std::size_t script, std::vector<std::string> keys, std::vector<std::string> args,
                          ReplyFn done) {
  asio::post(impl_->io,
             [impl = impl_, script, keys = std::move(keys), args = std::move(args), done = std::move(done)]() mutable {
               if (!impl->owner.ready()) return done(RedisReply::error("not connected"));
               auto argv = [&](std::string verb, std::string body) {
                 std::vector<std::string> v{std::move(verb), std::move(body), std::to_string(keys.size())};
                 v.insert(v.end(), keys.begin(), keys.end());
                 v.insert(v.end(), args.begin(), args.end());
                 return v;
               };
               auto eval = argv("EVAL", impl->scripts.at(script));
               impl->send(argv("EVALSHA", impl->shas.at(script)),
                          [impl, eval = std::move(eval), done = std::move(done)](const RedisReply& r) mutable {
                            // The server's script cache was flushed: the source once more.
                            if (r.failed() && r.str.starts_with("NOSCRIPT"))
                              return impl->send(std::move(eval), std::move(done));
                            done(r);
                          });
             });
}

std::string RedisClient::describe() const {
  const auto& e = impl_->endpoint;
  if (!e.socket.empty()) return "unix://" + e.socket + (e.db ? "?db=" + std::to_string(e.db) : "");
  return "redis://" + e.host + ":" + std::to_string(e.port) + "/" + std::to_string(e.db);
}

}  // namespace td::shared_state

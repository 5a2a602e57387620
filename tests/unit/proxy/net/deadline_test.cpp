#include <doctest/doctest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>

#include "proxy/net/deadline.hpp"
#include "proxy/net/worker.hpp"

using namespace td::proxy;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

TEST_CASE("Deadline arms its slot for the scope and clears it on every way out") {
  IoDeadline slot;
  slot.timed_out = true;  // left over from an earlier operation
  {
    const auto before = IoDeadline::clock::now();
    Deadline d(slot, 1500ms);
    CHECK(slot.at >= before + 1500ms);
    CHECK(slot.at <= IoDeadline::clock::now() + 1500ms);
    CHECK_FALSE(slot.timed_out);
  }
  CHECK(slot.at == IoDeadline::kNever);

  // Leaving by an exception clears it too.
  try {
    Deadline d(slot, 10ms);
    throw 1;
  } catch (int) {
  }
  CHECK(slot.at == IoDeadline::kNever);
}

namespace {

// A connected pair of sockets on `ioc`.
std::pair<tcp::socket, tcp::socket> socket_pair(asio::io_context& ioc) {
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket a(ioc), b(ioc);
  a.connect(acceptor.local_endpoint());
  acceptor.accept(b);
  return {std::move(a), std::move(b)};
}

}  // namespace

TEST_CASE("the worker's sweep cancels a read whose Deadline passed, and none after its guard is gone") {
  Server server(nullptr);
  Worker w(server);
  auto sockets = socket_pair(w.ioc);  // not a structured binding: clang 14 cannot capture one
  tcp::socket& far = sockets.second;
  boost::beast::tcp_stream stream(std::move(sockets.first));
  SessionHandle handle;
  handle.stream = &stream;
  w.sessions.insert(&handle);
  asio::co_spawn(w.ioc, sweep_timeouts(w), asio::detached);

  constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
  boost::system::error_code cut_ec, quick_ec, unguarded_ec;
  bool cut_timed_out = false;
  std::chrono::milliseconds cut_took{0};
  asio::steady_timer peer(w.ioc);
  asio::co_spawn(
      w.ioc,
      [&]() -> asio::awaitable<void> {
        char byte;
        // 1. Nothing comes: the sweep cuts the read after its deadline.
        auto t0 = IoDeadline::clock::now();
        {
          Deadline d(handle.client_io, 100ms);
          auto [ec, n] = co_await stream.async_read_some(asio::buffer(&byte, 1), nothrow);
          cut_ec = ec;
        }
        cut_took = std::chrono::duration_cast<std::chrono::milliseconds>(IoDeadline::clock::now() - t0);
        cut_timed_out = handle.client_io.timed_out;
        // 2. A read that ends well before its deadline...
        asio::write(far, asio::buffer("x", 1));
        {
          Deadline d(handle.client_io, 200ms);
          auto [ec, n] = co_await stream.async_read_some(asio::buffer(&byte, 1), nothrow);
          quick_ec = ec;
        }
        // 3. ...leaves nothing armed behind: a read without a guard waits
        // past that deadline for the byte the peer sends later.
        peer.expires_after(200ms + 3 * kSweepPeriod);
        peer.async_wait([&](auto) { asio::write(far, asio::buffer("y", 1)); });
        auto [ec, n] = co_await stream.async_read_some(asio::buffer(&byte, 1), nothrow);
        unguarded_ec = ec;
        w.ioc.stop();
      },
      asio::detached);
  w.ioc.run_for(5s);
  w.sessions.erase(&handle);

  CHECK(cut_ec == asio::error::operation_aborted);
  CHECK(cut_timed_out);
  CHECK(cut_took >= 100ms);
  CHECK(cut_took < 100ms + 3 * kSweepPeriod);
  CHECK_FALSE(quick_ec);
  CHECK_FALSE(unguarded_ec);  // the peer's byte, not a cancel
}

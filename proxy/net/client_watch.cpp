// The client watcher. A wait for readability on the client socket: the
// request was read whole, so readable means the client closed (EOF or an
// error: it went away, and the upstream request is cancelled by closing its
// connection) or pipelined its next request (then stop watching). A plain
// handler, not a coroutine. The worker's sweep registers it
// (SessionHandle::watch_due), so a request answered before the next sweep
// registers nothing.
#include <sys/socket.h>

#include <cerrno>

#include "proxy/net/client_session.hpp"

namespace td::proxy {

using tcp = boost::asio::ip::tcp;

void ClientSession::start_watch() {
  io_.client_gone = false;
  watching_ = true;
  handle_.watch_due = !watch_pending_;
}

void ClientSession::register_watch() {
  if (!watching_ || watch_pending_) return;
  watch_pending_ = true;
  client_.socket().async_wait(tcp::socket::wait_read, [this, alive = alive_](const boost::system::error_code& ec) {
    if (*alive) on_watch(ec);
  });
}

void ClientSession::on_watch(const boost::system::error_code& ec) {
  watch_pending_ = false;
  if (!watching_) return;
  if (ec == boost::asio::error::operation_aborted) {
    // The cancel of an earlier request's watch, run after this request
    // started watching: the sweep registers a new one.
    handle_.watch_due = true;
    return;
  }
  if (!ec) {
    char byte;
    ssize_t n = ::recv(client_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      register_watch();  // not really readable: keep watching
      return;
    }
    if (n > 0) return;  // a pipelined request: the client is still there
  }
  client_went_away();
}

void ClientSession::client_went_away() {
  io_.client_gone = true;
  watching_ = false;
  if (handle_.upstream) handle_.upstream->close();
  if (io_.hold_timer) io_.hold_timer->cancel();
}

void ClientSession::stop_watch() {
  watching_ = false;
  handle_.watch_due = false;
  if (watch_pending_) {
    boost::system::error_code ignored;
    client_.socket().cancel(ignored);  // the handler runs with operation_aborted
  }
}

}  // namespace td::proxy

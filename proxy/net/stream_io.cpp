#include "proxy/net/stream_io.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>

namespace td::proxy {

namespace asio = boost::asio;

asio::awaitable<boost::system::error_code> send_now(boost::beast::tcp_stream& stream,
                                                    std::span<const asio::const_buffer> bufs) {
  boost::system::error_code ec;
  if (bufs.empty()) co_return ec;
  std::size_t n = stream.socket().write_some(bufs, ec);
  if (!ec && n == asio::buffer_size(bufs)) co_return ec;
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) co_return ec;
  if (ec) n = 0;
  boost::beast::buffers_suffix<std::span<const asio::const_buffer>> rest(bufs);
  rest.consume(n);
  auto [aec, written] = co_await asio::async_write(stream, rest, nothrow);
  co_return aec;
}

}  // namespace td::proxy

// The one translation unit that compiles Asio SSL and Beast
// (BOOST_*_SEPARATE_COMPILATION): every other file includes only their
// declarations, which keeps rebuilds of the network code fast. Asio itself is
// compiled in td_shared_state (shared_state/asio_impl.cpp), below td_net.
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>

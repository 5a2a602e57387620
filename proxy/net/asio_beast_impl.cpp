// The one translation unit that compiles Boost.Asio, Asio SSL and Beast
// (BOOST_*_SEPARATE_COMPILATION): every other file includes only their
// declarations, which keeps rebuilds of the network code fast.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>

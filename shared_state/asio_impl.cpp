// Boost.Asio compiled once for the whole binary (BOOST_ASIO_SEPARATE_COMPILATION),
// here in the lowest library that uses it; td_net, above, compiles Asio SSL
// and Beast (proxy/net/asio_beast_impl.cpp) and every other file includes
// only their declarations.
#include <boost/asio/impl/src.hpp>

// Everything a request needs that follows from one configuration: the config
// itself, the filter chain, and one TLS context per upstream. Built once per
// (re)load and shared read-only by all I/O threads; a request keeps the
// snapshot it started with, so a SIGHUP reload never changes a request midway.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "proxy/phases/filter.hpp"

namespace boost::asio::ssl {
class context;
}

namespace td::proxy {

struct UpstreamTarget {
  std::string name;  // key in config.upstreams
  config::Upstream cfg;
  std::string host_header;                         // "host" or "host:port" when not the default port
  std::string pool_key;                            // connections with the same key are interchangeable
  std::shared_ptr<boost::asio::ssl::context> tls;  // set when cfg.tls
};

struct Runtime {
  config::Config config;
  std::vector<std::unique_ptr<Filter>> filters;
  std::map<std::string, UpstreamTarget, std::less<>> upstreams;

  const UpstreamTarget* upstream(std::string_view name) const {
    auto it = upstreams.find(name);
    return it == upstreams.end() ? nullptr : &it->second;
  }
};

// Builds the snapshot with the registry's filters (make_filters()); on
// failure (e.g. an unreadable ca_file) returns null and says why in `error`.
std::shared_ptr<const Runtime> build_runtime(config::Config config, std::string& error);
// The same with the given filter chain, in this order (e.g. a test's).
std::shared_ptr<const Runtime> build_runtime(config::Config config, std::vector<std::unique_ptr<Filter>> filters,
                                             std::string& error);

}  // namespace td::proxy

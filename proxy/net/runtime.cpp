#include "proxy/net/runtime.hpp"

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>

#include <algorithm>

#include "proxy/net/recap_summarizer_net.hpp"

namespace td::proxy {
namespace {

// TLS 1.2+, certificate verification against the system store plus the
// upstream's own CA file. The host name is checked per connection
// (SSL_set1_host, see upstream.cpp).
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const config::Upstream& u, std::string& error) {
  namespace ssl = boost::asio::ssl;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  boost::system::error_code ec;
  ctx->set_default_verify_paths(ec);
  if (ec) {
    error = "upstream " + u.url + ": cannot use the system CA store: " + ec.message();
    return nullptr;
  }
  if (!u.ca_file.empty()) {
    ctx->load_verify_file(u.ca_file, ec);
    if (ec) {
      error = "upstream " + u.url + ": cannot load ca_file " + u.ca_file + ": " + ec.message();
      return nullptr;
    }
  }
  ctx->set_verify_mode(u.verify_tls ? ssl::verify_peer : ssl::verify_none);
  // HTTP/1.1 only: say so, so no server tries to speak h2 to us.
  static const unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx->native_handle(), kAlpn, sizeof kAlpn);
  // Keep sessions for resumption when a pooled connection has to be replaced.
  SSL_CTX_set_session_cache_mode(ctx->native_handle(), SSL_SESS_CACHE_CLIENT);
  return ctx;
}

}  // namespace

std::shared_ptr<const Runtime> build_runtime(config::Config config, std::string& error) {
  // A profile with a summarizer: the recap's outbound calls, through the
  // upstreams as configured (targets of their own, with their own TLS context).
  std::shared_ptr<const diet::RecapSummarizer> summarizer;
  if (std::any_of(config.profiles.begin(), config.profiles.end(),
                  [](const pruning::Profile& p) { return p.summarizer.enabled(); })) {
    auto probe = build_runtime(config, {}, error);
    if (!probe) return nullptr;
    summarizer = std::make_shared<NetRecapSummarizer>(probe->upstreams);
  }
  auto filters = make_filters(config, std::move(summarizer));
  return build_runtime(std::move(config), std::move(filters), error);
}

std::shared_ptr<const Runtime> build_runtime(config::Config config, std::vector<std::unique_ptr<Filter>> filters,
                                             std::string& error) {
  auto rt = std::make_shared<Runtime>();
  rt->config = std::move(config);
  for (auto& [name, u] : rt->config.upstreams) {
    UpstreamTarget t;
    t.name = name;
    t.cfg = u;
    bool v6 = u.host.find(':') != std::string::npos;
    t.host_header = v6 ? "[" + u.host + "]" : u.host;
    if (u.port != (u.tls ? 443 : 80)) t.host_header += ":" + std::to_string(u.port);
    t.pool_key = std::string(u.tls ? "https://" : "http://") + t.host_header + "|" + u.ca_file + "|" +
                 (u.verify_tls ? "v" : "n");
    if (u.tls) {
      t.tls = make_tls_context(u, error);
      if (!t.tls) return nullptr;
    }
    rt->upstreams.emplace(name, std::move(t));
  }
  rt->filters = std::move(filters);
  return rt;
}

}  // namespace td::proxy

#include "config/serve_args.hpp"

#include <algorithm>
#include <charconv>

namespace td::config {
namespace {

constexpr unsigned kMaxThreads = 1024;  // as the `threads` key

ConfigError cli_error(std::string reason) { return ConfigError{"tokendiet serve", 0, 0, std::move(reason)}; }

void check_threads(const std::string& value, ParsedServeArgs& out) {
  unsigned n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || n > kMaxThreads)
    return out.errors.push_back(
        cli_error("--threads: expected an integer from 0 to " + std::to_string(kMaxThreads) + ", got '" + value + "'"));
  out.args.threads = n;
}

void check_upstream(const std::string& value, ParsedServeArgs& out) {
  auto eq = value.find('=');
  if (eq == std::string::npos)
    return out.errors.push_back(cli_error("--upstream: expected PROVIDER=URL, got '" + value + "'"));
  std::string provider = value.substr(0, eq);
  if (std::find(kProviders.begin(), kProviders.end(), provider) == kProviders.end())
    return out.errors.push_back(
        cli_error("--upstream: unknown provider '" + provider + "' (known: openai, gemini, anthropic)"));
  auto parsed = parse_upstream_url(value.substr(eq + 1));
  if (!parsed.ok()) return out.errors.push_back(cli_error("--upstream " + provider + ": " + parsed.error));
  out.args.upstreams.emplace_back(provider, parsed.value);
}

}  // namespace

ParsedServeArgs check_serve_args(const ServeArgsText& text) {
  ParsedServeArgs out;
  ServeArgs& a = out.args;
  if (text.config_file) {
    if (text.config_file->empty())
      out.errors.push_back(cli_error("--config: empty file name"));
    else
      a.config_file = *text.config_file;
  }
  if (text.listen) {
    auto parsed = parse_listen(*text.listen);
    if (parsed.ok())
      a.listen = parsed.value;
    else
      out.errors.push_back(cli_error("--listen: " + parsed.error));
  }
  if (text.threads) check_threads(*text.threads, out);
  for (const auto& value : text.upstreams) check_upstream(value, out);
  return out;
}

void apply_overrides(Config& cfg, const ServeArgs& args) {
  if (args.listen) {
    cfg.listen_host = args.listen->host;
    cfg.listen_port = args.listen->port;
  }
  if (args.threads) cfg.threads = *args.threads;
  for (const auto& [name, url] : args.upstreams) {
    Upstream& up = cfg.upstreams[name];
    std::string ca_file = up.ca_file;  // TLS options from the file stay
    bool verify = up.verify_tls;
    up = url;
    up.ca_file = ca_file;
    up.verify_tls = verify;
  }
}

LoadResult load_for_serve(const ServeArgs& args) {
  LoadResult r;
  if (args.config_file.empty())
    r.config = default_config();
  else
    r = load_file(args.config_file);
  if (r.ok()) apply_overrides(r.config, args);
  for (const auto& [name, url] : args.upstreams)
    if (std::string w = versioned_url_warning("--upstream " + name, url); !w.empty())
      r.warnings.push_back(cli_error(std::move(w)));
  return r;
}

}  // namespace td::config

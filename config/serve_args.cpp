#include "config/serve_args.hpp"

#include <algorithm>
#include <charconv>

namespace td::config {
namespace {

constexpr unsigned kMaxThreads = 1024;  // as the `threads` key

ConfigError cli_error(std::string reason) { return ConfigError{"tokendiet serve", 0, 0, std::move(reason)}; }

void parse_option(const std::string& name, const std::string& value, ParsedServeArgs& out) {
  ServeArgs& a = out.args;
  if (name == "--config") {
    if (value.empty()) return out.errors.push_back(cli_error("--config: empty file name"));
    a.config_file = value;
  } else if (name == "--listen") {
    auto parsed = parse_listen(value);
    if (!parsed.ok()) return out.errors.push_back(cli_error("--listen: " + parsed.error));
    a.listen = parsed.value;
  } else if (name == "--threads") {
    unsigned n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || n > kMaxThreads)
      return out.errors.push_back(cli_error("--threads: expected an integer from 0 to " +
                                            std::to_string(kMaxThreads) + ", got '" + value + "'"));
    a.threads = n;
  } else if (name == "--upstream") {
    auto eq = value.find('=');
    if (eq == std::string::npos)
      return out.errors.push_back(cli_error("--upstream: expected PROVIDER=URL, got '" + value + "'"));
    std::string provider = value.substr(0, eq);
    if (std::find(kProviders.begin(), kProviders.end(), provider) == kProviders.end())
      return out.errors.push_back(cli_error("--upstream: unknown provider '" + provider +
                                            "' (known: openai, gemini, anthropic)"));
    auto parsed = parse_upstream_url(value.substr(eq + 1));
    if (!parsed.ok()) return out.errors.push_back(cli_error("--upstream " + provider + ": " + parsed.error));
    a.upstreams.emplace_back(provider, parsed.value);
  }
}

}  // namespace

ParsedServeArgs parse_serve_args(const std::vector<std::string>& argv) {
  static const std::vector<std::string> kWithValue = {"--config", "--listen", "--threads", "--upstream"};
  ParsedServeArgs out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      out.args.help = true;
      continue;
    }
    auto eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    if (std::find(kWithValue.begin(), kWithValue.end(), name) == kWithValue.end()) {
      out.errors.push_back(cli_error("unknown option '" + arg + "' (see tokendiet serve --help)"));
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argv.size()) {
      value = argv[++i];
    } else {
      out.errors.push_back(cli_error(name + ": missing value"));
      continue;
    }
    parse_option(name, value, out);
  }
  return out;
}

ParsedServeArgs parse_serve_args(int argc, char** argv) {
  return parse_serve_args(std::vector<std::string>(argv, argv + argc));
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
  return r;
}

std::vector<ConfigError> apply_serve_args(Config& cfg, const std::vector<std::string>& argv) {
  ParsedServeArgs parsed = parse_serve_args(argv);
  if (!parsed.errors.empty()) return parsed.errors;
  if (!parsed.args.config_file.empty()) {
    LoadResult r = load_file(parsed.args.config_file);
    if (!r.ok()) return r.errors;
    cfg = std::move(r.config);
  }
  apply_overrides(cfg, parsed.args);
  return {};
}

const char* serve_options_help() {
  return "  --config FILE         YAML config (default: the embedded one; see check-config)\n"
         "  --listen HOST:PORT    address to accept clients on (default 127.0.0.1:8787)\n"
         "  --threads N           I/O threads, 0 = one per core (default 0)\n"
         "  --upstream P=URL      upstream for provider P (openai, gemini, anthropic);\n"
         "                        repeatable, e.g. --upstream openai=http://127.0.0.1:18080\n";
}

}  // namespace td::config

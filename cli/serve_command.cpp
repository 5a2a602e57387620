// `tokendiet serve`: load the config (file or embedded default, then the
// command-line overrides), build the runtime, run the server until SIGTERM.
#include <cstdio>

#include "config/load.hpp"
#include "config/reload.hpp"
#include "config/serve_args.hpp"
#include "cli/commands.hpp"
#include "proxy/telemetry/log.hpp"
#include "proxy/net/server.hpp"
#include "proxy/telemetry/telemetry.hpp"

namespace td::cli {

namespace {
constexpr const char* kUsage =
    "usage: tokendiet serve [--config FILE] [--listen HOST:PORT] [--threads N]\n"
    "                       [--upstream PROVIDER=URL]...\n\n"
    "Runs the proxy. Without --config it uses the embedded default config\n"
    "(listen 127.0.0.1:8787, the providers' public APIs as upstreams).\n\n";

constexpr const char* kSignals =
    "\nsignals:\n"
    "  SIGTERM, SIGINT  stop accepting, let in-flight requests finish (at most\n"
    "                   limits.drain_timeout_ms), exit 0; a second one stops at once\n"
    "  SIGHUP           reload the config file (command-line options still win);\n"
    "                   a file with errors keeps the running config\n\n"
    "Logs one JSON line per request on stderr (event \"request\").\n";
}  // namespace

int serve(int argc, char** argv) {
  auto parsed = config::parse_serve_args(argc, argv);
  if (parsed.args.help) {
    std::printf("%s%s%s", kUsage, config::serve_options_help(), kSignals);
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (auto& e : parsed.errors) std::fprintf(stderr, "%s\n", config::format_error(e).c_str());
    std::fprintf(stderr, "\n%s", kUsage);
    return 2;
  }
  auto loaded = config::load_for_serve(parsed.args);
  for (auto& w : loaded.warnings) proxy::log_info("config_warning", config::format_error(w));
  if (!loaded.ok()) {
    for (auto& e : loaded.errors) std::fprintf(stderr, "%s\n", config::format_error(e).c_str());
    return 1;
  }
  std::string error;
  auto runtime = proxy::build_runtime(loaded.config, error);
  if (!runtime) {
    proxy::log_error("config", error);
    return 1;
  }
  proxy::raise_open_file_limit();
  // The usage ledger (and the calibration it holds) before the first request;
  // an unusable ledger file is a config error like a bad listen address.
  if (auto why = proxy::telemetry().open_ledger(loaded.config); !why.empty()) {
    proxy::log_error("ledger", why + " (set ledger.path, or ledger.enabled: false)");
    return 1;
  }
  if (auto* ledger = proxy::telemetry().ledger()) proxy::log_info("ledger", "writing " + ledger->path());

  proxy::Server* server_ptr = nullptr;
  proxy::ServerHooks hooks;
  hooks.reload = [args = parsed.args, &server_ptr]() -> std::optional<config::Config> {
    auto r = config::reload_config(args);
    for (auto& w : r.warnings) proxy::log_info("config_warning", config::format_error(w));
    if (!r.ok()) {
      for (auto& e : r.errors) proxy::log_error("reload", config::format_error(e));
      proxy::log_error("reload", "config has errors: keeping the running config");
      return std::nullopt;
    }
    for (auto& change : config::restart_required(server_ptr->runtime()->config, r.config))
      proxy::log_info("reload", change + " (takes effect after a restart)");
    return std::move(r.config);
  };
  proxy::Server server(runtime, std::move(hooks));
  server_ptr = &server;
  int status = server.run();
  proxy::telemetry().close_ledger();  // commits the queued rows and the calibration
  return status;
}

}  // namespace td::cli

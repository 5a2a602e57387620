// `tokendiet serve`: load the config (file or embedded default, then the
// command-line overrides), build the runtime, run the server until SIGTERM.
#include <cstdio>
#include <iostream>

#include "config/load.hpp"
#include "config/reload.hpp"
#include "config/serve_args.hpp"
#include "cli/commands.hpp"
#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "cli/serve_command.hpp"
#include "proxy/telemetry/log.hpp"
#include "proxy/net/server.hpp"
#include "proxy/telemetry/process_state.hpp"
#include "service/systemd_notify.hpp"

namespace td::cli {

namespace {
constexpr const char* kSynopsis =
    "usage: tokendiet serve [--config FILE] [--listen HOST:PORT] [--threads N]\n"
    "                       [--upstream PROVIDER=URL]...\n\n"
    "Runs the proxy. Without --config it uses the embedded default config\n"
    "(listen 127.0.0.1:8787, the providers' public APIs as upstreams).\n\n";

constexpr const char* kSignals =
    "\nsignals:\n"
    "  SIGTERM, SIGINT  GET /readyz answers 503 (still serving for\n"
    "                   limits.drain_grace_ms), then stop accepting, let in-flight\n"
    "                   requests finish (at most limits.drain_timeout_ms), exit 0;\n"
    "                   a second one stops at once\n"
    "  SIGHUP           reload the config file (command-line options still win);\n"
    "                   a file with errors keeps the running config\n"
    "Under systemd (NOTIFY_SOCKET) it tells READY=1, RELOADING=1, STOPPING=1 and,\n"
    "with WATCHDOG_USEC, WATCHDOG=1 (see scripts/tokendiet.service).\n\n"
    "Logs one JSON line per request on stderr (event \"request\").\n";
}  // namespace

Parsed<config::ServeArgs> parse_serve_args(const std::vector<std::string>& args) {
  Parsed<config::ServeArgs> parsed;
  config::ServeArgsText text;
  auto app = make_app("tokendiet serve", kSynopsis, kSignals, 24);
  add_optional(*app, "--config", text.config_file, "YAML config (default: the embedded one; see check-config)")
      ->type_name("FILE");
  add_optional(*app, "--listen", text.listen, "address to accept clients on (default 127.0.0.1:8787)")
      ->type_name("HOST:PORT");
  add_optional(*app, "--threads", text.threads, "I/O threads, 0 = one per core (default 0)")->type_name("N");
  app->add_option("--upstream", text.upstreams,
                  "upstream for provider P (openai, gemini, anthropic);\n"
                  "repeatable, e.g. --upstream openai=http://127.0.0.1:18080")
      ->type_name("P=URL");
  if ((parsed.stop = parse(*app, args))) return parsed;
  config::ParsedServeArgs checked = config::check_serve_args(text);
  parsed.options = std::move(checked.args);
  if (!checked.errors.empty()) {
    std::vector<std::string> reasons;
    for (const auto& e : checked.errors) reasons.push_back(e.reason);
    parsed.stop = usage_error(*app, reasons);
  }
  return parsed;
}

int serve(int argc, char** argv) {
  auto parsed = parse_serve_args(args_of(argc, argv));
  if (parsed.stop) return finish(*parsed.stop, std::cout, std::cerr);
  // A directory would load as an empty file: the defaults, silently.
  if (const auto& file = parsed.options.config_file; !file.empty()) {
    if (auto problem = path_problem(file, PathKind::file); !problem.empty()) {
      std::fprintf(stderr, "%s\n", problem.c_str());
      return 1;
    }
  }
  auto loaded = config::load_for_serve(parsed.options);
  for (auto& w : loaded.warnings) proxy::log_info("config_warning", config::format_error(w));
  if (!loaded.ok()) {
    for (auto& e : loaded.errors) std::fprintf(stderr, "%s\n", terminal_text(config::format_error(e)).c_str());
    return 1;
  }
  // The store shared with other replicas (quota_store), before the filters
  // that use it are built: it connects in the background, and until Redis
  // answers this replica decides alone.
  proxy::process_state().open_shared_state(loaded.config);
  std::string error;
  auto runtime = proxy::build_runtime(loaded.config, error);
  if (!runtime) {
    proxy::log_error("config", error);
    return 1;
  }
  proxy::raise_open_file_limit();
  // The usage ledger (and the calibration it holds) before the first request;
  // an unusable ledger file is a config error like a bad listen address.
  if (auto why = proxy::process_state().open_ledger(loaded.config); !why.empty()) {
    proxy::log_error("ledger", why + " (set ledger.path, or ledger.enabled: false)");
    return 1;
  }
  if (auto* ledger = proxy::process_state().ledger()) proxy::log_info("ledger", "writing " + ledger->path());
  // The archive of evicted outputs; without one, semantic eviction is off.
  if (auto why = proxy::process_state().open_archive(loaded.config); !why.empty()) {
    proxy::log_error("archive", why + " (set archive.path, or archive.enabled: false)");
    return 1;
  }
  if (auto* archive = proxy::process_state().archive())
    proxy::log_info("archive", "keeping evicted outputs in " + archive->dir());

  proxy::Server* server_ptr = nullptr;
  proxy::ServerHooks hooks;
  hooks.reload = [args = parsed.options, &server_ptr]() -> proxy::ReloadResult {
    auto r = config::reload_config(args);
    for (auto& w : r.warnings) proxy::log_info("config_warning", config::format_error(w));
    if (!r.ok()) {
      for (auto& e : r.errors) proxy::log_error("reload", config::format_error(e));
      proxy::log_error("reload", "config has errors: keeping the running config");
      std::string first = config::format_error(r.errors.front());
      if (r.errors.size() > 1) first += " (and " + std::to_string(r.errors.size() - 1) + " more)";
      return {std::nullopt, std::move(first)};
    }
    for (auto& change : config::restart_required(server_ptr->runtime()->config, r.config))
      proxy::log_info("reload", change + " (takes effect after a restart)");
    return {std::move(r.config), {}};
  };
  // Under systemd (Type=notify): readiness, reloads, the stop and the
  // watchdog, told through NOTIFY_SOCKET (docs/design.md §Network).
  const service::SystemdNotify systemd;
  if (systemd.enabled()) {
    hooks.state = [&systemd](proxy::ServingState state, const std::string& status) {
      switch (state) {
        case proxy::ServingState::ready:
          systemd.ready(status);
          break;
        case proxy::ServingState::reloading:
          systemd.reloading(status);
          break;
        case proxy::ServingState::stopping:
          systemd.stopping(status);
          break;
      }
    };
    if (systemd.watchdog_interval().count() > 0) {
      hooks.alive = [&systemd] { systemd.watchdog(); };
      hooks.alive_every = systemd.watchdog_interval();
    }
  }
  proxy::Server server(runtime, std::move(hooks));
  server_ptr = &server;
  int status = server.run();
  proxy::process_state().close_ledger();  // commits the queued rows and the calibration
  return status;
}

}  // namespace td::cli

#include "cli/usage_command.hpp"

#include <chrono>
#include <iostream>
#include <optional>

#include "config/load.hpp"
#include "config/match.hpp"
#include "config/state_paths.hpp"
#include "cli/commands.hpp"
#include "ledger/ledger_store.hpp"
#include "ledger/usage_report.hpp"

namespace td::cli {
namespace {

constexpr const char* kUsage =
    "usage: tokendiet usage [--since WHEN] [--by GROUP] [--json] [--ledger FILE] [--config FILE]\n"
    "\n"
    "Reports what went through tokendiet, from its usage ledger: per group, the\n"
    "requests, prompt tokens as sent by clients (in), as forwarded (sent) and\n"
    "removed (saved), the upstream's billed prompt/completion/cached tokens, the\n"
    "actual cost and what the saved tokens would have cost at the model's input\n"
    "price. Prices (USD per million tokens) come from `prices:` in the config;\n"
    "models without a price show n/a.\n"
    "\n"
    "options:\n"
    "  --since WHEN   only requests since WHEN: a duration back from now (90m, 24h,\n"
    "                 7d, 2w) or a UTC date/time (2026-11-01, 2026-11-01T12:00Z).\n"
    "                 Default: the whole ledger.\n"
    "  --by GROUP     model (default), day (UTC), session, provider or key (API-key\n"
    "                 fingerprint).\n"
    "  --json         one JSON object instead of the table.\n"
    "  --ledger FILE  the ledger to read. Default: ledger.path from the config, else\n"
    "                 $STATE_DIRECTORY/usage.db, $XDG_STATE_HOME/tokendiet/usage.db or\n"
    "                 ~/.local/state/tokendiet/usage.db.\n"
    "  --config FILE  the config with the prices (and ledger.path). Default: the\n"
    "                 embedded default config.\n"
    "\n"
    "For the systemd service: sudo tokendiet usage --config /etc/tokendiet/tokendiet.yaml\n"
    "  --ledger /var/lib/tokendiet/usage.db\n";

struct Options {
  std::optional<std::string> since, by, ledger, config;
  bool json = false;
  bool help = false;
};

// Parses "--opt value" and "--opt=value"; "" on success, else why not.
std::string parse(const std::vector<std::string>& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      continue;
    }
    if (a == "--json") {
      o.json = true;
      continue;
    }
    std::optional<std::string> inline_value;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a.resize(eq);
    }
    std::optional<std::string>* slot = a == "--since"    ? &o.since
                                       : a == "--by"     ? &o.by
                                       : a == "--ledger" ? &o.ledger
                                       : a == "--config" ? &o.config
                                                         : nullptr;
    if (!slot) return "unknown option '" + args[i] + "'";
    if (inline_value) {
      *slot = *inline_value;
    } else if (i + 1 < args.size()) {
      *slot = args[++i];
    } else {
      return a + " needs a value";
    }
  }
  return {};
}

}  // namespace

int usage_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
              std::int64_t now_ms) {
  Options o;
  if (auto why = parse(args, o); !why.empty()) {
    err << "usage: " << why << "\n\n" << kUsage;
    return 2;
  }
  if (o.help) {
    out << kUsage;
    return 0;
  }
  std::int64_t since_ms = 0;
  if (o.since) {
    std::string why;
    auto since = proxy::parse_since(*o.since, now_ms, &why);
    if (!since) {
      err << "usage: " << why << "\n";
      return 2;
    }
    since_ms = *since;
  }
  proxy::GroupBy by = proxy::GroupBy::Model;
  if (o.by) {
    auto parsed = proxy::parse_group_by(*o.by);
    if (!parsed) {
      err << "usage: --by '" << *o.by << "': expected model, day, session, provider or key\n";
      return 2;
    }
    by = *parsed;
  }

  config::Config cfg;
  if (o.config) {
    config::LoadResult loaded = config::load_file(*o.config);
    if (!loaded.ok()) {
      for (const auto& e : loaded.errors) err << config::format_error(e) << "\n";
      return 1;
    }
    cfg = std::move(loaded.config);
  } else {
    cfg = config::default_config();
  }

  std::string path;
  if (o.ledger) {
    path = *o.ledger;
  } else if (auto resolved = config::ledger_file(cfg.ledger)) {
    path = *resolved;
  } else {
    err << "usage: no ledger path: set ledger.path in the config, or pass --ledger FILE\n";
    return 1;
  }

  auto opened = proxy::LedgerStore::open(path, proxy::LedgerStore::Access::ReadOnly);
  if (!opened.store) {
    err << "usage: " << opened.error << "\n";
    return 1;
  }
  proxy::UsageReport report = proxy::build_usage_report(
      opened.store->sums(by, since_ms), by,
      [&cfg](std::string_view model) { return config::price_for(cfg, model); });
  report.ledger_path = path;
  report.since_ms = since_ms;
  report.now_ms = now_ms;
  out << (o.json ? proxy::render_usage_json(report) : proxy::render_usage_table(report));
  return 0;
}

int usage(int argc, char** argv) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return usage_run(std::vector<std::string>(argv, argv + argc), std::cout, std::cerr, now);
}

}  // namespace td::cli

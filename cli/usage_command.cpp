#include "cli/usage_command.hpp"

#include <sys/stat.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <set>
#include <utility>

#include "cli/config_file.hpp"
#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "cli/usage_compare.hpp"
#include "config/load.hpp"
#include "config/match.hpp"
#include "config/state_paths.hpp"
#include "cli/commands.hpp"
#include "ledger/arm_comparison.hpp"
#include "ledger/ledger_store.hpp"
#include "ledger/usage_report.hpp"

namespace td::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: tokendiet usage [--since WHEN] [--by GROUP] [--session ID] [--json] [--ledger FILE...]\n"
    "                       [--config FILE]\n"
    "       tokendiet usage --compare [--since WHEN] [--json] [--ledger FILE...] [--config FILE]\n"
    "\n"
    "Reports what went through tokendiet, from its usage ledger: per group, the\n"
    "requests, errors, prompt tokens as sent by clients (in), as forwarded\n"
    "(sent) and the share removed (saved), the actual cost and what the removed\n"
    "tokens would have cost at the rate the model's prompts were billed (cache\n"
    "reads and writes at their prices); the upstream's billed tokens in total\n"
    "(per group: --json). Prices (USD per million tokens) come from `prices:`;\n"
    "models without a price show n/a. Several ledgers (one per replica) are\n"
    "reported together, as if they were one.\n"
    "\n"
    "options:\n";

constexpr const char* kFooter =
    "\n"
    "For the systemd service: sudo tokendiet usage --config /etc/tokendiet/tokendiet.yaml\n"
    "  --ledger /var/lib/tokendiet/usage.db\n";

}  // namespace

Parsed<UsageOptions> parse_usage_args(const std::vector<std::string>& args) {
  Parsed<UsageOptions> parsed;
  UsageOptions& o = parsed.options;
  auto app = make_app("usage", kSynopsis, kFooter, 17);
  add_optional(*app, "--since", o.since,
               "only requests since WHEN: a duration back from now (90m, 24h,\n"
               "7d, 2w) or a UTC date/time (2026-11-01, 2026-11-01T12:00Z).\n"
               "Default: the whole ledger.")
      ->type_name("WHEN");
  add_optional(*app, "--by", o.by,
               "model (default), day (UTC), session, provider or key (API-key\n"
               "fingerprint).")
      ->type_name("GROUP");
  add_optional(*app, "--session", o.session,
               "only the session ID (or the sessions starting with it, as the\n"
               "table shows a long id cut): its requests by --by.")
      ->type_name("ID");
  app->add_flag("--json", o.json, "one JSON object instead of the table.");
  app->add_flag("--compare", o.compare,
                "the control arm (profiles' control_fraction) against the\n"
                "treatment, per model and in total, with 95 % intervals\n"
                "(bootstrap over sessions) and whether the difference is\n"
                "resolved.");
  app->add_option("--ledger", o.ledgers,
                  "the ledger to read; several (--ledger a.db b.db, or the option\n"
                  "again) are summed together. Default: ledger.path from the\n"
                  "config, else $STATE_DIRECTORY/usage.db,\n"
                  "$XDG_STATE_HOME/tokendiet/usage.db or\n"
                  "~/.local/state/tokendiet/usage.db.")
      ->type_name("FILE");
  add_optional(*app, "--config", o.config,
               "the config with the prices (and ledger.path). Default: the\n"
               "embedded default config.")
      ->type_name("FILE");
  parsed.stop = parse(*app, args);
  if (!parsed.stop && o.compare && o.by)
    parsed.stop = usage_error(*app, "--by does not apply to --compare (it compares per model and in total)");
  if (!parsed.stop && o.compare && o.session)
    parsed.stop = usage_error(*app, "--session does not apply to --compare (it compares the arms' sessions)");
  return parsed;
}

int usage_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::int64_t now_ms) {
  auto parsed = parse_usage_args(args);
  if (parsed.stop) return finish(*parsed.stop, out, err);
  const UsageOptions& o = parsed.options;
  std::int64_t since_ms = 0;
  if (o.since) {
    std::string why;
    auto since = ledger::parse_since(*o.since, now_ms, &why);
    if (!since) {
      err << "usage: " << why << "\n";
      return 2;
    }
    since_ms = *since;
  }
  ledger::GroupBy by = ledger::GroupBy::Model;
  if (o.by) {
    auto parsed = ledger::parse_group_by(*o.by);
    if (!parsed) {
      err << "usage: --by '" << terminal_text(*o.by) << "': expected model, day, session, provider or key\n";
      return 2;
    }
    by = *parsed;
  }

  const std::optional<config::Config> loaded = command_config(o.config, err);
  if (!loaded) return 1;
  const config::Config& cfg = *loaded;

  std::vector<std::string> paths = o.ledgers;
  if (paths.empty()) {
    if (auto resolved = config::ledger_file(cfg.ledger)) {
      paths.push_back(*resolved);
    } else {
      err << "usage: no ledger path: set ledger.path in the config, or pass --ledger FILE\n";
      return 1;
    }
  }

  // One file named twice (a.db and ./a.db) is read once: its rows are not
  // counted twice.
  std::vector<std::vector<ledger::UsageSums>> per_ledger;
  std::vector<std::vector<ledger::SessionSums>> per_ledger_sessions;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::string> read;
  for (const std::string& path : paths) {
    if (auto problem = path_problem(path, PathKind::file); !problem.empty()) {
      err << "usage: no ledger at " << problem << "\n";
      return 1;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second) continue;
    auto opened = ledger::LedgerStore::open(path, ledger::LedgerStore::Access::ReadOnly);
    if (!opened.store) {
      err << "usage: " << terminal_text(opened.error) << "\n";
      return 1;
    }
    if (o.compare)
      per_ledger_sessions.push_back(opened.store->session_sums(since_ms));
    else
      per_ledger.push_back(opened.store->sums(by, since_ms, o.session.value_or("")));
    read.push_back(path);
  }
  const ledger::PriceLookup prices = [&cfg](std::string_view model) { return config::price_for(cfg, model); };
  if (o.compare) {
    const ledger::ArmComparison comparison =
        ledger::compare_arms(ledger::merge_session_sums(std::move(per_ledger_sessions)), prices);
    out << (o.json ? terminal_json(render_compare_json(comparison, read, since_ms))
                   : render_compare_table(comparison, read));
    return 0;
  }
  ledger::UsageReport report = ledger::build_usage_report(ledger::merge_sums(std::move(per_ledger)), by, prices);
  report.ledger_paths = std::move(read);
  report.since_ms = since_ms;
  report.now_ms = now_ms;
  report.session = o.session.value_or("");
  if (o.json) {
    out << terminal_json(ledger::render_usage_json(report));
    return 0;
  }
  // Model names, session ids and the rest came from clients: shown with
  // their control characters visible (the table's widths count what is shown).
  for (ledger::UsageGroup& g : report.groups) g.key = terminal_text(g.key);
  for (std::string& m : report.total.unpriced_models) m = terminal_text(m);
  for (std::string& p : report.ledger_paths) p = terminal_text(p);
  report.session = terminal_text(report.session);
  out << ledger::render_usage_table(report);
  return 0;
}

int usage(int argc, char** argv) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return usage_run(args_of(argc, argv), std::cout, std::cerr, now);
}

}  // namespace td::cli

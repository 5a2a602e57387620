// `tokendiet replay`: recorded agent trajectories through the proxy's own
// diet, turn by turn, with tokens, cost under prefix caching, prefix
// stability, pipeline time and retention (cli/replay.hpp says how each is
// measured).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cli/config_file.hpp"
#include "config/load.hpp"
#include "config/match.hpp"
#include "providers/body_format.hpp"
#include "cli/commands.hpp"
#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "cli/replay.hpp"
#include "cli/replay_command.hpp"
#include "cli/replay_convert.hpp"

namespace td::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: tokendiet replay FILE...|DIR... [--profile NAME] [--pricing openai|anthropic]\n"
    "                        [--config FILE] [--json] [--requests] [--token-threshold N]\n"
    "                        [--semantic] [--recall MODE]\n\n"
    "Replays recorded agent trajectories (JSON: {\"id\", \"model\", \"messages\"}; a\n"
    "DIR means every *.json in it) request by request through the proxy's diet\n"
    "(adapter parse -> pipeline -> adapter write). Request t is the messages\n"
    "before the t-th assistant message, as an OpenAI chat completions body.\n"
    "Reports, per trajectory and in total: input tokens without and with\n"
    "tokendiet (o200k_base) and the reduction; effective input cost with the\n"
    "provider's prefix caching, in units of the uncached input price; prefix\n"
    "stability (share of requests that begin with all the previous one sent);\n"
    "pipeline time p50/p99 (parse + pipeline + write; the plan ahead, computed\n"
    "off the requests' path as the proxy does, is reported apart); retention of the\n"
    "references the agent used and of the lines it copied from tool output;\n"
    "the worst cumulative cost ratio (with / without) at any request boundary.\n"
    "Then the losses charged, under both pricings: where a request as sent lacks\n"
    "a line or reference the agent then used, a recall round or a re-read (kept\n"
    "until stale), and the recall tool's own tokens; the recall rounds per 100\n"
    "requests, the re-reads, the copied lines present as sent. Each FILE or DIR\n"
    "given is a set: with several, each set's totals, then all together.\n\n";

constexpr const char* kFooter = "Exit status: 0 ok, 1 unreadable input, 2 usage error.\n";

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return static_cast<bool>(f) || f.eof();
}

// FILEs as given; a DIR's *.json files in name order. `set_of[i]`: the input files[i] came from.
bool expand_inputs(const std::vector<std::string>& inputs, std::vector<std::string>& files,
                   std::vector<std::size_t>& set_of) {
  namespace fs = std::filesystem;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in, ec))
        if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) {
        std::fprintf(stderr, "replay: no *.json in %s\n", terminal_text(in).c_str());
        return false;
      }
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(in);
    }
    set_of.resize(files.size(), static_cast<std::size_t>(&in - inputs.data()));
  }
  return true;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* recall_name(RecallMode m) {
  switch (m) {
    case RecallMode::Every:
      return "every";
    case RecallMode::FromStart:
      return "from-start";
    case RecallMode::Tombstones:
      return "tombstones";
    case RecallMode::Off:
      break;
  }
  return "off";
}

double saved(double without, double with) { return without > 0 ? 1 - with / without : 0.0; }

// The losses charged (cli/replay_charges.hpp), both pricings.
std::string charged_json(const Report& r) {
  const Charges& c = r.charges;
  std::string out = ",\"charged\":{";
  for (Pricing p : {Pricing::OpenAI, Pricing::Anthropic}) {
    const auto i = static_cast<std::size_t>(p);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "\"%s\":{\"cost_without\":%.1f,\"cost_with\":%.1f,\"cost_charged\":%.1f,\"saved\":%.6f,"
                  "\"saved_charged\":%.6f,\"worst_charged\":%.6f},",
                  p == Pricing::OpenAI ? "openai" : "anthropic", c.without[i], c.with[i], c.charged[i],
                  saved(c.without[i], c.with[i]), saved(c.without[i], c.charged[i]), c.worst[i]);
    out += buf;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"recall_rounds\":%llu,\"recall_rounds_per_100\":%.3f,\"rereads\":%llu,\"charged_requests\":%llu,"
                "\"tool_requests\":%llu,\"copied_lines\":%llu,\"copied_lines_present\":%llu,"
                "\"copied_lines_first_round\":%llu,\"used\":%llu,\"used_present\":%llu,\"recall_calls\":%llu,"
                "\"recall_answer_bytes\":%llu}",
                static_cast<unsigned long long>(c.recall_rounds), c.per_100(c.recall_rounds),
                static_cast<unsigned long long>(c.rereads), static_cast<unsigned long long>(c.charged_requests),
                static_cast<unsigned long long>(c.tool_requests), static_cast<unsigned long long>(r.copied.counted),
                static_cast<unsigned long long>(r.copied.retained),
                static_cast<unsigned long long>(c.copied_first_round), static_cast<unsigned long long>(c.used.counted),
                static_cast<unsigned long long>(c.used.retained), static_cast<unsigned long long>(c.recall_calls),
                static_cast<unsigned long long>(c.answer_bytes));
  return out + buf;
}

std::string json_fields(const Report& r) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "\"tokens_without\":%llu,\"tokens_with\":%llu,\"reduction\":%.6f,\"retention\":%.6f,"
                "\"copied_retention\":%.6f,\"cost_without\":%.1f,\"cost_with\":%.1f,"
                "\"worst_cost_ratio\":%.6f,\"losing_boundaries\":%llu,\"prefix_stability\":%.6f,"
                "\"pipeline_p50_ms\":%.4f,\"pipeline_p99_ms\":%.4f,\"plans_ahead\":%zu,\"plans_ahead_ms\":%.4f",
                static_cast<unsigned long long>(r.tokens_without), static_cast<unsigned long long>(r.tokens_with),
                r.reduction(), r.retention.ratio(), r.copied.ratio(), r.cost_without, r.cost_with, r.worst_ratio,
                static_cast<unsigned long long>(r.losing), r.prefix_stability(), r.percentile_ms(50),
                r.percentile_ms(99), r.ahead_ms.size(), std::accumulate(r.ahead_ms.begin(), r.ahead_ms.end(), 0.0));
  return buf + charged_json(r);
}

// Semantic mode's effect: the same trajectory with the profile's
// completed_tasks off (strategies only) beside it as configured.
struct SemanticPair {
  Report only, with;
};

std::uint64_t fired(const Report& r, const std::string& name) {
  auto it = r.fired.find(name);
  return it == r.fired.end() ? 0 : it->second;
}

void print_semantic(std::vector<SemanticPair> pairs) {
  SemanticPair total;
  total.only.id = total.with.id = "total";
  for (const SemanticPair& p : pairs) {
    total.only.add(p.only);
    total.with.add(p.with);
  }
  pairs.push_back(std::move(total));
  std::printf("\nsemantic mode (completed_tasks) beside strategies only:\n");
  std::printf("%-22s %12s %12s %8s %8s %13s %13s %8s %8s %9s\n", "trajectory", "tokens only", "tokens with", "cut only",
              "cut with", "cost only", "cost with", "ret only", "ret with", "tombstone");
  for (const SemanticPair& p : pairs)
    std::printf("%-22s %12llu %12llu %7.1f%% %7.1f%% %13.0f %13.0f %7.1f%% %7.1f%% %9llu\n",
                terminal_text(p.with.id).c_str(), static_cast<unsigned long long>(p.only.tokens_with),
                static_cast<unsigned long long>(p.with.tokens_with), 100 * p.only.reduction(), 100 * p.with.reduction(),
                p.only.cost_with, p.with.cost_with, 100 * p.only.retention.ratio(), 100 * p.with.retention.ratio(),
                static_cast<unsigned long long>(fired(p.with, "completed_tasks")));
  std::printf("(tombstone: requests in which completed_tasks placed tombstones; ret: retention of references)\n");
}

void print_charged_header() {
  std::printf("\n%-22s %5s %12s %12s %8s %8s %12s %12s %8s %8s %9s %7s %8s %8s\n", "charged losses", "reqs",
              "openai w/o", "charged", "saved", "charged", "anthr. w/o", "charged", "saved", "charged", "recall/100",
              "reads", "copied", "used");
}

void print_charged_row(const Report& r) {
  const Charges& c = r.charges;
  std::printf("%-22s %5llu %12.0f %12.0f %7.1f%% %7.1f%% %12.0f %12.0f %7.1f%% %7.1f%% %10.2f %7llu %7.1f%% %7.1f%%\n",
              terminal_text(r.id).c_str(), static_cast<unsigned long long>(c.requests), c.without[0], c.charged[0],
              100 * saved(c.without[0], c.with[0]), 100 * saved(c.without[0], c.charged[0]), c.without[1], c.charged[1],
              100 * saved(c.without[1], c.with[1]), 100 * saved(c.without[1], c.charged[1]), c.per_100(c.recall_rounds),
              static_cast<unsigned long long>(c.rereads), 100 * r.copied.ratio(), 100 * c.used.ratio());
}

void print_row(const Report& r) {
  std::printf(
      "%-22s %5llu %12llu %12llu %7.1f%% %7.1f%% %7.1f%% %13.0f %13.0f %7.1f%% %6.3f %6llu %10.1f%% %7.3f %7.3f\n",
      terminal_text(r.id).c_str(), static_cast<unsigned long long>(r.requests),
      static_cast<unsigned long long>(r.tokens_without), static_cast<unsigned long long>(r.tokens_with),
      100 * r.reduction(), 100 * r.retention.ratio(), 100 * r.copied.ratio(), r.cost_without, r.cost_with,
      r.cost_without > 0 ? 100 * (1 - r.cost_with / r.cost_without) : 0.0, r.worst_ratio,
      static_cast<unsigned long long>(r.losing), 100 * r.prefix_stability(), r.percentile_ms(50), r.percentile_ms(99));
}

}  // namespace

Parsed<ReplayOptions> parse_replay_args(const std::vector<std::string>& args) {
  Parsed<ReplayOptions> parsed;
  ReplayOptions& o = parsed.options;
  auto app = make_app("replay", kSynopsis, kFooter);
  app->add_option("FILE...|DIR", o.inputs);  // described in the synopsis
  app->add_option("--profile", o.profile, "the config's profile NAME (default: the one matching the model)")
      ->type_name("NAME");
  app->add_option_function<std::string>(
         "--pricing",
         [&o](const std::string& name) { o.pricing = name == "anthropic" ? Pricing::Anthropic : Pricing::OpenAI; },
         "openai (default): cached input 0.1x from 1024 tokens on, in\n"
         "128-token steps, no write premium; anthropic: reads 0.1x,\n"
         "writes 1.25x, one cache breakpoint at the end of each request")
      ->type_name("P")
      ->check(one_of({"openai", "anthropic"}, "pricing"));
  app->add_option("--config", o.config_file, "tokendiet config to take profiles from (default: built-in)")
      ->type_name("FILE");
  app->add_flag("--json", o.json, "one JSON object {\"trajectories\": [...], \"total\": {...}}");
  app->add_flag("--requests", o.requests,
                "also a line per request: messages, tokens and cost without and\n"
                "with, whether it was prefix-stable, the frontier, what fired");
  app->add_option("--token-threshold", o.token_threshold,
                  "every profile's recap threshold (token_threshold), to\n"
                  "measure the recap (strategies/recap.hpp) at N tokens")
      ->type_name("N");
  app->add_option_function<std::string>(
         "--recall",
         [&o](const std::string& name) {
           o.recall = name == "off"          ? RecallMode::Off
                      : name == "tombstones" ? RecallMode::Tombstones
                      : name == "from-start" ? RecallMode::FromStart
                                             : RecallMode::Every;
         },
         "which cuts a lost line can be recalled from, when charged:\n"
         "from-start (default, as the proxy offers it: every cut, the\n"
         "tool from the first request), every (every cut, the tool from\n"
         "the first cut on),\n"
         "tombstones (semantic mode's only), off (re-read instead)")
      ->type_name("MODE")
      ->check(one_of({"every", "from-start", "tombstones", "off"}, "recall mode"));
  app->add_option("--recall-margin", o.recall_margin,
                  "lines a charged recall call asks on each side of a line\n"
                  "the agent needs, within the notice's hidden range\n"
                  "(default 10; a large N asks the whole range)")
      ->type_name("N");
  app->add_flag("--semantic", o.semantic,
                "also replay each trajectory with semantic mode off\n"
                "(completed_tasks: false) and report both, and the\n"
                "requests whose tombstones it placed");
  parsed.stop = parse(*app, args);
  if (!parsed.stop && o.inputs.empty()) parsed.stop = usage_error(*app, "no FILE or DIR given");
  return parsed;
}

int replay(int argc, char** argv) {
  auto parsed = parse_replay_args(args_of(argc, argv));
  if (parsed.stop) return finish(*parsed.stop, std::cout, std::cerr);
  const ReplayOptions& o = parsed.options;

  std::optional<config::Config> loaded =
      command_config(o.config_file.empty() ? std::nullopt : std::optional<std::string>(o.config_file), std::cerr);
  if (!loaded) return 1;
  config::Config& cfg = *loaded;
  if (o.token_threshold) {
    if (cfg.profiles.empty()) cfg.profiles.emplace_back();  // the built-in profile, to set
    for (pruning::Profile& p : cfg.profiles) p.token_threshold = *o.token_threshold;
  }
  const pruning::Profile* profile = nullptr;
  if (!o.profile.empty()) {
    profile = config::profile_named(cfg, o.profile);
    if (!profile) {
      std::fprintf(stderr, "replay: no profile named '%s' in %s\n", terminal_text(o.profile).c_str(),
                   terminal_text(cfg.source).c_str());
      return 2;
    }
  }

  std::vector<std::string> files;
  std::vector<std::size_t> set_of;
  if (!expand_inputs(o.inputs, files, set_of)) return 1;
  std::vector<Report> sets(o.inputs.size() > 1 ? o.inputs.size() : 0);
  for (std::size_t i = 0; i < sets.size(); ++i) sets[i].id = "total " + o.inputs[i];
  std::vector<Report> reports;
  std::vector<SemanticPair> semantic;
  Report total;
  total.id = "total";
  // Progress over several files, on a terminal only: never in a pipe, a
  // log or the --json output (stdout).
  const bool progress = files.size() > 1 && stderr_is_terminal();
  for (const auto& file : files) {
    const char* const clear = progress ? "\r\x1b[K" : "";  // an error's line replaces the progress line
    if (progress)
      std::fprintf(stderr, "\rreplay: %zu/%zu %s\x1b[K", reports.size() + 1, files.size(),
                   terminal_text(std::filesystem::path(file).filename().string()).c_str());
    std::string text, error;
    if (auto problem = path_problem(file, PathKind::file); !problem.empty()) {
      std::fprintf(stderr, "%sreplay: %s\n", clear, problem.c_str());
      return 1;
    }
    if (!read_file(file, text)) {
      std::fprintf(stderr, "%sreplay: cannot read %s\n", clear, terminal_text(file).c_str());
      return 1;
    }
    // A recorded request body of another format: read by its own adapter
    // and replayed as the chat messages every trajectory is (read as chat
    // messages as it is, it replayed as nothing cut).
    if (auto format = providers::detect_body_format(text, error); format && *format != providers::Api::openai_chat) {
      auto converted = trajectory_from_request(*format, text, std::filesystem::path(file).stem().string(), error);
      if (!converted) {
        std::fprintf(stderr, "%sreplay: %s: a request body in the %s format its adapter cannot read: %s\n", clear,
                     terminal_text(file).c_str(), std::string(providers::name(*format)).c_str(),
                     terminal_text(error).c_str());
        return 1;
      }
      std::fprintf(stderr, "%sreplay: %s: a request body in the %s format, replayed as chat messages\n", clear,
                   terminal_text(file).c_str(), std::string(providers::name(*format)).c_str());
      text = std::move(*converted);
    }
    auto t = parse_trajectory(text, error);
    if (!t) {
      std::fprintf(stderr, "%sreplay: %s: %s\n", clear, terminal_text(file).c_str(), terminal_text(error).c_str());
      return 1;
    }
    if (t->id.empty()) t->id = std::filesystem::path(file).stem().string();
    reports.push_back(replay_trajectory(*t, cfg, profile, o.pricing, o.recall, o.recall_margin));
    total.add(reports.back());
    if (!sets.empty()) sets[set_of[reports.size() - 1]].add(reports.back());
    if (o.semantic) {
      pruning::Profile off = profile ? *profile : config::profile_for(cfg, t->model);
      off.completed_tasks = false;
      semantic.push_back({replay_trajectory(*t, cfg, &off, o.pricing, o.recall, o.recall_margin), reports.back()});
    }
  }

  if (progress) std::fputs("\r\x1b[K", stderr);
  if (o.json) {
    std::string out = "{\"trajectories\":[";
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (i) out += ',';
      out += "{\"id\":" + json_string(reports[i].id) + "," + json_fields(reports[i]);
      if (o.semantic)
        out += ",\"completed_tasks_requests\":" + std::to_string(fired(reports[i], "completed_tasks")) +
               ",\"strategies_only\":{" + json_fields(semantic[i].only) + "}";
      out += "}";
    }
    out += "],";
    if (!sets.empty()) {
      out += "\"sets\":[";
      for (std::size_t i = 0; i < sets.size(); ++i)
        out += std::string(i ? "," : "") + "{\"input\":" + json_string(o.inputs[i]) + "," + json_fields(sets[i]) + "}";
      out += "],";
    }
    out += "\"recall\":\"" + std::string(recall_name(o.recall)) + "\",\"total\":{" + json_fields(total) + "}}\n";
    std::fputs(terminal_json(out).c_str(), stdout);  // ids come from the files
  } else {
    std::printf("%-22s %5s %12s %12s %8s %8s %8s %13s %13s %8s %6s %6s %11s %7s %7s\n", "trajectory", "reqs",
                "tokens w/o", "tokens with", "cut", "retained", "copied", "cost w/o", "cost with", "saved", "worst",
                "losing", "stability", "p50 ms", "p99 ms");
    for (const auto& r : reports) {
      print_row(r);
      if (!o.requests) continue;
      for (const auto& row : r.rows)
        std::printf("  %5zu msgs %9llu -> %9llu tokens  cost %9.0f -> %9.0f  %s stale=%u %s\n", row.messages,
                    static_cast<unsigned long long>(row.tokens_without),
                    static_cast<unsigned long long>(row.tokens_with), row.cost_without, row.cost_with,
                    row.stable ? "stable  " : "UNSTABLE", row.stale_messages, row.fired.c_str());
    }
    for (const auto& r : sets) print_row(r);
    print_row(total);
    print_charged_header();
    for (const auto& r : reports) {
      print_charged_row(r);
      if (!o.requests) continue;
      for (std::size_t i = 0; i < r.charges.rows.size(); ++i) {
        const Charges::Row& row = r.charges.rows[i];
        std::printf(
            "  %5zu msgs  charged %9.0f / %9.0f  tool %llu  carried %llu  rounds %u  re-reads %u  +%llu tokens\n",
            r.rows[i].messages, row.charged[0], row.charged[1], static_cast<unsigned long long>(row.tool),
            static_cast<unsigned long long>(row.carried), row.rounds, row.rereads,
            static_cast<unsigned long long>(row.round_input));
      }
    }
    for (const auto& r : sets) print_charged_row(r);
    print_charged_row(total);
    std::printf(
        "\nrecall: %s; charged: cost with the losses charged (a recall round or a re-read where a\n"
        "request as sent lacks a line or reference the agent used, the recall tool's tokens);\n"
        "saved: without charges; reads: re-reads; copied: copied lines present as sent; used: copied\n"
        "lines and references present as sent or in a carried re-read\n",
        recall_name(o.recall));
    std::printf(
        "\npricing: %s; cost in units of the uncached input price; worst: the largest cumulative cost\n"
        "ratio with / without at a request boundary, losing: boundaries where it is above 1%s\n",
        o.pricing == Pricing::OpenAI ? "openai" : "anthropic",
        total.fail_open ? "; WARNING: some requests failed open" : "");
    if (total.fail_open) std::printf("failed open: %llu requests\n", static_cast<unsigned long long>(total.fail_open));
    std::printf("strategies (requests changed):");
    for (const auto& [name, n] : total.fired) std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(n));
    std::printf("\n");
    if (o.semantic) print_semantic(semantic);
  }
  return 0;
}

}  // namespace td::cli

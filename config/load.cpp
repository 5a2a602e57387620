// The YAML → Config loader: top-level sections, each read by MapFields so
// that unknown keys and wrong types are reported uniformly.
#include "config/load.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <set>
#include <system_error>
#include <tuple>

#include <yaml-cpp/depthguard.h>

#include "config/address.hpp"
#include "config/quota_store.hpp"
#include "config/glob.hpp"
#include "config/renamed_keys.hpp"
#include "config/suggest.hpp"
#include "config/yaml_fields.hpp"
#include "pruning/tasks.hpp"

namespace td::config {
namespace {

using detail::Bounds;
using detail::Diagnostics;
using detail::expect_map;
using detail::MapFields;
using detail::RealBounds;

constexpr unsigned kMaxThreads = 1024;
constexpr std::uint32_t kMaxTimeoutMs = 24u * 3600 * 1000;  // a day: beyond is a typo

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// The three providers' public endpoints, before any file is read.
std::map<std::string, Upstream> builtin_upstreams() {
  std::map<std::string, Upstream> out;
  for (auto [name, url] :
       {std::pair{"openai", "https://api.openai.com"}, std::pair{"gemini", "https://generativelanguage.googleapis.com"},
        std::pair{"anthropic", "https://api.anthropic.com"}})
    out[name] = parse_upstream_url(url).value;
  return out;
}

template <class V>
void visit_limits(Limits& l, V&& v) {
  Bounds timeout{1, kMaxTimeoutMs};
  v("max_body_bytes", l.max_body_bytes, Bounds{1, detail::Wide(1) << 40});
  v("max_header_bytes", l.max_header_bytes, Bounds{1024, 16u << 20});
  v("max_header_count", l.max_header_count, Bounds{8, 10'000});
  v("connect_timeout_ms", l.connect_timeout_ms, timeout);
  v("header_timeout_ms", l.header_timeout_ms, timeout);
  v("idle_timeout_ms", l.idle_timeout_ms, timeout);
  v("client_header_timeout_ms", l.client_header_timeout_ms, timeout);
  v("keepalive_timeout_ms", l.keepalive_timeout_ms, timeout);
  v("drain_grace_ms", l.drain_grace_ms, Bounds{0, kMaxTimeoutMs});
  v("drain_timeout_ms", l.drain_timeout_ms, Bounds{0, kMaxTimeoutMs});
  v("pool_max_idle_per_upstream", l.pool_max_idle_per_upstream, Bounds{0, 100'000});
  v("diet_offload_bytes", l.diet_offload_bytes, Bounds{0, detail::Wide(1) << 40});
  v("big_bodies_in_flight_bytes", l.big_bodies_in_flight_bytes, Bounds{0, detail::Wide(1) << 40});
  v("big_body_wait_ms", l.big_body_wait_ms, timeout);
}

class Loader {
 public:
  Loader(std::string file, std::string base_dir) : base_dir_(std::move(base_dir)) { d_.file = std::move(file); }

  LoadResult run(std::string_view text) {
    Config cfg;
    cfg.source = d_.file;
    cfg.upstreams = builtin_upstreams();
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own depth guard
      d_.error(e.mark, "YAML nested deeper than " + std::to_string(e.depth()) + " levels");
      return finish(std::move(cfg));
    } catch (const YAML::Exception& e) {
      d_.error(e.mark, "YAML syntax: " + e.msg);
      return finish(std::move(cfg));
    }
    if (root.IsNull()) return finish(std::move(cfg));  // an empty file: all defaults
    if (!root.IsMap()) {
      d_.error(root.Mark(),
               "expected a map of top-level keys (listen, threads, upstreams, ...), got " + detail::describe(root));
      return finish(std::move(cfg));
    }
    MapFields top(d_, root, "");
    read_listen(top, cfg);
    top("threads", cfg.threads, Bounds{0, kMaxThreads});
    top("diet_threads", cfg.diet_threads, Bounds{0, 64});
    read_upstreams(top, cfg);
    top("default_upstream", cfg.default_upstream);
    read_admin_token(top, cfg);
    top("log_level", cfg.log_level);
    if (cfg.log_level != "info" && cfg.log_level != "debug")
      d_.error(top.mark_of("log_level"), "log_level: expected info or debug");
    read_section(top, "limits", [&](MapFields& f) { visit_limits(cfg.limits, f); });
    read_section(top, "ledger", [&](MapFields& f) { read_ledger(f, cfg.ledger); });
    read_section(top, "archive", [&](MapFields& f) { read_archive(f, cfg.archive); });
    read_quota_store(top, cfg);
    read_profiles(top, cfg);
    read_prices(top, cfg);
    top.finish();
    check_default_upstream(top, cfg);
    return finish(std::move(cfg));
  }

 private:
  LoadResult finish(Config cfg) {
    // Report in file order, whatever order the sections were read in.
    auto by_place = [](const ConfigError& a, const ConfigError& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    };
    std::stable_sort(d_.errors.begin(), d_.errors.end(), by_place);
    std::stable_sort(d_.warnings.begin(), d_.warnings.end(), by_place);
    return LoadResult{std::move(cfg), std::move(d_.errors), std::move(d_.warnings)};
  }

  // Runs `body` on the map under `key`, if present and a map.
  template <class Body>
  void read_section(MapFields& parent, std::string_view key, Body body) {
    YAML::Node node = parent.take(key);
    if (!node.IsDefined()) return;
    std::string path = parent.path() + std::string(key);
    if (!expect_map(d_, node, parent.mark_of(key), path)) return;
    MapFields fields(d_, node, path + ".");
    body(fields);
    fields.finish();
  }

  void read_listen(MapFields& top, Config& cfg) {
    std::string text;
    top("listen", text);
    if (text.empty()) return;
    auto parsed = parse_listen(text);
    if (!parsed.ok()) return d_.error(top.mark_of("listen"), "listen: " + parsed.error);
    cfg.listen_host = parsed.value.host;
    cfg.listen_port = parsed.value.port;
  }

  // A provider name: one of kProviders, with a suggestion for near misses.
  bool check_provider(const std::string& name, const YAML::Mark& at, const std::string& what) {
    if (std::find(kProviders.begin(), kProviders.end(), name) != kProviders.end()) return true;
    std::vector<std::string> known(kProviders.begin(), kProviders.end());
    std::string reason = what + ": unknown provider '" + name + "'";
    if (auto near = closest_word(name, known); !near.empty())
      reason += " (did you mean '" + near + "'?)";
    else
      reason += " (known: openai, gemini, anthropic)";
    d_.error(at, reason);
    return false;
  }

  void read_upstreams(MapFields& top, Config& cfg) {
    YAML::Node node = top.take("upstreams");
    if (!node.IsDefined() || !expect_map(d_, node, top.mark_of("upstreams"), "upstreams")) return;
    MapFields names(d_, node, "upstreams.");  // reports duplicates and non-string keys
    std::set<std::string> seen;
    for (const auto& kv : node) {  // kv: a (key, value) pair of node handles
      if (!kv.first.IsScalar() || !seen.insert(kv.first.Scalar()).second) continue;
      std::string name = kv.first.Scalar();
      names.take(name);
      if (!check_provider(name, kv.first.Mark(), "upstreams")) continue;
      read_upstream(name, kv.first, kv.second, cfg.upstreams[name]);
    }
  }

  // `name: URL` or `name: {url, ca_file, verify_tls}`.
  void read_upstream(const std::string& name, const YAML::Node& key, const YAML::Node& value, Upstream& out) {
    std::string path = "upstreams." + name;
    std::string url;
    YAML::Mark url_mark = detail::value_mark(key, value);
    Upstream extra;  // ca_file and verify_tls from the map form
    if (value.IsMap()) {
      MapFields f(d_, value, path + ".");
      f("url", url);
      f("ca_file", extra.ca_file);
      f("verify_tls", extra.verify_tls);
      f.finish();
      if (!f.has("url")) return d_.error(url_mark, path + ": missing 'url'");
      url_mark = f.mark_of("url");
      if (!extra.ca_file.empty()) {
        extra.ca_file = resolve_path(extra.ca_file, base_dir_);
        if (!std::ifstream(extra.ca_file))
          d_.error(f.mark_of("ca_file"), path + ".ca_file: cannot read '" + extra.ca_file + "'");
      }
      if (!extra.verify_tls)
        d_.warning(f.mark_of("verify_tls"), path + ".verify_tls is false: the upstream's certificate is not checked");
    } else if (!detail::read_value(d_, path, url_mark, value, url)) {
      return;
    }
    auto parsed = parse_upstream_url(url);
    if (!parsed.ok()) return d_.error(url_mark, path + ": " + parsed.error);
    out = parsed.value;
    if (std::string w = versioned_url_warning(path, out); !w.empty()) d_.warning(url_mark, w);
    out.ca_file = extra.ca_file;
    out.verify_tls = extra.verify_tls;
  }

  // A token short enough to guess, or one that cannot travel in a header,
  // fails at load rather than open the dashboard to guesses.
  void read_admin_token(MapFields& top, Config& cfg) {
    top("admin_token", cfg.admin_token);
    if (!top.has("admin_token")) return;
    const std::string& t = cfg.admin_token;
    bool printable = true;
    for (char c : t) printable = printable && c > 0x20 && c < 0x7f;
    if (t.size() < 16 || !printable)
      d_.error(top.mark_of("admin_token"),
               "admin_token: expected at least 16 printable characters without spaces (e.g. the output of "
               "`openssl rand -hex 16`)");
  }

  void check_default_upstream(MapFields& top, const Config& cfg) {
    if (cfg.upstreams.count(cfg.default_upstream)) return;
    check_provider(cfg.default_upstream, top.mark_of("default_upstream"), "default_upstream");
  }

  void read_ledger(MapFields& f, Ledger& ledger) {
    f("enabled", ledger.enabled);
    f("path", ledger.path);
    f("queue_size", ledger.queue_size, Bounds{1, 1u << 24});
    ledger.path = resolve_path(ledger.path, base_dir_);
  }

  void read_archive(MapFields& f, Archive& archive) {
    f("enabled", archive.enabled);
    f("path", archive.path);
    f("max_bytes", archive.max_bytes, Bounds{0, detail::Wide(1) << 50});
    f("max_age_ms", archive.max_age_ms, Bounds{0, detail::Wide(100) * 365 * 24 * 3600 * 1000});
    archive.path = resolve_path(archive.path, base_dir_);
  }

  // quota_store (config/quota_store.hpp) and its round trip's time-out.
  void read_quota_store(MapFields& top, Config& cfg) {
    std::string url;
    top("quota_store", url);
    std::uint64_t timeout_ms = cfg.quota_store.timeout_ms;
    top("quota_store_timeout_ms", timeout_ms, Bounds{1, 10'000});
    auto parsed = parse_quota_store(url);
    if (!parsed.ok()) return d_.error(top.mark_of("quota_store"), "quota_store: " + parsed.error);
    cfg.quota_store = parsed.value;
    cfg.quota_store.timeout_ms = timeout_ms;
  }

  // Profiles as a list of maps with a `name`, or as a map from name to fields.
  void read_profiles(MapFields& top, Config& cfg) {
    YAML::Node node = top.take("profiles");
    if (!node.IsDefined() || node.IsNull()) return;
    YAML::Mark at = top.mark_of("profiles");
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) {
        YAML::Node item = node[i];
        std::string path = "profiles[" + std::to_string(i) + "]";
        YAML::Mark item_at = item.IsNull() ? at : item.Mark();
        if (!item.IsMap()) {
          d_.error(item_at, path + ": expected a map with a name and profile fields, got " + detail::describe(item));
          continue;
        }
        pruning::Profile p;
        MapFields f(d_, item, path + ".");
        f("name", p.name);
        if (!f.has("name")) d_.error(item_at, path + ": missing 'name'");
        read_profile_fields(f, p, path);
        add_profile(cfg, std::move(p), f.mark_of("name"));
      }
    } else if (node.IsMap()) {
      MapFields names(d_, node, "profiles.");  // reports duplicates and non-string keys
      std::set<std::string> seen;
      for (const auto& kv : node) {  // kv: a (key, value) pair of node handles
        if (!kv.first.IsScalar() || !seen.insert(kv.first.Scalar()).second) continue;
        pruning::Profile p;
        p.name = kv.first.Scalar();
        names.take(p.name);
        std::string path = "profiles." + p.name;
        YAML::Mark value_at = detail::value_mark(kv.first, kv.second);
        if (!expect_map(d_, kv.second, value_at, path)) continue;
        MapFields f(d_, kv.second, path + ".");
        read_profile_fields(f, p, path);
        add_profile(cfg, std::move(p), kv.first.Mark());
      }
    } else {
      d_.error(at, "profiles: expected a list or a map of profiles, got " + detail::describe(node));
    }
  }

  // Every field pruning::Profile::visit names (or an old name of one), plus
  // checks on the globs.
  void read_profile_fields(MapFields& f, pruning::Profile& p, const std::string& path) {
    for (const detail::RenamedKey& r : detail::kRenamedProfileKeys) f.rename(r.old_name, r.names());
    p.visit(f);
    read_summarizer(f, p, path);
    f.finish();
    check_policy_fields(f, p, path);
    if (!f.has("models")) return;
    YAML::Mark at = f.mark_of("models");
    YAML::Node list = f.value_of("models");
    if (p.models.empty()) d_.error(at, path + ".models: empty list; a profile needs at least one glob");
    for (std::size_t i = 0; i < p.models.size(); ++i) {
      auto why = glob_error(p.models[i]);
      if (why.empty()) continue;
      // Point at the glob itself when it is an item of a list.
      YAML::Mark glob_at = list.IsSequence() && i < list.size() ? list[i].Mark() : at;
      d_.error(glob_at, path + ".models: invalid glob '" + p.models[i] + "': " + why);
    }
  }

  // `summarizer:` (the recap written by a model): a provider and a model,
  // optionally another upstream (upstreams are named by provider).
  void read_summarizer(MapFields& f, pruning::Profile& p, const std::string& path) {
    if (!f.has("summarizer")) return;
    const YAML::Mark at = f.mark_of("summarizer");
    pruning::Profile::Summarizer& s = p.summarizer;
    bool read = false;
    read_section(f, "summarizer", [&](MapFields& m) {
      read = true;
      m("provider", s.provider);
      m("model", s.model);
      m("upstream", s.upstream);
      m("timeout_ms", s.timeout_ms, Bounds{100, 50000});  // within the diet's pause (kOffloadWait)
      m("max_tokens", s.max_tokens, Bounds{0, 100000});
      auto bad = [&](const char* key, const std::string& why) {
        d_.error(m.has(key) ? m.mark_of(key) : at, path + ".summarizer." + key + ": " + why);
      };
      if (std::find(kProviders.begin(), kProviders.end(), s.provider) == kProviders.end())
        bad("provider", "must be one of openai, anthropic, gemini");
      if (s.model.empty()) bad("model", "must name the model that writes the recap");
      // Upstreams are named by provider (every one has a built-in URL).
      if (!s.upstream.empty() && std::find(kProviders.begin(), kProviders.end(), s.upstream) == kProviders.end())
        bad("upstream", "must name an upstream: openai, anthropic or gemini");
    });
    if (!read) s = {};  // not a map: said so, and no summarizer
  }

  // The policy's keys whose type alone does not bound them.
  void check_policy_fields(MapFields& f, const pruning::Profile& p, const std::string& path) {
    auto bad = [&](const char* key, const std::string& why) {
      if (f.has(key)) d_.error(f.mark_of(key), path + "." + key + ": " + why);
    };
    if (!(p.quota_margin >= 1.0 && p.quota_margin <= 10.0)) bad("quota_margin", "must be between 1 and 10");
    if (!(p.control_fraction >= 0.0 && p.control_fraction <= 1.0)) bad("control_fraction", "must be between 0 and 1");
    if (p.quota_window_ms < 1) bad("quota_window_ms", "must be at least 1 ms");
    if (p.anonymous_clients != "separate" && p.anonymous_clients != "shared")
      bad("anonymous_clients", "must be separate or shared");
    if (!(p.thinking_budget_runway_fraction >= 0.0 && p.thinking_budget_runway_fraction <= 1.0))
      bad("thinking_budget_runway_fraction", "must be between 0 and 1");
    if (f.has("completed_tasks_tools")) {  // each spec parses (syntax: pruning/tasks.hpp)
      YAML::Node list = f.value_of("completed_tasks_tools");
      for (std::size_t i = 0; i < p.completed_tasks_tools.size(); ++i) {
        std::string why;
        if (pruning::parse_task_tool(p.completed_tasks_tools[i], &why)) continue;
        YAML::Mark at = list.IsSequence() && i < list.size() ? list[i].Mark() : f.mark_of("completed_tasks_tools");
        d_.error(at, path + ".completed_tasks_tools[" + std::to_string(i) + "]: " + why);
      }
    }
    static constexpr std::string_view kEfforts[] = {"none", "minimal", "low", "medium", "high"};
    if (std::find(std::begin(kEfforts), std::end(kEfforts), p.thinking_budget_effort) == std::end(kEfforts))
      bad("thinking_budget_effort", "must be one of none, minimal, low, medium, high");
    // The recall loop's bounds (docs/design.md §Recall): what one round may add to a request.
    if (p.recall_max_calls < 1 || p.recall_max_calls > 64) bad("recall_max_calls", "must be between 1 and 64");
    if (p.recall_max_answer_bytes < 256 || p.recall_max_answer_bytes > (16u << 20))
      bad("recall_max_answer_bytes", "must be between 256 and 16777216 bytes");
    if (p.recalled_lines != "answered" && p.recalled_lines != "output" && p.recalled_lines != "off")
      bad("recalled_lines", "must be answered, output or off");
  }

  void add_profile(Config& cfg, pruning::Profile p, const YAML::Mark& at) {
    if (p.name.empty()) return d_.error(at, "profile name must not be empty");
    for (const auto& q : cfg.profiles)
      if (q.name == p.name) return d_.error(at, "duplicate profile name '" + p.name + "'");
    cfg.profiles.push_back(std::move(p));
  }

  void read_prices(MapFields& top, Config& cfg) {
    YAML::Node node = top.take("prices");
    if (!node.IsDefined() || node.IsNull()) return;
    YAML::Mark at = top.mark_of("prices");
    if (!node.IsSequence())
      return d_.error(at, "prices: expected a list of {model, input, cached_input, cache_write, output}, got " +
                              detail::describe(node));
    RealBounds usd{0, 1e6};
    for (std::size_t i = 0; i < node.size(); ++i) {
      YAML::Node item = node[i];
      std::string path = "prices[" + std::to_string(i) + "]";
      if (!item.IsMap()) {
        d_.error(item.IsNull() ? at : item.Mark(), path + ": expected a map, got " + detail::describe(item));
        continue;
      }
      Price price;
      MapFields f(d_, item, path + ".");
      f("model", price.model);
      f("input", price.input, usd);
      f("cached_input", price.cached_input, usd);
      f("cache_write", price.cache_write, usd);
      f("output", price.output, usd);
      f.finish();
      if (!f.has("model")) {
        d_.error(item.Mark(), path + ": missing 'model' (a glob such as 'gpt-4o*')");
        continue;
      }
      if (auto why = glob_error(price.model); !why.empty()) {
        d_.error(f.mark_of("model"), path + ".model: invalid glob '" + price.model + "': " + why);
        continue;
      }
      cfg.prices.push_back(std::move(price));
    }
  }

  Diagnostics d_;
  std::string base_dir_;
};

}  // namespace

LoadResult load_string(std::string_view text, const std::string& source_name, const std::string& base_dir) {
  return Loader(source_name, base_dir).run(text);
}

LoadResult load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec(errno, std::generic_category());
    LoadResult r;
    r.errors.push_back(ConfigError{path, 0, 0, "cannot read: " + ec.message()});
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return load_string(text.str(), path, dir);
}

Config default_config() {
  static const LoadResult parsed = load_string(embedded_default_yaml(), "<embedded>");
  if (!parsed.ok())  // a unit test keeps this from ever happening
    throw std::logic_error("embedded default config is invalid: " + format_error(parsed.errors.front()));
  return parsed.config;
}

std::string format_error(const ConfigError& e) {
  if (e.line <= 0) return e.file + ": " + e.reason;
  return e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.reason;
}

}  // namespace td::config

#include "cli/archive_command.hpp"

#include <ctime>
#include <iostream>
#include <iterator>

#include "archive/durable_file.hpp"
#include "archive/index.hpp"
#include "archive/store.hpp"
#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/input_path.hpp"
#include "cli/terminal_text.hpp"
#include "config/load.hpp"
#include "config/state_paths.hpp"
#include "json/json_strings.hpp"

namespace td::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: tokendiet archive ls [--key FP] [--json] [--dir DIR] [--config FILE]\n"
    "       tokendiet archive show ID [--key FP] [--dir DIR] [--config FILE]\n"
    "       tokendiet archive id FILE|-\n"
    "\n"
    "The archive of tool outputs semantic eviction took out of requests.\n"
    "ls lists its entries, oldest first: when each was archived (UTC), the API\n"
    "key's fingerprint (- for requests without a key), the id, its tokens and\n"
    "bytes, and the task it belonged to. show prints an entry's text exactly as\n"
    "it was evicted (to a terminal, with its control characters shown as \\xNN).\n"
    "id prints the id a text would be archived under (its content address), to\n"
    "find the entry that holds it. Read-only: nothing is written or removed.\n"
    "\n"
    "options:\n";

constexpr const char* kFooter =
    "\n"
    "For the systemd service: sudo tokendiet archive ls --dir /var/lib/tokendiet/archive\n";

std::string utc_time(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A task title on one line: the first line of it, its control characters
// shown (it is the agent's text: docs/design.md §Configuration, Command line).
std::string one_line(const std::string& task) { return terminal_text(task.substr(0, task.find('\n'))); }

void list_entries(const std::vector<archive::EntryInfo>& entries, bool json, std::ostream& out) {
  if (json) {
    std::string text = "[";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      text += (i ? ",\n " : "");
      text += "{\"created\":\"" + utc_time(e.created) + "\",\"key\":" + json::json_string(e.key_fp) +
              ",\"id\":" + json::json_string(e.id) + ",\"tokens\":" + std::to_string(e.tokens) +
              ",\"bytes\":" + std::to_string(e.bytes) + ",\"task\":" + json::json_string(e.task) + "}";
    }
    out << terminal_json(text + "]\n");
    return;
  }
  out << "created               key               id                                   tokens      bytes  task\n";
  for (const auto& e : entries) {
    char line[160];
    std::snprintf(line, sizeof line, "%-20s  %-16s  %-35s  %6u  %9llu  ", utc_time(e.created).c_str(),
                  e.key_fp.empty() ? "-" : terminal_text(e.key_fp).c_str(), terminal_text(e.id).c_str(), e.tokens,
                  static_cast<unsigned long long>(e.bytes));
    out << line << one_line(e.task) << "\n";
  }
}

}  // namespace

Parsed<ArchiveOptions> parse_archive_args(const std::vector<std::string>& args) {
  Parsed<ArchiveOptions> parsed;
  ArchiveOptions& o = parsed.options;
  auto app = make_app("archive", kSynopsis, kFooter, 17);
  app->add_option("ls|show ID|id FILE", o.words);  // described in the synopsis
  add_optional(*app, "--key", o.key,
               "only the entries of the API key with this fingerprint\n(16 hex digits, as in the ledger)")
      ->type_name("FP");
  app->add_flag("--json", o.json, "ls: a JSON array instead of the table.");
  add_optional(*app, "--dir", o.dir,
               "the archive's directory. Default: archive.path from the config,\n"
               "else $STATE_DIRECTORY/archive, $XDG_STATE_HOME/tokendiet/archive\n"
               "or ~/.local/state/tokendiet/archive.")
      ->type_name("DIR");
  add_optional(*app, "--config", o.config, "the config with archive.path. Default: the embedded one.")
      ->type_name("FILE");
  parsed.stop = parse(*app, args);
  if (parsed.stop) return parsed;
  const auto& w = o.words;
  if (w.empty())
    parsed.stop = usage_error(*app, "say ls, show ID or id FILE");
  else if (w[0] == "ls" && w.size() != 1)
    parsed.stop = usage_error(*app, "ls takes no argument");
  else if (w[0] == "show" && w.size() != 2)
    parsed.stop = usage_error(*app, "show takes one entry id");
  else if (w[0] == "id" && w.size() != 2)
    parsed.stop = usage_error(*app, "id takes one FILE (- for stdin)");
  else if (w[0] != "ls" && w[0] != "show" && w[0] != "id")
    parsed.stop = usage_error(*app, "unknown action '" + w[0] + "' (ls, show or id)");
  else if (o.key && !(o.key->size() == 16 && archive::valid_key_fp(*o.key)))
    parsed.stop = usage_error(*app, "--key: expected 16 lowercase hex digits");
  return parsed;
}

int archive_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool out_is_terminal) {
  auto parsed = parse_archive_args(args);
  if (parsed.stop) return finish(*parsed.stop, out, err);
  const ArchiveOptions& o = parsed.options;
  if (o.words[0] == "id") {
    std::string text;
    const std::string& file = o.words[1];
    if (file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else if (auto problem = path_problem(file, PathKind::file); !problem.empty()) {
      err << "archive: " << problem << "\n";
      return 1;
    } else if (!archive::read_whole_file(file, text)) {
      err << "archive: cannot read " << terminal_text(file) << "\n";
      return 1;
    }
    out << pruning::archive_id(text) << "\n";
    return 0;
  }
  std::string dir;
  if (o.dir) {
    dir = *o.dir;
  } else {
    const std::optional<config::Config> cfg = command_config(o.config, err);
    if (!cfg) return 1;
    auto resolved = config::archive_dir(cfg->archive);
    if (!resolved) {
      err << "archive: no archive directory: set archive.path in the config, or pass --dir DIR\n";
      return 1;
    }
    dir = *resolved;
  }
  // A directory that is not there is an error, not an empty archive: a
  // mistyped --dir must not read as "nothing archived".
  if (auto problem = path_problem(dir, PathKind::directory); !problem.empty()) {
    err << "archive: " << problem << "\n";
    return 1;
  }
  archive::Store::Options options;
  options.read_only = true;
  const archive::Store store(dir, options);
  if (o.words[0] == "ls") {
    list_entries(store.list(o.key ? std::optional<std::string_view>(*o.key) : std::nullopt), o.json, out);
    return 0;
  }
  const std::string& id = o.words[1];
  auto entry = o.key ? store.read(*o.key, id) : store.read_any(id);
  if (!entry) {
    err << "archive: no entry " << terminal_text(id) << (o.key ? " for key " + *o.key : std::string()) << " in "
        << terminal_text(dir) << "\n";
    return 1;
  }
  // The text exactly as evicted when it goes to a file or a pipe (what
  // `archive id` hashes); to a terminal, with its control characters shown.
  out << (out_is_terminal ? terminal_text(entry->text, true) : entry->text);
  return 0;
}

int archive(int argc, char** argv) {
  return archive_run(args_of(argc, argv), std::cout, std::cerr, stdout_is_terminal());
}

}  // namespace td::cli

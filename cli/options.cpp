#include "cli/options.hpp"

#include <algorithm>
#include <sstream>

namespace td::cli {
namespace {

// The help page of make_app: the synopsis, the option lines, the footer.
class HelpPage : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::ostringstream out;
    out << app->get_description();
    for (const CLI::Option* opt : app->get_options()) {
      if (opt == app->get_help_ptr() || opt->get_description().empty()) continue;
      CLI::detail::format_help(out, label(*opt), opt->get_description(), column_width_);
    }
    out << app->get_footer();
    return out.str();
  }

 private:
  // "FILE|-", "--json", "--request FILE".
  static std::string label(const CLI::Option& opt) {
    if (opt.get_positional()) return opt.get_name(true, false);
    std::string text = opt.get_name(false, true);
    if (opt.get_type_size() != 0) text += " " + opt.get_type_name();
    return text;
  }
};

std::string alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// CLI11 says "The following argument was not expected: --bogus"; we name
// each word as an option or an argument.
std::string unexpected(const std::vector<std::string>& extras) {
  std::string out;
  for (const auto& word : extras) {
    if (!out.empty()) out += "; ";
    const bool option = word.size() > 1 && word[0] == '-';
    out += (option ? "unknown option '" : "unexpected argument '") + word + "'";
  }
  return out;
}

// CLI11 says "--encoding: 1 required E missing" for an option that ends the
// command line without its value; we say "--encoding: missing value".
std::string mismatch(const CLI::ArgumentMismatch& e) {
  const std::string what = e.what();
  const std::string tail = " missing";
  const auto colon = what.find(": ");
  const bool missing = colon != std::string::npos && what.size() > tail.size() &&
                       what.compare(what.size() - tail.size(), tail.size(), tail) == 0;
  return missing ? what.substr(0, colon) + ": missing value" : what;
}

// "--name=" gives --name an empty value. CLI11 reads it as "--name" alone
// and takes the next word as the value, so it becomes "--name" "".
std::vector<std::string> split_empty_values(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  bool options_end = false;
  for (const auto& word : args) {
    options_end = options_end || word == "--";
    const bool empty_value = !options_end && word.size() > 3 && word.rfind("--", 0) == 0 && word.back() == '=';
    const CLI::Option* opt = empty_value ? app.get_option_no_throw(word.substr(0, word.size() - 1)) : nullptr;
    if (opt && opt->get_type_size() != 0) {
      out.push_back(word.substr(0, word.size() - 1));
      out.emplace_back();
    } else {
      out.push_back(word);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<CLI::App> make_app(const std::string& name, std::string synopsis, std::string footer,
                                   std::size_t column) {
  auto app = std::make_unique<CLI::App>(std::move(synopsis), name);
  app->footer(std::move(footer));
  auto page = std::make_shared<HelpPage>();
  page->column_width(column);
  app->formatter(page);
  // As the hand-written parsers did: a repeated single-value option keeps the
  // last (CLI11 would refuse it).
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return app;
}

CLI::Option* add_optional(CLI::App& app, const std::string& name, std::optional<std::string>& slot,
                          const std::string& description) {
  return app.add_option_function<std::string>(
      name, [&slot](const std::string& value) { slot = value; }, description);
}

std::optional<ParseStop> parse(CLI::App& app, const std::vector<std::string>& words) {
  std::vector<std::string> args = split_empty_values(app, words);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last word first
  try {
    app.parse(args);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    return ParseStop{0, app.help()};
  } catch (const CLI::ExtrasError&) {
    return usage_error(app, unexpected(app.remaining()));
  } catch (const CLI::ArgumentMismatch& e) {
    return usage_error(app, mismatch(e));
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  }
}

ParseStop usage_error(const CLI::App& app, const std::string& reason) {
  return usage_error(app, std::vector<std::string>{reason});
}

ParseStop usage_error(const CLI::App& app, const std::vector<std::string>& reasons) {
  std::string text;
  for (const auto& reason : reasons) text += app.get_name() + ": " + reason + "\n";
  return ParseStop{2, text + "\n" + app.help()};
}

int finish(const ParseStop& stop, std::ostream& out, std::ostream& err) {
  (stop.status == 0 ? out : err) << stop.text << std::flush;
  return stop.status;
}

CLI::Validator one_of(std::vector<std::string> names, std::string what) {
  return CLI::Validator(
      [names = std::move(names), what = std::move(what)](std::string& value) -> std::string {
        if (std::find(names.begin(), names.end(), value) != names.end()) return {};
        return "unknown " + what + " '" + value + "' (" + alternatives(names) + ")";
      },
      "");  // no description: it would be appended to the value's name in --help
}

std::vector<std::string> args_of(int argc, char** argv) { return std::vector<std::string>(argv, argv + argc); }

}  // namespace td::cli

// `tokendiet count`: token counts from the command line (and the external
// command of scripts/bench/tokenizer).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "providers/billing.hpp"
#include "providers/body_format.hpp"
#include "providers/request.hpp"
#include "cli/commands.hpp"
#include "cli/count_command.hpp"
#include "cli/terminal_text.hpp"
#include "pruning/conversation.hpp"
#include "pruning/json_nesting.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: tokendiet count [--encoding o200k_base|cl100k_base|estimate] [FILE|-]\n"
    "       tokendiet count [--encoding ...] --jsonl\n"
    "       tokendiet count --request FILE.json [--json] [--format F] [--encoding ...|--model MODEL]\n\n"
    "Counts tokens exactly as OpenAI's tiktoken (encode_ordinary), or estimates\n"
    "them (a weight per byte class, uncalibrated) for models without a local\n"
    "tokenizer.\n\n";

constexpr const char* kFooter = "Exit status: 0 ok, 1 unreadable input, 2 usage error.\n";

constexpr providers::Api kFormats[] = {providers::Api::openai_chat, providers::Api::openai_responses,
                                       providers::Api::anthropic, providers::Api::gemini};

// Reads straight into the string (no bounce buffer), growing it geometrically.
bool read_all(std::FILE* f, std::string& out) {
  std::size_t used = out.size();
  out.resize(std::max<std::size_t>(used + (1 << 20), out.capacity()));
  while (true) {
    const std::size_t n = std::fread(out.data() + used, 1, out.size() - used, f);
    used += n;
    if (used < out.size()) break;  // short read: end of file or error
    out.resize(out.size() * 2);
  }
  out.resize(used);
  return !std::ferror(f);
}

bool read_path(const std::string& path, std::string& out) {
  if (path == "-") return read_all(stdin, out);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  bool ok = read_all(f, out);
  std::fclose(f);
  return ok;
}

std::string_view sv(const rapidjson::Value& v) {
  return v.IsString() ? std::string_view(v.GetString(), v.GetStringLength()) : std::string_view();
}

const char* role_name(pruning::Role r) {
  switch (r) {
    case pruning::Role::System:
      return "system";
    case pruning::Role::User:
      return "user";
    case pruning::Role::Assistant:
      return "assistant";
    case pruning::Role::Tool:
      return "tool";
  }
  return "user";
}

// The counter for `model` (the --model option first). A body whose model is
// not known (Gemini names it in the URL) is counted as OpenAI's current
// encoding only in OpenAI's formats: any other is estimated, never claimed
// exact in an encoding its model does not use.
std::unique_ptr<pruning::TokenCounter> make_counter(const CountOptions& o, std::string_view model,
                                                    bool openai_format = true) {
  if (o.encoding == "estimate") return std::make_unique<tok::EstimatingCounter>(1.0);
  if (auto id = tok::encoding_from_name(o.encoding)) return std::make_unique<tok::BpeCounter>(*id);
  if (!o.model.empty()) return tok::counter_for_model(o.model);
  if (!model.empty()) return tok::counter_for_model(model);
  if (!openai_format) return std::make_unique<tok::EstimatingCounter>(1.0);
  return std::make_unique<tok::BpeCounter>(tok::EncodingId::O200kBase);
}

std::string counter_label(const pruning::TokenCounter& c) {
  if (auto* b = dynamic_cast<const tok::BpeCounter*>(&c)) return std::string(tok::encoding_name(b->encoding()));
  return "estimate";
}

// Counts one JSON line's "text" ("" for a line without one).
int run_jsonl(const pruning::TokenCounter& counter) {
  std::string input;
  if (!read_all(stdin, input)) return std::perror("count: stdin"), 1;
  std::string out;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < input.size()) {
    std::size_t eol = input.find('\n', pos);
    if (eol == std::string::npos) eol = input.size();
    char* line = input.data() + pos;
    const std::size_t len = eol - pos;
    pos = eol + 1;
    ++line_no;
    if (len == 0 || (len == 1 && line[0] == '\r')) continue;
    line[len] = '\0';  // the '\n' (or the string's own terminator)
    rapidjson::Document d;
    if (!pruning::json_nesting_within(line) || d.ParseInsitu(line).HasParseError() || !d.IsObject()) {
      std::fprintf(stderr, "count: line %d: not a JSON object\n", line_no);
      return 1;
    }
    std::uint64_t n = 0;
    if (auto t = d.FindMember("text"); t != d.MemberEnd() && t->value.IsString()) n = counter.count(sv(t->value));
    out += std::to_string(n);
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int run_request(const CountOptions& o) {
  std::string body;
  if (!read_path(o.request, body)) return std::perror(("count: " + terminal_text(o.request)).c_str()), 1;
  std::string why;
  const std::optional<providers::Api> format = o.format ? o.format : providers::detect_body_format(body, why);
  if (!format)
    return std::fprintf(stderr, "count: %s: %s (pass --format)\n", terminal_text(o.request).c_str(),
                        terminal_text(why).c_str()),
           1;
  providers::ParseOutcome parsed = providers::parse(*format, body);
  if (!parsed.request)
    return std::fprintf(stderr, "count: %s: %s (read as %s)\n", terminal_text(o.request).c_str(),
                        terminal_text(parsed.error).c_str(), std::string(providers::name(*format)).c_str()),
           1;
  const pruning::Conversation* conv = &parsed.request->conversation;
  const tok::BillingRules rules = providers::billing_rules_for(*format);
  const bool openai = *format == providers::Api::openai_chat || *format == providers::Api::openai_responses;
  auto counter = make_counter(o, conv->model, openai);
  const std::string format_name(providers::name(*format));
  const tok::ConversationCount c = tok::count_conversation(*conv, *counter, nullptr, rules);
  const std::string label = counter_label(*counter);
  if (o.json) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartObject();
    w.Key("format"), w.String(format_name.c_str());
    w.Key("model"), w.String(conv->model.c_str());
    w.Key("encoding"), w.String(label.c_str());
    w.Key("exact"), w.Bool(counter->exact());
    w.Key("total"), w.Uint64(c.total);
    w.Key("messages"), w.StartArray();
    for (std::size_t i = 0; i < conv->messages.size(); ++i) {
      w.StartObject();
      w.Key("index"), w.Uint64(i);
      w.Key("role"), w.String(role_name(conv->messages[i].role));
      w.Key("tokens"), w.Uint64(c.per_message[i]);
      w.EndObject();
    }
    w.EndArray();
    w.Key("tools"), w.Uint64(c.tools);
    w.Key("priming"), w.Uint64(c.priming);
    w.EndObject();
    // The model is the request's: its control characters escaped for a terminal.
    std::printf("%s\n", terminal_json(std::string_view(sb.GetString(), sb.GetSize())).c_str());
    return 0;
  }
  std::printf("total %llu  (%s, %s, %s)\n", static_cast<unsigned long long>(c.total), format_name.c_str(),
              label.c_str(), counter->exact() ? "exact" : "estimate");
  for (std::size_t i = 0; i < conv->messages.size(); ++i)
    std::printf("  #%-4zu %-10s %llu\n", i, role_name(conv->messages[i].role),
                static_cast<unsigned long long>(c.per_message[i]));
  if (c.tools) std::printf("  tools      %llu\n", static_cast<unsigned long long>(c.tools));
  std::printf("  priming    %llu\n", static_cast<unsigned long long>(c.priming));
  return 0;
}

int run(const CountOptions& o) {
  if (!o.request.empty()) return run_request(o);
  auto counter = make_counter(o, "");
  if (o.jsonl) return run_jsonl(*counter);
  std::string text;
  if (!read_path(o.file, text)) return std::perror(("count: " + terminal_text(o.file)).c_str()), 1;
  std::printf("%llu\n", static_cast<unsigned long long>(counter->count(text)));
  return 0;
}

}  // namespace

Parsed<CountOptions> parse_count_args(const std::vector<std::string>& args) {
  Parsed<CountOptions> parsed;
  CountOptions& o = parsed.options;
  auto app = make_app("count", kSynopsis, kFooter);
  app->add_option("FILE|-", o.file,
                  "count the whole file (stdin without FILE or with -); prints\n"
                  "only the integer");
  app->add_flag("--jsonl", o.jsonl, "read JSON lines {\"text\": ...} on stdin, print one count per line");
  CLI::Option* request = app->add_option("--request", o.request,
                                         "a chat request body of any format (- = stdin): the total\n"
                                         "prompt tokens as billed (per-message overhead, names, tool\n"
                                         "calls, tool schemas, reply priming) and a per-message\n"
                                         "breakdown; the encoding follows the request's model")
                             ->type_name("FILE");
  app->add_flag("--json", o.json, "with --request: the breakdown as JSON")->needs(request);
  app->add_option("--encoding", o.encoding, "o200k_base (default), cl100k_base, or estimate")
      ->type_name("E")
      ->check(one_of({"o200k_base", "cl100k_base", "estimate"}, "encoding"));
  app->add_option("--model", o.model, "pick the counter the proxy would use for model M")->type_name("M");
  std::vector<std::string> formats;
  for (auto api : kFormats) formats.emplace_back(providers::name(api));
  app->add_option_function<std::string>(
         "--format",
         [&o](const std::string& name) {
           for (auto api : kFormats)
             if (providers::name(api) == name) o.format = api;
         },
         "the request body's wire format: openai_chat, openai_responses,\n"
         "anthropic, gemini (default: detected from the body's shape;\n"
         "Gemini names its model in the URL: pass --model, or the count\n"
         "is an estimate)")
      ->type_name("F")
      ->check(one_of(std::move(formats), "format"));
  parsed.stop = parse(*app, args);
  return parsed;
}

int count(int argc, char** argv) {
  auto parsed = parse_count_args(args_of(argc, argv));
  if (parsed.stop) return finish(*parsed.stop, std::cout, std::cerr);
  try {
    return run(parsed.options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "count: %s\n", e.what());
    return 1;
  }
}

}  // namespace td::cli

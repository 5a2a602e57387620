#include "cli/usage_compare.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/terminal_text.hpp"
#include "ledger/arm_comparison_json.hpp"

namespace td::cli {

namespace {

using ledger::ArmFigure;
using ledger::Interval;

constexpr const char* kLabels[ledger::kArmFigures] = {
    "requests per session",  "cost per session",    "cost per request",   "re-reads /100 requests",
    "recalls /100 requests", "context errors /100", "429s /100 requests",
};

bool is_cost(ArmFigure f) { return f == ArmFigure::CostPerSession || f == ArmFigure::CostPerRequest; }

std::string fmt(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string value(ArmFigure f, double v) {
  if (is_cost(f)) return fmt(v != 0 && v < 1 ? "$%.4f" : "$%.2f", v);
  return fmt("%.1f", v);
}

std::string diff(ArmFigure f, double v) {
  return ledger::arm_figure_relative(f) ? fmt("%+.1f %%", v) : fmt("%+.1f", v);
}

// "a-b" (an arm's interval) or "a to b" (a difference's).
std::string span(ArmFigure f, const Interval& i, bool difference) {
  if (!i.known) return "-";
  if (difference)
    return ledger::arm_figure_relative(f) ? fmt("%+.1f", i.low) + " to " + fmt("%+.1f %%", i.high)
                                          : fmt("%+.1f", i.low) + " to " + fmt("%+.1f", i.high);
  return value(f, i.low) + "-" + value(f, i.high);
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// `text` in lines of at most `width` columns, broken at spaces.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

void line(std::string& out, const std::string& label, const std::string& a, const std::string& b,
          const std::string& c) {
  std::string l = pad(label, 24) + pad(a, 18) + pad(b, 18) + c;
  while (!l.empty() && l.back() == ' ') l.pop_back();
  out += l + "\n";
}

void group_table(std::string& out, const ledger::ArmGroup& g) {
  line(out, terminal_text(g.key), "treatment", "control", "difference");
  line(out, "sessions", std::to_string(g.treatment.sessions), std::to_string(g.control.sessions), "");
  line(out, "requests", std::to_string(g.treatment.requests), std::to_string(g.control.requests), "");
  for (std::size_t i = 0; i < ledger::kArmFigures; ++i) {
    const ArmFigure f = ArmFigure(i);
    line(out, kLabels[i], value(f, g.treatment_figures[i].value), value(f, g.control_figures[i].value),
         std::isnan(g.difference[i].value) ? "-" : diff(f, g.difference[i].value));
    line(out, "  95 % interval", span(f, g.treatment_figures[i], false), span(f, g.control_figures[i], false),
         span(f, g.difference[i], true));
  }
  out += wrapped(g.sentence, 80);
}

}  // namespace

std::string render_compare_table(const ledger::ArmComparison& c, const std::vector<std::string>& ledgers) {
  std::string out = wrapped(
      "The diet (treatment) against the control arm (sessions sent untouched); 95 % intervals "
      "from " +
          std::to_string(c.resamples) + " resamples of the sessions.",
      80);
  for (const std::string& p : ledgers) out += "ledger: " + terminal_text(p) + "\n";
  // Per model when there are several (with one, the total is that model's).
  for (const ledger::ArmGroup& g : c.groups) {
    if (c.groups.size() < 2) break;
    out += "\n";
    group_table(out, g);
  }
  out += "\n";
  group_table(out, c.total);
  return out;
}

std::string render_compare_json(const ledger::ArmComparison& c, const std::vector<std::string>& ledgers,
                                std::int64_t since_ms) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("ledgers");
  w.StartArray();
  for (const std::string& p : ledgers) w.String(p.c_str(), static_cast<rapidjson::SizeType>(p.size()));
  w.EndArray();
  w.Key("since_ms");
  w.Int64(since_ms);
  ledger::write_comparison(w, c);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

}  // namespace td::cli

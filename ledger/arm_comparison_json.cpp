#include "ledger/arm_comparison_json.hpp"

#include <cmath>

namespace td::ledger {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void interval_json(Writer& w, const Interval& i, bool difference) {
  w.StartObject();
  w.Key("value");
  if (std::isnan(i.value))
    w.Null();
  else
    w.Double(i.value);
  w.Key("low");
  i.known ? w.Double(i.low) : w.Null();
  w.Key("high");
  i.known ? w.Double(i.high) : w.Null();
  if (difference) {  // resolved: the interval leaves out no difference
    w.Key("resolved");
    w.Bool(i.known && (i.low > 0 || i.high < 0));
  }
  w.EndObject();
}

void arm_json(Writer& w, const ArmSums& s, const std::array<Interval, kArmFigures>& figures) {
  w.StartObject();
  w.Key("sessions");
  w.Int64(s.sessions);
  w.Key("requests");
  w.Int64(s.requests);
  w.Key("cost_usd");
  w.Double(s.cost_usd);
  w.Key("rereads");
  w.Int64(s.rereads);
  w.Key("recall_rounds");
  w.Int64(s.recall_rounds);
  w.Key("context_errors");
  w.Int64(s.context_errors);
  w.Key("rate_limited");
  w.Int64(s.rate_limited);
  w.Key("unpriced_requests");
  w.Int64(s.unpriced_requests);
  for (std::size_t i = 0; i < kArmFigures; ++i) {
    w.Key(std::string(arm_figure_name(ArmFigure(i))).c_str());
    interval_json(w, figures[i], false);
  }
  w.EndObject();
}

void group_json(Writer& w, const ArmGroup& g) {
  w.StartObject();
  w.Key("key");
  w.String(g.key.c_str(), static_cast<rapidjson::SizeType>(g.key.size()));
  w.Key("treatment");
  arm_json(w, g.treatment, g.treatment_figures);
  w.Key("control");
  arm_json(w, g.control, g.control_figures);
  w.Key("difference");
  w.StartObject();
  for (std::size_t i = 0; i < kArmFigures; ++i) {
    w.Key(std::string(arm_figure_name(ArmFigure(i))).c_str());
    interval_json(w, g.difference[i], true);
  }
  w.EndObject();
  w.Key("sentence");
  w.String(g.sentence.c_str(), static_cast<rapidjson::SizeType>(g.sentence.size()));
  w.EndObject();
}

}  // namespace

void write_comparison(Writer& w, const ArmComparison& c) {
  w.Key("resamples");
  w.Int(c.resamples);
  w.Key("seed");
  w.Uint64(c.seed);
  w.Key("groups");
  w.StartArray();
  for (const ArmGroup& g : c.groups) group_json(w, g);
  w.EndArray();
  w.Key("total");
  group_json(w, c.total);
}

}  // namespace td::ledger

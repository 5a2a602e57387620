#include "bodies.hpp"

#include <doctest/doctest.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "roundtrip.hpp"

namespace td::providers::test {

namespace {

// Python's json.dumps: ", " and ": " separators, non-ASCII as \uXXXX.
void python_ascii(const rapidjson::Value& v, std::string& out) {
  switch (v.GetType()) {
    case rapidjson::kObjectType: {
      out += '{';
      bool first = true;
      for (const auto& m : v.GetObject()) {
        if (!first) out += ", ";
        first = false;
        python_ascii(m.name, out);
        out += ": ";
        python_ascii(m.value, out);
      }
      out += '}';
      return;
    }
    case rapidjson::kArrayType: {
      out += '[';
      bool first = true;
      for (const auto& e : v.GetArray()) {
        if (!first) out += ", ";
        first = false;
        python_ascii(e, out);
      }
      out += ']';
      return;
    }
    case rapidjson::kStringType: {
      rapidjson::StringBuffer sb;
      rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::ASCII<>> w(sb);
      v.Accept(w);
      out += sb.GetString();
      return;
    }
    default: {
      rapidjson::StringBuffer sb;
      rapidjson::Writer<rapidjson::StringBuffer> w(sb);
      v.Accept(w);
      out += sb.GetString();
    }
  }
}

}  // namespace

std::string serialize(const rapidjson::Value& v, Style style) {
  if (style == Style::PythonAscii) {
    std::string out;
    python_ascii(v, out);
    return out;
  }
  rapidjson::StringBuffer sb;
  if (style == Style::Pretty) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(sb);
    v.Accept(w);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    v.Accept(w);
  }
  return std::string(sb.GetString(), sb.GetSize());
}

Trajectory load_trajectory(const std::string& path) {
  std::string text = read_file(path);
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  REQUIRE_MESSAGE(!d.HasParseError(), path);
  Trajectory t;
  t.id = d["id"].GetString();
  t.model = d["model"].IsString() ? d["model"].GetString() : "unknown";  // some sources name none
  const auto& msgs = d["messages"].GetArray();
  for (rapidjson::SizeType i = 0; i < msgs.Size(); ++i) {
    t.messages.push_back(serialize(msgs[i], Style::Compact));
    if (std::string_view(msgs[i]["role"].GetString()) == "assistant") t.assistant_at.push_back(i);
  }
  return t;
}

std::string chat_body(const Trajectory& t, std::size_t message_count) {
  std::string body = "{\"model\":\"" + t.model + "\",\"messages\":[";
  for (std::size_t i = 0; i < message_count; ++i) {
    if (i) body += ',';
    body += t.messages[i];
  }
  body += "],\"stream\":true,\"stream_options\":{\"include_usage\":true},\"temperature\":0}";
  return body;
}

}  // namespace td::providers::test

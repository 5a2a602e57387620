#include "providers/openai_chat/tools_text.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "pruning/json_nesting.hpp"

#include <string_view>
#include <vector>

namespace td::providers {
namespace {

using rapidjson::Value;

std::string_view str(const Value& v, const char* key) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

std::string scalar_text(const Value& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return {sb.GetString(), sb.GetSize()};
}

std::string format_type(const Value& param, int indent);

std::string format_properties(const Value& obj, int indent) {
  std::vector<std::string> lines;
  auto props = obj.FindMember("properties");
  if (props == obj.MemberEnd() || !props->value.IsObject()) return {};
  auto req = obj.FindMember("required");
  auto required = [&](std::string_view name) {
    if (req == obj.MemberEnd() || !req->value.IsArray()) return false;
    for (const auto& r : req->value.GetArray())
      if (r.IsString() && std::string_view(r.GetString(), r.GetStringLength()) == name) return true;
    return false;
  };
  for (const auto& m : props->value.GetObject()) {
    std::string_view name(m.name.GetString(), m.name.GetStringLength());
    std::string_view desc = str(m.value, "description");
    if (!desc.empty() && indent < 2) lines.push_back("// " + std::string(desc));
    lines.push_back(std::string(name) + (required(name) ? ": " : "?: ") + format_type(m.value, indent) + ",");
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += std::string(static_cast<std::size_t>(indent), ' ') + lines[i];
  }
  return out;
}

std::string enum_union(const Value& values, bool quote) {
  std::string out;
  for (const auto& v : values.GetArray()) {
    if (!out.empty()) out += " | ";
    out += quote ? "\"" + scalar_text(v) + "\"" : scalar_text(v);
  }
  return out;
}

std::string format_type(const Value& param, int indent) {
  if (!param.IsObject()) return "any";
  std::string_view type = str(param, "type");
  auto en = param.FindMember("enum");
  const bool has_enum = en != param.MemberEnd() && en->value.IsArray() && !en->value.Empty();
  if (type == "string") return has_enum ? enum_union(en->value, true) : "string";
  if (type == "number" || type == "integer") return has_enum ? enum_union(en->value, false) : "number";
  if (type == "boolean") return "boolean";
  if (type == "null") return "null";
  if (type == "array") {
    auto items = param.FindMember("items");
    return items != param.MemberEnd() ? format_type(items->value, indent) + "[]" : "any[]";
  }
  if (type == "object") return "{\n" + format_properties(param, indent + 2) + "\n}";
  return "any";
}

}  // namespace

std::string render_openai_tools(const Value& tools) {
  if (!tools.IsArray()) return {};
  std::vector<std::string> lines = {"namespace functions {", ""};
  bool any = false;
  for (const auto& t : tools.GetArray()) {
    const Value* f = &t;
    if (auto fn = t.IsObject() ? t.FindMember("function") : t.MemberEnd(); t.IsObject() && fn != t.MemberEnd()) {
      f = &fn->value;
    } else if (!str(t, "type").empty() && str(t, "type") != "function") {
      continue;  // not a function tool
    }
    std::string_view name = str(*f, "name");
    if (name.empty()) continue;
    any = true;
    std::string_view desc = str(*f, "description");
    if (!desc.empty()) lines.push_back("// " + std::string(desc));
    auto params = f->FindMember("parameters");
    bool has_props = false;
    if (params != f->MemberEnd() && params->value.IsObject()) {
      auto props = params->value.FindMember("properties");
      has_props = props != params->value.MemberEnd() && props->value.IsObject() && props->value.MemberCount() > 0;
    }
    if (has_props) {
      lines.push_back("type " + std::string(name) + " = (_: {");
      lines.push_back(format_properties(params->value, 0));
      lines.push_back("}) => any;");
    } else {
      lines.push_back("type " + std::string(name) + " = () => any;");
    }
    lines.push_back("");
  }
  if (!any) return {};
  lines.push_back("} // namespace functions");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

std::string render_openai_tools_json(std::string_view raw) {
  if (!pruning::json_nesting_within(raw)) return {};  // format_type recurses per level
  const std::string text(raw);                        // StringStream wants a terminated string
  rapidjson::StringStream in(text.c_str());
  rapidjson::Document all(rapidjson::kArrayType);
  while (true) {
    while (in.Peek() == ' ' || in.Peek() == '\t' || in.Peek() == '\r' || in.Peek() == '\n') in.Take();
    if (in.Peek() == '\0') break;
    rapidjson::Document d(&all.GetAllocator());
    d.ParseStream<rapidjson::kParseStopWhenDoneFlag>(in);
    if (d.HasParseError()) return {};
    if (d.IsArray())
      for (auto& v : d.GetArray()) all.PushBack(rapidjson::Value(v, all.GetAllocator()), all.GetAllocator());
  }
  return render_openai_tools(all);
}

}  // namespace td::providers

// The tests' JSON Schema validator (json_schema.hpp). Numbers compare as long double, which holds
// every 64-bit integer exactly, so that 2^64 is above a maximum of 2^64 - 1.
#include "json_schema.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

namespace gexec::test {
namespace {

using nlohmann::json;

long double num(const json& v) {
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<uint64_t>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<int64_t>());
  return static_cast<long double>(v.get<double>());
}

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "number") return v.is_number();
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
  return false;
}

bool valid(const json& v, const json& schema, const json& root) {
  std::vector<std::string> e;
  validate_schema(v, schema, root, "", e);
  return e.empty();
}

const json& resolve(const std::string& ref, const json& root) {
  static const json nothing;
  if (ref.rfind("#/", 0) != 0) return nothing;
  return root.at(json::json_pointer(ref.substr(1)));
}

}  // namespace

void validate_schema(const json& v, const json& schema, const json& root, const std::string& path,
                     std::vector<std::string>& errors) {
  const std::string at = path.empty() ? "/" : path;
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) errors.push_back(at + ": no value is allowed here");
    return;
  }
  static const std::vector<std::string> known = {
      "$schema", "$id", "$defs", "$comment", "title", "description", "$ref", "type", "enum", "const",
      "properties", "additionalProperties", "required", "propertyNames", "minProperties", "maxProperties",
      "items", "minItems", "maxItems", "uniqueItems", "minimum", "maximum", "minLength", "pattern",
      "oneOf", "anyOf", "allOf", "not", "if", "then", "else"};
  for (const auto& [key, value] : schema.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      errors.push_back(at + ": the schema uses \"" + key + "\", which this validator does not know");

  if (schema.contains("$ref")) {
    const json& target = resolve(schema["$ref"].get<std::string>(), root);
    if (target.is_null()) errors.push_back(at + ": unresolved $ref " + schema["$ref"].dump());
    else validate_schema(v, target, root, path, errors);
  }
  if (schema.contains("type")) {
    const json& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = has_type(v, t.get<std::string>());
    else
      for (const json& one : t) ok = ok || has_type(v, one.get<std::string>());
    if (!ok) {
      errors.push_back(at + ": " + v.dump() + " is not of type " + t.dump());
      return;
    }
  }
  if (schema.contains("const") && !(v == schema["const"]))
    errors.push_back(at + ": " + v.dump() + " is not " + schema["const"].dump());
  if (schema.contains("enum")) {
    const json& e = schema["enum"];
    if (std::find(e.begin(), e.end(), v) == e.end()) errors.push_back(at + ": " + v.dump() + " is not one of " + e.dump());
  }
  if (v.is_number()) {
    if (schema.contains("minimum") && num(v) < num(schema["minimum"]))
      errors.push_back(at + ": " + v.dump() + " is below the minimum " + schema["minimum"].dump());
    if (schema.contains("maximum") && num(v) > num(schema["maximum"]))
      errors.push_back(at + ": " + v.dump() + " is above the maximum " + schema["maximum"].dump());
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (schema.contains("minLength") && s.size() < schema["minLength"].get<size_t>())
      errors.push_back(at + ": " + v.dump() + " is shorter than " + schema["minLength"].dump());
    if (schema.contains("pattern") && !std::regex_search(s, std::regex(schema["pattern"].get<std::string>())))
      errors.push_back(at + ": " + v.dump() + " does not match " + schema["pattern"].dump());
  }
  if (v.is_object()) {
    if (schema.contains("required"))
      for (const json& r : schema["required"])
        if (!v.contains(r.get<std::string>())) errors.push_back(at + ": required key \"" + r.get<std::string>() + "\" is missing");
    if (schema.contains("minProperties") && v.size() < schema["minProperties"].get<size_t>())
      errors.push_back(at + ": fewer than " + schema["minProperties"].dump() + " keys");
    if (schema.contains("maxProperties") && v.size() > schema["maxProperties"].get<size_t>())
      errors.push_back(at + ": more than " + schema["maxProperties"].dump() + " keys");
    const json props = schema.value("properties", json::object());
    for (const auto& [key, value] : v.items()) {
      const std::string sub = path + "/" + key;
      if (props.contains(key)) validate_schema(value, props[key], root, sub, errors);
      else if (schema.contains("additionalProperties")) validate_schema(value, schema["additionalProperties"], root, sub, errors);
      if (schema.contains("propertyNames") && !valid(json(key), schema["propertyNames"], root))
        errors.push_back(sub + ": the key \"" + key + "\" is not allowed here");
    }
  }
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>())
      errors.push_back(at + ": fewer than " + schema["minItems"].dump() + " items");
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>())
      errors.push_back(at + ": more than " + schema["maxItems"].dump() + " items");
    if (schema.value("uniqueItems", false))
      for (size_t i = 0; i < v.size(); ++i)
        for (size_t j = i + 1; j < v.size(); ++j)
          if (v[i] == v[j]) errors.push_back(at + "/" + std::to_string(j) + ": repeats item " + std::to_string(i));
    if (schema.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) validate_schema(v[i], schema["items"], root, path + "/" + std::to_string(i), errors);
  }
  if (schema.contains("allOf"))
    for (const json& s : schema["allOf"]) validate_schema(v, s, root, path, errors);
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const json& s : schema["anyOf"]) any = any || valid(v, s, root);
    if (!any) errors.push_back(at + ": matches none of anyOf");
  }
  if (schema.contains("oneOf")) {
    int matches = 0;
    for (const json& s : schema["oneOf"]) matches += valid(v, s, root);
    if (matches != 1) errors.push_back(at + ": matches " + std::to_string(matches) + " of the oneOf forms, not exactly one");
  }
  if (schema.contains("not") && valid(v, schema["not"], root)) errors.push_back(at + ": matches the schema under \"not\"");
  if (schema.contains("if")) {
    const bool cond = valid(v, schema["if"], root);
    if (cond && schema.contains("then")) validate_schema(v, schema["then"], root, path, errors);
    if (!cond && schema.contains("else")) validate_schema(v, schema["else"], root, path, errors);
  }
}

}  // namespace gexec::test

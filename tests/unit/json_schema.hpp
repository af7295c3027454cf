// A small JSON Schema (2020-12) validator for the tests: the keywords that docs/graph.schema.json
// uses, and an error for any other, so that a schema never passes by a keyword being ignored.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gexec::test {

// Appends one "path: problem" per violation of `schema` (resolving "#/$defs/..." against `root`).
void validate_schema(const nlohmann::json& value, const nlohmann::json& schema, const nlohmann::json& root,
                     const std::string& path, std::vector<std::string>& errors);

inline std::vector<std::string> schema_errors(const nlohmann::json& value, const nlohmann::json& schema) {
  std::vector<std::string> errors;
  validate_schema(value, schema, schema, "", errors);
  return errors;
}

}  // namespace gexec::test

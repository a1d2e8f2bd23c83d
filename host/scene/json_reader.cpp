#include "scene/json_reader.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace stagger {

namespace {

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Levenshtein distance, for "did you mean" hints on misspelled field names.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

void JsonNode::fail(const std::string& what) const { throw SceneError(path_.empty() ? "$" : path_, what); }

std::string JsonNode::describe() const {
  const auto& v = *value_;
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_null()) return "null";
  std::string text = v.dump();  // a scalar: no recursion
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (v.is_string()) return "string " + text;
  if (v.is_boolean()) return "boolean " + text;
  return text;
}

void JsonNode::require_object() const {
  if (!value_->is_object()) fail("must be an object, got " + describe());
}

void JsonNode::allow_only(std::initializer_list<const char*> allowed) const {
  require_object();
  for (const auto& item : value_->items()) {
    const std::string& key = item.key();
    bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; });
    if (known) continue;
    std::string hint;
    std::size_t best = 3;  // only suggest close matches
    for (const char* a : allowed) {
      std::size_t d = edit_distance(key, a);
      if (d < best) {
        best = d;
        hint = fmt::format(" (did you mean \"{}\"?)", a);
      }
    }
    throw SceneError(join_path(path_, key), fmt::format("unknown field \"{}\"{}", key, hint));
  }
}

bool JsonNode::has(const char* key) const { return value_->is_object() && value_->contains(key); }

JsonNode JsonNode::child_path(const char* key) const { return JsonNode(*value_, join_path(path_, key)); }

JsonNode JsonNode::at(const char* key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end()) throw SceneError(join_path(path_, key), "required field is missing");
  return JsonNode(*it, join_path(path_, key));
}

std::optional<JsonNode> JsonNode::find(const char* key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonNode(*it, join_path(path_, key));
}

std::vector<JsonNode> JsonNode::elements() const {
  if (!value_->is_array()) fail("must be an array, got " + describe());
  std::vector<JsonNode> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], fmt::format("{}[{}]", path_.empty() ? "$" : path_, i));
  return out;
}

double JsonNode::number() const {
  if (!value_->is_number()) fail("must be a number, got " + describe());
  double x = value_->get<double>();
  if (!std::isfinite(x)) fail("must be a finite number");
  return x;
}

std::int64_t JsonNode::integer() const {
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail("is too large");
    return value_->get<std::int64_t>();
  }
  double x = number();
  if (x != std::floor(x) || std::fabs(x) > 9.0e15) fail(fmt::format("must be an integer, got {}", x));
  return static_cast<std::int64_t>(x);
}

bool JsonNode::boolean() const {
  if (!value_->is_boolean()) fail("must be true or false, got " + describe());
  return value_->get<bool>();
}

std::string JsonNode::string() const {
  if (!value_->is_string()) fail("must be a string, got " + describe());
  return value_->get<std::string>();
}

Vec3d JsonNode::vec3() const {
  if (!value_->is_array() || value_->size() != 3)
    fail("must be an array of 3 numbers, got " + describe());
  auto e = elements();
  return {e[0].number(), e[1].number(), e[2].number()};
}

Quatd JsonNode::quat() const {
  if (!value_->is_array() || value_->size() != 4)
    fail("must be an array of 4 numbers [w, x, y, z], got " + describe());
  auto e = elements();
  return {e[0].number(), e[1].number(), e[2].number(), e[3].number()};
}

double JsonNode::positive() const {
  double x = number();
  if (!(x > 0)) fail(fmt::format("must be > 0, got {}", x));
  return x;
}

double JsonNode::non_negative() const {
  double x = number();
  if (!(x >= 0)) fail(fmt::format("must be >= 0, got {}", x));
  return x;
}

double JsonNode::in_range(double lo, double hi) const {
  double x = number();
  if (!(x >= lo && x <= hi)) fail(fmt::format("must be in [{}, {}], got {}", lo, hi, x));
  return x;
}

std::int64_t JsonNode::integer_in(std::int64_t lo, std::int64_t hi) const {
  std::int64_t x = integer();
  if (x < lo || x > hi) fail(fmt::format("must be an integer in [{}, {}], got {}", lo, hi, x));
  return x;
}

}  // namespace stagger

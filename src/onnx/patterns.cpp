// Exporter patterns (patterns.hpp): each Mul node is tried, in node order, as the last node of a
// SILU or a GELU. A product is read as its list of factors through the single-use Muls that feed
// it, so that the orders exporters write ((x * c) * 0.5, (x * 0.5) * c, x * (0.5 * c), x*x*x or
// Pow(x, 3)) all match one formula, and nothing else does.
#include "patterns.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "gexec/ir/rounding.hpp"

namespace gexec::onnx_import {

namespace {

bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Whether c, a constant of `type`, is E as an exporter writes it: E rounded to the type, directly
// or through float (a constant computed in f32 and then cast).
bool is_value(double c, int32_t type, double e) {
  auto round = [type](double v) {
    switch (type) {
      case kFloat: return double(float(v));
      case kFloat16: return round_to_grid(v, 11, -14);
      case kBfloat16: return round_to_grid(v, 8, -126);
      case kDouble: return v;
      default: return std::nan("");
    }
  };
  return c == round(e) || c == round(double(float(e)));
}

class Matcher {
 public:
  Matcher(const pb::GraphProto& g, const std::string& base_dir) : g_(g), base_dir_(base_dir) {
    claimed_.assign(size_t(g.node_size()), false);
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& in : g.node(i).input()) ++uses_[in];
      for (const std::string& out : g.node(i).output()) {
        auto [it, fresh] = producer_.emplace(out, i);
        if (!fresh) it->second = -1;  // written twice: refused when mapped; nothing matches through it
      }
    }
    for (const auto& o : g.output()) outputs_.insert(o.name());
    for (const auto& t : g.initializer()) inits_.emplace(t.name(), &t);
  }

  std::vector<Pattern> run() {
    std::vector<Pattern> found;
    for (int i = 0; i < g_.node_size(); ++i) {
      if (!plain(g_.node(i), "Mul", 2)) continue;
      for (auto attempt : {&Matcher::gelu, &Matcher::silu}) {
        p_ = Pattern{};
        if (!(this->*attempt)(i)) continue;
        p_.root = i;
        p_.nodes.push_back(i);
        std::sort(p_.nodes.begin(), p_.nodes.end());
        for (int n : p_.nodes) claimed_[size_t(n)] = true;
        found.push_back(std::move(p_));
        break;
      }
    }
    return found;
  }

 private:
  const pb::GraphProto& g_;
  const std::string& base_dir_;
  std::unordered_map<std::string, int> producer_;  // value -> its node; -1 where written twice
  std::unordered_map<std::string, int> uses_;      // value -> how many node inputs name it
  std::unordered_set<std::string> outputs_;
  std::unordered_map<std::string, const pb::TensorProto*> inits_;
  std::vector<bool> claimed_;
  Pattern p_;  // the match being tried

  // A node of `op` in ai.onnx with `inputs` inputs, one output and no attributes.
  static bool plain(const pb::NodeProto& n, std::string_view op, int inputs) {
    return n.op_type() == op && default_domain(n.domain()) && n.attribute_size() == 0 && n.input_size() == inputs &&
           n.output_size() == 1;
  }

  // The node computing v where it may disappear into the match: of `op` (plain), v read once and
  // not a graph output, the node in no other match. Recorded as part of the match.
  const pb::NodeProto* inner(const std::string& v, std::string_view op, int inputs) {
    const auto it = producer_.find(v);
    if (it == producer_.end() || it->second < 0 || claimed_[size_t(it->second)]) return nullptr;
    const pb::NodeProto& n = g_.node(it->second);
    if (!plain(n, op, inputs) || uses_[v] != 1 || outputs_.count(v)) return nullptr;
    p_.nodes.push_back(it->second);
    return &n;
  }

  // The single element of a constant v (an initializer held in the model, or a Constant node), of a
  // floating type (or an integer type where `exponent`); recorded as one of the match's constants.
  std::optional<double> scalar(const std::string& v, bool exponent = false) {
    const pb::TensorProto* t = nullptr;
    std::optional<double> value_float;
    if (const auto it = producer_.find(v); it != producer_.end()) {
      if (it->second < 0) return std::nullopt;
      const pb::NodeProto& n = g_.node(it->second);
      if (n.op_type() != "Constant" || !default_domain(n.domain()) || n.attribute_size() != 1) return std::nullopt;
      const pb::AttributeProto& a = n.attribute(0);
      if (a.name() == "value" && a.has_t()) t = &a.t();
      else if (a.name() == "value_float") value_float = double(a.f());
      else return std::nullopt;
    } else if (const auto i = inits_.find(v); i != inits_.end()) {
      t = i->second;
    } else {
      return std::nullopt;
    }
    PatternConstant c{v, kFloat, {}, exponent};
    if (t) {
      int64_t n = 1;
      for (int64_t d : t->dims()) n *= d;
      if (n != 1 || t->data_location() == pb::TensorProto::EXTERNAL) return std::nullopt;
      std::vector<std::string> files;
      auto h = decode_tensor(*t, base_dir_, "constant", &files);
      if (!h) return std::nullopt;
      c.type = h->type;
      c.shape = h->shape;
      if (!h->values.empty()) value_float = h->values[0];
      else if (exponent && !h->ints.empty() && h->type != kBool) value_float = double(h->ints[0]);
      else return std::nullopt;
    }
    p_.constants.push_back(std::move(c));
    return value_float;
  }

  bool scalar_is(const std::string& v, double e) {
    const auto c = scalar(v);
    return c && is_value(*c, p_.constants.back().type, e);
  }

  // The factors of the product `mul` computes, through the single-use Muls that feed it; nullopt
  // beyond `most` factors.
  std::optional<std::vector<std::string>> factors(const pb::NodeProto& mul, size_t most) {
    std::vector<std::string> out, todo{mul.input(1), mul.input(0)};
    while (!todo.empty()) {
      const std::string v = todo.back();
      todo.pop_back();
      if (const pb::NodeProto* m = inner(v, "Mul", 2)) {
        todo.push_back(m->input(1));
        todo.push_back(m->input(0));
      } else {
        out.push_back(v);
      }
      if (out.size() + todo.size() > most) return std::nullopt;
    }
    return out;
  }

  // Whether v is a constant (a Constant node's output or an initializer), before reading it.
  bool constant_name(const std::string& v) const {
    const auto it = producer_.find(v);
    if (it == producer_.end()) return inits_.count(v) > 0;
    return it->second >= 0 && g_.node(it->second).op_type() == "Constant";
  }
  bool computed_by(const std::string& v, std::string_view op) const {
    const auto it = producer_.find(v);
    return it != producer_.end() && it->second >= 0 && g_.node(it->second).op_type() == op;
  }

  // Three factors: x, the constant 0.5 and A = Add(1, f(...)) with f of `op` (A read only here,
  // which x, read by f's argument too, never is); sets p_.x and returns f's node.
  const pb::NodeProto* half_x_one_plus(int root, std::string_view op) {
    const auto f = factors(g_.node(root), 3);
    if (!f || f->size() != 3) return nullptr;
    int half = -1, sum = -1;
    for (int k = 0; k < 3; ++k) {
      const std::string& v = (*f)[size_t(k)];
      if (half < 0 && constant_name(v)) half = k;
      else if (sum < 0 && computed_by(v, "Add") && uses_[v] == 1) sum = k;
    }
    if (half < 0 || sum < 0 || !scalar_is((*f)[size_t(half)], 0.5)) return nullptr;
    const pb::NodeProto* add = inner((*f)[size_t(sum)], "Add", 2);
    if (!add) return nullptr;
    p_.x = (*f)[size_t(3 - half - sum)];
    for (int k = 0; k < 2; ++k)
      if (constant_name(add->input(k)) && computed_by(add->input(1 - k), op))
        return scalar_is(add->input(k), 1.0) ? inner(add->input(1 - k), op, 1) : nullptr;
    return nullptr;
  }

  // 0.5 * x * (1 + erf(x / sqrt(2))), the division also written as a product by 1/sqrt(2).
  bool gelu_erf(int root) {
    const pb::NodeProto* erf = half_x_one_plus(root, "Erf");
    if (!erf) return false;
    const std::string& arg = erf->input(0);
    if (const pb::NodeProto* div = inner(arg, "Div", 2))
      return div->input(0) == p_.x && scalar_is(div->input(1), std::sqrt(2.0));
    if (const pb::NodeProto* mul = inner(arg, "Mul", 2)) {
      const auto f = factors(*mul, 2);
      if (!f || f->size() != 2) return false;
      for (int k = 0; k < 2; ++k)
        if ((*f)[size_t(k)] == p_.x && scalar_is((*f)[size_t(1 - k)], std::sqrt(0.5))) return true;
    }
    return false;
  }

  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 as Pow(x, 3) or x * x * x.
  bool gelu_tanh(int root) {
    const pb::NodeProto* tanh = half_x_one_plus(root, "Tanh");
    if (!tanh) return false;
    const pb::NodeProto* scaled = inner(tanh->input(0), "Mul", 2);
    if (!scaled) return false;
    const auto f = factors(*scaled, 2);
    if (!f || f->size() != 2) return false;
    const pb::NodeProto* sum = nullptr;
    for (int k = 0; k < 2 && !sum; ++k)
      if (scalar_is((*f)[size_t(k)], std::sqrt(2.0 / std::numbers::pi))) sum = inner((*f)[size_t(1 - k)], "Add", 2);
    if (!sum) return false;
    for (int k = 0; k < 2; ++k) {
      if (sum->input(k) != p_.x) continue;
      const pb::NodeProto* cubic = inner(sum->input(1 - k), "Mul", 2);
      if (!cubic) return false;
      const auto g = factors(*cubic, 4);
      if (!g) return false;
      int xs = 0, kappa = 0;
      for (const std::string& v : *g) {
        if (v == p_.x) {
          ++xs;
        } else if (const pb::NodeProto* pow = inner(v, "Pow", 2)) {
          if (pow->input(0) != p_.x) return false;
          const auto e = scalar(pow->input(1), true);
          if (!e || *e != 3.0) return false;
          xs += 3;
        } else if (scalar_is(v, 0.044715)) {
          ++kappa;
        } else {
          return false;
        }
      }
      return xs == 3 && kappa == 1;
    }
    return false;
  }

  bool gelu(int root) {
    if (gelu_erf(root)) {
      p_.what = "GELU (erf)";
      p_.type = OpType::GELU;
      p_.approx = GeluApprox::none;
      return true;
    }
    p_ = Pattern{};  // what the erf form recorded
    if (gelu_tanh(root)) {
      p_.what = "GELU (tanh)";
      p_.type = OpType::GELU;
      p_.approx = GeluApprox::tanh;
      return true;
    }
    return false;
  }

  // x * Sigmoid(x), in either order.
  bool silu(int root) {
    const pb::NodeProto& mul = g_.node(root);
    for (int k = 0; k < 2; ++k) {
      const auto it = producer_.find(mul.input(k));
      if (it == producer_.end() || it->second < 0 || g_.node(it->second).op_type() != "Sigmoid") continue;
      if (g_.node(it->second).input_size() != 1 || g_.node(it->second).input(0) != mul.input(1 - k)) continue;
      if (!inner(mul.input(k), "Sigmoid", 1)) return false;
      p_.x = mul.input(1 - k);
      p_.what = "SILU";
      p_.type = OpType::SILU;
      return true;
    }
    return false;
  }
};

}  // namespace

std::vector<Pattern> find_patterns(const pb::GraphProto& graph, const std::string& base_dir) {
  return Matcher(graph, base_dir).run();
}

}  // namespace gexec::onnx_import

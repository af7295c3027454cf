// Loading the "ops" array of a graph file: types, names, tensor references and attributes.
#include <cmath>
#include <unordered_map>

#include "load_context.hpp"

namespace gexec::load_detail {

namespace {

// "A, B, C": the names of `types`, for the messages that list what is allowed.
template <class Types>
std::string names_of(const Types& types) {
  std::string out;
  for (OpType t : types) out += (out.empty() ? "" : ", ") + std::string(op_type_name(t));
  return out;
}

// Reads the constant operand of an op or step of type t from `v` (its attrs or step object):
// A number every kernel receives as an f32 (alpha, beta, a scalar, an exponent): one that f32
// cannot hold finitely is refused, not turned into inf on a device while the reference uses it.
std::optional<double> f32_number(Problems& p, const json& j, const std::string& ptr) {
  auto d = get_number(p, j, ptr);
  if (d && !std::isfinite(float(*d))) {
    p.add(ptr, "expected a finite number within f32's range (|x| <= 3.4028235e38), found " + describe(j));
    d.reset();
  }
  return d;
}

// "scalar" (ADD, SUB, MUL, DIV) or "exponent" (POW), a number; whether it must be there, and
// whether it suits the op's operands, is check_op's (graph.cpp), which sees ops and steps alike.
bool load_constant(Problems& p, const json& v, const std::string& ptr, OpType t, std::optional<double>& c) {
  bool ok = true;
  for (const char* key : {"scalar", "exponent"}) {
    const json* j = optional_key(v, key);
    if (!j) continue;
    if (!takes_constant(t) || constant_key(t) != key) {
      p.add(ptr_key(ptr, key), std::string("\"") + key + "\" is for " + (key == std::string("scalar") ? "ADD, SUB, MUL, DIV" : "POW") +
                                   ", not " + std::string(op_type_name(t)));
      ok = false;
      continue;
    }
    auto d = f32_number(p, *j, ptr_key(ptr, key));
    ok = ok && d.has_value();
    if (d) c = *d;
  }
  return ok;
}

// Reads a FUSED_ELEMENTWISE's "steps" and "results" (graph-format.md): the structure and the value
// numbers here, with their JSON paths; shapes and dtypes are check_op's.
bool load_group(Problems& p, const json& v, const std::string& ptr, int inputs, Attrs& a) {
  bool ok = true;
  const json* steps = require(p, v, ptr, "steps");
  const json* results = require(p, v, ptr, "results");
  if (!steps || !results) return false;
  const std::string sptr = ptr_key(ptr, "steps"), rptr = ptr_key(ptr, "results");
  if (!steps->is_array() || steps->empty() || steps->size() > size_t(kGroupMaxSteps)) {
    p.add(sptr, "expected an array of 1 to " + std::to_string(kGroupMaxSteps) + " steps, found " +
                    (steps->is_array() ? "an array of " + std::to_string(steps->size()) : describe(*steps)));
    return false;
  }
  const std::string step_types = names_of(kGroupStepTypes);
  for (size_t i = 0; i < steps->size(); ++i) {
    const json& st = (*steps)[i];
    const std::string ip = ptr_index(sptr, i);
    if (!st.is_object()) {
      p.add(ip, "expected a step object, found " + describe(st));
      ok = false;
      continue;
    }
    check_keys(p, st, ip, {"op", "args", "dtype", "approximate", "scalar", "exponent"});
    GroupStep step;
    bool good = true;
    if (const json* t = require(p, st, ip, "op")) {
      if (auto str = get_string(p, *t, ptr_key(ip, "op"))) {
        auto type = parse_op_type(*str);
        if (!type || !is_group_step_type(*type)) {
          p.add(ptr_key(ip, "op"), "unknown step op " + quote(*str) + "; expected one of " + step_types);
          good = false;
        } else {
          step.type = *type;
        }
      } else good = false;
    } else good = false;
    if (const json* d = require(p, st, ip, "dtype")) {
      if (auto str = get_string(p, *d, ptr_key(ip, "dtype"))) {
        auto dt = parse_dtype(*str);
        if (!dt || is_f8(*dt) || *dt == DType::i32) {
          p.add(ptr_key(ip, "dtype"), dt ? "dtype " + quote(*str) + " is not allowed for a step; expected one of f16, "
                                                "bf16, f32" + std::string(is_f8(*dt) ? " (f8 is quantized by a CAST op, with the tensor's scale)" : "")
                                         : "unknown dtype " + quote(*str) + "; expected one of f16, bf16, f32");
          good = false;
        } else {
          step.dtype = *dt;
        }
      } else good = false;
    } else good = false;
    if (const json* ap = optional_key(st, "approximate")) {
      auto str = get_string(p, *ap, ptr_key(ip, "approximate"));
      auto form = str ? parse_gelu_approx(*str) : std::nullopt;
      if (str && !form)
        p.add(ptr_key(ip, "approximate"), "unknown GELU form " + quote(*str) + "; expected one of tanh, none");
      else if (form && good && step.type != OpType::GELU)
        p.add(ptr_key(ip, "approximate"), "only a GELU step takes \"approximate\"");
      if (form && step.type == OpType::GELU) step.approximate = *form;
      else good = false;
    }
    if (good) good = load_constant(p, st, ip, step.type, step.constant);
    const int own = inputs + int(i);  // this step's value number
    if (const json* args = require(p, st, ip, "args")) {
      const std::string ap = ptr_key(ip, "args");
      const size_t want = operand_count(step.type, step.constant.has_value());
      if (!args->is_array() || (good && args->size() != want)) {
        p.add(ap, std::string("expected an array of ") + (want == 1 ? "one value number" : "two value numbers") +
                      " (" + std::string(op_type_name(step.type)) + (step.constant ? " with a constant" : "") + "), found " +
                      (args->is_array() ? "an array of " + std::to_string(args->size()) : describe(*args)));
        good = false;
      } else {
        for (size_t j = 0; j < args->size(); ++j) {
          const json& n = (*args)[j];
          if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() >= own) {
            p.add(ptr_index(ap, j), "expected a value number from 0 to " + std::to_string(own - 1) +
                                        " (the group's inputs, then the steps before this one), found " + describe(n));
            good = false;
          } else {
            step.args.push_back(int32_t(n.get<int64_t>()));
          }
        }
      }
    } else good = false;
    ok = ok && good;
    a.steps.push_back(std::move(step));
  }
  const int values = inputs + int(steps->size());
  if (!results->is_array()) {
    p.add(rptr, "expected an array of value numbers, one per output, found " + describe(*results));
    return false;
  }
  for (size_t j = 0; j < results->size(); ++j) {
    const json& n = (*results)[j];
    if (!n.is_number_integer() || n.get<int64_t>() < inputs || n.get<int64_t>() >= values) {
      p.add(ptr_index(rptr, j), "expected the value number of a step, " + std::to_string(inputs) + " to " +
                                    std::to_string(values - 1) + ", found " + describe(n));
      ok = false;
    } else {
      a.results.push_back(int32_t(n.get<int64_t>()));
    }
  }
  return ok;
}

// Reads "attrs" with the keys that `type` takes (graph-format.md). `inputs` is the op's input count.
bool load_attrs(Problems& p, const json& v, const std::string& ptr, OpType type, int inputs, Attrs& a) {
  if (!v.is_object()) {
    p.add(ptr, "expected an attrs object, found " + describe(v));
    return false;
  }
  const std::string tname(op_type_name(type));
  switch (type) {
    case OpType::MATMUL: check_keys(p, v, ptr, {"trans_a", "trans_b", "alpha", "fast_accum"}); break;
    case OpType::GEMM_BIAS_ACT:
      check_keys(p, v, ptr, {"act", "mnk", "trans_a", "trans_b", "alpha", "fast_accum", "residual", "beta"});
      break;
    case OpType::GROUPED_GEMM: check_keys(p, v, ptr, {"trans_b", "alpha", "act"}); break;
    case OpType::GELU: check_keys(p, v, ptr, {"approximate"}); break;
    case OpType::ALL_REDUCE: check_keys(p, v, ptr, {"ranks"}); break;
    case OpType::ALL_GATHER:
    case OpType::REDUCE_SCATTER: check_keys(p, v, ptr, {"ranks", "axis"}); break;
    case OpType::ADD:
    case OpType::SUB:
    case OpType::MUL:
    case OpType::DIV:
    case OpType::POW:
      check_keys(p, v, ptr, {"scalar", "exponent"});  // the one it does not take: load_constant says which does
      return load_constant(p, v, ptr, type, a.constant);
    case OpType::FUSED_ELEMENTWISE:
      check_keys(p, v, ptr, {"steps", "results"});
      return load_group(p, v, ptr, inputs, a);
    default:
      for (auto it = v.begin(); it != v.end(); ++it)
        p.add(ptr_key(ptr, it.key()), "unknown key " + quote(it.key()) + "; " + tname + " takes no attributes");
      return v.empty();
  }
  bool ok = true;
  auto flag = [&](const char* key, bool& field) {
    if (const json* j = optional_key(v, key)) {
      auto b = get_bool(p, *j, ptr_key(ptr, key));
      ok = ok && b.has_value();
      if (b) field = *b;
    }
  };
  const bool grouped = type == OpType::GROUPED_GEMM;
  if (type == OpType::MATMUL || type == OpType::GEMM_BIAS_ACT || grouped) {
    flag("trans_a", a.trans_a);
    flag("trans_b", a.trans_b);
    flag("fast_accum", a.fast_accum);
    if (const json* j = optional_key(v, "alpha")) {
      auto d = f32_number(p, *j, ptr_key(ptr, "alpha"));
      ok = ok && d.has_value();
      if (d) a.alpha = *d;
    }
  }
  if (grouped || type == OpType::GEMM_BIAS_ACT) {
    if (const json* j = optional_key(v, "act")) {
      std::optional<Act> act;
      if (auto str = get_string(p, *j, ptr_key(ptr, "act"))) {
        act = parse_act(*str);
        if (!act)
          p.add(ptr_key(ptr, "act"), "unknown activation " + quote(*str) + "; expected one of none, relu, gelu, gelu_erf, silu");
      }
      ok = ok && act.has_value();
      if (act) a.act = *act;
    }
  }
  if (type == OpType::GEMM_BIAS_ACT) {
    flag("residual", a.residual);
    if (const json* j = optional_key(v, "beta")) {
      auto d = f32_number(p, *j, ptr_key(ptr, "beta"));
      ok = ok && d.has_value();
      if (d) a.beta = *d;
      // Refused as written, whatever its value (gemm_shape refuses a beta other than 1 the same way).
      if (d && !a.residual) {
        p.add(ptr_key(ptr, "beta"), "beta without \"residual\": true; beta scales R, which needs the residual");
        ok = false;
      }
    }
    if (const json* j = optional_key(v, "mnk")) {
      const std::string mptr = ptr_key(ptr, "mnk");
      if (!j->is_array() || j->size() != 3) {
        p.add(mptr, "expected [M, N, K], three positive integers; found " +
                        (j->is_array() ? "an array of " + std::to_string(j->size()) : describe(*j)));
        ok = false;
      } else {
        std::array<int64_t, 3> mnk{};
        bool good = true;
        for (size_t i = 0; i < 3; ++i) {
          auto d = get_positive_int(p, (*j)[i], ptr_index(mptr, i));
          good = good && d.has_value();
          if (d) mnk[i] = *d;
        }
        ok = ok && good;
        if (good) a.mnk = mnk;
      }
    }
  }
  if (is_collective(type)) {
    // ranks is required: a collective's shapes mean nothing without it; axis defaults to 0.
    const json* r = optional_key(v, "ranks");
    if (!r) {
      p.add(ptr_key(ptr, "ranks"), tname + " needs \"ranks\", the number of ranks of the run (a positive integer)");
      ok = false;
    } else if (auto d = get_positive_int(p, *r, ptr_key(ptr, "ranks"))) {
      if (*d > 4096) {
        p.add(ptr_key(ptr, "ranks"), "ranks " + std::to_string(*d) + " is more than 4096");
        ok = false;
      } else {
        a.ranks = int32_t(*d);
      }
    } else {
      ok = false;
    }
    if (const json* j = optional_key(v, "axis")) {
      if (!j->is_number_integer() || j->get<int64_t>() < 0 || j->get<int64_t>() > 8) {
        p.add(ptr_key(ptr, "axis"), "expected an axis, an integer from 0 to the rank of X minus 1; found " + describe(*j));
        ok = false;
      } else {
        a.axis = int32_t(j->get<int64_t>());
      }
    }
  }
  if (type == OpType::GELU) {
    if (const json* j = optional_key(v, "approximate")) {
      std::optional<GeluApprox> ap;
      if (auto str = get_string(p, *j, ptr_key(ptr, "approximate"))) {
        ap = parse_gelu_approx(*str);
        if (!ap)
          p.add(ptr_key(ptr, "approximate"), "unknown GELU form " + quote(*str) + "; expected one of tanh, none");
      }
      ok = ok && ap.has_value();
      if (ap) a.approximate = *ap;
    }
  }
  return ok;
}

// Reads "inputs" or "outputs": an array of declared tensor names, `min`..`max` of them.
bool load_refs(LoadState& s, const json& v, const std::string& ptr, const char* what, std::optional<Arity> ar,
               bool inputs, std::vector<TensorId>& ids) {
  Problems& p = s.p;
  if (!v.is_array()) {
    p.add(ptr, "expected an array of tensor names, found " + describe(v));
    return false;
  }
  bool ok = true;
  if (ar) {
    const int lo = inputs ? ar->min_inputs : ar->outputs, hi = inputs ? ar->max_inputs : ar->most_outputs();
    const int n = int(v.size());
    if (n < lo || n > hi) {
      const std::string want = lo == hi       ? std::to_string(lo)
                               : hi == lo + 1 ? std::to_string(lo) + " or " + std::to_string(hi)
                                              : std::to_string(lo) + " to " + std::to_string(hi);
      p.add(ptr, std::string(what) + " " + want + (hi == 1 ? (inputs ? " input" : " output") : inputs ? " inputs" : " outputs") +
                     ", found " + std::to_string(n));
      ok = false;
    }
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string iptr = ptr_index(ptr, i);
    if (!v[i].is_string()) {
      p.add(iptr, "expected a tensor name (a string), found " + describe(v[i]));
      ok = false;
      continue;
    }
    const std::string& name = v[i].get_ref<const std::string&>();
    auto it = s.tensor_ids.find(name);
    if (it == s.tensor_ids.end()) {
      p.add(iptr, "tensor " + quote(name) + " is not declared");
      ok = false;
      continue;
    }
    ids.push_back(it->second);
  }
  return ok;
}

}  // namespace

void load_ops(LoadState& s, const json& ops) {
  Problems& p = s.p;
  if (!ops.is_array()) {
    p.add("/ops", "expected an array of ops, found " + describe(ops));
    return;
  }
  if (ops.empty()) p.add("/ops", "a graph needs at least one op");
  s.writer_pos.assign(s.g.tensors.size(), -1);
  std::unordered_map<std::string, size_t> op_names;  // name -> position in /ops
  s.g.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const json& v = ops[i];
    const std::string ptr = ptr_index("/ops", i);
    if (!v.is_object()) {
      p.add(ptr, "expected an op object, found " + describe(v));
      s.op_label.emplace_back();
      continue;
    }
    check_keys(p, v, ptr, {"op_type", "name", "inputs", "outputs", "attrs"});
    Op op;
    bool ok = true;
    std::optional<OpType> type;
    if (const json* t = require(p, v, ptr, "op_type")) {
      if (auto str = get_string(p, *t, ptr_key(ptr, "op_type"))) {
        type = parse_op_type(*str);
        if (!type)
          p.add(ptr_key(ptr, "op_type"), "unknown op_type " + quote(*str) + "; expected one of " + names_of(kAllOpTypes));
      }
    }
    ok = type.has_value();
    if (type) op.type = *type;
    const std::string what = type ? std::string(op_type_name(*type)) + " takes" : "this op takes";
    std::optional<Arity> ar;
    if (type) ar = op_arity(*type);

    if (const json* n = optional_key(v, "name")) {
      auto str = get_string(p, *n, ptr_key(ptr, "name"));
      if (str && check_name(p, *str, ptr_key(ptr, "name"))) op.name = *str;
      else ok = false;
    } else if (type) {
      op.name = std::string(op_type_name(*type)) + "_" + std::to_string(i);
    }
    if (!op.name.empty()) {
      auto [it, fresh] = op_names.emplace(op.name, i);
      if (!fresh) {
        p.add(v.contains("name") ? ptr_key(ptr, "name") : ptr,
              "op name " + quote(op.name) + (v.contains("name") ? "" : " (the default name of this op)") +
                  " is already used by /ops/" + std::to_string(it->second));
        ok = false;
      }
    }

    if (const json* in = require(p, v, ptr, "inputs"))
      ok = load_refs(s, *in, ptr_key(ptr, "inputs"), what.c_str(), ar, true, op.inputs) && ok;
    else ok = false;
    if (const json* out = require(p, v, ptr, "outputs"))
      ok = load_refs(s, *out, ptr_key(ptr, "outputs"), (type ? std::string(op_type_name(*type)) + " writes" : "this op writes").c_str(),
                     ar, false, op.outputs) && ok;
    else ok = false;
    if (const json* a = optional_key(v, "attrs"); a && type) {
      const json* in = optional_key(v, "inputs");
      const int n_in = in && in->is_array() ? int(in->size()) : 0;
      ok = load_attrs(p, *a, ptr_key(ptr, "attrs"), *type, n_in, op.attrs) && ok;
    } else if (type == OpType::FUSED_ELEMENTWISE) {
      p.add(ptr, "FUSED_ELEMENTWISE needs attrs with \"steps\" and \"results\"");
      ok = false;
    } else if (type && is_collective(*type)) {
      p.add(ptr, std::string(op_type_name(*type)) + " needs attrs with \"ranks\", the number of ranks of the run (a positive integer)");
      ok = false;
    }

    // Writers are recorded even for ops with other problems, so that a second writer, or an
    // init on a written tensor, is reported whatever else is wrong with the first one.
    s.op_label.push_back(op.name);
    for (size_t j = 0; j < op.outputs.size(); ++j) {
      const TensorId t = op.outputs[j];
      if (s.writer_pos[size_t(t)] >= 0) {
        p.add(ptr_index(ptr_key(ptr, "outputs"), j), "tensor " + quote(s.g.tensor(t).name) +
                                                         " is already written by " + s.op_ref(s.writer_pos[size_t(t)]));
        ok = false;
      } else {
        s.writer_pos[size_t(t)] = long(i);
      }
    }
    if (!ok) continue;
    s.g.ops.push_back(std::move(op));
    s.op_pos.push_back(i);
  }
}

}  // namespace gexec::load_detail

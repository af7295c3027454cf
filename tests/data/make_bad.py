#!/usr/bin/env python3
"""Writes the malformed graph files of tests/data/bad (one problem each); expected.tsv is kept by hand."""
import json, copy, os
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
os.makedirs(OUT, exist_ok=True)
BASE = {
  "format": "gexec.graph", "version": 1, "name": "bad",
  "tensors": [
    {"name": "A", "shape": [64, 80], "dtype": "f16", "init": {"dist": "normal", "std": 0.25}},
    {"name": "B", "shape": [80, 96], "dtype": "f16", "init": {"dist": "normal", "std": 0.25}},
    {"name": "Bias", "shape": [96], "dtype": "f32", "init": {"dist": "normal", "std": 0.1}, "constant": True},
    {"name": "C", "shape": [64, 96], "dtype": "f16"}],
  "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"],
           "attrs": {"mnk": [64, 96, 80], "act": "relu"}}],
  "outputs": ["C"]}
PRIM = copy.deepcopy(BASE)
PRIM["tensors"] += [{"name": "AB", "shape": [64, 96], "dtype": "f16"}, {"name": "AB_b", "shape": [64, 96], "dtype": "f16"}]
PRIM["ops"] = [
  {"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["AB"]},
  {"op_type": "BIAS_ADD", "inputs": ["AB", "Bias"], "outputs": ["AB_b"]},
  {"op_type": "RELU", "inputs": ["AB_b"], "outputs": ["C"]}]

def dump(name, g):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")

def raw(name, text):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        f.write(text)

def mut(name, fn, base=BASE):
    g = copy.deepcopy(base)
    fn(g)
    dump(name, g)

def extra(t):
    return lambda g: g["tensors"].append(t)

def setk(path, value):
    def f(g):
        o = g
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return f

def delk(path):
    def f(g):
        o = g
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]
    return f

raw("syntax_error.json", '{\n  "format": "gexec.graph",\n  "version": 1\n  "tensors": []\n}\n')
raw("syntax_trailing_comma.json", '{"format": "gexec.graph", "version": 1,}\n')
raw("empty.json", "")
raw("top_level_array.json", "[1, 2, 3]\n")
raw("duplicate_key.json", json.dumps(BASE, indent=1).replace('"dtype": "f16",', '"dtype": "f16", "dtype": "f16",', 1))
raw("deep_nesting.json", json.dumps(BASE, indent=1).replace('"name": "bad"', '"name": "bad", "x": ' + "[" * 100 + "]" * 100, 1))
mut("missing_format.json", delk(["format"]))
mut("wrong_format.json", setk(["format"], "onnx"))
mut("version_2.json", setk(["version"], 2))
mut("version_string.json", setk(["version"], "1"))
mut("unknown_top_key.json", setk(["comment"], "hello"))
mut("unknown_tensor_key.json", setk(["tensors", 3, "shap"], [64, 96]))
mut("unknown_init_key.json", setk(["tensors", 0, "init", "sd"], 0.5))
mut("unknown_op_key.json", lambda g: g["ops"][0].__setitem__("atrs", g["ops"][0].pop("attrs")))
mut("unknown_attr_key.json", setk(["ops", 0, "attrs", "activation"], "relu"))
mut("name_digit_start.json", extra({"name": "1x", "shape": [4], "dtype": "f32"}))
mut("name_bad_char.json", extra({"name": "a b", "shape": [4], "dtype": "f32"}))
mut("name_empty.json", extra({"name": "", "shape": [4], "dtype": "f32"}))
mut("name_not_string.json", setk(["name"], 5))
mut("duplicate_tensor.json", extra({"name": "A", "shape": [4], "dtype": "f32"}))
mut("duplicate_op_name.json", lambda g: [o.__setitem__("name", "x") for o in g["ops"][:2]], PRIM)
mut("tensor_not_object.json", extra(5))
mut("dtype_unknown.json", extra({"name": "x", "shape": [4], "dtype": "f64"}))
mut("layout_unknown.json", extra({"name": "x", "shape": [4, 4], "dtype": "f32", "layout": "rowmajr"}))
mut("layout_colmajor_rank3.json", extra({"name": "x", "shape": [2, 3, 4], "dtype": "f32", "layout": "colmajor"}))
mut("device_unknown.json", extra({"name": "x", "shape": [4], "dtype": "f32", "device": "cpu"}))
mut("constant_not_bool.json", extra({"name": "x", "shape": [4], "dtype": "f32", "constant": "yes"}))
mut("shape_empty.json", extra({"name": "x", "shape": [], "dtype": "f32"}))
mut("shape_zero.json", extra({"name": "x", "shape": [0, 4], "dtype": "f32"}))
mut("shape_negative.json", extra({"name": "x", "shape": [-1], "dtype": "f32"}))
mut("shape_string_dim.json", extra({"name": "x", "shape": ["4"], "dtype": "f32"}))
mut("shape_float_dim.json", extra({"name": "x", "shape": [4.5], "dtype": "f32"}))
mut("shape_huge_count.json", extra({"name": "x", "shape": [4294967296, 4294967296], "dtype": "f32"}))
mut("shape_huge_bytes.json", extra({"name": "x", "shape": [2147483648, 2147483648], "dtype": "f16"}))
mut("shape_dim_too_big.json", extra({"name": "x", "shape": [18446744073709551615], "dtype": "f16"}))
mut("shape_rank5.json", extra({"name": "x", "shape": [1, 1, 1, 1, 1], "dtype": "f32"}))
mut("init_on_written.json", setk(["tensors", 3, "init"], {"dist": "zeros"}))
mut("constant_written.json", setk(["tensors", 3, "constant"], True))
mut("init_unknown_dist.json", setk(["tensors", 0, "init", "dist"], "gaussian"))
mut("init_negative_std.json", setk(["tensors", 0, "init", "std"], -0.25))
mut("init_uniform_low_high.json", setk(["tensors", 0, "init"], {"dist": "uniform", "low": 1, "high": 1}))
mut("init_no_form.json", setk(["tensors", 0, "init"], {}))
mut("init_two_forms.json", setk(["tensors", 2, "init"], {"dist": "zeros", "values": [0] * 96}))
mut("init_values_count.json", extra({"name": "x", "shape": [4], "dtype": "f32", "init": {"values": [1, 2, 3]}}))
mut("init_values_not_number.json", extra({"name": "x", "shape": [4], "dtype": "f32", "init": {"values": [1, "two", 3, 4]}}))
mut("init_file_missing.json", extra({"name": "x", "shape": [3], "dtype": "f32", "init": {"file": "no_such_file.npy"}}))
mut("init_file_wrong_shape.json", extra({"name": "x", "shape": [4], "dtype": "f32", "init": {"file": "../npy/vec3_f32.npy"}}))
mut("init_file_not_npy.json", extra({"name": "x", "shape": [3], "dtype": "f32", "init": {"file": "../npy/not_npy.npy"}}))
mut("init_file_f16_for_bf16.json", extra({"name": "x", "shape": [2, 3], "dtype": "bf16", "init": {"file": "../npy/mat2x3_f16.npy"}}))
mut("op_type_unknown.json", lambda g: (g["ops"][0].__setitem__("op_type", "CONV"), g["ops"][0].pop("attrs")))
mut("op_not_object.json", lambda g: g["ops"].append("RELU"))
mut("op_missing_inputs.json", delk(["ops", 2, "inputs"]), PRIM)
mut("matmul_too_many_inputs.json", setk(["ops", 0, "inputs"], ["A", "B", "Bias"]), PRIM)
mut("gemm_too_few_inputs.json", setk(["ops", 0, "inputs"], ["A"]))
mut("relu_two_outputs.json", lambda g: (extra({"name": "D", "shape": [64, 96], "dtype": "f16"})(g), setk(["ops", 2, "outputs"], ["C", "D"])(g)), PRIM)
mut("matmul_k_mismatch.json", setk(["tensors", 1, "shape"], [81, 96]), PRIM)
mut("mnk_mismatch.json", setk(["ops", 0, "attrs", "mnk"], [64, 96, 81]))
mut("mnk_wrong_length.json", setk(["ops", 0, "attrs", "mnk"], [64, 96]))
mut("gemm_bias_wrong_length.json", setk(["tensors", 2, "shape"], [95]))
mut("bias_add_wrong_length.json", setk(["tensors", 2, "shape"], [95]), PRIM)
mut("batch_mismatch.json", lambda g: (setk(["tensors", 0, "shape"], [4, 64, 80])(g), setk(["tensors", 1, "shape"], [3, 80, 96])(g),
                                    setk(["tensors", 3, "shape"], [4, 64, 96])(g), setk(["tensors", 4, "shape"], [4, 64, 96])(g),
                                    setk(["tensors", 5, "shape"], [4, 64, 96])(g)), PRIM)
F32 = {"format": "gexec.graph", "version": 1,
       "tensors": [{"name": "X", "shape": [16, 8], "dtype": "f32"}, {"name": "R", "shape": [16, 8], "dtype": "f32"},
                   {"name": "Z", "shape": [16, 8], "dtype": "f32"}],
       "ops": [{"op_type": "ADD", "inputs": ["X", "R"], "outputs": ["Z"]}]}
mut("add_shape_mismatch.json", setk(["tensors", 1, "shape"], [16, 9]), F32)
mut("cast_shape_mismatch.json", lambda g: (setk(["tensors", 2, "shape"], [16, 9])(g), g["tensors"].pop(1),
                                         setk(["ops", 0], {"op_type": "CAST", "inputs": ["X"], "outputs": ["Z"]})(g)), F32)
mut("attrs_on_relu.json", setk(["ops", 2, "attrs"], {"alpha": 2}), PRIM)
mut("undeclared_input.json", setk(["ops", 1, "inputs", 0], "AX"), PRIM)
mut("undeclared_output.json", lambda g: (setk(["ops", 0, "outputs", 0], "Z")(g), g.pop("outputs")))
mut("tensor_written_twice.json", setk(["ops", 1, "outputs", 0], "C"), PRIM)
CYC = {"format": "gexec.graph", "version": 1,
       "tensors": [{"name": "A", "shape": [8, 8], "dtype": "f16"}, {"name": "R", "shape": [8, 8], "dtype": "f16"},
                   {"name": "X", "shape": [8, 8], "dtype": "f16"}],
       "ops": [{"op_type": "MATMUL", "inputs": ["A", "R"], "outputs": ["X"]},
               {"op_type": "RELU", "inputs": ["X"], "outputs": ["R"]}],
       "outputs": ["X"]}
dump("cycle.json", CYC)
mut("self_cycle.json", lambda g: (g["ops"].pop(0), setk(["ops", 0, "inputs"], ["R"])(g), setk(["outputs"], ["R"])(g)), CYC)
mut("outputs_unknown.json", setk(["outputs"], ["Z"]))
mut("outputs_graph_input.json", setk(["outputs"], ["C", "A"]))
mut("outputs_twice.json", setk(["outputs"], ["C", "C"]))
mut("outputs_empty.json", setk(["outputs"], []))
mut("tensors_empty.json", lambda g: (setk(["tensors"], [])(g), setk(["ops"], [])(g), g.pop("outputs")))
mut("ops_empty.json", lambda g: (setk(["ops"], [])(g), g.pop("outputs")))
mut("ops_missing.json", lambda g: (g.pop("ops"), g.pop("outputs")))
mut("seed_negative.json", setk(["seed"], -1))
mut("seed_float.json", setk(["seed"], 1.5))
raw("seed_too_large.json", json.dumps(BASE, indent=1).replace('"name": "bad"', '"name": "bad", "seed": 18446744073709551616', 1))
mut("gelu_approximate_bad.json", lambda g: (setk(["ops", 2, "op_type"], "GELU")(g), setk(["ops", 2, "attrs"], {"approximate": "fast"})(g)), PRIM)
mut("act_unknown.json", setk(["ops", 0, "attrs", "act"], "relux"))
mut("trans_a_not_bool.json", setk(["ops", 0, "attrs"], {"trans_a": "yes"}), PRIM)
mut("alpha_not_number.json", setk(["ops", 0, "attrs"], {"alpha": "1"}), PRIM)

# FP8 (graph-format.md, "FP8"): one problem each on a valid e4m3 product with bias and amax.
F8 = {"format": "gexec.graph", "version": 1, "name": "bad_f8",
      "tensors": [
        {"name": "A", "shape": [32, 64], "dtype": "f8e4m3", "scale": 0.5},
        {"name": "B", "shape": [64, 48], "dtype": "f8e4m3", "scale": {"axis": 1, "values": [0.25] * 48}},
        {"name": "Bias", "shape": [48], "dtype": "bf16", "constant": True},
        {"name": "C", "shape": [32, 48], "dtype": "f8e4m3", "scale": 2},
        {"name": "C_amax", "shape": [1], "dtype": "f32"}],
      "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C", "C_amax"],
               "attrs": {"act": "relu", "fast_accum": True}}],
      "outputs": ["C", "C_amax"]}
os.makedirs(os.path.join(OUT, "..", "f8"), exist_ok=True)
with open(os.path.join(OUT, "..", "f8", "valid_base.json"), "w") as f:
    json.dump(F8, f, indent=1)
    f.write("\n")
mut("f8_dtype_unknown.json", setk(["tensors", 0, "dtype"], "f8e4m3fnuz"), F8)
mut("f8_scale_on_bf16.json", setk(["tensors", 2, "scale"], 2.0), F8)
mut("f8_scale_zero.json", setk(["tensors", 0, "scale"], 0), F8)
mut("f8_scale_negative.json", setk(["tensors", 3, "scale"], -1.5), F8)
mut("f8_scale_not_number.json", setk(["tensors", 0, "scale"], "1"), F8)
mut("f8_scale_wrong_count.json", setk(["tensors", 1, "scale", "values"], [0.25] * 47), F8)
mut("f8_scale_bad_axis.json", setk(["tensors", 1, "scale", "axis"], 2), F8)
mut("f8_scale_axis_rank1.json", lambda g: (setk(["tensors", 2, "dtype"], "f8e4m3")(g),
                                           setk(["tensors", 2, "scale"], {"axis": 0, "values": [1.0] * 48})(g)), F8)
mut("f8_scale_unknown_key.json", setk(["tensors", 1, "scale", "vals"], [1]), F8)
mut("f8_amax_wrong_dtype.json", setk(["tensors", 4, "dtype"], "f16"), F8)
mut("f8_amax_wrong_shape.json", setk(["tensors", 4, "shape"], [2]), F8)
mut("f8_amax_non_f8_output.json", setk(["tensors", 3], {"name": "C", "shape": [32, 48], "dtype": "bf16"}), F8)
mut("f8_three_outputs.json", lambda g: (g["tensors"].append({"name": "X", "shape": [1], "dtype": "f32"}),
                                        g["ops"][0]["outputs"].append("X")), F8)
mut("f8_fast_accum_f16.json", setk(["ops", 0, "attrs", "fast_accum"], True))
mut("f8_e5m2_x_e5m2.json", lambda g: (setk(["tensors", 0, "dtype"], "f8e5m2")(g), setk(["tensors", 1, "dtype"], "f8e5m2")(g),
                                      setk(["tensors", 3, "dtype"], "f8e5m2")(g)), F8)
mut("f8_e5m2_output_from_e4m3.json", setk(["tensors", 3, "dtype"], "f8e5m2"), F8)
mut("f8_mixed_operands.json", lambda g: (setk(["tensors", 1], {"name": "B", "shape": [64, 48], "dtype": "f16"})(g),
                                         setk(["tensors", 3], {"name": "C", "shape": [32, 48], "dtype": "bf16"})(g),
                                         setk(["ops", 0, "outputs"], ["C"])(g), setk(["outputs"], ["C"])(g),
                                         g["tensors"].pop(4), setk(["ops", 0, "attrs"], {"act": "relu"})(g)), F8)
mut("f8_bias.json", setk(["tensors", 2, "dtype"], "f8e4m3"), F8)
mut("f8_relu_input.json", lambda g: (g["tensors"].append({"name": "R", "shape": [32, 48], "dtype": "f16"}),
                                     g["ops"].append({"op_type": "RELU", "inputs": ["C"], "outputs": ["R"]}),
                                     setk(["outputs"], ["R", "C_amax"])(g)), F8)
mut("f8_fast_accum_not_bool.json", setk(["ops", 0, "attrs", "fast_accum"], 1), F8)
mut("f8_fast_accum_on_cast.json", lambda g: (g["tensors"].append({"name": "Y", "shape": [32, 48], "dtype": "f16"}),
                                             g["ops"].append({"op_type": "CAST", "inputs": ["C"], "outputs": ["Y"],
                                                              "attrs": {"fast_accum": True}}),
                                             setk(["outputs"], ["Y", "C_amax"])(g)), F8)

# MUL, SILU, the residual of GEMM_BIAS_ACT and FUSED_ELEMENTWISE groups.
RES = copy.deepcopy(BASE)
RES["tensors"].append({"name": "R", "shape": [64, 96], "dtype": "f16"})
RES["ops"][0]["inputs"] = ["A", "B", "Bias", "R"]
RES["ops"][0]["attrs"]["residual"] = True
mut("residual_wrong_shape.json", setk(["tensors", 4, "shape"], [64, 95]), RES)
mut("residual_not_bool.json", setk(["ops", 0, "attrs", "residual"], 1), RES)
mut("beta_not_number.json", setk(["ops", 0, "attrs", "beta"], "1"), RES)
mut("beta_without_residual.json", setk(["ops", 0, "attrs", "beta"], 0.5))
mut("residual_missing_input.json", setk(["ops", 0, "inputs"], ["A", "B"]), RES)
mut("four_inputs_without_residual.json", lambda g: g["ops"][0]["attrs"].pop("residual"), RES)
mut("mul_shape_mismatch.json", lambda g: (setk(["tensors", 1, "shape"], [16, 9])(g), setk(["ops", 0, "op_type"], "MUL")(g)), F32)
mut("silu_two_inputs.json", lambda g: setk(["ops", 0, "op_type"], "SILU")(g), F32)
GROUP = {"format": "gexec.graph", "version": 1,
         "tensors": [{"name": "gate", "shape": [16, 8], "dtype": "f16"}, {"name": "up", "shape": [16, 8], "dtype": "f16"},
                     {"name": "h", "shape": [16, 8], "dtype": "f16"}],
         "ops": [{"op_type": "FUSED_ELEMENTWISE", "inputs": ["gate", "up"], "outputs": ["h"],
                  "attrs": {"steps": [{"op": "SILU", "args": [0], "dtype": "f32"},
                                      {"op": "MUL", "args": [2, 1], "dtype": "f16"}],
                            "results": [3]}}]}
mut("group_step_unknown_op.json", setk(["ops", 0, "attrs", "steps", 0, "op"], "SOFTMAX"), GROUP)
mut("group_arg_forward.json", setk(["ops", 0, "attrs", "steps", 1, "args", 0], 5), GROUP)
mut("group_step_arg_count.json", setk(["ops", 0, "attrs", "steps", 0, "args"], [0, 1]), GROUP)
mut("group_result_not_step.json", setk(["ops", 0, "attrs", "results"], [1]), GROUP)
mut("group_result_dtype.json", setk(["ops", 0, "attrs", "results"], [2]), GROUP)
mut("group_missing_steps.json", lambda g: g["ops"][0]["attrs"].pop("steps"), GROUP)
mut("group_step_no_dtype.json", lambda g: g["ops"][0]["attrs"]["steps"][0].pop("dtype"), GROUP)
mut("group_bias_as_value.json", lambda g: (setk(["tensors", 1, "shape"], [8])(g)), GROUP)
mut("group_no_attrs.json", lambda g: g["ops"][0].pop("attrs"), GROUP)
mut("group_approximate_on_relu.json", lambda g: (setk(["ops", 0, "attrs", "steps", 0, "op"], "RELU")(g),
                                                 setk(["ops", 0, "attrs", "steps", 0, "approximate"], "none")(g)), GROUP)
# A group's steps round to f16, bf16 or f32 (an f8 step would need a scale), and its tensors are
# row-major; a residual R is never f8 (with a bias before it, or alone after A and B).
mut("group_step_f8.json", setk(["ops", 0, "attrs", "steps", 0, "dtype"], "f8e5m2"), GROUP)
mut("group_colmajor.json", setk(["tensors", 2, "layout"], "colmajor"), GROUP)
mut("f8_residual.json", setk(["tensors", 4, "dtype"], "f8e4m3"), RES)
mut("f8_residual_no_bias.json", lambda g: (setk(["tensors", 4, "dtype"], "f8e5m2")(g),
                                           setk(["ops", 0, "inputs"], ["A", "B", "R"])(g)), RES)
# Bytes after the top-level value: a NUL byte ends nothing, and garbage after it is refused.
raw("nul_then_garbage.json", json.dumps(BASE, indent=1) + "\0garbage")
raw("nul_then_unknown_key.json", json.dumps(BASE, indent=1)[:-1] + '\0, "comment": 1}')
raw("trailing_garbage.json", json.dumps(BASE, indent=1) + "\n{}\n")
# A key of 63 ASCII bytes and then two-byte characters: the 64-byte cut of its pointer falls
# inside a character, and must not produce invalid UTF-8.
raw("key_cut_utf8.json", json.dumps(BASE, indent=1).replace('"name": "bad"', '"name": "bad", "' + "k" * 63 + "\u00e9" * 10 + '": 1', 1))
mut("init_file_empty_path.json", extra({"name": "x", "shape": [3], "dtype": "f32", "init": {"file": ""}}))
mut("init_file_folder.json", extra({"name": "x", "shape": [3], "dtype": "f32", "init": {"file": "../npy"}}))
mut("init_file_bad_header.json", extra({"name": "x", "shape": [3], "dtype": "f32", "init": {"file": "../npy/bad_header.npy"}}))

# Block scales (graph-format.md, "FP8"): one problem each on a valid block-scaled product
# (x quantized on the fly with 1x128 blocks, w with a given 128x128 S).
BLK = {"format": "gexec.graph", "version": 1, "name": "bad_block",
       "tensors": [
         {"name": "x", "shape": [16, 256], "dtype": "bf16"},
         {"name": "x8", "shape": [16, 256], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "sx"}},
         {"name": "sx", "shape": [16, 2], "dtype": "f32"},
         {"name": "w", "shape": [256, 128], "dtype": "f8e4m3", "constant": True,
          "scale": {"block": [128, 128], "tensor": "sw"}},
         {"name": "sw", "shape": [2, 1], "dtype": "f32", "constant": True, "init": {"values": [0.01, 0.02]}},
         {"name": "y", "shape": [16, 128], "dtype": "bf16"}],
       "ops": [{"op_type": "CAST", "inputs": ["x"], "outputs": ["x8", "sx"]},
               {"op_type": "GEMM_BIAS_ACT", "inputs": ["x8", "w"], "outputs": ["y"], "attrs": {"act": "relu"}}],
       "outputs": ["y"]}
with open(os.path.join(OUT, "..", "f8", "valid_block.json"), "w") as f:
    json.dump(BLK, f, indent=1)
    f.write("\n")
mut("block_s_wrong_shape.json", setk(["tensors", 4, "shape"], [2, 2]), BLK)
mut("block_s_wrong_dtype.json", setk(["tensors", 2, "dtype"], "bf16"), BLK)
mut("block_s_zero.json", setk(["tensors", 4, "init", "values"], [0.01, 0.0]), BLK)
mut("block_s_negative.json", setk(["tensors", 4, "init", "values"], [-0.01, 0.02]), BLK)
mut("block_s_nonfinite.json", setk(["tensors", 4, "init", "values"], [0.01, "inf"]), BLK)
mut("block_s_drawn_normal.json", setk(["tensors", 4, "init"], {"dist": "normal"}), BLK)
mut("block_s_undeclared.json", setk(["tensors", 3, "scale", "tensor"], "nope"), BLK)
mut("block_product_block.json", setk(["tensors", 1, "scale", "block"], [1, 64]), BLK)
mut("block_side_zero.json", setk(["tensors", 1, "scale", "block"], [1, 0]), BLK)
mut("block_not_pair.json", setk(["tensors", 1, "scale", "block"], [128]), BLK)
mut("block_unknown_key.json", setk(["tensors", 1, "scale", "blocks"], [1, 128]), BLK)
mut("block_rank1.json", lambda g: (g["tensors"].append({"name": "v", "shape": [256], "dtype": "f8e4m3",
                                                        "scale": {"block": [1, 128], "tensor": "sv"}}),
                                   g["tensors"].append({"name": "sv", "shape": [2], "dtype": "f32", "init": {"dist": "ones"}})), BLK)
mut("block_f8_output.json", lambda g: (setk(["tensors", 5], {"name": "y", "shape": [16, 128], "dtype": "f8e4m3",
                                                             "scale": {"block": [1, 128], "tensor": "sy"}})(g),
                                       g["tensors"].append({"name": "sy", "shape": [16, 1], "dtype": "f32", "init": {"dist": "ones"}})), BLK)
mut("block_one_operand.json", setk(["tensors", 3], {"name": "w", "shape": [256, 128], "dtype": "f8e4m3", "constant": True,
                                                    "scale": 0.01}), BLK)
mut("block_amax_output.json", lambda g: (g["tensors"].append({"name": "m", "shape": [1], "dtype": "f32"}),
                                         setk(["ops", 0, "outputs"], ["x8", "m"])(g)), BLK)
mut("block_s_on_bf16.json", setk(["tensors", 0, "scale"], {"block": [1, 128], "tensor": "sx"}), BLK)
mut("block_s_no_init.json", lambda g: g["tensors"][4].pop("init"), BLK)
# Found by a hostile audit: an integer step, alpha and beta beyond f32 (the devices received inf),
# beta given with "residual": false even at its default, a collective without attrs (ranks).
mut("group_step_i32.json", setk(["ops", 0, "attrs", "steps", 0, "dtype"], "i32"), GROUP)
mut("alpha_beyond_f32.json", setk(["ops", 0, "attrs", "alpha"], 1e39))
mut("beta_beyond_f32.json", setk(["ops", 0, "attrs", "beta"], -5e38), RES)
mut("beta_one_without_residual.json", lambda g: (setk(["ops", 0, "attrs", "residual"], False)(g),
                                                 setk(["ops", 0, "attrs", "beta"], 1)(g)))
mut("all_reduce_without_attrs.json", lambda g: (setk(["ops", 0, "op_type"], "ALL_REDUCE")(g),
                                                setk(["ops", 0, "inputs"], ["A"])(g),
                                                setk(["ops", 0, "outputs"], ["A2"])(g),
                                                extra({"name": "A2", "shape": [64, 80], "dtype": "f16"})(g),
                                                g["ops"][0].pop("attrs"), setk(["outputs"], ["A2"])(g)))
